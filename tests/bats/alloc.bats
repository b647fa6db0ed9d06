#!/usr/bin/env bats
# alloc: uprobes on the target's allocator, sampled in the kernel; reports by
# stack, leaks, folded and pprof. Workload: build/tests/workloads/allocs
# (frame pointers): waits for a line on stdin, then lt_alloc_alpha mallocs
# A MiB, lt_alloc_beta callocs B MiB (256 KiB blocks, freed), lt_leak_gamma
# leaks K blocks of 1000 bytes; then it exits.

load helpers

setup() {
	lt_setup
	need_workloads allocs allocs-static held
}

# alloc_run OUT A B K [alloc options]: the workload waits on a fifo; lowtrace
# alloc attaches to it; once attached the workload runs and exits, which ends
# lowtrace alloc. Sets RC (lowtrace's exit status); stderr in OUT.err.
alloc_run() {
	local out=$1 a=$2 b=$3 k=$4
	shift 4
	local fifo=$BATS_TEST_TMPDIR/go
	rm -f "$fifo"
	mkfifo "$fifo"
	"$WLDIR/allocs" "$a" "$b" "$k" <"$fifo" 3>&- &
	local wl=$!
	bg_track "$wl"
	exec 4>"$fifo"
	"$LT" alloc -p "$wl" "$@" >"$out" 2>"$out.err" 3>&- 4>&- &
	local al=$!
	bg_track "$al"
	wait_line "$out.err" 'attached' "$al" || true
	echo go >&4
	exec 4>&-
	wait_rc "$al" 120
	cat "$out.err" >&3
}

@test "alloc --sample-bytes 1: exact bytes and counts per function; the exit is noted" {
	local out=$BATS_TEST_TMPDIR/r
	alloc_run "$out" 8 4 0 --sample-bytes 1
	[ "$RC" = 0 ]
	run -0 grep -E '^ +8388608 +32 +32  lt_alloc_alpha <- main( |$)' "$out"
	run -0 grep -E '^ +4194304 +16 +16  lt_alloc_beta <- main( |$)' "$out"
	run -0 grep -F "exited after" "$out.err"
	run -0 grep -F "recording every allocation" "$out.err"
	run -0 grep -E "lost: .*map_full=0" "$out.err"
}

@test "alloc: default sampling estimates the 2:1 byte ratio within 20 %" {
	local out=$BATS_TEST_TMPDIR/r
	alloc_run "$out" 2048 1024 0 --format folded
	[ "$RC" = 0 ]
	local a b
	a=$(folded_sum ';main;lt_alloc_alpha;malloc ' "$out")
	b=$(folded_sum ';main;lt_alloc_beta;calloc ' "$out")
	echo "alpha=$a (true 2147483648) beta=$b (true 1073741824)" >&3
	[ "$b" -gt 0 ]
	# a / b within 20 % of 2
	[ $((a * 100)) -ge $((b * 160)) ] && [ $((a * 100)) -le $((b * 240)) ]
	# sampled: far fewer samples than the 12288 calls
	run -0 grep -E 'alloc: 12288 calls, [0-9]+ sampled' "$out.err"
}

@test "alloc --leaks: K leaked blocks from the leaking function, none from the freed ones" {
	local out=$BATS_TEST_TMPDIR/r
	alloc_run "$out" 2 1 7 --sample-bytes 1 --leaks
	[ "$RC" = 0 ]
	sed -n '/^LEAKS/,$p' "$out" >"$out.leaks"
	run -0 grep -E '^ +7000 +7 +7  lt_leak_gamma <- main( |$)' "$out.leaks"
	run -1 grep -E 'lt_alloc_(alpha|beta)' "$out.leaks"
}

