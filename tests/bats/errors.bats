#!/usr/bin/env bats
# Errors: one line on stderr starting "lowtrace: ", the documented exit code,
# nothing on stdout, and a failed load leaves nothing loaded or pinned.

load helpers

# lt_fails CODE ARGS...: run lowtrace, expect CODE, one error line, no stdout
lt_fails() {
	local code=$1
	shift
	run --separate-stderr "$LT" "$@"
	assert_equal "$status" "$code"
	assert_one_error_line
	assert_output ''
}

@test "the exit codes are documented in lowtrace -h" {
	run --separate-stderr -0 "$LT" -h
	assert_equal "$stderr" ""
	assert_line "    0  success"
	assert_line "    1  runtime failure (verifier, attach, I/O)"
	assert_line "    2  usage error (unknown command, option, probe or value)"
	assert_line "    3  not loaded (unload, status, events without a pinned suite)"
	assert_line "    4  already loaded (load while a suite is pinned, without --replace)"
	assert_line "    5  environment: no privileges, no kernel BTF, no bpffs"
	local cmd
	for cmd in load unload status events run; do
		run --separate-stderr -0 "$LT" "$cmd" -h
		assert_line --regexp "^NAME$"
		assert_line --regexp "^    lowtrace $cmd - "
		assert_equal "$stderr" ""
	done
}

@test "unknown command: exit 2" {
	lt_fails 2 frobnicate
	assert_equal "$stderr" "lowtrace: unknown command 'frobnicate' (see 'lowtrace -h')"
}

@test "missing command: exit 2" {
	lt_fails 2
	assert_equal "$stderr" "lowtrace: missing command (see 'lowtrace -h')"
}

@test "unknown option, global or per command: exit 2" {
	lt_fails 2 --frob
	assert_equal "$stderr" "lowtrace: unknown option '--frob' (see 'lowtrace -h')"
	lt_fails 2 load --frob
	assert_equal "$stderr" "lowtrace: load: unknown option '--frob' (see 'lowtrace load -h')"
	lt_fails 2 events -x
	assert_regex "$stderr" "^lowtrace: events: unknown option "
	assert_nothing_loaded
}

@test "option that does not apply to the command: exit 2" {
	lt_fails 2 unload --json
	assert_equal "$stderr" "lowtrace: unload: option '--json' does not apply here (see 'lowtrace unload -h')"
	lt_fails 2 events --ringbuf-size 8192
	# the option is named, not its value
	assert_equal "$stderr" "lowtrace: events: option '--ringbuf-size' does not apply here (see 'lowtrace events -h')"
	lt_fails 2 load --count 3
	lt_fails 2 run --replace
	assert_equal "$stderr" "lowtrace: run: option '--replace' does not apply here (see 'lowtrace run -h')"
	lt_fails 2 status --text
	assert_nothing_loaded
}

@test "unexpected argument: exit 2" {
	lt_fails 2 load exec
	assert_equal "$stderr" "lowtrace: load: unexpected argument 'exec' (see 'lowtrace load -h')"
	assert_nothing_loaded
}

@test "missing option value: exit 2" {
	local opt
	for opt in --probes --pid --cgroup --ringbuf-size; do
		lt_fails 2 load "$opt"
		assert_equal "$stderr" "lowtrace: load: option '$opt' needs a value"
	done
	for opt in --type --pid --count --duration; do
		lt_fails 2 events "$opt"
		assert_equal "$stderr" "lowtrace: events: option '$opt' needs a value"
	done
	assert_nothing_loaded
}

@test "unknown probe in --probes, unknown type in --type, empty lists: exit 2" {
	lt_fails 2 load --probes exec,nope
	assert_equal "$stderr" "lowtrace: unknown probe 'nope' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open, syscalls, runq, bio)"
	lt_fails 2 load --probes ''
	lt_fails 2 load --probes ,
	lt_fails 2 run --probes exec,,fork
	lt_fails 2 events --type clone
	assert_equal "$stderr" "lowtrace: unknown type 'clone' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open)"
	assert_nothing_loaded
}

