#!/usr/bin/env bats
# lowtrace metrics: Prometheus text exposition over HTTP, checked by promtool,
# fed with garbage, and bound to loopback unless told otherwise.

load helpers

setup() {
	lt_setup
	http_setup
}

@test "GET /metrics passes promtool; counters, syscall counts and three histograms" {
	run -0 "$LT" load --probes exec,exit,syscalls,runq,bio
	serve
	python3 -c 'import os
for _ in range(3000): os.getppid()'
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	local body="$BATS_TEST_TMPDIR/body"
	printf '%s\n' "${lines[@]:1}" >"$body"
	run -0 promtool check metrics <"$body"
	run -0 grep -E '^lowtrace_events_total\{probe="exec"\} [0-9]+$' "$body"
	run -0 grep -E '^lowtrace_drops_total\{probe="syscalls"\} 0$' "$body"
	# one missed counter per loaded probe (the same number status shows)
	run -0 grep -cE '^lowtrace_missed_total\{probe="(exec|exit|syscalls|runq|bio)"\} [0-9]+$' "$body"
	assert_output 5
	local n
	n=$(sed -nE 's/^lowtrace_syscalls_total\{name="getppid"\} ([0-9]+)$/\1/p' "$body")
	[ "${n:-0}" -ge 3000 ] || fail "getppid count: '$n'"
	run -0 grep -c '^# TYPE lowtrace_\(syscall\|runq\|bio\)_latency_seconds histogram$' "$body"
	assert_output 3
	# a histogram: cumulative buckets, +Inf equals _count
	run -0 python3 -c '
import re, sys
b = {}
for l in open(sys.argv[1]):
    m = re.match(r"lowtrace_runq_latency_seconds_bucket\{le=\"([^\"]+)\"\} (\d+)$", l)
    if m: b[m.group(1)] = int(m.group(2))
    m = re.match(r"lowtrace_runq_latency_seconds_count (\d+)$", l)
    if m: count = int(m.group(1))
vals = list(b.values())
assert vals == sorted(vals), "not cumulative"
assert b["+Inf"] == count, (b["+Inf"], count)
print(len(b))' "$body"
	assert_output 38
	# no per-syscall latency histograms without the option
	run -1 grep -q 'lowtrace_syscall_latency_seconds_bucket{name=' "$body"
}

@test "map gauges: lowtrace_map_entries and _max_entries per stateful map, as status counts them" {
	run -0 "$LT" load --probes syscalls,runq --per-pid
	serve
	python3 -c 'import os
for _ in range(100): os.getppid(); os.umask(0o22)'
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	local body="$BATS_TEST_TMPDIR/body"
	printf '%s\n' "${lines[@]:1}" >"$body"
	run -0 promtool check metrics <"$body"
	run -0 grep -c '^# TYPE lowtrace_map_\(max_\)\?entries gauge$' "$body"
	assert_output 2
	run -0 grep -E '^lowtrace_map_(max_)?entries\{probe="runq",map="lt_runq_hist"\} ' "$body"
	assert_output "$(printf 'lowtrace_map_entries{probe="runq",map="lt_runq_hist"} 1\nlowtrace_map_max_entries{probe="runq",map="lt_runq_hist"} 1')"
	run -0 grep -E '^lowtrace_map_max_entries\{probe="syscalls",map="lt_sys_hist"\} 4096$' "$body"
	local n st
	n=$(sed -nE 's/^lowtrace_map_entries\{probe="syscalls",map="lt_sys_hist"\} ([0-9]+)$/\1/p' "$body")
	[ "${n:-0}" -ge 2 ] && [ "$n" -le 4096 ] || fail "lt_sys_hist entries: '$n'"
	# status, read after the scrape, counts at least as many (keys are never deleted)
	st=$("$LT" status --json | jq '.probes[] | select(.name == "syscalls") | .maps[] | select(.name == "lt_sys_hist") | .entries')
	[ "$st" -ge "$n" ] || fail "status $st < scrape $n"
	# every map status lists has its max gauge (none unknown here), and no other map
	run -0 bash -c "grep -oE '^lowtrace_map_max_entries\{[^}]*\}' '$body' | sort"
	local want
	want=$("$LT" status --json | jq -r '.probes[] | select(.loaded) | .name as $p | .maps[] | select(.max_entries != null) | "lowtrace_map_max_entries{probe=\"\($p)\",map=\"\(.name)\"}"' | sort)
	assert_output "$want"
}

