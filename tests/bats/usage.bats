#!/usr/bin/env bats
# Usage errors and -h: the command line is checked before anything touches the
# kernel, so these run on the host only (tests/vm/host-only). Each error is one
# line on stderr starting "lowtrace: ", exit 2, nothing on stdout.

load helpers

@test "the exit codes are documented in lowtrace -h" {
	run --separate-stderr -0 "$LT" -h
	assert_equal "$stderr" ""
	assert_line "    0  success"
	assert_line "    1  runtime failure (verifier, attach, I/O)"
	assert_line "    2  usage error (unknown command, option, probe or value)"
	assert_line "    3  not loaded (unload, status, events without a pinned suite)"
	assert_line "    4  already loaded (load while a suite is pinned, without --replace)"
	assert_line "    5  environment: no privileges, no kernel BTF, no bpffs"
	assert_line "    7  events as a subscriber: the owner of the ring stopped"
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
	assert_equal "$stderr" "lowtrace: unknown probe 'nope' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open, file, cred, priv, syscalls, runq, bio)"
	lt_fails 2 load --probes ''
	lt_fails 2 load --probes ,
	lt_fails 2 run --probes exec,,fork
	lt_fails 2 events --type clone
	assert_equal "$stderr" "lowtrace: unknown type 'clone' (known: exec, exit, fork, signal, oom, tcp, tcp_retrans, open, file, cred, priv)"
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

@test "--rate-limit: a bad list is one error line naming what is wrong, load and run alike" {
	local cmd
	for cmd in load run; do
		lt_fails 2 "$cmd" --rate-limit exec
		assert_equal "$stderr" "lowtrace: --rate-limit: 'exec' is not PROBE=N/s"
		lt_fails 2 "$cmd" --rate-limit exec=5/m
		assert_equal "$stderr" "lowtrace: --rate-limit: 'exec=5/m' is not PROBE=N/s"
		lt_fails 2 "$cmd" --rate-limit exec=0/s
		assert_equal "$stderr" "lowtrace: --rate-limit: exec: the rate must be 1 to 1000000000 events/s per cgroup"
		lt_fails 2 "$cmd" --rate-limit exec=99999999999/s
		assert_equal "$stderr" "lowtrace: --rate-limit: exec: the rate must be 1 to 1000000000 events/s per cgroup"
		lt_fails 2 "$cmd" --rate-limit syscalls=5/s
		assert_equal "$stderr" "lowtrace: --rate-limit: syscalls writes no records (an aggregate probe: nothing to hold back)"
		lt_fails 2 "$cmd" --rate-limit nosuch=1/s
		assert_equal "$stderr" "lowtrace: --rate-limit: unknown probe 'nosuch'"
		lt_fails 2 "$cmd" --rate-limit exec=1/s,exec=2/s
		assert_equal "$stderr" "lowtrace: --rate-limit: exec given twice"
		lt_fails 2 "$cmd" --probes fork --rate-limit exec=5/s
		assert_equal "$stderr" "lowtrace: --rate-limit: exec is not loaded (add it to --probes)"
	done
}
