#!/usr/bin/env bats
# tcp: one record per closed connection (tp_btf/inet_sock_set_state);
# tcp_retrans: one per retransmitted segment (tp_btf/tcp_retransmit_skb).
# Traffic runs on loopback in a network namespace of its own.

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
	PY="$BATS_TEST_TMPDIR/tcp.py"
	# transfer FAMILY UP DOWN: the client sends UP bytes, the server DOWN bytes,
	# both close; prints "server-port client-port"
	cat >"$PY" <<'PY'
import socket, sys, threading, time
def transfer(fam, up, down):
    host = "::1" if fam == socket.AF_INET6 else "127.0.0.1"
    srv = socket.socket(fam, socket.SOCK_STREAM)
    srv.bind((host, 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    def serve():
        c, _ = srv.accept()
        n = 0
        while n < up:
            d = c.recv(65536)
            if not d:
                break
            n += len(d)
        c.sendall(b"y" * down)
        c.shutdown(socket.SHUT_WR)
        while c.recv(65536):
            pass
        c.close()
    t = threading.Thread(target=serve)
    t.start()
    cl = socket.socket(fam, socket.SOCK_STREAM)
    cl.connect((host, port))
    cport = cl.getsockname()[1]
    cl.sendall(b"x" * up)
    n = 0
    while n < down:
        d = cl.recv(65536)
        if not d:
            break
        n += len(d)
    cl.close()
    t.join()
    print(port, cport, flush=True)
def retrans(secs):
    # a full accept queue (backlog 0, one connection waiting) drops the next
    # SYN, which the client retransmits after about a second
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    a = socket.socket()
    a.connect(("127.0.0.1", port))
    b = socket.socket()
    b.setblocking(False)
    try:
        b.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    print(port, b.getsockname()[1], flush=True)
    time.sleep(secs)
def storm(n):
    # two threads, each n connections of 100 bytes each way: state changes
    # from process context and softirqs on both CPUs at once
    def one():
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(64)
        port = srv.getsockname()[1]
        def serve():
            for _ in range(n):
                c, _ = srv.accept()
                c.recv(100)
                c.sendall(b"y" * 100)
                c.close()
        t = threading.Thread(target=serve)
        t.start()
        for _ in range(n):
            cl = socket.create_connection(("127.0.0.1", port))
            cl.sendall(b"x" * 100)
            cl.recv(100)
            cl.close()
        t.join()
    ts = [threading.Thread(target=one) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(0, 0, flush=True)
if sys.argv[1] == "retrans":
    retrans(float(sys.argv[2]))
elif sys.argv[1] == "storm":
    storm(int(sys.argv[2]))
else:
    transfer(socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET, int(sys.argv[2]), int(sys.argv[3]))
PY
}

# in_netns ARGS: python3 tcp.py ARGS in a new network namespace with lo up (in
# this one with IN_HOST_NS set); sets NS_PID (the python's pid) and PORTS
# ("server client"); waits NS_WAIT s (30)
in_netns() {
	if [ -n "${IN_HOST_NS:-}" ]; then
		python3 "$PY" "$@" >"$BATS_TEST_TMPDIR/ports" 3>&- &
	else
		unshare -n bash -c 'ip link set lo up && exec python3 "$@"' bash "$PY" "$@" \
			>"$BATS_TEST_TMPDIR/ports" 3>&- &
	fi
	NS_PID=$!
	wait_rc "$NS_PID" "${NS_WAIT:-30}"
	assert_equal "$RC" 0
	PORTS=$(cat "$BATS_TEST_TMPDIR/ports")
}

@test "v4 and v6 loopback transfers: one record per side, exact ports, direction and payload bytes" {
	run -0 "$LT" load
	events_bg "$OUT" --json --type tcp
	local fam up=100000 down=2500 sp cp pyv=() want
	for fam in 4 6; do
		in_netns "$fam" "$up" "$down"
		read -r sp cp <<<"$PORTS"
		wait_record "$OUT" ".pid == $NS_PID and .family == $fam and .direction == \"accept\""
		wait_record "$OUT" ".pid == $NS_PID and .family == $fam and .direction == \"connect\""
		local lo=127.0.0.1
		[ "$fam" = 4 ] || lo=::1
		run -0 records "$OUT" ".pid == $NS_PID"
		assert_equal "${#lines[@]}" 2
		run -0 jq -s -c "sort_by(.direction) | map([.comm, .family, .saddr, .daddr, .sport, .dport, .direction, .tx_bytes, .rx_bytes])" <<<"$output"
		want="[[\"python3\",$fam,\"$lo\",\"$lo\",$sp,$cp,\"accept\",$down,$up],"
		want+="[\"python3\",$fam,\"$lo\",\"$lo\",$cp,$sp,\"connect\",$up,$down]]"
		assert_output "$want"
		# durations: positive, under the test's own run time
		run -0 records "$OUT" ".pid == $NS_PID and .duration_ns > 0 and .duration_ns < 30000000000"
		assert_equal "${#lines[@]}" 2
	done
	stop_consumer "$EV_PID"
	run -0 jq -e -c . "$OUT"
}

@test "an empty connection: zero bytes each way, text form" {
	run -0 "$LT" load --probes tcp
	events_bg "$OUT" --text
	in_netns 4 0 0
	local sp cp i
	read -r sp cp <<<"$PORTS"
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "pid=$NS_PID " "$OUT")" -ge 2 ] && break
		sleep 0.1
	done
	stop_consumer "$EV_PID"
	run -0 grep -c "^tcp ts_ns=[0-9]* cpu=[0-9]* pid=$NS_PID tid=$NS_PID cgroup_id=$(own_cgroup_id) comm=python3 family=4 saddr=127.0.0.1 daddr=127.0.0.1 sport=$cp dport=$sp direction=connect tx_bytes=0 rx_bytes=0 duration_ns=[1-9][0-9]*$(own_ident text)\$" "$OUT"
	assert_output 1
	run -0 grep -c "^tcp .* pid=$NS_PID .* sport=$sp dport=$cp direction=accept tx_bytes=0 rx_bytes=0 " "$OUT"
	assert_output 1
}

@test "a SYN dropped by a full accept queue is retransmitted: a tcp_retrans record in SYN_SENT" {
	run -0 "$LT" load
	events_bg "$OUT" --json --type tcp_retrans
	in_netns retrans 2.5
	local sp cp
	read -r sp cp <<<"$PORTS"
	wait_record "$OUT" ".sport == $cp and .dport == $sp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".sport == $cp and .dport == $sp"
	# at least one (the kernel may retransmit again before the client ends)
	[ "${#lines[@]}" -ge 1 ]
	run -0 jq -c 'del(.ts_ns, .cpu, .tid)' <<<"${lines[0]}"
	# the owner is the connecting python (seen at connect by the tcp probe)
	assert_output "{\"type\":\"tcp_retrans\",\"pid\":$NS_PID,\"cgroup_id\":$(own_cgroup_id),\"comm\":\"python3\",\"family\":4,\"saddr\":\"127.0.0.1\",\"daddr\":\"127.0.0.1\",\"sport\":$cp,\"dport\":$sp,\"state\":\"SYN_SENT\"$(own_ident json)}"
}

@test "load --pid P: only P's connections" {
	sleep 30 3>&- &
	local other=$!
	bg_track "$other"
	run -0 "$LT" load --pid "$other" --probes tcp
	in_netns 4 1000 1000
	run -0 status_json
	run -0 jq -c '.probes[] | select(.name == "tcp") | [.events, .drops]' <<<"$output"
	assert_output '[0,0]'
}

@test "a connection storm: every connection's two records; runs the kernel skipped are taken over" {
	# The kernel skips a program that fires while it already runs on that CPU
	# (a softirq inside a process-context run; on kernels with preemptible
	# tracepoints, another task's run preempted on that CPU); lt_tcp_nest takes
	# those over, and lt_tcp_tp there what both were skipped for. A busy loop per
	# CPU contends with the storm.
	run -0 "$LT" load --probes tcp
	events_bg "$OUT" --json
	contend
	# in this namespace, the loader's: socket storage's sweep counts closes
	# no program ran for there (docs/design.md)
	IN_HOST_NS=1 NS_WAIT=300 in_netns storm 600
	uncontend
	wait_record "$OUT" ".pid == $NS_PID" 10
	# (closes the kernel ran no program for are counted by the sweep, which the
	# consumer runs every 2 s)
	local i n=0 unseen=0
	for ((i = 0; i < 100; i++)); do
		n=$(count_records "$OUT" ".pid == $NS_PID")
		unseen=$(probe_field tcp unseen)
		[ $((n + unseen)) -lt 2400 ] || break
		sleep 0.2
	done
	stop_consumer "$EV_PID"
	run -0 status_json
	local st=$output skipped missed connects accepts
	run -0 jq -c '.probes[] | select(.name == "tcp") | [.drops, .missed, .recovered]' <<<"$st"
	local counts=$output
	missed=$(jq '.[1]' <<<"$counts")
	skipped=$(bpftool -j prog show name lt_tcp | jq '.recursion_misses // 0')
	echo "# lt_tcp skipped by the kernel: $skipped; taken over: $(jq '.[2]' <<<"$counts"); missed: $missed" >&3
	# what status counts as recovered or missed is what the kernel counts as skipped
	assert_equal "$(jq '.[0], .[1] + .[2]' <<<"$counts" | tr '\n' ' ')" "0 $skipped "
	# 2 threads x 600 connections x 2 sides, each side once
	connects=$(count_records "$OUT" ".pid == $NS_PID and .direction == \"connect\" and .tx_bytes == 100 and .rx_bytes == 100")
	accepts=$(count_records "$OUT" ".pid == $NS_PID and .direction == \"accept\" and .tx_bytes == 100 and .rx_bytes == 100")
	# where tracepoints are preemptible, lt_tcp and lt_tcp_nest can both be
	# skipped (tasks preempted inside them): lt_tcp_tp takes those over
	if tp_preemptible; then
		skipped=$(bpftool -j prog show name lt_tcp_nest | jq '.recursion_misses // 0')
		echo "# lt_tcp_nest skipped $skipped times: lt_tcp_tp took those over" >&3
	fi
	[ "$unseen" = 0 ] || echo "# tcp: $unseen closes no program ran for (unseen)" >&3
	assert_equal "$missed $((connects + accepts + unseen))" "0 2400"
	[ "$connects" -le 1200 ] && [ "$accepts" -le 1200 ] || fail "$connects connects, $accepts accepts"
}

# hold_conns NS: 40 loopback connections live at once, in a network namespace
# of their own (NS=own) or this one (host), until release_conns; sets HOLD_PID
hold_conns() {
	local fifo="$BATS_TEST_TMPDIR/hold" out="$BATS_TEST_TMPDIR/storm"
	need_workloads connstorm
	rm -f "$fifo" "$out"
	mkfifo "$fifo"
	if [ "$1" = own ]; then
		unshare -n bash -c 'ip link set lo up && exec "$@"' bash "$WLDIR/connstorm" 40 1 "$fifo" \
			>"$out" 3>&- &
	else
		"$WLDIR/connstorm" 40 1 "$fifo" >"$out" 3>&- &
	fi
	HOLD_PID=$!
	bg_track "$HOLD_PID"
	wait_line "$out" "^connstorm: 40 connections live at once\$" "$HOLD_PID"
}

release_conns() {
	: >"$BATS_TEST_TMPDIR/hold" # they all close
	wait_rc "$HOLD_PID" 60
	assert_equal "$RC" 0
}

# sweeps_while_live: two sweeps (status sweeps every 2 s at most) while the
# connections are live: none of them is unseen
sweeps_while_live() {
	"$LT" status >/dev/null
	sleep 2.1
	"$LT" status >/dev/null
	sleep 2.1
	run -0 probe_field tcp unseen
	assert_output 0
}

# detach_tcp: the tcp programs detached (their link pins removed, the only
# reference), as on a kernel that runs no program for a task
detach_tcp() {
	rm -f "$PIN/links/tcp" "$PIN/links/tcp_nest" "$PIN/links/tcp_tp"
	# bpffs drops its reference after an RCU grace period: then the programs go
	local i p
	for ((i = 0; i < 100; i++)); do
		for p in lt_tcp lt_tcp_nest lt_tcp_tp; do
			bpftool prog show name "$p" >/dev/null 2>&1 && break
		done || break
		sleep 0.05
	done
	for p in lt_tcp lt_tcp_nest lt_tcp_tp; do
		run -255 bpftool prog show name "$p"
	done
}

# wait_unseen N: status (which sweeps every 2 s at most) until tcp's unseen is N
wait_unseen() {
	local i n
	for ((i = 0; i < 60; i++)); do
		n=$(probe_field tcp unseen)
		[ "$n" != "$1" ] || return 0
		sleep 0.25
	done
	fail "tcp unseen $n, expected $1"
}

@test "closes the kernel ran no program for: found by the sweep, counted unseen in status, metrics and the stream, once; the hash's slots freed" {
	http_setup
	local state ns
	for state in hash local; do
		if [ "$state" = local ] && ! "$LT" load --probes tcp --state local >/dev/null 2>&1; then
			echo "# no socket storage for tracing programs (5.11+): hash only" >&3
			continue
		fi
		[ "$state" = local ] || run -0 "$LT" load --probes tcp --state hash --max-conns 1000
		# the hash is swept in every namespace; socket storage's balance in the
		# loader's: connections live in another one are not counted either
		ns=own
		if [ "$state" = local ]; then
			hold_conns own
			sweeps_while_live
			release_conns
			ns=host
		fi
		hold_conns "$ns"
		sweeps_while_live
		detach_tcp
		release_conns # 80 tracked sockets close, no program sees it
		wait_unseen 80
		# the stale entries are gone: their slots are free for new connections
		if [ "$state" = hash ]; then
			run -0 "$LT" status --json
			run -0 jq -r '.probes[] | select(.name == "tcp") | .maps[] | select(.name == "lt_tcp_conns") | .entries' <<<"$output"
			assert_output 0
		fi
		run -0 "$LT" status
		assert_line "unseen: tcp 80 (the kernel ran no program for them: their records are missing)"
		# the stream says so once, as a lost record, and its next consumer not again
		"$LT" events --json --duration 1 >"$OUT" 2>"$OUT.err"
		run -0 jq -s -c '[.[] | select(.type == "lost" and .probe == "tcp") | [.count, .throttled, .unseen]]' "$OUT"
		assert_output "[[0,0,80]]"
		run -0 cat "$OUT.err"
		assert_line "lowtrace: the kernel ran no program for 80 events before this consumer started (their records are missing): tcp=+80"
		"$LT" events --json --duration 1 >"$OUT" 2>"$OUT.err"
		run -0 jq -s -c '[.[] | select(.type == "lost")]' "$OUT"
		assert_output "[]"
		run -0 cat "$OUT.err"
		refute_output --partial "no program"
		serve
		run -0 scrape
		if [ "$state" = local ]; then
			# the scrape's own connection, opened in this namespace with the programs
			# detached, is an open no program saw (its 2 sockets) when a sweep runs during it
			assert_line --regexp '^lowtrace_unseen_total\{probe="tcp"\} (80|82)$'
		else
			assert_line 'lowtrace_unseen_total{probe="tcp"} 80'
		fi
		kill "$MPID"
		wait_rc "$MPID" 10
		run -0 "$LT" unload
	done
}

# two_sweeps: two sweeps (status sweeps every 2 s at most)
two_sweeps() {
	"$LT" status >/dev/null
	sleep 2.1
	"$LT" status >/dev/null
	sleep 2.1
	"$LT" status >/dev/null
}

@test "opens the kernel ran no program for: counted unseen by socket storage's sweep; connections opened before the load are not, nor their closes" {
	if ! "$LT" load --probes tcp --state local >/dev/null 2>&1; then
		skip "no socket storage for tracing programs (5.11+): the hash's reaper counts closes only"
	fi
	run -0 "$LT" unload
	# 80 sockets opened before the load: live, then closed with the programs seeing it
	hold_conns host
	run -0 "$LT" load --probes tcp --state local
	sweeps_while_live
	release_conns
	two_sweeps
	run -0 probe_field tcp unseen
	assert_output 0
	# 80 sockets opened with no program run: live, the sweep finds them untracked
	detach_tcp
	hold_conns host
	wait_unseen 80
	run -0 "$LT" status
	assert_line "unseen: tcp 80 (the kernel ran no program for them: their records are missing)"
	# and closed: counted once
	release_conns
	two_sweeps
	run -0 probe_field tcp unseen
	assert_output 80
	run -0 "$LT" unload
}