@test "map gauges follow the state path: none for local storage, the caps of --state hash, live socket counts" {
	run --separate-stderr "$LT" load --probes syscalls,tcp --state local
	[ "$status" != 5 ] || skip "kernel before 5.11: no task/socket local storage for tracing programs"
	assert_equal "$status" 0
	serve
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	# task and socket storage: the kernel can tell neither a count nor a cap
	refute_line --regexp '^lowtrace_map_(max_)?entries\{.*map="lt_sys_start"'
	refute_line --regexp '^lowtrace_map_(max_)?entries\{.*map="lt_tcp_conns"'
	assert_line --regexp '^lowtrace_map_max_entries\{probe="syscalls",map="lt_sys_nr"\} [0-9]{3}$'
	assert_line 'lowtrace_map_max_entries{probe="syscalls",map="lt_sys_hist"} 1'

	# the same server after a replace with the bounded hashes
	run -0 "$LT" load --replace --probes syscalls,tcp --state hash --max-threads 1000 --max-conns 500
	conns_py
	local line
	coproc CONNS { python3 "$BATS_TEST_TMPDIR/conns.py" 30; }
	bg_track "$CONNS_PID"
	read -r -t 10 -u "${CONNS[0]}" line
	assert_equal "$line" open
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	printf '%s\n' "${lines[@]:1}" >"$BATS_TEST_TMPDIR/body"
	run -0 promtool check metrics <"$BATS_TEST_TMPDIR/body"
	run -0 grep -E '^lowtrace_map_(max_)?entries\{probe="(syscalls|tcp)",map="lt_(sys_start|tcp_conns)"\} ' "$BATS_TEST_TMPDIR/body"
	assert_line 'lowtrace_map_max_entries{probe="syscalls",map="lt_sys_start"} 1000'
	assert_line 'lowtrace_map_max_entries{probe="tcp",map="lt_tcp_conns"} 500'
	# both ends of the 30 open connections, and nothing else on this host's loopback
	local n
	n=$(sed -nE 's/^lowtrace_map_entries\{probe="tcp",map="lt_tcp_conns"\} ([0-9]+)$/\1/p' "$BATS_TEST_TMPDIR/body")
	[ "$n" -ge 60 ] && [ "$n" -le 500 ] || fail "lt_tcp_conns entries: '$n'"
	n=$(sed -nE 's/^lowtrace_map_entries\{probe="syscalls",map="lt_sys_start"\} ([0-9]+)$/\1/p' "$BATS_TEST_TMPDIR/body")
	[ "$n" -ge 1 ] && [ "$n" -le 1000 ] || fail "lt_sys_start entries: '$n'"
	echo >&"${CONNS[1]}"
}

@test "load --count-only: syscall counters, no latency histogram (it would contradict its count)" {
	run -0 "$LT" load --probes syscalls,runq --count-only
	serve --per-syscall-latency
	python3 -c 'import os
for _ in range(3000): os.getppid()'
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	printf '%s\n' "${lines[@]:1}" >"$BATS_TEST_TMPDIR/body"
	run -0 promtool check metrics <"$BATS_TEST_TMPDIR/body"
	local n
	n=$(sed -nE 's/^lowtrace_syscalls_total\{name="getppid"\} ([0-9]+)$/\1/p' "$BATS_TEST_TMPDIR/body")
	[ "${n:-0}" -ge 3000 ] || fail "getppid count: '$n'"
	run -1 grep -c '^lowtrace_syscall_latency_seconds' "$BATS_TEST_TMPDIR/body"
	# runq's histogram is there: only the untimed one is left out
	run -0 grep -c '^# TYPE lowtrace_runq_latency_seconds histogram$' "$BATS_TEST_TMPDIR/body"
}

