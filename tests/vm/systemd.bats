#!/usr/bin/env bats
# The lowtrace units in a guest booted into systemd (VMTEST_SYSTEMD=1, see
# tests/vm/systemd-setup): run by lowtrace-vmtest.service after the units
# came up at boot. Not for the host (it stops the service it checks).

setup_file() {
	[ "$(cat /proc/1/comm)" = systemd ] || {
		echo "# systemd.bats runs in a systemd guest only (tests/vm/vmtest with VMTEST_SYSTEMD=1)" >&3
		return 1
	}
}

setup() {
	# shellcheck source=tests/vm/service.env
	. "$BATS_TEST_DIRNAME/service.env"
}

# metrics text from the configured address, retried while the server comes up
scrape() {
	local i
	for i in $(seq 50); do
		curl -sf --max-time 5 "$LT_METRICS_URL" && return 0
		sleep 0.2
	done
	return 1
}

@test "lowtrace.service came up at boot and pinned the suite" {
	run systemctl is-active lowtrace.service
	echo "$output"
	[ "$output" = active ]
	[ -d /sys/fs/bpf/lowtrace ]
	run lowtrace status
	echo "$output"
	[ "$status" = 0 ]
	[[ "$output" == *exec* ]]
}

@test "lowtrace-metrics.service answers on the configured address" {
	run systemctl is-active lowtrace-metrics.service
	[ "$output" = active ]
	run scrape
	[ "$status" = 0 ]
	grep -q '^lowtrace_events_total{probe="exec"' <<<"$output"
	promtool check metrics <<<"$output"
}

@test "lowtrace-events.service fills its file and rotates it" {
	run systemctl is-active lowtrace-events.service
	[ "$output" = active ]
	# execs until the first rotation (each exec record is a few hundred bytes)
	local i=0
	while [ ! -e "$LT_EVENTS_FILE.1" ] && [ "$i" -lt 3000 ]; do
		/bin/true
		i=$((i + 1))
		[ $((i % 100)) != 0 ] || sleep 0.2
	done
	echo "# $i execs, files: $(ls -l "$LT_EVENTS_FILE"* | awk '{print $5, $NF}' | paste -sd' ')" >&3
	[ -s "$LT_EVENTS_FILE.1" ]
	# nothing beyond the configured size, whole JSON records only
	[ "$(stat -c %s "$LT_EVENTS_FILE.1")" -le "$LT_ROTATE_SIZE" ]
	jq -e . "$LT_EVENTS_FILE.1" >/dev/null
	grep -q '"type":"exec"' "$LT_EVENTS_FILE.1"
	sleep 1
	[ -s "$LT_EVENTS_FILE" ]
	jq -e . "$LT_EVENTS_FILE" >/dev/null
}

@test "systemctl stop lowtrace leaves no program, map or pin" {
	run systemctl stop lowtrace.service
	echo "$output"
	[ "$status" = 0 ]
	for u in lowtrace.service lowtrace-metrics.service lowtrace-events.service; do
		run systemctl is-active "$u"
		echo "$u: $output"
		[ "$output" = inactive ]
	done
	[ ! -e /sys/fs/bpf/lowtrace ]
	local progs maps
	progs=$(bpftool prog show)
	maps=$(bpftool map show)
	run grep -E 'name lt_' <<<"$progs$maps"
	echo "$output"
	[ "$status" = 1 ]
}