@test "bad --pid: exit 2" {
	local v
	for v in abc 0 -1 +5 12x '' 1073741824 99999999999999999999; do
		lt_fails 2 load --pid "$v"
		assert_equal "$stderr" "lowtrace: --pid: invalid value '$v'"
	done
	lt_fails 2 events --pid 0
	assert_nothing_loaded
}

@test "bad --ringbuf-size: exit 2" {
	local v
	for v in 1000 2048 12288 0 -4096 4096X 2G; do
		lt_fails 2 load --ringbuf-size "$v"
		assert_regex "$stderr" "^lowtrace: --ringbuf-size: "
	done
	lt_fails 2 load --ringbuf-size 1000
	assert_equal "$stderr" "lowtrace: --ringbuf-size: 1000 is not a power of two between 4096 and 1G"
	assert_nothing_loaded
}

@test "bad --count and --duration: exit 2" {
	lt_fails 2 events --count x
	assert_equal "$stderr" "lowtrace: --count: invalid value 'x'"
	lt_fails 2 events --duration -1
	assert_equal "$stderr" "lowtrace: --duration: invalid value '-1'"
}

@test "--cgroup on a path that is not a cgroup v2 directory: exit 2" {
	lt_fails 2 load --cgroup /tmp
	assert_equal "$stderr" "lowtrace: --cgroup /tmp: not a cgroup v2 directory"
	assert_nothing_loaded
	lt_fails 2 load --cgroup /nonexistent-lowtrace-dir
	assert_equal "$stderr" "lowtrace: --cgroup /nonexistent-lowtrace-dir: No such file or directory"
	assert_nothing_loaded
	# a cgroup v1 hierarchy is not v2 either
	local v1
	v1=$(findmnt -n -o TARGET -t cgroup | head -n1)
	if [ -n "$v1" ]; then
		lt_fails 2 load --cgroup "$v1"
		assert_equal "$stderr" "lowtrace: --cgroup $v1: not a cgroup v2 directory"
	fi
	assert_nothing_loaded
}

@test "load while loaded: exit 4, the existing suite is intact" {
	run -0 "$LT" load --ringbuf-size 8192 --probes exec,exit
	local ids before
	ids=$(lt_prog_names | paste -sd' ')
	before=$(status_json | jq -c 'del(.probes[].events, .probes[].drops, .identity.cgroups)')
	local ls_before
	ls_before=$(ls -lR "$PIN")

	lt_fails 4 load
	assert_equal "$stderr" "lowtrace: already loaded (pinned at /sys/fs/bpf/lowtrace): run 'lowtrace unload' first, or load --replace"

	run -0 status_json
	run -0 jq -c 'del(.probes[].events, .probes[].drops, .identity.cgroups)' <<<"$output"
	assert_output "$before"
	run -0 ls -lR "$PIN"
	assert_output "$ls_before"
	wait_prog_names "$ids"
	# and it still records
	local out="$BATS_TEST_TMPDIR/ev" sp
	events_bg "$out"
	/bin/sh -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	wait_record "$out" ".type == \"exec\" and .pid == $sp"
}

@test "load --replace with a bad --cgroup: exit 2 and the existing suite is intact" {
	run -0 "$LT" load
	local before
	before=$(status_json | jq -c 'del(.probes[].events, .probes[].drops, .identity.cgroups)')
	lt_fails 2 load --replace --cgroup /tmp
	assert_equal "$stderr" "lowtrace: --cgroup /tmp: not a cgroup v2 directory"
	# a usage error changes nothing
	run -0 status_json
	run -0 jq -c 'del(.probes[].events, .probes[].drops, .identity.cgroups)' <<<"$output"
	assert_output "$before"
}

