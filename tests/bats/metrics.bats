#!/usr/bin/env bats
# lowtrace metrics: Prometheus text exposition over HTTP, checked by promtool,
# fed with garbage, and bound to loopback unless told otherwise.

load helpers

setup() {
	lt_setup
	PORT=$((20000 + RANDOM % 20000))
	HTTP="$BATS_TEST_TMPDIR/http.py"
	# http.py PORT MODE: "get PATH" prints status and body; "raw" sends stdin's
	# bytes as they are and prints the status line of the answer
	cat >"$HTTP" <<'PY'
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=10)
if sys.argv[2] == "get":
    s.sendall(("%s %s HTTP/1.1\r\nHost: x\r\n\r\n" % (sys.argv[4] if len(sys.argv) > 4 else "GET", sys.argv[3])).encode())
else:
    try:
        s.sendall(sys.stdin.buffer.read())
    except OSError:
        pass
data = b""
while True:
    try:
        d = s.recv(65536)
    except OSError:
        break
    if not d:
        break
    data += d
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode() if head else "(no answer)")
if sys.argv[2] == "get":
    sys.stdout.write(body.decode())
PY
}

# serve [options]: lowtrace metrics on 127.0.0.1:$PORT in the background; sets MPID
serve() {
	"$LT" metrics --listen "127.0.0.1:$PORT" "$@" >"$BATS_TEST_TMPDIR/metrics.out" \
		2>"$BATS_TEST_TMPDIR/metrics.err" 3>&- &
	MPID=$!
	bg_track "$MPID"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q '^serving ' "$BATS_TEST_TMPDIR/metrics.out" && return 0
		proc_gone "$MPID" && break
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/metrics.err" >&2
	return 1
}

scrape() { python3 "$HTTP" "$PORT" get /metrics; }

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

@test "--per-syscall-latency: a histogram per syscall name, still valid" {
	run -0 "$LT" load --probes syscalls
	serve --per-syscall-latency
	run -0 scrape
	printf '%s\n' "${lines[@]:1}" >"$BATS_TEST_TMPDIR/body"
	run -0 promtool check metrics <"$BATS_TEST_TMPDIR/body"
	run -0 grep -c '^lowtrace_syscall_latency_seconds_count{name="[a-z0-9_]*"} [0-9]*$' "$BATS_TEST_TMPDIR/body"
	[ "$output" -ge 2 ]
}

@test "garbage, wrong paths and methods get 4xx; the server keeps answering" {
	run -0 "$LT" load
	serve
	run -0 python3 "$HTTP" "$PORT" get /nope
	assert_line -n 0 "HTTP/1.1 404 Not Found"
	run -0 python3 "$HTTP" "$PORT" get /metrics POST
	assert_line -n 0 "HTTP/1.1 405 Method Not Allowed"
	run -0 python3 "$HTTP" "$PORT" raw < <(printf 'garbage\r\n\r\n')
	assert_output "HTTP/1.1 400 Bad Request"
	run -0 python3 "$HTTP" "$PORT" raw < <(printf 'GET /metrics\x01\x7f HTTP/1.1\r\n\r\n')
	assert_output "HTTP/1.1 400 Bad Request"
	# 64 KiB of random bytes: headers too large (or malformed)
	run -0 python3 "$HTTP" "$PORT" raw < <(head -c 65536 /dev/urandom)
	assert_output --regexp '^HTTP/1.1 4(00|31) '
	# a client that connects and says nothing is dropped after the timeout
	run -0 python3 "$HTTP" "$PORT" raw </dev/null
	run -0 scrape
	assert_line -n 0 "HTTP/1.1 200 OK"
	# HEAD: the status, no body
	run -0 python3 "$HTTP" "$PORT" get /metrics HEAD
	assert_output "HTTP/1.1 200 OK"
	proc_gone "$MPID" && fail "the server died"
	kill -TERM "$MPID"
	wait_rc "$MPID" 5
	assert_equal "$RC" 0
}

@test "binds loopback by default; unload while serving gives 503" {
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
