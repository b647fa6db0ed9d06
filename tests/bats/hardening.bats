#!/usr/bin/env bats
# What lowtrace, running as root, refuses to write and to read: an output name that is a link, a
# file another user owns or can write, anything but a regular file (events -o and its rotation,
# profile -o); a config file that is not a regular file owned by root or this user and writable
# by no one else; and the config parser's cases (inline comments, NUL bytes, raw bytes in its
# errors, duplicates, every section's values checked by every command). The links and files are
# planted by nobody in a world-writable sticky directory of the test's own, never a real file.

load helpers

# hard_dir: a sticky world-writable directory (like /tmp) with a root-only secret in it; sets D
# and SECRET (its contents in SECRET_SUM)
hard_dir() {
	D=$(mktemp -d /tmp/lowtrace-hard.XXXXXX)
	LT_TMPDIRS+=("$D")
	chmod 1777 "$D"
	SECRET="$D/secret"
	echo "root only" >"$SECRET"
	chmod 0600 "$SECRET"
	SECRET_SUM=$(sha256sum <"$SECRET")
}

# as_nobody_do CMD...: CMD as the hostile user (it plants the links and files)
as_nobody_do() {
	runuser -u nobody -- "$@"
}

assert_secret_intact() {
	assert_equal "$(sha256sum <"$SECRET")" "$SECRET_SUM"
	assert_equal "$(stat -c '%u %a' "$SECRET")" "0 600"
}

# conf TEXT: a config file root owns, mode 0644 (as make install puts it); sets CONF
conf() {
	CONF="$BATS_TEST_TMPDIR/lt.conf"
	printf "$1" >"$CONF"
	chmod 0644 "$CONF"
}

# ---- files lowtrace writes ----

@test "events -o: a symlink nobody planted to a root-only file is refused, the file untouched" {
	hard_dir
	as_nobody_do ln -s "$SECRET" "$D/ev.json"
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" >/dev/null
	# with records to write: the old code appended them to the secret
	(sleep 0.5; execs "$NEW_CG" 20) &
	bg_track $!
	run --separate-stderr timeout 10 "$LT" events -o "$D/ev.json" --duration 2
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: -o $D/ev.json: a symbolic link (never followed): refused"
	assert_secret_intact
	[ -L "$D/ev.json" ]
	# run: refused before anything is loaded
	"$LT" unload >/dev/null
	lt_fails 2 run -o "$D/ev.json" --probes exec --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/ev.json: a symbolic link (never followed): refused"
	assert_nothing_loaded
	assert_secret_intact
}

@test "events -o: a dangling symlink is refused and nothing is created where it points" {
	hard_dir
	as_nobody_do ln -s "$D/made-by-root" "$D/ev.json"
	lt_fails 2 events -o "$D/ev.json" --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/ev.json: a symbolic link (never followed): refused"
	[ ! -e "$D/made-by-root" ]
	[ ! -L "$D/made-by-root" ]
}

@test "events -o: a file nobody owns (0666) or root owns writable by others is refused" {
	hard_dir
	as_nobody_do touch "$D/ev.json"
	chmod 0666 "$D/ev.json"
	lt_fails 2 events -o "$D/ev.json" --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/ev.json: owned by uid 65534, not by this user (uid 0): refused"
	[ ! -s "$D/ev.json" ]
	# nobody's file, even mode 0600: nobody would read what root appends
	chmod 0600 "$D/ev.json"
	lt_fails 2 events -o "$D/ev.json" --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/ev.json: owned by uid 65534, not by this user (uid 0): refused"
	# root's own, but writable by group or others
	: >"$D/root.json"
	chmod 0666 "$D/root.json"
	lt_fails 2 events -o "$D/root.json" --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/root.json: writable by group or others (mode 0666): refused"
	chmod 0620 "$D/root.json"
	lt_fails 2 events -o "$D/root.json" --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/root.json: writable by group or others (mode 0620): refused"
	# a second name of another file (a hard link to the secret)
	ln "$SECRET" "$D/hard.json"
	lt_fails 2 events -o "$D/hard.json" --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/hard.json: has 2 hard links: refused"
	assert_secret_intact
}

@test "a FIFO as -o: exit 2 at once, for events and profile" {
	hard_dir
	mkfifo "$D/fifo"
	run --separate-stderr timeout 10 "$LT" events -o "$D/fifo" --duration 1
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: -o $D/fifo: not a regular file: refused"
	run --separate-stderr timeout 10 "$LT" profile -o "$D/fifo" --duration 1
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: -o $D/fifo: not a regular file: refused"
	assert_nothing_loaded
}

