#!/usr/bin/env bats
# profile: on-CPU stacks (perf_event, software cpu-clock here) and off-CPU
# time (tp_btf sched_switch), counted in the kernel, symbolized at the end.
# Workloads: build/tests/workloads/spin (frame pointers everywhere).

load helpers

setup() {
	lt_setup
	need_workloads spin
	SPIN=$WLDIR/spin
}

# start_spin MODE SECS: the workload in the background; sets WL
start_spin() {
	"$SPIN" "$1" "$2" 3>&- &
	WL=$!
	bg_track "$WL"
}

@test "profile: on-CPU folded stacks name the workload's functions, about 2:1" {
	start_spin spin 30
	run --separate-stderr -0 "$LT" profile -F 199 -p "$WL" --duration 3
	local out=$BATS_TEST_TMPDIR/folded
	printf '%s\n' "$output" >"$out"
	# folded: "frame;frame;... COUNT", one stack per line, merged
	run -1 grep -Ev '^[^ ]+ [0-9]+$' "$out"
	local a b
	a=$(folded_sum '^spin;.*;main;lt_spin_alpha;lt_spin_work ' "$out")
	b=$(folded_sum '^spin;.*;main;lt_spin_beta;lt_spin_work ' "$out")
	echo "alpha=$a beta=$b" >&3
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ]
	# alpha does twice beta's work: 2:1, loosely (sampling noise)
	[ $((a * 10)) -ge $((b * 13)) ] && [ $((a * 10)) -le $((b * 35)) ]
	# the summary counts what was lost; our frame-pointer workload is never cut short
	[[ "$stderr" == *"samples in "* ]]
	[[ "$stderr" == *"kernel_stack_collisions=0 user_stack_collisions=0"* ]]
	[[ "$stderr" =~ cut\ short:\ ([0-9]+)\ of ]]
	local total
	total=$(awk '{ s += $NF } END { print s }' "$out")
	echo "cut short: ${BASH_REMATCH[1]} of $total" >&3
	[ "${BASH_REMATCH[1]}" -le $((total / 10)) ]
}

@test "profile: samples taken in the kernel carry kernel frames, samples in user space none" {
	# dd zeroes 4 MiB a read in the kernel (read_zero): nearly all its samples are in kernel
	# mode; the spin loop makes no system call: its samples interrupt user mode, no kernel walk.
	# One system-wide profile of both (a load and a symbolization fewer than one each)
	dd if=/dev/zero of=/dev/null bs=4M count=100000000 2>/dev/null 3>&- &
	bg_track "$!"
	start_spin spin 30
	run --separate-stderr -0 "$LT" profile -F 199 --duration 1
	local out=$BATS_TEST_TMPDIR/folded k t
	printf '%s\n' "$output" >"$out"
	k=$(folded_sum '^dd;.*_\[k\]' "$out")
	t=$(folded_sum '^dd;' "$out")
	echo "dd: $k of $t samples with kernel frames" >&3
	[ "$t" -gt 50 ] && [ $((k * 10)) -ge $((t * 8)) ]
	k=$(folded_sum '^spin;.*_\[k\]' "$out")
	t=$(folded_sum '^spin;' "$out")
	echo "spin: $k of $t samples with kernel frames" >&3
	# (beside dd and the profiler on two emulated CPUs the spin takes its interrupts and
	# switches in kernel mode: 10 and 24 of about 200 in 6.12 guests; a kernel walk of its
	# user-mode samples would give every one kernel frames)
	[ "$t" -gt 50 ] && [ $((k * 4)) -le "$t" ]
}

@test "profile --off-cpu: blocked nanoseconds under lt_block_sleep, through the kernel's sleep" {
	start_spin sleep 30
	run --separate-stderr -0 "$LT" profile --off-cpu -p "$WL" --duration 2
	local out=$BATS_TEST_TMPDIR/folded
	printf '%s\n' "$output" >"$out"
	run -0 grep -E '^spin;.*;main;lt_block_sleep;.*(do_nanosleep|schedule)_\[k\]' "$out"
	# no tracing machinery on top of the stacks
	run -1 grep -E 'bpf_prog_|bpf_trace_run' "$out"
	# it sleeps all the time: close to 2 s of blocked time in 2 s
	local ns
	ns=$(folded_sum 'lt_block_sleep' "$out")
	echo "blocked ns: $ns" >&3
	[ "$ns" -ge 1000000000 ] && [ "$ns" -le 2600000000 ]
	[[ "$stderr" == *"blocks in "* ]]
}

