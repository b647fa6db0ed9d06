#!/usr/bin/env bats
# syscalls: per-syscall counts and log2 latency histograms (tp_btf
# sys_enter/sys_exit, per-CPU hash), read by `lowtrace hist syscalls`.

load helpers

setup() { lt_setup; }

# count_of JSON SYSCALL PID: the count of that histogram in `hist syscalls --json` output
count_of() {
	jq ".histograms[] | select(.syscall == \"$2\" and .pid == $3) | .count" <<<"$1"
}

# counted_getppids N: with --per-pid loaded, python's own start-up calls (a run that loops
# 0 times, its count BASE), then getppids N; H: `hist syscalls --json` after both
counted_getppids() {
	getppids 0
	local p0=$GP_PID
	getppids "$1"
	H=$("$LT" hist syscalls --json)
	BASE=$(count_of "$H" getppid "$p0")
}

# getppids N: a python3 that calls getppid() N times; sets GP_PID
getppids() {
	python3 -c 'import os, sys
for _ in range(int(sys.argv[1])): os.getppid()' "$1" 3>&- &
	GP_PID=$!
	wait_rc "$GP_PID" 30
	assert_equal "$RC" 0
}

# fcntls N: a python3 that calls fcntl(0, F_GETFD) N times; sets GP_PID
fcntls() {
	python3 -c 'import fcntl, sys
for _ in range(int(sys.argv[1])): fcntl.fcntl(0, fcntl.F_GETFD)' "$1" 3>&- &
	GP_PID=$!
	wait_rc "$GP_PID" 30
	assert_equal "$RC" 0
}

@test "syscalls is opt-in, and hist needs it loaded: exit 3 with one line" {
	run -0 "$LT" load
	assert_line --regexp '^syscalls +- *$'
	run --separate-stderr "$LT" hist syscalls
	assert_equal "$status" 3
	assert_one_error_line
	assert_equal "$stderr" "lowtrace: not loaded: probe syscalls is not attached (lowtrace load --probes ...,syscalls)"
}

@test "N getppid calls: hist syscalls --json counts at least N, buckets add up" {
	run -0 "$LT" load --probes syscalls
	getppids 5000
	run --separate-stderr -0 "$LT" hist syscalls --json
	assert_equal "${#lines[@]}" 1
	local h=$output
	run -0 jq -e '.probe == "syscalls" and (.ts_ns > 0)' <<<"$h"
	run -0 jq -c '[.histograms[] | select(.syscall == "getppid")] | length' <<<"$h"
	assert_output 1
	run -0 jq -e '.histograms[] | select(.syscall == "getppid") | .count >= 5000 and .pid == 0' <<<"$h"
	# every histogram: its buckets sum to its count, bounds are powers of two
	run -0 jq -e '[.histograms[] | ([.buckets[].count] | add) == .count] | all' <<<"$h"
	run -0 jq -e '[.histograms[].buckets[] | (.hi == null or .hi == (if .lo == 0 then 2 else .lo * 2 end))] | all' <<<"$h"
	# the most frequent first
	run -0 jq -e '[.histograms[].count] as $c | $c == ($c | sort | reverse)' <<<"$h"
}

@test "hist syscalls text: a titled histogram per syscall with bars" {
	run -0 "$LT" load --probes syscalls
	getppids 2000
	run --separate-stderr -0 "$LT" hist syscalls
	assert_line --regexp '^syscall getppid: count [0-9]+, sum [0-9]+ ns, mean [0-9]+ ns$'
	assert_line --regexp '^ +[0-9]+ -> [0-9]+ +: [0-9]+ +\|\*+ *\|$'
	local n
	n=$(sed -nE 's/^syscall getppid: count ([0-9]+),.*/\1/p' <<<"$output")
	[ "$n" -ge 2000 ]
}

@test "load --per-pid: one histogram per syscall and process, P's getppid counted exactly" {
	run -0 "$LT" load --probes syscalls --per-pid
	counted_getppids 3000
	assert_equal "$(count_of "$H" getppid "$GP_PID")" "$((${BASE:-0} + 3000))"
}

# arm64's unistd defines fcntl by another name (__NR_fcntl __NR3264_fcntl): the build's table
# resolves it, so it is named, not "syscall_25"
@test "fcntl (an alias in arm64's unistd): P's calls counted exactly under its name, timed and --count-only" {
	local p0 base n mode
	n=$(sys_nr fcntl)
	for mode in --per-pid "--per-pid --count-only"; do
		# shellcheck disable=SC2086
		run -0 "$LT" load --replace --probes syscalls $mode
		fcntls 0
		p0=$GP_PID
		fcntls 2000
		H=$("$LT" hist syscalls --json)
		base=$(count_of "$H" fcntl "$p0")
		assert_equal "$(count_of "$H" fcntl "$GP_PID")" "$((${base:-0} + 2000))"
		run -0 jq -c "[.histograms[] | select(.syscall == \"syscall_$n\")] | length" <<<"$H"
		assert_output 0
	done
}