@test "profile -o: a planted symlink is refused before anything is loaded" {
	hard_dir
	as_nobody_do ln -s "$SECRET" "$D/prof.folded"
	lt_fails 2 profile -o "$D/prof.folded" --duration 1
	assert_equal "$stderr" "lowtrace: -o $D/prof.folded: a symbolic link (never followed): refused"
	assert_nothing_loaded
	[ -L "$D/prof.folded" ]
	assert_secret_intact
}

@test "files lowtrace creates are mode 0600 (events -o, profile -o)" {
	local d="$BATS_TEST_TMPDIR/out"
	mkdir "$d"
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" >/dev/null
	(sleep 0.5; execs "$NEW_CG" 5) &
	bg_track $!
	run --separate-stderr -0 "$LT" events -o "$d/ev.json" --count 3
	assert_equal "$(stat -c '%u %a' "$d/ev.json")" "0 600"
	[ -s "$d/ev.json" ]
	"$LT" unload >/dev/null
	run --separate-stderr -0 "$LT" profile -o "$d/prof.folded" --duration 1
	assert_equal "$(stat -c '%u %a' "$d/prof.folded")" "0 600"
}

@test "events -o rotation: a planted symlink at FILE.N is refused, at the start and while running" {
	hard_dir
	local f="$D/ev.json"
	as_nobody_do ln -s "$SECRET" "$f.2"
	lt_fails 2 events -o "$f" --rotate-size 1K --rotate-keep 3 --duration 1
	assert_equal "$stderr" "lowtrace: -o $f.2: a symbolic link (never followed): refused"
	rm "$f.2"
	# planted once events runs: the rotation stops (held, reported) rather than move the link
	new_cgroup
	"$LT" load --probes exec,exit,fork --cgroup "$NEW_CG" >/dev/null
	events_bg "$BATS_TEST_TMPDIR/ev.out" -o "$f" --rotate-size 1K --rotate-keep 3
	as_nobody_do ln -s "$SECRET" "$f.1"
	execs "$NEW_CG" 30
	# FILE.1 is the name moved on (FILE.1 -> FILE.2) before the one moved to (FILE -> FILE.1)
	wait_line "$BATS_TEST_TMPDIR/ev.out.err" "^lowtrace: rotating $f\.1: a symbolic link \(never followed\) \(holding" "$EV_PID"
	[ -L "$f.1" ]
	assert_equal "$(readlink "$f.1")" "$SECRET"
	assert_secret_intact
	# nothing was moved onto or through it
	[ ! -e "$f.2" ] && [ ! -L "$f.2" ]
}

# ---- the config file ----

@test "--config: a FIFO or a directory is exit 2 at once" {
	hard_dir
	mkfifo "$D/fifo"
	mkdir "$D/dir"
	local c
	for c in load events metrics; do
		run --separate-stderr timeout 10 "$LT" "$c" --config "$D/fifo"
		assert_equal "$status" 2
		assert_equal "$stderr" "lowtrace: --config $D/fifo: not a regular file"
		run --separate-stderr timeout 10 "$LT" "$c" --config "$D/dir"
		assert_equal "$status" 2
		assert_equal "$stderr" "lowtrace: --config $D/dir: a directory"
	done
	assert_nothing_loaded
}

@test "--config: owned by nobody, writable by group or others, or a symlink: refused" {
	hard_dir
	printf '[load]\nprobes = exec\n' >"$D/nobody.conf"
	chown nobody "$D/nobody.conf"
	chmod 0644 "$D/nobody.conf"
	lt_fails 2 load --config "$D/nobody.conf"
	assert_equal "$stderr" "lowtrace: --config $D/nobody.conf: owned by uid 65534, not by root or this user: refused"
	printf '[load]\nprobes = exec\n' >"$D/group.conf"
	chmod 0664 "$D/group.conf"
	lt_fails 2 load --config "$D/group.conf"
	assert_equal "$stderr" "lowtrace: --config $D/group.conf: writable by group or others (mode 0664): refused"
	chmod 0646 "$D/group.conf"
	lt_fails 2 events --config "$D/group.conf"
	assert_equal "$stderr" "lowtrace: --config $D/group.conf: writable by group or others (mode 0646): refused"
	as_nobody_do ln -s "$D/group.conf" "$D/link.conf"
	lt_fails 2 metrics --config "$D/link.conf"
	assert_equal "$stderr" "lowtrace: --config $D/link.conf: a symbolic link (never followed)"
	assert_nothing_loaded
	# root's, not writable by others: read
	chmod 0644 "$D/group.conf"
	run --separate-stderr -0 "$LT" load --config "$D/group.conf"
	assert_equal "$(status_json | jq -c '[.probes[] | select(.loaded) | .name]')" '["exec"]'
}