@test "alloc -p a process still starting: it waits for the libraries, then counts exactly" {
	local out=$BATS_TEST_TMPDIR/r fifo=$BATS_TEST_TMPDIR/go wl i
	mkfifo "$fifo"
	# held stops allocs right after its exec: ld.so has mapped no library yet
	"$WLDIR/held" "$WLDIR/allocs" 2 1 0 <"$fifo" >"$out.pid" 3>&- &
	local held=$!
	bg_track "$held"
	exec 4>"$fifo"
	for ((i = 0; i < 200; i++)); do
		wl=$(cat "$out.pid")
		[ -n "$wl" ] && break
		sleep 0.05
	done
	[ -n "$wl" ]
	bg_track "$wl"
	run -1 grep -F libc /proc/"$wl"/maps
	"$LT" alloc -p "$wl" --sample-bytes 1 >"$out" 2>"$out.err" 3>&- 4>&- &
	local al=$!
	bg_track "$al"
	wait_line "$out.err" "process $wl is still starting; waiting for its libraries" "$al"
	kill -USR1 "$held"
	wait_line "$out.err" 'attached' "$al"
	echo go >&4
	exec 4>&-
	wait_rc "$al" 120
	cat "$out.err" >&3
	[ "$RC" = 0 ]
	run -0 grep -E '^ +2097152 +8 +8  lt_alloc_alpha <- main( |$)' "$out"
	run -0 grep -E '^ +1048576 +4 +4  lt_alloc_beta <- main( |$)' "$out"
}

@test "alloc --format pprof: protoc reads alloc_space and the functions back" {
	local out=$BATS_TEST_TMPDIR/a.pb.gz
	alloc_run "$BATS_TEST_TMPDIR/r" 2 1 3 --sample-bytes 1 --leaks --format pprof -o "$out"
	[ "$RC" = 0 ]
	run -0 bash -c "gzip -dc '$out' | protoc --decode=perftools.profiles.Profile \
		-I '$BATS_TEST_DIRNAME/../unit' profile.proto"
	local t
	for t in '"alloc_space"' '"alloc_objects"' '"inuse_space"' '"lt_alloc_alpha"' \
		'"lt_leak_gamma"' '"bytes"'; do
		[[ "$output" == *"$t"* ]] || {
			echo "missing $t" >&2
			return 1
		}
	done
	# alpha's 2 MiB are one sample's value
	[[ "$output" == *"value: 2097152"* ]]
}

@test "alloc: bad input is one line and a non-zero exit; nothing stays attached" {
	run --separate-stderr -2 "$LT" alloc --duration 1
	assert_equal "$stderr" "lowtrace: alloc: -p PID is required"
	local free=$((0x3ffffff0))
	run --separate-stderr -2 "$LT" alloc -p "$free"
	assert_equal "$stderr" "lowtrace: --pid $free: no such process"
	run --separate-stderr -2 "$LT" alloc -p $$ --sample-bytes 0
	assert_equal "$stderr" "lowtrace: --sample-bytes: must be at least 1"
	run --separate-stderr -2 "$LT" alloc -p $$ -F 99
	[[ "$stderr" == "lowtrace: alloc: option '--frequency' does not apply here"* ]]
	run --separate-stderr -2 "$LT" alloc -p $$ -o /nonexistent/dir/out
	assert_equal "$stderr" "lowtrace: -o /nonexistent/dir/out: cannot write there: No such file or directory"
	# a static, stripped program: no malloc symbol anywhere
	# stdin: a fifo opened read-write, never written: it waits there
	mkfifo "$BATS_TEST_TMPDIR/hold"
	"$WLDIR/allocs-static" 1 1 1 <>"$BATS_TEST_TMPDIR/hold" 3>&- &
	local st=$! i
	bg_track "$st"
	# until the fork has exec'd it, $st is a copy of bash (which has malloc)
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink "/proc/$st/exe")" = "$WLDIR/allocs-static" ] && break
		sleep 0.05
	done
	run --separate-stderr -1 "$LT" alloc -p "$st" --duration 1
	assert_equal "$stderr" "lowtrace: alloc: no malloc symbol in $WLDIR/allocs-static (the libraries of process $st: a static binary without symbols?)"
	# the allocator is looked for before anything is loaded
	run -1 strace -f -qq --seccomp-bpf -e trace=bpf "$LT" alloc -p "$st" --duration 1
	[[ "$output" != *BPF_PROG_LOAD* ]]
}

@test "alloc -p a kernel thread: exit 2, it says so (no user memory)" {
	# pid 2 is kthreadd
	local comm
	comm=$(cat /proc/2/comm)
	run --separate-stderr -2 "$LT" alloc -p 2 --duration 1
	assert_equal "$stderr" "lowtrace: alloc: process 2 ($comm) is a kernel thread: no user memory"
	assert_output ''
}

@test "alloc -p of a process it may not read (uid 65534): exit 5, permission denied" {
	as_nobody alloc -p 1 --duration 1
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_equal "$stderr" "lowtrace: permission denied: cannot read the mappings of process 1 (run as root)"
}