@test "--per-syscall-latency: a histogram per syscall name, still valid" {
	run -0 "$LT" load --probes syscalls
	serve --per-syscall-latency
	run -0 scrape
	printf '%s\n' "${lines[@]:1}" >"$BATS_TEST_TMPDIR/body"
	run -0 promtool check metrics <"$BATS_TEST_TMPDIR/body"
	run -0 grep -c '^lowtrace_syscall_latency_seconds_count{name="[a-z0-9_]*"} [0-9]*$' "$BATS_TEST_TMPDIR/body"
	[ "$output" -ge 2 ]
}

@test "binds loopback by default; unload while serving gives 503, the next load is served" {
	run -0 "$LT" load
	"$LT" metrics >"$BATS_TEST_TMPDIR/default.out" 2>&1 3>&- &
	local dflt=$!
	bg_track "$dflt"
	wait_line "$BATS_TEST_TMPDIR/default.out" '^serving ' "$dflt"
	run -0 cat "$BATS_TEST_TMPDIR/default.out"
	assert_output "serving http://127.0.0.1:9464/metrics"
	run -0 ss -Hltnp "sport = :9464"
	assert_output --regexp "127\.0\.0\.1:9464 .*pid=$dflt,"
	kill -TERM "$dflt"
	wait_rc "$dflt" 5

	serve
	run -0 "$LT" unload
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 503 Service Unavailable"
	# a new suite: served without a restart of metrics, with its own probes
	run -0 "$LT" load --probes exec
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	assert_line --regexp '^lowtrace_events_total\{probe="exec"\} [0-9]+$'
	refute_line --partial 'probe="exit"'
	# and a replace too (an upgrade of the suite under a running metrics)
	run -0 "$LT" load --replace --probes exec,exit
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	assert_line --regexp '^lowtrace_events_total\{probe="exit"\} [0-9]+$'
}

@test "metrics errors: not loaded exits 3, a bad --listen exits 2, a port in use exits 1" {
	run --separate-stderr "$LT" metrics --listen "127.0.0.1:$PORT"
	assert_equal "$status" 3
	assert_one_error_line
	run -0 "$LT" load
	local bad
	for bad in 127.0.0.1 localhost:9464 127.0.0.1:0 127.0.0.1:70000 '[::1:9464' ':9464'; do
		run --separate-stderr "$LT" metrics --listen "$bad"
		assert_equal "$status" 2
		assert_one_error_line
	done
	serve
	run --separate-stderr "$LT" metrics --listen "127.0.0.1:$PORT"
	assert_equal "$status" 1
	assert_equal "$stderr" "lowtrace: --listen 127.0.0.1:$PORT: Address already in use"
}

