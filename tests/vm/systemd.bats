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

# count_until COUNTER MARK N TRIES: COUNTER MARK (marked, marks_seen), polled every 0.2 s
# until it reaches N or TRIES polls are done
count_until() {
	local n _
	for _ in $(seq "$4"); do
		n=$("$1" "$2")
		[ "$n" -lt "$3" ] || break
		sleep 0.2
	done
	echo "$n"
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
	n=$(count_until marked "$mark" "$i" 20)
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

# the distinct marks MARK-1 .. MARK-N of the exec records in the events files (an exec during
# a replace can be in both suites' rings, so twice: events --follow says so)
marks_seen() {
	cat "$LT_EVENTS_FILE" "$LT_EVENTS_FILE".[0-9]* 2>/dev/null |
		grep -o "\"type\":\"exec\".*$1[-][0-9]*\"" | grep -o "$1-[0-9]*" | sort -u | wc -l
}

@test "dpkg -i of a newer package: the suite replaced, the units on the new binary, the config kept, no exec lost" {
	local up=/var/lib/lowtrace-vmtest/lowtrace-up.deb old new mark=upg$$ stop n pid u
	[ -s "$up" ]
	old=$(dpkg-query -W -f='${Version}' lowtrace)
	new=$(dpkg-deb -f "$up" Version)
	dpkg --compare-versions "$new" gt "$old"
	# the admin's config (systemd-setup wrote it over the package's): more rotated files kept,
	# so every marked record of the test is still in one
	sed -i "s/^rotate-keep = .*/rotate-keep = 40/" "$LT_CONFIG_FILE"
	systemctl restart lowtrace-events.service
	cp "$LT_CONFIG_FILE" "$BATS_TEST_TMPDIR/conf"
	local prog_before
	prog_before=$(bpftool -j prog show | jq -r '[.[] | select(.name | startswith("lt_exec")) | .id] | sort | join(",")')
	[ -n "$prog_before" ]
	# marked execs before, during and after the upgrade, numbered, until told to stop
	stop=$BATS_TEST_TMPDIR/stop
	(
		i=0 after=0
		while [ "$after" -lt 40 ]; do
			i=$((i + 1))
			/bin/true "$mark-$i"
			[ ! -e "$stop" ] || after=$((after + 1))
			sleep 0.05
		done
		echo "$i" >"$BATS_TEST_TMPDIR/count"
	) &
	sleep 1
	run env DEBIAN_FRONTEND=noninteractive dpkg -i "$up"
	echo "$output"
	[ "$status" = 0 ]
	touch "$stop"
	wait
	n=$(cat "$BATS_TEST_TMPDIR/count")
	[ "$(dpkg-query -W -f='${Version}' lowtrace)" = "$new" ]
	# the conffile the admin changed is kept, no .dpkg-new or .dpkg-dist beside it
	cmp "$BATS_TEST_TMPDIR/conf" "$LT_CONFIG_FILE"
	run ls /etc/lowtrace
	echo "$output"
	[ "$output" = lowtrace.conf ]
	# the suite is a new one (load --replace), still pinned
	local prog_after
	prog_after=$(bpftool -j prog show | jq -r '[.[] | select(.name | startswith("lt_exec")) | .id] | sort | join(",")')
	echo "# lt_exec program ids: $prog_before before, $prog_after after" >&3
	[ -n "$prog_after" ] && [ "$prog_after" != "$prog_before" ]
	[ -d /sys/fs/bpf/lowtrace ]
	# metrics and events run the new file (the old one dpkg replaced shows as deleted)
	for u in lowtrace.service lowtrace-metrics.service lowtrace-events.service; do
		[ "$(systemctl is-active "$u")" = active ]
	done
	for u in lowtrace-metrics.service lowtrace-events.service; do
		pid=$(systemctl show -P MainPID "$u")
		[ "$pid" -gt 0 ]
		echo "# $u: $(readlink "/proc/$pid/exe")" >&3
		[ "$(readlink "/proc/$pid/exe")" = /usr/bin/lowtrace ]
	done
	# every marked exec in the files, once at least
	local seen
	seen=$(count_until marks_seen "$mark" "$n" 50)
	echo "# $seen of $n marked execs (before, during and after the upgrade) in the events files" >&3
	[ "$seen" = "$n" ]
	[ "$(marked "$mark")" -ge "$n" ]
	run scrape
	[ "$status" = 0 ]
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

# nothing of lowtrace in the kernel: no pin, no program or map named lt_*
nothing_loaded() {
	[ ! -e /sys/fs/bpf/lowtrace ] || return 1
	! { bpftool prog show; bpftool map show; } | grep -E 'name lt_'
}

@test "dpkg -r stops the units and unloads the suite, keeps the config" {
	systemctl start lowtrace.service
	[ "$(systemctl is-active lowtrace-events.service)" = active ]
	[ -d /sys/fs/bpf/lowtrace ]
	run dpkg -r lowtrace
	echo "$output"
	[ "$status" = 0 ]
	for u in lowtrace.service lowtrace-metrics.service lowtrace-events.service; do
		[ "$(systemctl is-active "$u")" = inactive ]
	done
	nothing_loaded
	[ ! -e /usr/bin/lowtrace ]
	# a removed package keeps its conffile, the events logs and the user until purged
	[ -e "$LT_CONFIG_FILE" ]
	getent passwd lowtrace
}

@test "dpkg --purge removes the config, the logs, the enablement and the user" {
	[ -d /var/log/lowtrace ]
	run dpkg --purge lowtrace
	echo "$output"
	[ "$status" = 0 ]
	[ ! -e /etc/lowtrace ]
	[ ! -e /var/log/lowtrace ]
	# the links systemd-setup made as `systemctl enable` does (the test's own unit aside)
	run bash -c 'ls -d /etc/systemd/system/*.wants/lowtrace* /etc/systemd/system/lowtrace* |
		grep -v lowtrace-vmtest'
	echo "$output"
	[ -z "$output" ]
	! getent passwd lowtrace
	! getent group lowtrace
	[ "$(dpkg-query -W -f='${db:Status-Status}' lowtrace 2>/dev/null || echo gone)" != installed ]
}

@test "a fresh dpkg -i starts and enables nothing, makes the user; purge again" {
	run env DEBIAN_FRONTEND=noninteractive dpkg -i /var/lib/lowtrace-vmtest/lowtrace.deb
	echo "$output"
	[ "$status" = 0 ]
	getent passwd lowtrace
	for u in lowtrace.service lowtrace-metrics.service lowtrace-events.service; do
		echo "# $u: $(systemctl is-enabled "$u" 2>&1), $(systemctl is-active "$u")" >&3
		[ "$(systemctl is-active "$u")" = inactive ]
		[ "$(systemctl is-enabled "$u" 2>&1)" = disabled ]
	done
	nothing_loaded
	# the package's own config, and the man page
	cmp /etc/lowtrace/lowtrace.conf <(dpkg-deb --fsys-tarfile /var/lib/lowtrace-vmtest/lowtrace.deb |
		tar -xOf - ./etc/lowtrace/lowtrace.conf)
	[ -e /usr/share/man/man8/lowtrace.8.gz ]
	lowtrace --version
	run dpkg --purge lowtrace
	[ "$status" = 0 ]
	! getent passwd lowtrace
}