@test "unload, status, events when not loaded: exit 3" {
	lt_fails 3 unload
	assert_equal "$stderr" "lowtrace: not loaded: /sys/fs/bpf/lowtrace: No such file or directory"
	lt_fails 3 status
	assert_regex "$stderr" "^lowtrace: not loaded: "
	lt_fails 3 status --json
	assert_regex "$stderr" "^lowtrace: not loaded: "
	lt_fails 3 events
	assert_regex "$stderr" "^lowtrace: not loaded: .*run 'lowtrace load' first"
	lt_fails 3 events --count 1 --duration 1
	assert_nothing_loaded
}

@test "no privileges (uid 65534): load exits 5, nothing pinned or loaded" {
	as_nobody load
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: permission denied"
	assert_nothing_loaded

	# status and events say so too, they do not pretend nothing is loaded
	run -0 "$LT" load
	local cmd
	for cmd in status events; do
		as_nobody "$cmd"
		assert_equal "$status" 5
		assert_one_error_line
		assert_equal "$stderr" "lowtrace: permission denied: /sys/fs/bpf/lowtrace (run as root)"
	done
}

@test "no privileges (uid 65534): unload exits 5 and removes nothing" {
	run -0 "$LT" load
	as_nobody unload
	# exit 5 is "no privileges" in lowtrace -h, as status and events use it
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: permission denied"
	# the suite is untouched
	run -0 ls "$PIN/links"
	assert_output "$(tr ' ' '\n' <<<"$DEFAULT_LINKS")"
	run -0 "$LT" status
}

@test "root without CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON: load exits 5, nothing pinned or loaded" {
	# uid 0, but the capabilities are gone from the bounding set before the exec
	run --separate-stderr setpriv --bounding-set=-sys_admin,-bpf,-perfmon \
		--inh-caps=-sys_admin,-bpf,-perfmon "$LT" load
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: permission denied"
	assert_nothing_loaded
}

@test "no kernel BTF: load exits 5 naming BTF, nothing pinned or loaded" {
	run --separate-stderr unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec '$LT' load"
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: .*BTF"
	assert_nothing_loaded
}

@test "no bpffs possible: load exits 5 naming bpffs, nothing pinned or loaded" {
	run --separate-stderr unshare -m sh -c "
		if mountpoint -q /sys/fs/bpf; then umount -l /sys/fs/bpf || exit 100; fi
		mount -t tmpfs -o ro none /sys/fs || exit 101
		exec '$LT' load"
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: .*bpffs"
	assert_nothing_loaded
}

@test "bpffs not mounted: load mounts it (in a private mount namespace)" {
	# in a new mount namespace, bpffs is unmounted; load mounts it again, pins there,
	# and its pins disappear with the namespace: the host stays unloaded
	run --separate-stderr unshare -m --propagation private sh -c "
		umount -l /sys/fs/bpf 2>/dev/null
		mountpoint -q /sys/fs/bpf && exit 100
		'$LT' load >/dev/null || exit \$?
		stat -f -c %T /sys/fs/bpf
		stat -c %a /sys/fs/bpf
		'$LT' status --json | jq -r .pin_dir
		'$LT' unload >/dev/null"
	assert_equal "$status" 0
	assert_equal "$stderr" ""
	# mode=0700 (bpffs adds the sticky bit to its root)
	assert_output "$(printf 'bpf_fs\n1700\n/sys/fs/bpf/lowtrace')"
	assert_nothing_loaded
}

@test "run without privileges: exit 5, nothing loaded, no temp pin dir" {
	as_nobody run --duration 1
	assert_equal "$status" 5
	assert_one_error_line
	assert_nothing_loaded # includes: no lowtrace* entry in /sys/fs/bpf
}

