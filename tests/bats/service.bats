#!/usr/bin/env bats
# lowtrace as a node service: make install (units, config, man page), --config, and events -o
# with rotation, SIGHUP and a full or unwritable output directory; the README's commands. Nothing here depends on the
# kernel: it runs on the host only (tests/vm/host-only); the units run for real under systemd in
# make svctest and make fleettest, and metrics --by is tests/bats/workload.bats.

load helpers

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# records_total: the records the loaded probes wrote (status), drops must be 0
records_total() {
	local st
	st=$("$LT" status --json) || return
	jq -e '[.probes[] | select(.loaded) | .drops] | add == 0' <<<"$st" >/dev/null || {
		echo "drops in: $st" >&2
		return 1
	}
	jq -r '[.probes[] | select(.loaded) | .events] | add' <<<"$st"
}

# lines FILE...: JSON records in these files (each line checked as one JSON object)
lines() {
	cat "$@" | jq -e -c 'select(.type)' | wc -l
}

# events_bg ARGS...: events in the background, its pid in EV (stderr in ev.err)
events_bg() {
	"$LT" events "$@" 2>"$BATS_TEST_TMPDIR/ev.err" &
	EV=$!
	LT_BG+=("$EV")
	sleep 0.3
}

# wait_lines N DIR: until the files in DIR hold N lines (10 s)
wait_lines() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(cat "$2"/* 2>/dev/null | grep -c '' || true)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "fewer than $1 lines in $2" >&2
	return 1
}

# ---- install, units, man page ----

@test "make install puts the binary, units, config and man page under DESTDIR and PREFIX" {
	local d="$BATS_TEST_TMPDIR/dest" u had_user
	had_user=$(getent passwd lowtrace || true)
	run make -C "$REPO" -s install DESTDIR="$d" PREFIX=/usr
	assert_success
	[ -x "$d/usr/bin/lowtrace" ]
	cmp "$d/usr/bin/lowtrace" "$LT"
	for u in lowtrace lowtrace-metrics lowtrace-events; do
		[ -f "$d/usr/lib/systemd/system/$u.service" ]
		# the installed path, not the build's or a template's
		grep -q "^ExecStart=/usr/bin/lowtrace .*--config /etc/lowtrace/lowtrace.conf$" \
			"$d/usr/lib/systemd/system/$u.service"
		! grep -q @ "$d/usr/lib/systemd/system/$u.service"
	done
	grep -qx "ExecStop=/usr/bin/lowtrace unload" "$d/usr/lib/systemd/system/lowtrace.service"
	grep -qx "ExecReload=/usr/bin/lowtrace load --replace --pin-group lowtrace --config /etc/lowtrace/lowtrace.conf" \
		"$d/usr/lib/systemd/system/lowtrace.service"
	# the readers run as the lowtrace user of sysusers.d, the pins are for its group
	cmp "$d/usr/lib/sysusers.d/lowtrace.conf" "$REPO/dist/sysusers.d/lowtrace.conf"
	grep -qx "u lowtrace - .*" "$d/usr/lib/sysusers.d/lowtrace.conf"
	grep -qx "ExecStart=/usr/bin/lowtrace load --pin-group lowtrace --config /etc/lowtrace/lowtrace.conf" \
		"$d/usr/lib/systemd/system/lowtrace.service"
	for u in lowtrace-metrics lowtrace-events; do
		grep -qx "User=lowtrace" "$d/usr/lib/systemd/system/$u.service"
		grep -qx "AmbientCapabilities=CAP_BPF" "$d/usr/lib/systemd/system/$u.service"
		grep -qx "CapabilityBoundingSet=CAP_BPF" "$d/usr/lib/systemd/system/$u.service"
	done
	# a DESTDIR install makes no user (a package's postinst does)
	assert_equal "$(getent passwd lowtrace || true)" "$had_user"
	grep -qx "Type=oneshot" "$d/usr/lib/systemd/system/lowtrace.service"
	grep -qx "RemainAfterExit=yes" "$d/usr/lib/systemd/system/lowtrace.service"
	cmp "$d/etc/lowtrace/lowtrace.conf" "$REPO/dist/lowtrace.conf"
	cmp "$d/usr/share/man/man8/lowtrace.8" "$REPO/docs/lowtrace.8"
	# the installed config is accepted by each command
	run "$LT" metrics --config "$d/etc/lowtrace/lowtrace.conf" --listen bad
	assert_failure 2
	assert_output --partial "--listen"

	# an existing config is never overwritten
	echo "# mine" >"$d/etc/lowtrace/lowtrace.conf"
	run make -C "$REPO" -s install DESTDIR="$d" PREFIX=/usr
	assert_success
	[ "$(cat "$d/etc/lowtrace/lowtrace.conf")" = "# mine" ]
}

@test "systemd-analyze verify accepts the installed units" {
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze on this host"
	local p="$BATS_TEST_TMPDIR/p"
	# installed for real under a scratch prefix: verify checks that ExecStart exists
	# SYSUSERS=: no lowtrace user made on this host
	make -C "$REPO" -s install PREFIX="$p/usr" SYSCONFDIR="$p/etc" SYSUSERS=""
	grep -q "^ExecStart=$p/usr/bin/lowtrace load --pin-group lowtrace --config $p/etc/lowtrace/lowtrace.conf$" \
		"$p/usr/lib/systemd/system/lowtrace.service"
	run --separate-stderr systemd-analyze verify --man=no "$p"/usr/lib/systemd/system/*.service
	assert_success
	# warnings (unknown keys, bad values) do not change its exit code
	assert_equal "$stderr" ""
}

@test "the committed man page is the -h texts (make man)" {
	run "$REPO/docs/mkman" "$LT"
	assert_success
	[ "$output" = "$(cat "$REPO/docs/lowtrace.8")" ] || {
		echo "docs/lowtrace.8 differs from the -h texts: run make man" >&2
		diff <(printf '%s\n' "$output") "$REPO/docs/lowtrace.8" >&2
		return 1
	}
	# every command's help is in it
	for c in load unload status events run hist top metrics profile alloc; do
		grep -q "^\.SH \"LOWTRACE ${c^^}\"" "$REPO/docs/lowtrace.8"
	done
}

# ---- --config ----

@test "config: a missing file is one error line and nothing is loaded" {
	run --separate-stderr "$LT" load --config "$BATS_TEST_TMPDIR/none.conf"
	assert_failure 2
	assert_one_error_line
	assert_equal "$stderr" "lowtrace: --config $BATS_TEST_TMPDIR/none.conf: No such file or directory"
	[ ! -e "$PIN" ]
}

@test "config: a bad line names FILE:LINE, exits 2 and loads nothing" {
	local f="$BATS_TEST_TMPDIR/l.conf" line want
	while IFS='|' read -r line want; do
		printf '# comment\n\n[load]\nstate = auto\n%s\n' "$line" >"$f"
		run --separate-stderr "$LT" load --config "$f"
		assert_failure 2
		assert_one_error_line
		assert_equal "$stderr" "lowtrace: $f:5: $want"
		[ ! -e "$PIN" ]
	done <<'EOF2'
probes exec|'probes exec' is not 'option = value'
[bogus]|unknown section '[bogus]' (known: [load], [metrics], [events])
frob = 1|[load]: unknown option 'frob'
ringbuf-size = 3|--ringbuf-size: 3 is not a power of two between 4096 and 1G
max-conns = lots|--max-conns: invalid value 'lots'
replace = maybe|replace: 'maybe' is not true or false
probes = nope|unknown probe 'nope' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open, file, cred, priv, syscalls, runq, bio)
listen = 127.0.0.1:1|load: option '--listen' does not apply here (see 'lowtrace load -h')
probes =|probes: no value
EOF2
	# another command's section: its numbers are checked too
	printf '[load]\n[events]\nrotate-size = 1X\n' >"$f"
	run --separate-stderr "$LT" load --config "$f"
	assert_failure 2
	assert_equal "$stderr" "lowtrace: $f:3: --rotate-size: invalid value '1X'"
	printf 'probes = exec\n' >"$f"
	run --separate-stderr "$LT" load --config "$f"
	assert_failure 2
	assert_equal "$stderr" "lowtrace: $f:1: 'probes' before the first [section]"
	[ ! -e "$PIN" ]
}

@test "config: load applies its section, the command line overrides it" {
	local f="$BATS_TEST_TMPDIR/c.conf"
	printf '[load]\nprobes = exec, fork\nringbuf-size = 64K\n[metrics]\nlisten = 127.0.0.1:1\n' >"$f"
	# spaces around the comma are part of the value: an unknown probe
	run --separate-stderr "$LT" load --config "$f"
	assert_failure 2
	printf '[load]\nprobes = exec,fork\nringbuf-size = 64K\n[metrics]\nlisten = 127.0.0.1:1\n' >"$f"
	run "$LT" load --config "$f" --ringbuf-size 128K
	assert_success
	assert_equal "$(status_json | jq -c '[.probes[] | select(.loaded) | .name]')" '["exec","fork"]'
	assert_equal "$(status_json | jq -r .ringbuf_size)" 131072
}

# ---- events -o: rotation, SIGHUP, write failures ----

@test "events -o --rotate-size: every record in FILE, FILE.1 .. FILE.N, none split or lost" {
	local d="$BATS_TEST_TMPDIR/log" f total n
	mkdir "$d"
	f="$d/ev.json"
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" >/dev/null
	events_bg -o "$f" --rotate-size 4K --rotate-keep 1000
	execs "$NEW_CG" 300
	sleep 0.5
	total=$(records_total)
	[ "$total" -ge 900 ]
	"$LT" unload >/dev/null
	wait_rc "$EV" 10
	assert_equal "$RC" 6 # the suite was unloaded: what its ring held is written first
	n=$(ls "$d" | wc -l)
	[ "$n" -gt 10 ] || {
		echo "only $n files" >&2
		return 1
	}
	assert_equal "$(lines "$d"/*)" "$total"
	for x in "$d"/*; do
		# whole records only, at most the rotation size
		[ "$(stat -c %s "$x")" -le 4096 ]
		[ -z "$(tail -c1 "$x")" ]
		jq -e -c . "$x" >/dev/null
	done
	# the oldest records in the highest number
	assert_equal "$(ls "$d" | sort -V | tail -n1)" "ev.json.$((n - 1))"
	[ "$(head -n1 "$d/ev.json.$((n - 1))" | jq .ts_ns)" -lt "$(head -n1 "$f" | jq .ts_ns)" ]
}

@test "events -o --rotate-keep N keeps FILE and N rotated files" {
	local d="$BATS_TEST_TMPDIR/log"
	mkdir "$d"
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" >/dev/null
	events_bg -o "$d/ev.json" --rotate-size 2K --rotate-keep 3
	execs "$NEW_CG" 100
	sleep 0.5
	"$LT" unload >/dev/null
	wait_rc "$EV" 10
	assert_equal "$(ls "$d" | sort | tr '\n' ' ')" "ev.json ev.json.1 ev.json.2 ev.json.3 "
}

@test "events -o: SIGHUP reopens FILE after an external rotation, nothing lost" {
	local d="$BATS_TEST_TMPDIR/log" total
	mkdir "$d"
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" >/dev/null
	events_bg -o "$d/ev.json"
	execs "$NEW_CG" 50
	wait_lines 150 "$d"
	mv "$d/ev.json" "$d/ev.json.old"
	kill -HUP "$EV"
	sleep 0.3
	execs "$NEW_CG" 50
	sleep 0.5
	total=$(records_total)
	"$LT" unload >/dev/null
	wait_rc "$EV" 10
	assert_equal "$RC" 6
	[ -s "$d/ev.json" ]
	assert_equal "$(( $(lines "$d/ev.json.old") + $(lines "$d/ev.json") ))" "$total"
	# the second batch went to the new file
	[ "$(lines "$d/ev.json")" -ge 150 ]
}

# tiny_tmpfs SIZE: a tmpfs of SIZE on a new directory, unmounted by teardown; sets TMPFS
tiny_tmpfs() {
	TMPFS=$(mktemp -d /tmp/lowtrace-tmpfs.XXXXXX)
	mount -t tmpfs -o size="$1" lowtrace-test "$TMPFS"
	LT_TMPFS+=("$TMPFS")
}

teardown() {
	local m rc=0
	for m in "${LT_TMPFS[@]}"; do
		umount "$m" 2>/dev/null || true
		rmdir "$m" 2>/dev/null || true
	done
	lt_teardown || rc=$?
	# pin_group_user's user and group, and bpffs' root as it was
	if [ -n "$LT_PG" ]; then
		chgrp "${LT_BPFFS_ROOT% *}" /sys/fs/bpf && chmod "${LT_BPFFS_ROOT#* }" /sys/fs/bpf || rc=1
		userdel "$LT_PG" || rc=1
		! getent group "$LT_PG" >/dev/null || groupdel "$LT_PG" || rc=1
	fi
	return "$rc"
}
LT_TMPFS=()
LT_PG=

# pin_group_user: a system user LT_PG with a group of that name, for load --pin-group; teardown
# removes them and gives bpffs' root its group and mode back (--pin-group makes it the group's)
pin_group_user() {
	LT_PG=ltpg$$
	LT_BPFFS_ROOT=$(stat -c '%g %a' /sys/fs/bpf)
	groupadd --system "$LT_PG"
	useradd --system -g "$LT_PG" -M -d / -s /usr/sbin/nologin "$LT_PG"
	LT_PG_UID=$(id -u "$LT_PG")
	LT_PG_GID=$(getent group "$LT_PG" | cut -d: -f3)
	# how lowtrace-metrics and lowtrace-events run: the user, CAP_BPF alone, no_new_privs
	LT_READER="setpriv --reuid $LT_PG_UID --regid $LT_PG_GID --clear-groups --inh-caps=-all,+bpf
		--ambient-caps=+bpf --bounding-set=-all,+bpf --no-new-privs"
}

@test "load --pin-group: the suite is the group's (dirs 0750, pins 0640 or 0660, none for others)" {
	command -v setpriv >/dev/null && command -v useradd >/dev/null || skip "no setpriv or useradd"
	pin_group_user
	run "$LT" load --probes exec,exit,fork --pin-group "$LT_PG"
	assert_success
	assert_equal "$(stat -c '%u:%g %a' "$PIN" "$PIN/maps" "$PIN/links" "$PIN/progs" | sort -u)" \
		"0:$LT_PG_GID 750"
	# what readers only read 0640; the ring, what they write, links and programs 0660 (the
	# kernel opens those read-write only)
	assert_equal "$(stat -c '%n %a' "$PIN/maps/lt_stats" "$PIN/maps/rodata" "$PIN/maps/lt_drop_cg" \
		"$PIN/maps/lt_events" "$PIN/maps/lt_seen" "$PIN/maps/lt_cg_counts" | sed "s|$PIN/||")" \
		"$(printf 'maps/lt_stats 640\nmaps/rodata 640\nmaps/lt_drop_cg 640\nmaps/lt_events 660\nmaps/lt_seen 660\nmaps/lt_cg_counts 660')"
	assert_equal "$(stat -c %a "$PIN"/links/* "$PIN"/progs/* | sort -u)" 660
	# a program pinned per link: exec, exit, fork and their fallbacks
	assert_equal "$(ls "$PIN/progs" | wc -l)" "$(ls "$PIN/links" | wc -l)"
	[ "$(ls "$PIN/links" | wc -l)" -ge 3 ]
	# nothing for others, nothing of another group, no pin executable
	run find "$PIN" \( -perm /o=rwx -o ! -gid "$LT_PG_GID" -o \( ! -type d -perm /ugo=x \) \)
	assert_output ""
	# bpffs' root: searchable by the group (not listable), nothing more for others than before
	assert_equal "$(stat -c %g /sys/fs/bpf)" "$LT_PG_GID"
	m=$(stat -c %a /sys/fs/bpf)
	(((8#$m & 8#070) == 8#010))
	(((8#$m & 8#007) == (8#${LT_BPFFS_ROOT#* } & 8#007)))
	# the group's member with CAP_BPF alone reads it: status, counters, maps
	run --separate-stderr $LT_READER "$LT" status --json
	assert_success
	assert_equal "$(jq -c '[.probes[] | select(.loaded) | .name]' <<<"$output")" '["exec","exit","fork"]'
	# the same programs and counters root sees
	assert_equal "$(jq -c '[.probes[] | select(.loaded) | .prog_id]' <<<"$output")" \
		"$(status_json | jq -c '[.probes[] | select(.loaded) | .prog_id]')"
	# and where state lives, as root sees it (without the BTF by id, CAP_SYS_ADMIN's)
	assert_equal "$(jq -c .state <<<"$output")" "$(status_json | jq -c .state)"
	[ "$(jq -c .state <<<"$output")" != null ]
	# another user with CAP_BPF: refused by the pins' modes
	run --separate-stderr setpriv --reuid nobody --regid nogroup --clear-groups --inh-caps=-all,+bpf \
		--ambient-caps=+bpf --bounding-set=-all,+bpf "$LT" status
	assert_failure 5
	assert_equal "$stderr" "lowtrace: permission denied: $PIN (run as root)"
	# a replace keeps the group
	run "$LT" load --replace --probes exec --pin-group "$LT_PG"
	assert_success
	run find "$PIN" \( -perm /o=rwx -o ! -gid "$LT_PG_GID" \)
	assert_output ""
}

@test "load --pin-group: the group's events (CAP_BPF alone) announces every loss window" {
	local drops out=$BATS_TEST_TMPDIR/ev.json
	command -v setpriv >/dev/null && command -v useradd >/dev/null || skip "no setpriv or useradd"
	pin_group_user
	new_cgroup
	run -0 "$LT" load --ringbuf-size 4096 --probes exec --cgroup "$NEW_CG" --pin-group "$LT_PG"
	[ "$(stat -c '%g %a' "$PIN/lost_flush")" = "$LT_PG_GID 660" ]
	# no consumer: a window open on each CPU, no record will carry them
	in_cg "$NEW_CG" taskset -c 0 bash -c 'for ((i = 0; i < 500; i++)); do /bin/true; done' &
	in_cg "$NEW_CG" taskset -c 1 bash -c 'for ((i = 0; i < 500; i++)); do /bin/true; done' &
	wait
	drops=$(probe_field exec drops)
	[ "$drops" -gt 500 ]
	# the reader claims them (lt_lost_flush) as lowtrace-events would run
	$LT_READER "$LT" events --json --type exec --duration 2 >"$out"
	run -0 jq -s '[.[] | select(.type == "lost") | .count] | add // 0' "$out"
	assert_equal "$output" "$drops"
	# a flush program the reader may not run: said, not skipped silently
	chmod 0600 "$PIN/lost_flush"
	run --separate-stderr $LT_READER "$LT" events --json --type exec --duration 1
	assert_success
	[[ "$stderr" == *"lowtrace: cannot claim loss windows (Permission denied)"* ]]
}

@test "load --pin-group: the group's consumers (CAP_BPF alone) sweep tcp, with socket storage and with the hash" {
	local state sweeps err=$BATS_TEST_TMPDIR/err py
	command -v setpriv >/dev/null && command -v useradd >/dev/null || skip "no setpriv or useradd"
	pin_group_user
	for state in local hash; do
		if ! "$LT" load --probes tcp --state "$state" --pin-group "$LT_PG" >/dev/null 2>&1; then
			[ "$state" = local ] || fail "load --state hash failed"
			echo "# no socket storage for tracing programs (5.11+): hash only" >&3
			continue
		fi
		# what they write and run: the group's (0660)
		assert_equal "$(stat -c '%g %a' "$PIN/maps/lt_sweep" "$PIN/maps/lt_tcp_reap_keys" | sort -u)" \
			"$LT_PG_GID 660"
		# a connection older than a sweep: the hash's reaper gets its key
		python3 -c 'import socket, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
c = socket.create_connection(l.getsockname()); a, _ = l.accept(); time.sleep(8)' &
		py=$!
		bg_track "$py"
		sleep 2.5
		sweeps=$(bpftool -j map dump pinned "$PIN/maps/lt_sweep" | jq '.[0].formatted.value.sweeps')
		$LT_READER "$LT" events --json --duration 3 >/dev/null 2>"$err"
		run -0 cat "$err"
		refute_output --partial "cannot sweep"
		[ "$(bpftool -j map dump pinned "$PIN/maps/lt_sweep" | jq '.[0].formatted.value.sweeps')" -gt "$sweeps" ] ||
			fail "$state: the group's events did not sweep"
		# the live connection is no unseen one
		run -0 probe_field tcp unseen
		assert_output 0
		kill "$py"
		wait "$py" || true
		run -0 "$LT" unload
	done
}

@test "load --pin-group: an unknown group is one error line, exit 2, nothing loaded; without it root's pins" {
	local f="$BATS_TEST_TMPDIR/pg.conf"
	run --separate-stderr "$LT" load --probes exec --pin-group lt-no-such-group
	assert_failure 2
	assert_equal "$stderr" "lowtrace: --pin-group lt-no-such-group: no such group"
	[ ! -e "$PIN" ]
	printf '[load]\nprobes = exec\npin-group = lt-no-such-group\n' >"$f"
	run --separate-stderr "$LT" load --config "$f"
	assert_failure 2
	assert_equal "$stderr" "lowtrace: $f:3: --pin-group lt-no-such-group: no such group"
	[ ! -e "$PIN" ]
	# an option of load alone
	run --separate-stderr "$LT" events --pin-group root
	assert_failure 2
	# without it: root's alone, as before (0700 directories, 0600 pins, no programs pinned)
	run "$LT" load --probes exec
	assert_success
	assert_equal "$(stat -c '%u:%g %a' "$PIN" "$PIN/maps" "$PIN/links" | sort -u)" "0:0 700"
	assert_equal "$(find "$PIN" ! -type d -exec stat -c '%u:%g %a' {} + | sort -u)" "0:0 600"
	[ ! -e "$PIN/progs" ]
}

@test "events -o on a full disk: reported, the ring is held, every record written once there is room" {
	local total
	tiny_tmpfs 256k
	# the disk is full before the records come
	dd if=/dev/zero of="$TMPFS/fill" bs=4k 2>/dev/null || true
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" --ringbuf-size 4M >/dev/null
	events_bg -o "$TMPFS/ev.json"
	execs "$NEW_CG" 200
	sleep 1.5
	# reported once, as one line, and the process keeps running
	assert_equal "$(grep -c 'No space left on device' "$BATS_TEST_TMPDIR/ev.err")" 1
	grep -q "^lowtrace: writing $TMPFS/ev.json: No space left on device (holding the ring position" \
		"$BATS_TEST_TMPDIR/ev.err"
	! proc_gone "$EV"
	total=$(records_total)
	[ "$total" -ge 600 ]
	# room again: the next retry writes everything (the ring kept its position)
	rm "$TMPFS/fill"
	wait_lines "$total" "$TMPFS"
	grep -q "^lowtrace: writing $TMPFS/ev.json again$" "$BATS_TEST_TMPDIR/ev.err"
	"$LT" unload >/dev/null
	wait_rc "$EV" 10
	assert_equal "$(lines "$TMPFS/ev.json")" "$total"
	# counted in the stats at exit
	grep -Eq "^lowtrace: $TMPFS/ev.json: [1-9][0-9]* failed writes, opens or rotations$" \
		"$BATS_TEST_TMPDIR/ev.err"
}

@test "events -o into an unwritable directory: reported, retried, nothing skipped" {
	local total
	tiny_tmpfs 4m
	mount -o remount,ro "$TMPFS"
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" >/dev/null
	events_bg -o "$TMPFS/ev.json" --rotate-size 8K --rotate-keep 100
	execs "$NEW_CG" 100
	sleep 1.5
	assert_equal "$(grep -c '' "$BATS_TEST_TMPDIR/ev.err")" 1
	grep -q "^lowtrace: opening $TMPFS/ev.json: Read-only file system (holding" \
		"$BATS_TEST_TMPDIR/ev.err"
	! proc_gone "$EV"
	total=$(records_total)
	mount -o remount,rw "$TMPFS"
	wait_lines "$total" "$TMPFS"
	"$LT" unload >/dev/null
	wait_rc "$EV" 10
	assert_equal "$(lines "$TMPFS"/ev.json*)" "$total"
}

@test "events: --rotate-size without -o is a usage error" {
	run --separate-stderr "$LT" events --rotate-size 1M
	assert_failure 2
	assert_equal "$stderr" "lowtrace: events: --rotate-size and --rotate-keep need -o FILE"
}

# ---- metrics: per-workload counters, the probes' own cost ----

@test "the installed config names every option of load, metrics and events, and is accepted" {
	local conf="$REPO/dist/lowtrace.conf" c o
	for c in load metrics events; do
		for o in $("$LT" "$c" -h | grep -oE '^ +(-[A-Za-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
			[ "$o" != --config ] || continue
			# in its section, set or commented out
			sed -n "/^\[$c\]/,/^\[/p" "$conf" | grep -qE "^#? ?${o#--} = " ||
				fail "[$c] of dist/lowtrace.conf lacks ${o#--}"
		done
	done
	# every line as shipped parses (the commented ones uncommented too, but the ones that need
	# a real process or cgroup, or exclude each other)
	sed -E 's/^# ([a-z-]+ = )/\1/' "$conf" | grep -vE '^(pid|cgroup|text|replace|per-pid|count-only|count|duration) = ' \
		>"$BATS_TEST_TMPDIR/all.conf"
	run --separate-stderr "$LT" metrics --config "$BATS_TEST_TMPDIR/all.conf" --listen bad
	assert_failure 2
	assert_equal "$stderr" "lowtrace: --listen bad: want HOST:PORT or [V6]:PORT with a numeric address"
}

# ---- the units' sandbox, without systemd ----

@test "the units' hardening: load as root, events -o and metrics as the pins' group with CAP_BPF alone, / read-only, no_new_privs" {
	command -v unshare >/dev/null && command -v setpriv >/dev/null && command -v useradd >/dev/null ||
		skip "no unshare, setpriv or useradd"
	local log sb
	pin_group_user
	# the log directory: the reader's (LogsDirectory), where it can reach it
	log=$(mktemp -d /tmp/lowtrace-units.XXXXXX)
	LT_TMPDIRS+=("$log")
	chmod 0755 "$log"
	PORT=$(free_port)
	# ProtectSystem=strict: every mount read-only but the API ones (bpffs and cgroup2 under
	# /sys stay writable); LogsDirectory: one writable directory of the reader's; the load
	# unit's CapabilityBoundingSet, the readers' user and CAP_BPF, NoNewPrivileges
	sb="setpriv --no-new-privs --bounding-set=-all,+bpf,+perfmon,+sys_admin,+sys_resource,+chown"
	run --separate-stderr unshare -m --propagation slave bash -c '
		set -e
		mount -t tmpfs -o "mode=0700,uid=$6,gid=$7" lt-logs "$2"
		mount -o remount,bind,ro /
		! touch /lowtrace-rw-check 2>/dev/null
		$1 "$3" load --probes exec,exit,fork --pin-group "$8" >/dev/null
		$5 "$3" events -o "$2/events.json" --duration 4 &
		ev=$!
		$5 "$3" metrics --listen "127.0.0.1:$4" >/dev/null &
		m=$!
		sleep 1
		/bin/true lt-sandbox-mark
		# metrics may still be starting on a busy machine: retried for 10 s
		python3 -c "import sys, time, urllib.request
for i in range(100):
    try:
        b = urllib.request.urlopen(\"http://127.0.0.1:%s/metrics\" % sys.argv[1], timeout=10).read()
        break
    except OSError:
        time.sleep(0.1)
sys.stdout.write(b.decode())" "$4" >"$2/metrics.txt"
		wait "$ev"
		# the readers ran as the user
		stat -c %u "$2/events.json"
		kill "$m"
		wait "$m" || true
		$1 "$3" unload >/dev/null
		grep -c lt-sandbox-mark "$2/events.json"
		grep -c "^lowtrace_events_total{probe=\"exec\"} [1-9]" "$2/metrics.txt"
	' sandbox "$sb" "$log" "$LT" "$PORT" "$LT_READER" "$LT_PG_UID" "$LT_PG_GID" "$LT_PG"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$output" "$(printf '%s\n1\n1' "$LT_PG_UID")"
	[ ! -e "$PIN" ]
}

# The README's examples, in its order: every line of its code blocks that starts with the root
# prompt and runs lowtrace (`make load`/`make unload` as `lowtrace load`/`unload`; other make
# targets are not run) or bpftool; a trailing "  # comment" is not part of the command. A stream
# (events) runs 2 s. A `load` example's sample output must be what load prints now, numbers
# and the state line aside.
@test "README: the prompt lines run in order; load's sample output is current" {
	local readme="$BATS_TEST_DIRNAME/../../README.md" line cmd w n=0 want=() got
	local -a words
	# readme_sample: compare the sample under the last load example with its real output
	readme_sample() {
		[ "${#want[@]}" -gt 0 ] || return 0
		# the state line and lt_marks name what this kernel has (hashes before 5.11), the
		# identity line this machine's hierarchies (which one names workloads, where, how many)
		local norm='s/[0-9]+/N/g; s/ +/ /g; s/ $//; s/^state: .*/state: (the kernel'"'"'s)/;
			s/^([a-z]+ lt_marks) .*/\1 (the kernel'"'"'s)/;
			s/^identity: .*/identity: (the machine'"'"'s)/'
		assert_equal "$(sed -E "$norm" <<<"$got")" \
			"$(printf '%s\n' "${want[@]}" | sed -E "$norm")"
	}
	while IFS= read -r line; do
		if [[ "$line" =~ ^"    # "(make |build/lowtrace |bpftool ) ]]; then
			readme_sample
			want=()
			got=
			cmd=${line#    # }
			cmd=${cmd%% #*}
			case "$cmd" in
			"make load"*) cmd="build/lowtrace load" ;;
			"make unload"*) cmd="build/lowtrace unload" ;;
			make*) continue ;;
			esac
			read -ra words <<<"$cmd"
			[ "${words[0]}" != build/lowtrace ] || words[0]=$LT
			n=$((n + 1))
			run --separate-stderr timeout -s INT 2 "${words[@]}"
			if [ "${words[1]}" = events ] && [ "$status" = 124 ]; then
				status=0 # still streaming: stopped by the timeout
			fi
			[ "$status" = 0 ] || {
				echo "README line '$line': exit $status: $stderr" >&2
				return 1
			}
			[ "${words[1]}" = load ] && got=$output
		elif [ -n "$got" ] && [[ "$line" == "    "* ]]; then
			want+=("${line#    }")
		else
			readme_sample
			want=()
			got=
		fi
	done <"$readme"
	readme_sample
	# Quick start, load, events, hist, bpftool: they all ran
	[ "$n" -ge 15 ]
}