@test "drops are blamed on the cgroup whose tasks found the ring full: status and lowtrace_drops_by_cgroup_total" {
	local p="$ID_ROOT/lowtrace-test-$$-$BATS_TEST_NUMBER-$RANDOM" drops rel n=300
	light n 100
	mkdir "$p" "$p/storm"
	LT_CGROUPS+=("$p/storm" "$p/calm" "$p") # removed in this order
	rel=${p#"$ID_ROOT"}
	# a ring of two exec records and no consumer: most of the storm drops, then all of
	# calm's 4 execs (its shell's and 3 /bin/true)
	run -0 "$LT" load --ringbuf-size 4096 --probes exec --cgroup "$p"
	execs "$p/storm" "$n"
	# the server has seen drops (and the cgroups then) before calm exists: it finds calm later
	serve
	run -0 scrape
	assert_line --regexp "^lowtrace_drops_by_cgroup_total\{probe=\"exec\",cgroup=\"$rel/storm\"\} [0-9]+\$"
	mkdir "$p/calm"
	execs "$p/calm" 3
	drops=$(probe_field exec drops)
	[ "$drops" -gt $((n * 2 / 3)) ]
	run -0 status_json
	run -0 jq -c '[.drops_by_cgroup[] | select(.probe == "exec") | [.cgroup, .drops]]' <<<"$output"
	assert_output "[[\"$rel/storm\",$((drops - 4))],[\"$rel/calm\",4]]"
	run -0 "$LT" status
	assert_line --regexp "^exec +$((drops - 4)) +0 +[0-9]+ +$rel/storm\$"
	assert_line --regexp "^exec +4 +0 +[0-9]+ +$rel/calm\$"
	run -0 scrape
	assert_line "lowtrace_drops_by_cgroup_total{probe=\"exec\",cgroup=\"$rel/storm\"} $((drops - 4))"
	assert_line "lowtrace_drops_by_cgroup_total{probe=\"exec\",cgroup=\"$rel/calm\"} 4"
}

@test "a rate limit keeps an exec storm to its cgroup: the calm one loses nothing; throttled is the storm's execs minus its records, in status, stream and metrics" {
	local p="$ID_ROOT/lowtrace-test-$$-$BATS_TEST_NUMBER-$RANDOM" rel thr storm n x=300 ring=256K rl=5
	light x 120
	light ring 128K
	light rl 1
	mkdir "$p" "$p/storm" "$p/calm"
	LT_CGROUPS+=("$p/storm" "$p/calm" "$p") # removed in this order
	rel=${p#"$ID_ROOT"}
	# a ring of 189 exec records (94 in 128K) and no consumer: without the limit the storm's
	# 301 execs (121 with light storms: its shell's and the /bin/true) fill it and calm's
	# records are dropped (the test above); with 5/s per cgroup the storm writes 5 at once
	# and 5 a second after that. The guests' limit is 1/s: in the arm64 TCG guest beside
	# three others an exec took over 0.2 s, and 121 of them never went past 5/s (CI)
	run -0 "$LT" load --ringbuf-size "$ring" --probes exec --cgroup "$p" --rate-limit "exec=$rl/s"
	execs "$p/storm" "$x"
	if [ "$rl" = 1 ]; then
		# calm's four execs a second apart, to stay within 1/s (read -t on a FIFO: no exec)
		mkfifo "$BATS_TEST_TMPDIR/gap"
		in_cg "$p/calm" bash -c 'for ((i = 0; i < 3; i++)); do read -rt 1.1 <>"$1" || :
			/bin/true "$0"; done' "$MARK" "$BATS_TEST_TMPDIR/gap"
	else
		execs "$p/calm" 3
	fi
	thr=$(probe_field exec throttled)
	[ "$thr" -gt 0 ]
	run -0 status_json
	run -0 jq -c '[.probes[] | select(.name == "exec") | .drops, .missed, .rate_limit],
		[.drops_by_cgroup[] | [.probe, .cgroup, .drops, .throttled]]' <<<"$output"
	assert_output "[0,0,$rl]
[[\"exec\",\"$rel/storm\",0,$thr]]"
	run -0 "$LT" status
	assert_line --regexp "^exec +$rl +$thr\$"
	assert_line --regexp "^exec +0 +$thr +[0-9]+ +$rel/storm\$"
	# the stream: every record, the storm's execs = its records + throttled, calm's all there;
	# lost records carry the throttled windows (each before the next exec on its CPU), no drops
	run --separate-stderr -0 timeout 20 "$LT" events --duration 2
	OUT="$BATS_TEST_TMPDIR/ev.json"
	printf '%s\n' "${lines[@]}" >"$OUT"
	assert_equal "$stderr" "lowtrace: rate limits held back $thr events before this consumer started: exec=+$thr"
	storm=$(count_records "$OUT" ".type == \"exec\" and .cgroup == \"$rel/storm\"")
	assert_equal $((storm + thr)) $((x + 1))
	run -0 count_records "$OUT" ".type == \"exec\" and .cgroup == \"$rel/calm\""
	assert_output 4
	run -0 jq -s -c '[.[] | select(.type == "lost")] |
		[length > 0, all(.probe == "exec" and .count == 0),
		 ([.[].throttled] | add) <= '"$thr"']' "$OUT"
	assert_output "[true,true,true]"
	serve
	run -0 scrape
	assert_line "lowtrace_throttled_total{probe=\"exec\"} $thr"
	assert_line "lowtrace_throttled_by_cgroup_total{probe=\"exec\",cgroup=\"$rel/storm\"} $thr"
	n=$(grep -c "cgroup=\"$rel/calm\"" <<<"$output" || true)
	assert_equal "$n" 0
}
