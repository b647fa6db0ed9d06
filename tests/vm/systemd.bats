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

# "Overall exposure level for UNIT: 3.4 OK" -> 3.4
exposure() {
	systemd-analyze security "$1" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p'
}

@test "the pins are for the lowtrace group: dirs 0750, pins 0640 or 0660, none for others" {
	local gid want mode
	gid=$(getent group lowtrace | cut -d: -f3)
	[ -n "$gid" ]
	run stat -c '%u:%g %a' /sys/fs/bpf/lowtrace /sys/fs/bpf/lowtrace/maps \
		/sys/fs/bpf/lowtrace/maps/lt_stats /sys/fs/bpf/lowtrace/maps/lt_events
	want=$(printf '0:%s 750\n0:%s 750\n0:%s 640\n0:%s 660' "$gid" "$gid" "$gid" "$gid")
	echo "$output"
	[ "$output" = "$want" ]
	# nothing for others, everything the group's
	run find /sys/fs/bpf/lowtrace \( -perm /o=rwx -o ! -gid "$gid" \)
	echo "$output"
	[ -z "$output" ]
	# bpffs' root: searchable by the group, nothing for others
	[ "$(stat -c %g /sys/fs/bpf)" = "$gid" ]
	mode=$(stat -c %a /sys/fs/bpf)
	echo "# /sys/fs/bpf: $(stat -c '%A %U:%G' /sys/fs/bpf)" >&3
	(((8#$mode & 8#010) && !(8#$mode & 8#007)))
}

@test "lowtrace-metrics and lowtrace-events run as the lowtrace user with CAP_BPF alone" {
	local uid u pid st
	uid=$(id -u lowtrace)
	[ "$uid" != 0 ]
	for u in lowtrace-metrics.service lowtrace-events.service; do
		pid=$(systemctl show -P MainPID "$u")
		[ "$pid" -gt 0 ]
		st=$(cat "/proc/$pid/status")
		grep -E '^(Uid|Gid|CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' <<<"$st" | sed "s/^/# $u: /" >&3
		# real, effective, saved and file-system uid
		[ "$(awk '/^Uid:/ {print $2, $3, $4, $5}' <<<"$st")" = "$uid $uid $uid $uid" ]
		# CAP_BPF (39) and nothing else: effective and in the bounding set
		[ "$(awk '/^CapEff:/ {print $2}' <<<"$st")" = 0000008000000000 ]
		[ "$(awk '/^CapBnd:/ {print $2}' <<<"$st")" = 0000008000000000 ]
		[ "$(awk '/^NoNewPrivs:/ {print $2}' <<<"$st")" = 1 ]
	done
	# what events wrote is the lowtrace user's
	[ "$(stat -c %U "$LT_EVENTS_FILE")" = lowtrace ]
}

@test "systemd-analyze security: metrics and events at most 4.0, the load unit too" {
	local u e
	for u in lowtrace-metrics.service lowtrace-events.service lowtrace.service; do
		e=$(exposure "$u")
		echo "# $u: exposure $e" >&3
		[ -n "$e" ]
		awk -v e="$e" 'BEGIN { exit !(e <= 4.0) }'
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
