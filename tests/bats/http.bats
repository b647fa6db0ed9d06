#!/usr/bin/env bats
# The metrics server's HTTP: garbage, oversized and slow requests, idle and
# excess connections, the answers metrics -h lists, a body sized from the maps
# (a map filled by bpftool, not by a probe). All of it is userspace, the same on
# every kernel: it runs on the host only (tests/vm/host-only).

load helpers

setup() {
	lt_setup
	http_setup
}

# rawend BYTES-COMMAND...: send its output; sets output (status line, how the
# connection ended). An answer other than 408 came before the 2 s request
# deadline: the status itself says "at once", no clock is needed (qemu is slow).
rawend() {
	run -0 python3 "$HTTP" "$PORT" rawend < <("$@")
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

@test "10 KB of binary junk: 400 at once, then a graceful close (no reset)" {
	run -0 "$LT" load --probes exec
	serve
	rawend python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(1).randbytes(10240))'
	assert_output $'HTTP/1.1 400 Bad Request\neof'
}

@test "a 20 KB header: 431, then a graceful close" {
	run -0 "$LT" load --probes exec
	serve
	rawend python3 -c 'print("GET /metrics HTTP/1.1\r\nX-Big: " + "a" * 20480 + "\r\n\r")'
	assert_output $'HTTP/1.1 431 Request Header Fields Too Large\neof'
}

@test "a 9 KB URL: 414, then a graceful close" {
	run -0 "$LT" load --probes exec
	serve
	rawend python3 -c 'print("GET /metrics?" + "a" * 9216 + " HTTP/1.1\r\n\r")'
	assert_output $'HTTP/1.1 414 URI Too Long\neof'
}

@test "a request in bare-LF lines is answered at once" {
	run -0 "$LT" load --probes exec
	serve
	rawend printf 'GET /metrics HTTP/1.1\n\n'
	assert_output $'HTTP/1.1 200 OK\neof'
	rawend printf 'HEAD /metrics HTTP/1.0\nHost: x\n\n'
	assert_output $'HTTP/1.1 200 OK\neof'
}

@test "an empty path: 400" {
	run -0 "$LT" load --probes exec
	serve
	rawend printf 'GET  HTTP/1.1\r\n\r\n'
	assert_output $'HTTP/1.1 400 Bad Request\neof'
}

@test "200 idle connections and one at 1 byte/s hold up no scrape; both get 408 in 2 s" {
	run -0 "$LT" load --probes exec,syscalls
	serve
	# the slow client comes first (the one-at-a-time server got stuck on it),
	# the idle ones take their place again whenever the server closes one
	run -0 timeout 60 python3 - "$PORT" <<'PY'
import select, socket, sys, threading, time
port = int(sys.argv[1])
stop = False
slow_got, idle_got = [], []
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"

def connect():
    try:
        return socket.create_connection(("127.0.0.1", port), timeout=0.5)
    except OSError:
        return None

def slow():
    while not stop:
        s = connect()
        if not s:
            continue
        s.setblocking(False)
        for i in range(len(req)):
            if stop:
                break
            try:
                s.send(req[i:i + 1])
            except OSError:
                break
            time.sleep(1)
            try:
                d = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                break
            slow_got.append(d.split(b"\r\n")[0].decode())
            break
        s.close()

def idle():
    socks = [c for c in (connect() for _ in range(200)) if c]
    while not stop:
        r, _, _ = select.select(socks, [], [], 0.1) if socks else ([], 0, 0)
        for s in r:
            try:
                d = s.recv(4096)
            except OSError:
                d = b""
            if d:
                idle_got.append(d.split(b"\r\n")[0].decode())
                continue
            socks.remove(s)
            s.close()
        while len(socks) < 200 and not stop:
            c = connect()
            if c:
                socks.append(c)
            else:
                break

# daemons: against a stuck server, their connects would outlast the test
threads = [threading.Thread(target=f, daemon=True) for f in (slow, idle)]
threads[0].start()
time.sleep(0.3)
threads[1].start()
time.sleep(0.5)
good, worst = 0, 0.0
for i in range(50):
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        s.sendall(req)
        data = b""
        while time.monotonic() - t0 < 1:
            s.settimeout(max(0.01, 1 - (time.monotonic() - t0)))
            d = s.recv(65536)
            if not d:
                break
            data += d
        s.close()
    except OSError as e:
        data = b""
    dt = time.monotonic() - t0
    worst = max(worst, dt)
    if not (data.startswith(b"HTTP/1.1 200 OK\r\n") and b"\nlowtrace_events_total{" in data
            and dt < 1):
        break
    good += 1
    time.sleep(0.1)
stop = True
for t in threads:
    t.join(timeout=3)
print("scrapes %d/50 in time, slowest %.0f ms" % (good, worst * 1000))
print("slow client: %s" % sorted(set(slow_got)))
print("idle: %s" % sorted(set(idle_got)))
PY
	assert_line -n 0 --regexp '^scrapes 50/50 in time'
	assert_line -n 1 "slow client: ['HTTP/1.1 408 Request Timeout']"
	assert_line -n 2 "idle: ['HTTP/1.1 408 Request Timeout']"
	proc_gone "$MPID" && fail "the server died"
	true
}