@test "load --count-only: lt_sys_c alone on sys_exit, P's getppid counted exactly, shown as not timed" {
	run -0 "$LT" load --probes syscalls --count-only --per-pid
	run -0 ls "$PIN/links"
	assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir sys_c)"
	counted_getppids 3000
	run -0 jq -c ".histograms[] | select(.syscall == \"getppid\" and .pid == $GP_PID) | [.count, .sum_ns, .timed, .buckets]" <<<"$H"
	assert_output "[$((${BASE:-0} + 3000)),0,false,[]]"
	# every histogram of the map is untimed
	run -0 jq -e '[.histograms[] | .timed == false] | all' <<<"$H"
	run --separate-stderr -0 "$LT" hist syscalls
	assert_line "syscall getppid pid $GP_PID: count $((${BASE:-0} + 3000)) (not timed: load --count-only)"
	refute_line --regexp '^ +[0-9]+ -> '
	# top: counts, no quantiles
	run --separate-stderr -0 timeout 20 "$LT" top --count 1 --rows 400
	assert_line --regexp '^getppid +[0-9]+ +- +0\.000 +- +-$'
	# without --per-pid: by number, machine-wide
	run -0 "$LT" load --replace --probes syscalls --count-only
	getppids 2000
	run --separate-stderr -0 "$LT" hist syscalls --json
	run -0 jq -e '.histograms[] | select(.syscall == "getppid") | .count >= 2000 and .pid == 0 and .timed == false' <<<"$output"
	# it needs the probe
	run -0 "$LT" unload
	run --separate-stderr "$LT" load --count-only
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: load: --count-only needs --probes with syscalls (it counts syscalls without their latency)"
	assert_nothing_loaded
}

@test "hist --interval 1 --count 2: two prints, counts only grow" {
	run -0 "$LT" load --probes syscalls
	run --separate-stderr -0 timeout 20 "$LT" hist syscalls --json --interval 1 --count 2
	assert_equal "${#lines[@]}" 2
	run -0 jq -n -e --argjson a "${lines[0]}" --argjson b "${lines[1]}" \
		'($a.histograms | map({(.syscall): .count}) | add) as $x |
		 ($b.histograms | map({(.syscall): .count}) | add) as $y |
		 [$x | to_entries[] | $y[.key] >= .value] | all'
}

@test "hist: bad probe, bad option, --count without --interval: exit 2" {
	run --separate-stderr "$LT" hist exec
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: hist: 'exec' is not an aggregate probe (syscalls, runq or bio)"
	run --separate-stderr "$LT" hist
	assert_equal "$status" 2
	assert_one_error_line
	run --separate-stderr "$LT" hist runq --count 2
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: hist: --count needs --interval"
	run --separate-stderr "$LT" hist runq --interval 0
	assert_equal "$status" 2
	run --separate-stderr "$LT" events --type syscalls
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: --type syscalls: an aggregate probe writes no records (see 'lowtrace hist syscalls')"
}

@test "top (not a terminal): plain blocks; getppid's count >= N, p50 <= p99" {
	run -0 "$LT" load --probes exec,syscalls
	getppids 4000
	run --separate-stderr -0 timeout 20 "$LT" top --count 2 --rows 400
	local top=$output
	# no terminal control bytes when stdout is not a terminal
	[[ "$top" != *$'\e'* ]] || fail "escape sequence in plain output"
	run -0 grep -c '^lowtrace top: every 1 s' <<<"$top"
	assert_output 2
	run -0 grep -E '^getppid +[0-9]+ ' <<<"$top"
	local line=${lines[0]} n p50 p99
	read -r _ n _ _ p50 p99 <<<"$line"
	[ "$n" -ge 4000 ] || fail "getppid count $n"
	run -0 python3 -c 'import sys; a, b = (float(x) for x in sys.argv[1:]); sys.exit(0 if 0 < a <= b else 1)' "$p50" "$p99"
}

@test "top without the syscalls probe: probe rates and a note" {
	run -0 "$LT" load
	run --separate-stderr -0 timeout 20 "$LT" top --count 1
	assert_line --regexp '^exec +- +-$'
	assert_line "syscalls: not loaded (lowtrace load --probes ...,syscalls)"
}

@test "top and hist --interval under an unload: exit 6 with one line" {
	run -0 "$LT" load --probes syscalls
	"$LT" top >"$BATS_TEST_TMPDIR/top" 2>"$BATS_TEST_TMPDIR/top.err" 3>&- &
	local top=$!
	bg_track "$top"
	"$LT" hist syscalls --interval 1 >/dev/null 2>"$BATS_TEST_TMPDIR/hist.err" 3>&- &
	local hist=$!
	bg_track "$hist"
	sleep 1.5
	run -0 "$LT" unload
	wait_rc "$top" 5
	assert_equal "$RC" 6
	wait_rc "$hist" 5
	assert_equal "$RC" 6
	run -0 cat "$BATS_TEST_TMPDIR/top.err" "$BATS_TEST_TMPDIR/hist.err"
	assert_output $'lowtrace: the suite was unloaded or replaced\nlowtrace: the suite was unloaded or replaced'
}