@test "--count 0 and --duration 0 are refused, not taken as 'no limit': exit 2" {
	lt_fails 2 events --count 0
	assert_equal "$stderr" "lowtrace: --count: must be at least 1"
	lt_fails 2 run --duration 0
	assert_equal "$stderr" "lowtrace: --duration: must be at least 1"
	assert_nothing_loaded
}

@test "options that exclude or need each other: exit 2, one line naming both, before anything" {
	lt_fails 2 status --json --measure 1
	assert_equal "$stderr" "lowtrace: status: --json and --measure cannot be used together"
	lt_fails 2 status --measure 1 --json
	assert_equal "$stderr" "lowtrace: status: --json and --measure cannot be used together"
	lt_fails 2 events --json --text
	assert_equal "$stderr" "lowtrace: events: --json and --text cannot be used together"
	lt_fails 2 run --text --json --duration 1
	assert_equal "$stderr" "lowtrace: run: --json and --text cannot be used together"
	lt_fails 2 profile -F 99 --off-cpu --duration 1
	assert_equal "$stderr" "lowtrace: profile: -F and --off-cpu cannot be used together"
	lt_fails 2 hist runq --count 2
	assert_equal "$stderr" "lowtrace: hist: --count needs --interval"
	# --per-pid splits the syscalls histograms: without syscalls it would do nothing
	lt_fails 2 load --per-pid
	assert_equal "$stderr" "lowtrace: load: --per-pid needs --probes with syscalls (it splits the syscalls histograms per process)"
	lt_fails 2 load --per-pid --probes exec,runq
	assert_equal "$stderr" "lowtrace: load: --per-pid needs --probes with syscalls (it splits the syscalls histograms per process)"
	assert_nothing_loaded
}

@test "usage errors come before 'not loaded': every command, with nothing loaded, exits 2" {
	local cmd
	# an unknown option, for every command
	for cmd in load unload status events run hist top metrics profile alloc; do
		if [ "$cmd" = hist ]; then
			lt_fails 2 hist syscalls --bogus
		else
			lt_fails 2 "$cmd" --bogus
		fi
		assert_regex "$stderr" "^lowtrace: $cmd: unknown option '--bogus'"
	done
	# an option of another command, conflicts, bad values, stray arguments
	lt_fails 2 unload --json
	lt_fails 2 status --json --measure 1
	lt_fails 2 status extra
	lt_fails 2 events --json --text
	lt_fails 2 events --type nope
	lt_fails 2 hist --json --text
	lt_fails 2 hist syscalls --json --text
	lt_fails 2 hist nope
	lt_fails 2 hist runq --count 1
	lt_fails 2 top --rows 0
	lt_fails 2 top --json
	lt_fails 2 metrics --listen nonsense
	lt_fails 2 metrics --per-pid
	lt_fails 2 profile -F 0
	lt_fails 2 alloc
	assert_nothing_loaded
}

@test "load/run --pid of no process, or of a thread: exit 2; events --pid filters any pid" {
	local free=$((0x3ffffff0))
	lt_fails 2 load --pid "$free"
	assert_equal "$stderr" "lowtrace: --pid $free: no such process"
	lt_fails 2 run --pid "$free" --duration 1
	assert_equal "$stderr" "lowtrace: --pid $free: no such process"
	# the kernel filters compare the thread group: a thread's id would match nothing
	python3 -c 'import threading, time
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
time.sleep(30)' 3>&- &
	local p=$! tid= i
	bg_track "$p"
	for ((i = 0; i < 100; i++)); do
		tid=$(ls "/proc/$p/task" 2>/dev/null | grep -vx "$p" | head -n1)
		[ -z "$tid" ] || break
		sleep 0.05
	done
	[ -n "$tid" ]
	lt_fails 2 load --pid "$tid"
	assert_equal "$stderr" "lowtrace: --pid $tid: a thread of process $p (--pid takes the process id)"
	lt_fails 2 profile -p "$tid" --duration 1
	assert_equal "$stderr" "lowtrace: --pid $tid: a thread of process $p (--pid takes the process id)"
	assert_nothing_loaded
	# load -h says so
	run -0 "$LT" load -h
	assert_line "                         the process must exist (a process id, not a thread's)"
	# events filters records already in the ring: those of a process gone since count
	run -0 "$LT" load --probes exec
	run --separate-stderr -0 "$LT" events --pid "$free" --duration 1
	assert_output ''
}