@test "profile: JSON and pprof outputs; protoc reads the pprof back" {
	start_spin spin 30
	run --separate-stderr -0 "$LT" profile -F 99 -p "$WL" --duration 2 --format json
	local j=$output
	run -0 jq -e '.mode == "cpu" and .frequency_hz == 99 and .samples > 0 and
		(.stacks | length) > 0 and ([.stacks[].count] | add) == .samples and
		(.lost | has("kernel_stack_collisions"))' <<<"$j"
	run -0 jq -e --argjson pid "$WL" 'any(.stacks[]; .pid == $pid and .comm == "spin" and
		any(.frames[]; .name == "lt_spin_alpha" and (.module | endswith("/spin"))))' <<<"$j"
	local pb=$BATS_TEST_TMPDIR/cpu.pb.gz
	run -0 "$LT" profile -F 99 -p "$WL" --duration 2 --format pprof -o "$pb"
	[ ! -e "$pb.tmp-"* ]
	run -0 bash -c "gzip -dc '$pb' | protoc --decode=perftools.profiles.Profile \
		-I '$BATS_TEST_DIRNAME/../unit' profile.proto"
	[[ "$output" == *'"lt_spin_alpha"'* ]]
	[[ "$output" == *'"lt_spin_beta"'* ]]
	[[ "$output" == *'"nanoseconds"'* ]]
	[[ "$output" == *'"cpu"'* ]]
}

@test "profile: thousands of distinct stacks, none lost to collisions" {
	# a stack-trace map (bpf_get_stackid, before 7c89830) lost ~4 % of these samples here
	start_spin tree 60
	run --separate-stderr -0 "$LT" profile -F 499 -p "$WL" --duration 3
	local n
	# distinct stacks as the kernel counted them (folded output merges equal names)
	n=$(sed -n 's/.* samples in .* s, \([0-9]*\) stacks; .*/\1/p' <<<"$stderr")
	echo "distinct stacks: $n; $stderr"
	[ "$n" -ge 300 ]
	[[ "$output" == *";lt_tree;lt_tree;"* ]]
	[[ "$stderr" == *" kernel_stack_collisions=0 user_stack_collisions=0 "* ]]
	[[ "$stderr" == *" map_full=0 "* ]]
	[[ "$stderr" == *" stack_table_full=0"* ]]
}

@test "profile: a process that exits before the end is still symbolized" {
	"$LT" profile -F 99 --duration 4 >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	local pr=$!
	bg_track "$pr"
	wait_line "$BATS_TEST_TMPDIR/err" 'on-CPU' "$pr"
	"$SPIN" spin 1
	wait_rc "$pr" 30
	[ "$RC" = 0 ] || { cat "$BATS_TEST_TMPDIR/err"; false; }
	# on failure: what spin's stacks looked like
	grep -qE '^spin;.*;main;lt_spin_(alpha|beta);lt_spin_work ' "$BATS_TEST_TMPDIR/out" || {
		grep '^spin' "$BATS_TEST_TMPDIR/out" | head -5
		cat "$BATS_TEST_TMPDIR/err"
		false
	}
}

@test "profile -p: the process exits mid-run: exit 0, a note, what was collected" {
	start_spin spin 60
	local out=$BATS_TEST_TMPDIR/out
	"$LT" profile -F 99 -p "$WL" --duration 60 >"$out" 2>"$out.err" 3>&- &
	local pr=$!
	bg_track "$pr"
	wait_line "$out.err" 'on-CPU' "$pr"
	sleep 1
	kill -TERM "$WL"
	wait_rc "$pr" 30
	[ "$RC" = 0 ]
	run -0 grep -F "process $WL exited after" "$out.err"
	run -0 grep -F "lt_spin_work" "$out"
}