@test "more connections than the cap: the oldest idle ones make room, a scrape still gets 200" {
	run -0 "$LT" load --probes exec
	serve
	run -0 timeout 30 python3 - "$PORT" <<'PY'
import select, socket, sys, time
port = int(sys.argv[1])
socks = []
for i in range(300):
    socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    time.sleep(0.001) # an order the server sees
time.sleep(0.3)
s = socket.create_connection(("127.0.0.1", port), timeout=2)
s.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
print(data.split(b"\r\n")[0].decode())
# ended by the server: the oldest ones, as many as went past the cap. Closed without an answer,
# or, on a slow machine (qemu) where 300 connects outlast the request deadline, answered 408
r, _, _ = select.select(socks, [], [], 0.5)
def ended(c):
    d = c.recv(64, socket.MSG_PEEK)
    return d == b"" or d.startswith(b"HTTP/1.1 408 ")
closed = [i for i, c in enumerate(socks) if c in r and ended(c)]
print(len(closed), closed == list(range(len(closed))))
PY
	assert_line -n 0 "HTTP/1.1 200 OK"
	# 301 connections into 256 slots: the first 45 (or more) closed, in order
	[[ "${lines[1]}" =~ ^([0-9]+)\ True$ ]] || fail "closed: ${lines[1]}"
	[ "${BASH_REMATCH[1]}" -ge 45 ] || fail "closed: ${lines[1]}"
}

@test "metrics -h: every answer, the connection cap and the deadlines" {
	run --separate-stderr -0 "$LT" metrics -h
	local want
	for want in 400 404 405 408 414 431 503 "256 connections" "2 s" "10 s" "oldest"; do
		assert_output --partial "$want"
	done
}


@test "a full bio map: every histogram is in the answer (the body is sized from the maps)" {
	run -0 "$LT" load --probes bio
	# 1000 histograms of (device, op) keys written into the maps as the probe would: ~4 MB
	# of exposition, more than a fixed 4 MiB body held. With BPF atomics (5.12+) the
	# histograms are an array by index and lt_bio_keys names each index's key (indexes from
	# 24 up: the machine's own I/O takes them from 0); before, a hash by key
	local batch="$BATS_TEST_TMPDIR/batch" layout=hash
	[ "$(bpftool map show pinned "$PIN/maps/lt_bio_hist" -j | jq .max_entries)" != 1 ] ||
		layout=array
	# bpftool gives every CPU's slot the one value
	python3 - "$PIN/maps" "$layout" >"$batch" <<'PY'
import struct, sys
hexs = lambda b: " ".join("%02x" % c for c in b)
one = struct.pack("<QQ", 1, 1000) + struct.pack("<38Q", *([0] * 9 + [1] + [0] * 28))
for i in range(1000):
    key = struct.pack("<IB3x", (250 << 20) | i, i % 4)
    if sys.argv[2] == "hash":
        print("map update pinned %s/lt_bio_hist key hex %s value hex %s" % (sys.argv[1], hexs(key), hexs(one)))
        continue
    idx = struct.pack("<I", 24 + i)
    print("map update pinned %s/lt_bio_keys key hex %s value hex %s" % (sys.argv[1], hexs(idx), hexs(key)))
    print("map update pinned %s/lt_bio_ahist key hex %s value hex %s" % (sys.argv[1], hexs(idx), hexs(one)))
PY
	run -0 bpftool batch file "$batch"
	serve
	# the machine's own I/O may add keys while this runs: counted before and after the scrape
	local k1 k2 hists q='.probes[] | select(.name == "bio") | .maps[] | select(.name == "lt_bio_hist") | .entries'
	if [ "$layout" = hash ]; then
		k1=$("$LT" status --json | jq "$q")
	else
		k1=1000 # the array holds LT_BIO_KEYS (1024): the seeded ones, and at most 24 others
	fi
	run -0 scrape
	printf '%s\n' "${lines[@]:1}" >"$BATS_TEST_TMPDIR/body"
	if [ "$layout" = hash ]; then
		k2=$("$LT" status --json | jq "$q")
	else
		k2=1024
	fi
	run -0 promtool check metrics <"$BATS_TEST_TMPDIR/body"
	[ "$k1" -ge 1000 ] || fail "lt_bio_hist holds $k1 keys"
	# every seeded key (device 250:*, no real disk) and every other key the map held
	run -0 grep -c '^lowtrace_bio_latency_seconds_count{device="250:' "$BATS_TEST_TMPDIR/body"
	assert_output 1000
	hists=$(grep -c '^lowtrace_bio_latency_seconds_count{' "$BATS_TEST_TMPDIR/body")
	[ "$hists" -ge "$k1" ] && [ "$hists" -le "$k2" ] || fail "$hists histograms, $k1 to $k2 keys"
	grep -q '^lowtrace_bio_latency_seconds_count{device="250:999",op="[a-z]*"} [1-9][0-9]*$' "$BATS_TEST_TMPDIR/body"
}