@test "--config: an inline # comment is not part of the value" {
	local d="$BATS_TEST_TMPDIR/out"
	mkdir "$d"
	conf "[events]\noutput = $d/ev.json   # where events go\ncount = 2\t# two\n[load] # the suite\nprobes = exec\n"
	new_cgroup
	run --separate-stderr -0 "$LT" load --config "$CONF" --cgroup "$NEW_CG"
	(sleep 0.5; execs "$NEW_CG" 5) &
	bg_track $!
	run --separate-stderr -0 timeout 10 "$LT" events --config "$CONF"
	assert_equal "$(ls "$d")" "ev.json"
	assert_equal "$(grep -c '' "$d/ev.json")" 2
	# a '#' inside a value (no space before it) is refused, not cut
	conf '[events]\noutput = /tmp/a#b\n'
	lt_fails 2 events --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:2: '#' inside a value (a comment needs a space before '#'; values cannot hold '#')"
}

@test "--config: a NUL byte has its own error; raw bytes are escaped in errors" {
	conf '[load]\nprobes = ex\0ec\n'
	lt_fails 2 load --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:2: NUL byte in line 2"
	conf '[load]\n\033[31mred\001\377 = 1\n'
	lt_fails 2 load --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:2: [load]: unknown option '\\x1b[31mred\\x01\\xff'"
	# the value of a known option too
	conf '[events]\ntype = \033]0;owned\007\n'
	lt_fails 2 events --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:2: unknown type '\\x1b]0;owned\\x07' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open, file, cred, priv)"
	# capped: a 4 000-byte value is not echoed whole
	conf "[load]\nprobes = $(head -c 4000 /dev/zero | tr '\0' x)\n"
	lt_fails 2 load --config "$CONF"
	[ "${#stderr}" -le 600 ]
	assert_nothing_loaded
}

@test "--config: a duplicate option is refused, naming it and both lines" {
	conf '[load]\nprobes = exec\nringbuf-size = 64K\n\nprobes = exit\n'
	lt_fails 2 load --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:5: [load]: 'probes' given twice (lines 2 and 5)"
	# in another command's section too, and across two headers of one section
	conf '[events]\ncount = 1\n[load]\n[events]\ncount = 2\n'
	lt_fails 2 load --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:5: [events]: 'count' given twice (lines 2 and 5)"
	assert_nothing_loaded
}

@test "--config: events and metrics check the [load] section as load does" {
	local c want cmd
	PORT=$(free_port)
	while IFS='|' read -r c want; do
		conf "[load]\n$c\n[metrics]\nlisten = 127.0.0.1:$PORT\n"
		for cmd in events metrics load; do
			# metrics would serve (and events wait) if the file passed: timeout 10
			run --separate-stderr timeout 10 "$LT" "$cmd" --config "$CONF"
			assert_equal "$status" 2
			assert_equal "$stderr" "lowtrace: $CONF:2: $want"
		done
	done <<'EOF'
ringbuf-size = 3|--ringbuf-size: 3 is not a power of two between 4096 and 1G
probes = bogus|unknown probe 'bogus' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open, file, cred, priv, syscalls, runq, bio)
state = sometimes|--state: 'sometimes' is not auto, local or hash
rate-limit = exec=fast|--rate-limit: 'exec=fast' is not PROBE=N/s
listen = 127.0.0.1:1|load: option '--listen' does not apply here (see 'lowtrace load -h')
EOF
	# and load checks [metrics] and [events] as their commands do
	conf '[load]\n[metrics]\nby = everything\n'
	lt_fails 2 load --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:3: --by: 'everything' is not unit, container or pod"
	conf '[load]\n[events]\ntype = bogus\n'
	lt_fails 2 load --config "$CONF"
	assert_equal "$stderr" "lowtrace: $CONF:3: unknown type 'bogus' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open, file, cred, priv)"
	assert_nothing_loaded
}