@test "profile: bad input is one line and exit 2, before anything is loaded" {
	run --separate-stderr -2 "$LT" profile -F 0 --duration 1
	assert_equal "$stderr" "lowtrace: -F 0: out of range: 1 to $(cat /proc/sys/kernel/perf_event_max_sample_rate) Hz (kernel.perf_event_max_sample_rate)"
	run --separate-stderr -2 "$LT" profile -F 100000000 --duration 1
	[[ "$stderr" == "lowtrace: -F 100000000: out of range"* ]]
	run --separate-stderr -2 "$LT" profile -p 2000000000 --duration 1
	assert_equal "$stderr" "lowtrace: --pid: invalid value '2000000000'"
	# a pid that is free now
	local free=$((0x3ffffff0))
	run --separate-stderr -2 "$LT" profile -p "$free" --duration 1
	assert_equal "$stderr" "lowtrace: --pid $free: no such process"
	run --separate-stderr -2 "$LT" profile --duration 1 -o /nonexistent/dir/out
	assert_equal "$stderr" "lowtrace: -o /nonexistent/dir/out: cannot write there: No such file or directory"
	run --separate-stderr -2 "$LT" profile --duration 1 -o "$BATS_TEST_TMPDIR"
	assert_equal "$stderr" "lowtrace: -o $BATS_TEST_TMPDIR: a directory: refused"
	run --separate-stderr -2 "$LT" profile --duration 1 --format svg
	assert_equal "$stderr" "lowtrace: --format: unknown format 'svg' (known: folded, pprof, json)"
	run --separate-stderr -2 "$LT" profile --leaks
	[[ "$stderr" == "lowtrace: profile: option '--leaks' does not apply here"* ]]
	run --separate-stderr -2 "$LT" load --probes profile
	assert_equal "$stderr" "lowtrace: probe 'profile' is loaded by 'lowtrace profile', not here"
	[ ! -e "$PIN" ]
	# nothing of ours stays in the kernel
	# the checks come before anything is loaded: no bpf(BPF_PROG_LOAD) at all
	run -2 strace -f -qq --seccomp-bpf -e trace=bpf "$LT" profile -F 0 --duration 1
	[[ "$output" != *BPF_PROG_LOAD* ]]
}

# on_tty CMD...: run CMD with stdin, stdout and stderr on a new terminal (`run` style: status,
# output holds what the terminal showed, \r\n as \n)
on_tty() {
	local q
	q=$(printf '%q ' "$@")
	run script -qec "$q" /dev/null
	output=${output//$'\r'/}
}

@test "--format pprof is binary: refused on a terminal, also as -o /dev/tty; -o /dev/stdout (a link) refused" {
	local e="lowtrace: --format pprof is binary: write it with -o FILE"
	on_tty "$LT" profile --format pprof --duration 1
	assert_equal "$status" 2
	assert_output "$e"
	on_tty "$LT" profile --format pprof -o /dev/tty --duration 1
	assert_equal "$status" 2
	assert_output "lowtrace: -o /dev/tty: a terminal: --format pprof is binary, write it to a file"
	# /dev/stdout is a symbolic link: never followed, whatever it leads to
	on_tty "$LT" profile --format pprof -o /dev/stdout --duration 1
	assert_equal "$status" 2
	assert_output "lowtrace: -o /dev/stdout: a symbolic link (never followed): refused"
	start_spin sleep 30
	on_tty "$LT" alloc -p "$WL" --format pprof -o /dev/tty --duration 1
	assert_equal "$status" 2
	assert_output "lowtrace: -o /dev/tty: a terminal: --format pprof is binary, write it to a file"
	# a device that is not a terminal is written in place, as before
	run --separate-stderr -0 "$LT" profile --format pprof -o /dev/null --duration 1
}

@test "profile -o FILE that cannot be replaced (/proc): the temporary file and the real error" {
	run --separate-stderr -2 "$LT" profile --duration 1 -o /proc/version
	assert_regex "$stderr" '^lowtrace: -o /proc/version: cannot create /proc/version\.tmp-[0-9]+ to replace it with: No such file or directory$'
	assert_one_error_line
}

@test "profile -c CGROUP: only tasks inside; one kernel BTF open per run" {
	[ -n "$CG2_ROOT" ] || skip "no cgroup v2 mount: findmnt -t cgroup2 finds nothing"
	new_cgroup
	local cg=$NEW_CG
	# the same workload inside (spin) and outside (a copy named spin2)
	cp "$SPIN" "$BATS_TEST_TMPDIR/spin2"
	# nice 10: under TCG two busy loops at the loader's priority made loading 6 times slower
	nice -n 10 "$BATS_TEST_TMPDIR/spin2" spin 30 3>&- &
	bg_track $!
	nice -n 10 bash -c "echo \$\$ >'$cg/cgroup.procs'; exec '$SPIN' spin 30" 3>&- &
	bg_track $!
	run --separate-stderr -0 strace -f -qq --seccomp-bpf -e trace=openat \
		-o "$BATS_TEST_TMPDIR/strace" "$LT" profile -F 99 -c "$cg" --duration 2
	[[ "$output" == *"spin;"*"lt_spin_work"* ]]
	[[ "$output" != *"spin2;"* ]]
	run -0 grep -c '/sys/kernel/btf/vmlinux' "$BATS_TEST_TMPDIR/strace"
	assert_output 1
}