@test "--cgroup on a file: not a cgroup v2 directory (exit 2), also while loaded" {
	lt_fails 2 load --cgroup /etc/passwd
	assert_equal "$stderr" "lowtrace: --cgroup /etc/passwd: not a cgroup v2 directory"
	if [ -n "$CG2_ROOT" ]; then
		lt_fails 2 load --cgroup "$CG2_ROOT/cgroup.procs"
		assert_equal "$stderr" "lowtrace: --cgroup $CG2_ROOT/cgroup.procs: not a cgroup v2 directory"
		lt_fails 2 profile -c "$CG2_ROOT/cgroup.procs" --duration 1
		assert_equal "$stderr" "lowtrace: --cgroup $CG2_ROOT/cgroup.procs: not a cgroup v2 directory"
	fi
	assert_nothing_loaded
	# a usage error is one before "already loaded"
	run -0 "$LT" load --probes exec
	lt_fails 2 load --cgroup /etc/passwd
	assert_equal "$stderr" "lowtrace: --cgroup /etc/passwd: not a cgroup v2 directory"
}

@test "hist without a probe names every aggregate probe of the table" {
	lt_fails 2 hist
	assert_equal "$stderr" "lowtrace: hist: which probe? (syscalls, runq or bio; see 'lowtrace hist -h')"
	lt_fails 2 hist --json
	assert_equal "$stderr" "lowtrace: hist: which probe? (syscalls, runq or bio; see 'lowtrace hist -h')"
	run -0 "$LT" hist -h
	assert_line "    lowtrace hist syscalls|runq|bio [--interval S] [--count N] [--json]"
}

@test "every option a command's -h lists is one that command accepts" {
	local cmd o n=0
	local -a pre
	for cmd in load unload status events run hist top metrics profile alloc; do
		pre=("$cmd")
		[ "$cmd" != hist ] || pre=(hist syscalls)
		run -0 "$LT" "${pre[@]}" -h
		for o in $(grep -oE '^ +(-[A-Za-z], )?--[a-z-]+' <<<"$output" | grep -oE -- '--[a-z-]+'); do
			# a value (if it takes one) and an extra argument: a usage error, but never
			# about the option itself
			run --separate-stderr timeout 10 "$LT" "${pre[@]}" "$o" 1 extra-argument
			[[ "$stderr" != *"does not apply"* && "$stderr" != *"unknown option"* ]] ||
				fail "$cmd -h lists $o, but: $stderr"
			n=$((n + 1))
		done
	done
	[ "$n" -ge 30 ]
}

@test "load --state, --max-threads, --max-conns: bad values exit 2 with one line, nothing loaded" {
	local args
	for args in "--state lru" "--state" "--max-threads 0" "--max-conns 0" "--max-conns x" \
		"--max-threads 99999999"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$LT" load $args
		assert_equal "$status" 2
		assert_one_error_line
		assert_nothing_loaded
	done
	run --separate-stderr "$LT" load --state lru
	assert_equal "$stderr" "lowtrace: --state: 'lru' is not auto, local or hash"
}

@test "load --state local: loads with local storage (5.11+); elsewhere exit 5, one line, nothing loaded" {
	run --separate-stderr "$LT" load --state local
	if [ "$status" = 0 ]; then
		run -0 status_json
		assert_equal "$(jq -c .state <<<"$output")" '{"task":"local","sk":"local"}'
		return
	fi
	assert_equal "$status" 5
	assert_one_error_line
	assert_nothing_loaded
}
