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
	# by = unit: this test's own unit has exec series of its own
	grep -q '^lowtrace_workload_events_total{probe="exec",unit="lowtrace-vmtest.service"} [1-9]' \
		<<<"$output"
	promtool check metrics <<<"$output"
}

# the exec records with MARK- in the events file and its rotated files (the
# pattern "MARK[-]" keeps grep's own exec record, whose arguments are in the
# file too, from matching)
marked() {
	cat "$LT_EVENTS_FILE" "$LT_EVENTS_FILE".[0-9]* 2>/dev/null | grep -c "\"type\":\"exec\".*$1[-]$2"
}

@test "lowtrace-events.service fills its file and rotates it, losing nothing" {
	run systemctl is-active lowtrace-events.service
	[ "$output" = active ]
	[ -s "$LT_EVENTS_FILE" ]
	# execs with a mark in their arguments until FILE.1 is a new file (each
	# exec, fork and exit takes ~1 KiB: fewer than the kept files hold)
	local mark=rot$$ before i=0
	before=$(stat -c %i "$LT_EVENTS_FILE.1" 2>/dev/null || echo none)
	while [ "$(stat -c %i "$LT_EVENTS_FILE.1" 2>/dev/null || echo none)" = "$before" ] &&
		[ "$i" -lt 150 ]; do
		i=$((i + 1))
		/bin/true "$mark-$i"
		[ $((i % 20)) != 0 ] || sleep 0.2
	done
	ls -l "$LT_EVENTS_FILE"* >&3
	echo "# $i execs until a rotation" >&3
	[ "$i" -lt 150 ]
	# every marked exec in one of the files: nothing lost at the rotation
	local n
	for _ in $(seq 20); do
		n=$(marked "$mark")
		[ "$n" -lt "$i" ] || break
		sleep 0.2
	done
	echo "# $n of $i marked exec records in the files" >&3
	[ "$n" = "$i" ]
	# identity under a real systemd: this test runs in lowtrace-vmtest.service
	run bash -c "cat '$LT_EVENTS_FILE' '$LT_EVENTS_FILE'.[0-9]* | grep '$mark[-]1\"' | jq -r .unit"
	echo "# unit of the marked exec: $output" >&3
	[ "$output" = lowtrace-vmtest.service ]
	# no more than the configured size and number of files, whole JSON records only
	[ ! -e "$LT_EVENTS_FILE.$((LT_ROTATE_KEEP + 1))" ]
	for f in "$LT_EVENTS_FILE" "$LT_EVENTS_FILE".[0-9]*; do
		[ "$(stat -c %s "$f")" -le "$LT_ROTATE_SIZE" ]
		jq -e . "$f" >/dev/null
	done
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
