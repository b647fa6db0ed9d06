#!/usr/bin/env bats
# scale: exact counts with tens of thousands of objects live at once: loopback
# connections (tcp), threads inside one syscall (open, syscalls), processes
# (syscalls --per-pid). Per-object state lives in socket and task local storage
# where the kernel lets tracing programs use it (5.11+); otherwise, or with
# --state hash, in bounded hashes where a failed insert is a counted drop. So on
# every path each object is either recorded or counted: never silently lost.

load helpers

# The storms' sizes: the issue's figures. The test VMs (tests/vm/init sets
# VM_RESULTS) emulate their CPUs: 50 000 connections took one to seven minutes
# there, so they run smaller storms: the first 10 000 connections (on 5.10 its
# 20 000 sockets fit the default hash; the second storm overflows a smaller
# one), the others sizes that still overflow every bounded map below
# (--max-conns and --max-threads are set from these, lt_sys_hist has 4096 keys).
CONNS_ALL=50000
CONNS=50000
THREADS=5000
PROCS=5000
if [ -n "${VM_RESULTS:-}" ]; then
	CONNS_ALL=10000
	CONNS=3000
	THREADS=1000
	PROCS=2500
fi
# the light guests' first storm: still more sockets than a small hash holds
light CONNS_ALL 4000

setup() {
	lt_setup
	need_workloads connstorm threadstorm procstorm
	OUT="$BATS_TEST_TMPDIR/events"
	LTNS=()
}

teardown() {
	lt_teardown
	[ -z "${STORM_NS:-}" ] || umount "$STORM_NS" 2>/dev/null || true
}

# storm_ns: a network namespace of the storms' own that lowtrace runs in too
# (LTNS: the prefix of its commands): socket storage's sweep counts the closes
# no program ran for in the loader's namespace (docs/design.md), so the loader
# and the sweepers are where the connections are. Held by a bind mount,
# undone by teardown.
storm_ns() {
	STORM_NS="$BATS_TEST_TMPDIR/netns"
	touch "$STORM_NS"
	unshare --net="$STORM_NS" true
	LTNS=(nsenter --net="$STORM_NS")
	"${LTNS[@]}" ip link set lo up
	"${LTNS[@]}" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
}

# state_of task|sk: where the loaded suite keeps per-thread or per-socket
# state, "local" (task or socket storage) or "hash" (the bounded fallback)
state_of() {
	"${LTNS[@]}" "$LT" status --json | jq -e -r ".state.$1"
}

# map_of PROBE MAP: "TYPE ENTRIES MAX_ENTRIES" of a probe's map, from status'
# map audit (null: local storage has no count and no cap)
map_of() {
	"${LTNS[@]}" "$LT" status --json | jq -e -r --arg p "$1" --arg m "$2" \
		'.probes[] | select(.name == $p) | .maps[] | select(.name == $m) | "\(.type) \(.entries) \(.max_entries)"'
}

# probe_stat NAME: "events drops missed unseen" of a probe, from status --json
# (status sweeps tcp first, every 2 s at most: closes no program ran for)
probe_stat() {
	"${LTNS[@]}" "$LT" status --json | jq -r --arg n "$1" '.probes[] | select(.name == $n) | "\(.events) \(.drops) \(.missed) \(.unseen)"'
}

# counted_as WANT SEEN MISSED WHAT: SEEN (records, plus drops) is exactly WANT
# where the kernel skipped the probe nowhere. Where it did (a program that fires
# while it already runs on that CPU: kernels with preemptible tracepoints, such
# as 7.2 under emulation, with thousands of threads waking at once), each skip
# loses at most one: SEEN <= WANT <= SEEN + MISSED, every loss still counted.
counted_as() {
	if [ "$3" = 0 ]; then
		assert_equal "$2" "$1"
		return
	fi
	echo "# $4: the kernel skipped the probe $3 times; $2 of $1 seen" >&3
	if [ "$2" -gt "$1" ] || [ "$1" -gt $(($2 + $3)) ]; then
		fail "$4: $2 seen, $3 missed, $1 expected"
	fi
}

# connstorm N: N loopback connections live at once, in a network namespace of
# its own with the whole port range (a worker's connections share its listener,
# so each takes an ephemeral port); 6000 per worker: 12000 fds, under the
# 20000 a process may hold where the tests run
connstorm() {
	local w=$((($1 + 5999) / 6000))
	if [ -n "${STORM_NS:-}" ]; then
		run -0 timeout 600 "${LTNS[@]}" "$WLDIR/connstorm" "$1" "$w" 3>&-
	else
		run -0 timeout 600 unshare -n bash -c \
			'ip link set lo up && sysctl -qw net.ipv4.ip_local_port_range="1024 65535" && exec "$@"' \
			bash "$WLDIR/connstorm" "$1" "$w" 3>&-
	fi
	assert_output "connstorm: $1 connections live at once"
}

# init_net_opens: TCP sockets opened in this network namespace (the storms run
# in their own), active and passive, since boot
init_net_opens() {
	awk '/^Tcp:/ && $2 ~ /^[0-9]/ { print $6 + $7 }' /proc/net/snmp
}

# sweeps_done: tcp sweeps completed (lt_sweep.sweeps)
sweeps_done() {
	bpftool -j map dump pinned "$PIN/maps/lt_sweep" | jq -e '.[0].formatted.value.sweeps'
}

# tcp_settle N: wait until the tcp probe has written, dropped or found unseen N
# records and no more come (the last closes may still run in softirqs; the sweep
# counts a close no program ran for two sweeps later); sets EVENTS DROPS MISSED UNSEEN
tcp_settle() {
	local i last=-1
	for ((i = 0; i < 300; i++)); do
		read -r EVENTS DROPS MISSED UNSEEN < <(probe_stat tcp)
		[ $((EVENTS + DROPS + UNSEEN)) -lt "$1" ] || [ $((EVENTS + DROPS + UNSEEN)) != "$last" ] ||
			break
		last=$((EVENTS + DROPS + UNSEEN))
		sleep 0.1
	done
	# EVENTS counts every tcp record, the host's own connections' too (a harness's
	# traffic can make up for a storm close not counted yet). With socket storage
	# the sweep's unseen is exact two sweeps after the last close, and sweeps are
	# LT_SWEEP_COST times a sweep's own time apart: 12 s and more after one that
	# walked the storm's live sockets. So wait for two sweeps begun after the
	# counts settled (status sweeps when one is due)
	local sweeps
	sweeps=$(sweeps_done)
	for ((i = 0; i < 600; i++)); do
		read -r EVENTS DROPS MISSED UNSEEN < <(probe_stat tcp)
		[ "$(sweeps_done)" -lt $((sweeps + 2)) ] || break
		sleep 0.5
	done
	[ "$i" -lt 600 ] || fail "tcp: no two sweeps in 300 s"
	# a close the kernel ran no program for (docs/design.md): said, and counted
	[ "$UNSEEN" = 0 ] || echo "# tcp: $UNSEEN closes no program ran for (unseen)" >&3
	[ $((EVENTS + DROPS + UNSEEN)) -ge "$1" ] ||
		echo "tcp: $EVENTS records, $DROPS drops and $UNSEEN unseen, expected $1 in all" >&2
}

# tcp_counts: read the ring's EVENTS records into OUT; sets CONNECTS and ACCEPTS,
# connstorm's loopback records (grep: jq takes seconds for 100 000 lines, minutes
# under emulation), and EXACT, those with the owner and 10 bytes each way. An
# accepted socket's owner is taken at its close(); one the peer resets first
# (a 2 GiB guest closing 100 000 sockets at once runs out of TCP memory and
# resets orphans) closes in a softirq: recorded, without an owner (comm "")
tcp_counts() {
	timeout 300 "${LTNS[@]}" "$LT" events --json --count "$EVENTS" >"$OUT"
	CONNECTS=$(grep -c '"comm":"connstorm",.*"saddr":"127\.[0-9.]*","daddr":"127\.[0-9.]*",.*"direction":"connect",' "$OUT" || true)
	ACCEPTS=$(grep -cE '"comm":"(connstorm|)",.*"saddr":"127\.[0-9.]*","daddr":"127\.[0-9.]*",.*"direction":"accept",' "$OUT" || true)
	EXACT=$(grep -c '"comm":"connstorm",.*"tx_bytes":10,"rx_bytes":10,' "$OUT" || true)
}

@test "a connection storm, all live at once: two records per connection, none lost (socket storage; the hash where its sockets fit); records + drops beyond the hash" {
	local conns=$CONNS_ALL state
	storm_ns
	run -0 "${LTNS[@]}" "$LT" load --probes tcp --ringbuf-size 64M
	state=$(state_of sk)
	connstorm "$conns"
	tcp_settle $((2 * conns))
	tcp_counts
	echo "# socket state $state: $CONNECTS connect, $ACCEPTS accept, $DROPS drops, $MISSED missed" >&3
	run -0 map_of tcp lt_tcp_conns
	if [ "$state" = local ]; then
		# socket storage (5.11+ where tracepoints are not preemptible): lt_tcp_nest
		# takes over every change the kernel skipped
		assert_output "sk_storage null null"
	else
		# the default hash holds 65536 sockets: before 5.11 (no socket storage),
		# and on 7.x, where lt_tcp_tp (which cannot reach socket storage) takes
		# over what lt_tcp and lt_tcp_nest were both skipped for
		assert_output --regexp '^hash [0-9]+ 65536$'
		if [ $((2 * conns)) -gt 65536 ]; then
			counted_as $((2 * conns)) $((CONNECTS + ACCEPTS + DROPS + UNSEEN)) "$MISSED" tcp
			return
		fi
	fi
	assert_equal "$DROPS $MISSED" "0 0"
	# every connection's two records, but for closes the kernel ran no program
	# for: those the sweep counts
	assert_equal "$((CONNECTS + ACCEPTS + UNSEEN)) $((EXACT + UNSEEN))" "$((2 * conns)) $((2 * conns))"
}

@test "load --state hash --max-conns: a storm beyond the hash, every connection recorded or counted as a drop" {
	local max=$((CONNS * 3 / 5))
	run -0 "$LT" load --probes tcp --ringbuf-size 64M --state hash --max-conns "$max"
	run -0 state_of sk
	assert_output hash
	run -0 map_of tcp lt_tcp_conns
	assert_output --regexp "^hash [0-9]+ $max\$"
	local opens
	opens=$(init_net_opens)
	connstorm "$CONNS"
	tcp_settle $((2 * CONNS))
	tcp_counts
	# the drops count every socket's: others opened meanwhile would add theirs
	opens=$(($(init_net_opens) - opens))
	echo "# max-conns $max: $CONNECTS connect, $ACCEPTS accept, $DROPS drops, $MISSED missed, $UNSEEN unseen; $opens other sockets" >&3
	counted_as $((2 * CONNS)) $((CONNECTS + ACCEPTS + DROPS + UNSEEN)) "$MISSED" tcp
	# all sockets are live at once: at most max of them tracked, the others dropped
	[ $((CONNECTS + ACCEPTS)) -le "$max" ] || fail "$((CONNECTS + ACCEPTS)) records from $max slots"
	[ "$DROPS" -ge $((2 * CONNS - max - MISSED)) ] || fail "$DROPS drops"
	# every slot free again once the sockets are gone
	run -0 map_of tcp lt_tcp_conns
	assert_output "hash 0 $max"
}

# threadstorm_start: threadstorm THREADS FIFO in the background, waiting for
# SIGUSR1 before it starts its threads; sets TS_PID
threadstorm_start() {
	FIFO="$BATS_TEST_TMPDIR/fifo"
	mkfifo "$FIFO"
	"$WLDIR/threadstorm" "$THREADS" "$FIFO" >"$BATS_TEST_TMPDIR/ts" 3>&- &
	TS_PID=$!
	bg_track "$TS_PID"
	wait_line "$BATS_TEST_TMPDIR/ts" "^$TS_PID\$" "$TS_PID"
}

# threadstorm_go: let it run, wait for its end; sets TS_OPENS, its openat calls
threadstorm_go() {
	kill -USR1 "$TS_PID"
	wait_rc "$TS_PID" 300
	assert_equal "$RC" 0
	run -0 cat "$BATS_TEST_TMPDIR/ts"
	assert_line "threadstorm: $THREADS threads blocked in openat at once"
	assert_line --regexp "^threadstorm: $THREADS opens returned an fd; openat calls [0-9]+\$"
	TS_OPENS=$(sed -nE 's/.*openat calls ([0-9]+)$/\1/p' "$BATS_TEST_TMPDIR/ts")
}

# open_records N: the open probe's N records in the ring into OUT
open_records() {
	timeout 120 "$LT" events --json --type open --count "$1" >"$OUT"
}

@test "threads blocked in openat at once: one open record each, the per-pid histogram counts every openat, no drop" {
	threadstorm_start
	# every task's opens: a ring for thousands of records
	run -0 "$LT" load --probes syscalls,open --per-pid --ringbuf-size 16M
	local state ev dr mi
	state=$(state_of task)
	threadstorm_go
	read -r ev dr mi _ < <(probe_stat open)
	open_records "$ev"
	echo "# thread state $state: threadstorm made $TS_OPENS openat calls; open: $ev records, $dr drops, $mi missed" >&3
	assert_equal "$dr" 0
	# the threads' opens
	run -0 count_records "$OUT" ".pid == $TS_PID and .syscall == \"openat\" and .path == \"$FIFO\" and .flags == [\"O_RDONLY\"] and .ret >= 0"
	counted_as "$THREADS" "$output" "$mi" "open, the threads"
	# and every other openat of the process (the main thread's reads of /proc, its write end)
	run -0 count_records "$OUT" ".pid == $TS_PID"
	counted_as "$TS_OPENS" "$output" "$mi" "open, the process"
	run --separate-stderr -0 "$LT" hist syscalls --json
	run -0 jq -c ".histograms[] | select(.syscall == \"openat\" and .pid == $TS_PID) | .count" <<<"$output"
	local n=$output
	read -r ev dr mi _ < <(probe_stat syscalls)
	assert_equal "$dr" 0
	counted_as "$TS_OPENS" "$n" "$mi" "syscalls, openat of the process"
	if [ "$state" = local ]; then
		run -0 map_of open lt_open_args
		assert_output "task_storage null null"
	fi
}

@test "load --state hash --max-threads: more threads inside openat than the hash holds, every open recorded or counted" {
	threadstorm_start
	local max=$((THREADS * 2 / 5)) ev dr mi sdr
	# --pid: the hash's slots and drops are the storm's alone
	run -0 "$LT" load --probes syscalls,open --per-pid --pid "$TS_PID" --state hash --max-threads "$max"
	run -0 state_of task
	assert_output hash
	run -0 map_of open lt_open_args
	assert_output --regexp "^hash [0-9]+ $max\$"
	run -0 map_of syscalls lt_sys_start
	assert_output --regexp "^hash [0-9]+ $max\$"
	threadstorm_go
	read -r ev dr mi _ < <(probe_stat open)
	open_records "$ev"
	echo "# max-threads $max: threadstorm made $TS_OPENS openat calls; open: $ev records, $dr drops, $mi missed" >&3
	run -0 count_records "$OUT" ".pid == $TS_PID"
	counted_as "$TS_OPENS" "$((output + dr))" "$mi" "open, records + drops"
	# all threads were inside openat at once: at most max of them had a slot
	run -0 count_records "$OUT" ".pid == $TS_PID and .path == \"$FIFO\" and .flags == [\"O_RDONLY\"]"
	[ "$output" -le "$max" ] || fail "$output FIFO records from $max slots"
	[ "$dr" -ge $((THREADS - max - mi)) ] || fail "open: $dr drops"
	# the same for the syscalls probe's start times
	local smi
	read -r _ sdr smi _ < <(probe_stat syscalls)
	[ "$sdr" -ge $((THREADS - max - smi)) ] || fail "syscalls: $sdr drops"
	# the process is gone, its threads exited outside any open: no slot left taken
	# (a thread whose exit the kernel skipped the probe for would keep one)
	if [ "$mi" = 0 ] && [ "$smi" = 0 ]; then
		run -0 map_of open lt_open_args
		assert_output "hash 0 $max"
		run -0 map_of syscalls lt_sys_start
		assert_output "hash 0 $max"
	fi
}

# lt_sys_hist holds at most 4096 (syscall, pid) keys (progs/syscalls.bpf.c):
# with --per-pid every process adds its own, and an update that finds the map
# full is a counted drop of the syscalls probe.
@test "load --per-pid with more processes than lt_sys_hist's 4096 keys: the map full, the rest counted as drops" {
	run -0 "$LT" load --probes syscalls --per-pid
	run -0 map_of syscalls lt_sys_hist
	assert_output --regexp '^percpu_hash [0-9]+ 4096$'
	run -0 timeout 300 "$WLDIR/procstorm" "$PROCS"
	assert_output "procstorm: $PROCS children"
	run --separate-stderr -0 "$LT" hist syscalls --json
	run -0 jq '.histograms | length' <<<"$output"
	assert_output 4096
	run -0 map_of syscalls lt_sys_hist
	assert_output "percpu_hash 4096 4096"
	# each child made two calls of its own keys (getppid, getuid): a key not in
	# the full map is a call dropped
	local ev dr mi
	read -r ev dr mi _ < <(probe_stat syscalls)
	echo "# syscalls: $ev counted, $dr drops" >&3
	[ "$dr" -ge $((2 * PROCS - 4096)) ] || fail "syscalls: $dr drops"
}

# status_with_skips: $st, status's JSON, and $progs, bpftool's programs, read with no skip
# of the kernel's between them. This test's own execs (bpftool, jq, the status) can be
# skipped too on a preemptible 7.x, and one between the two reads made a count status had not
# seen (7 against 6 in a 7.2 guest); a read with none between is exact.
status_with_skips() {
	local i progs2
	for ((i = 0; i < 10; i++)); do
		progs=$(bpftool -j prog show)
		run -0 status_json
		st=$output
		progs2=$(bpftool -j prog show)
		[ "$(jq -c '[.[] | .recursion_misses // 0]' <<<"$progs")" != \
			"$(jq -c '[.[] | .recursion_misses // 0]' <<<"$progs2")" ] || break
	done
}

# kernel_skips PROBE: what the kernel skipped the probe's main programs for, in $progs: lt_PROBE
# and for exit lt_exit_free (not exec's ancestry programs, lt_exec_fork and lt_exec_free, which
# write no record)
kernel_skips() {
	jq --arg p "$1" '[.[] | select(.name == "lt_\($p)" or ($p == "exit" and .name == "lt_exit_free")) |
		.recursion_misses // 0] | add' <<<"$progs"
}

# An exec storm with the CPUs contended: 3 shells each run N /bin/true (fork,
# exec, exit, then SIGCHLD to the shell) while a busy loop runs per CPU. The
# kernel may skip lt_exec, lt_exit, lt_fork or lt_signal for an event (on 7.x
# for another task's event while a task is preempted inside the program); each
# *_nest program takes those over, and on 7.x each *_tp program what a main
# program and its nest were both skipped for. Exactly one record per event,
# none lost, on every kernel.
@test "an exec storm on busy CPUs: every exec, exit, fork and SIGCHLD exactly once; skipped runs are taken over" {
	local n=1500 w pids=() st p skipped
	# the emulated guests: 450 execs against two busy loops, the kernel's skips as likely (180
	# with light storms)
	[ -z "${VM_RESULTS:-}" ] || n=150
	light n 60
	run -0 "$LT" load --probes exec,exit,fork,signal --ringbuf-size 64M
	events_bg "$OUT" --json
	contend
	for w in 1 2 3; do
		bash -c 'for ((i = 0; i < '"$n"'; i++)); do /bin/true "$0"; done' "$MARK" 3>&- &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	uncontend
	# the last records are in the ring once every shell's last exit is
	wait_record "$OUT" ".type == \"signal\" and .target_pid == ${pids[2]} and .sig == 17" 30
	sleep 1
	stop_consumer "$EV_PID"
	local missed=() want=$((3 * n)) counts progs
	status_with_skips
	for p in exec exit fork signal; do
		skipped=$(kernel_skips "$p")
		run -0 jq -c --arg p "$p" '.probes[] | select(.name == $p) | [.drops, .missed, .recovered]' <<<"$st"
		echo "# $p: lt_$p skipped by the kernel $skipped times; [drops, missed, recovered] $output" >&3
		# what status counts as recovered or missed is what the kernel counts as skipped
		assert_equal "$(jq -c '[.[0], .[1] + .[2]]' <<<"$output")" "[0,$skipped]"
		missed+=("$(jq '.[1]' <<<"$output")")
	done
	# [execs, their pids, exits, their pids, forks, their children, SIGCHLDs]
	run -0 jq -s -c --argjson a "${pids[0]}" --argjson b "${pids[1]}" --argjson c "${pids[2]}" --arg m "$MARK" '
		[.[] | select(.pid == $a or .pid == $b or .pid == $c or .ppid == $a or .ppid == $b or
			.ppid == $c or .target_pid == $a or .target_pid == $b or .target_pid == $c)] as $r |
		($r | map(select(.type == "exec" and .filename == "/bin/true" and (.args | tostring | contains($m))))) as $e |
		[($e | length), ($e | map(.pid) | unique | length),
		 ($r | map(select(.type == "exit" and .comm == "true")) | length),
		 ($r | map(select(.type == "exit" and .comm == "true") | .pid) | unique | length),
		 ($r | map(select(.type == "fork")) | length),
		 ($r | map(select(.type == "fork") | .child_pid) | unique | length),
		 ($r | map(select(.type == "signal" and .sig == 17 and
			(.target_pid == $a or .target_pid == $b or .target_pid == $c))) | length)]' "$OUT"
	counts=$output
	# where tracepoints are preemptible, a main program and its nest can both be
	# skipped (tasks preempted inside them): the *_tp programs take those over
	if tp_preemptible; then
		for p in exec exit fork; do
			skipped=$(bpftool -j prog show name "lt_${p}_nest" | jq '.recursion_misses // 0')
			echo "# $p: lt_${p}_nest skipped $skipped times: lt_${p}_tp took those over" >&3
		done
	fi
	assert_equal "${missed[*]}" "0 0 0 0"
	assert_equal "$counts" "[$want,$want,$want,$want,$want,$want,$want]"
}

# tp_workload: a python process starts two threads, sends 5 bytes one way and 7
# the other over a loopback connection, then runs sh -c 'exit 7' with two args;
# prints its exec, exit, fork and tcp records (the process's and its child's)
# without what differs between runs, sorted
tp_workload() {
	local py
	events_bg "$OUT" --json
	py=$(/usr/bin/python3 -c '
import os, socket, subprocess, threading
ts = [threading.Thread(target=lambda: None) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
c.sendall(b"x" * 5); a.recv(5); a.sendall(b"y" * 7); c.recv(7)
c.close(); a.close()
subprocess.call(["/bin/sh", "-c", "exit 7", "zero", "one"])
print(os.getpid())' 3>&-)
	[ -n "$py" ] || return 1
	wait_record "$OUT" ".type == \"exit\" and .pid == $py" || return 1
	stop_consumer "$EV_PID"
	jq -s -c --argjson p "$py" '[.[] | select(.pid == $p or .ppid == $p) |
		{type, comm, uid, filename, argc, args, exit_code, signal, core_dumped,
		 family, direction, tx_bytes, rx_bytes} |
		with_entries(select(.value != null))] | sort_by(tostring)' "$OUT"
}

# LOWTRACE_TP_LEVEL attaches the *_tp programs on any kernel, but before 5.15
# a perf event's BPF program is no link the loader could pin (nor leave behind)
skip_without_perf_links() {
	perf_links ||
		skip "no perf_event links before 5.15 ($(uname -r)): a *_tp program cannot stay attached"
}

@test "the classic-tracepoint programs (*_tp) alone write the exec, exit, fork and tcp records the main programs write" {
	local want got
	skip_without_perf_links
	run -0 "$LT" load --probes exec,exit,fork,tcp
	want=$(tp_workload)
	run -0 "$LT" unload
	rm -f "$OUT" "$OUT.err"
	# the main and nest programs leave every event to the *_tp ones
	run -0 env LOWTRACE_TP_LEVEL=only "$LT" load --probes exec,exit,fork,tcp
	run -0 ls "$PIN/links"
	assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir exec exec_fork exec_free exec_nest exec_tp exit exit_free exit_nest exit_tp fork fork_nest fork_tp tcp tcp_nest tcp_tp)"
	got=$(tp_workload)
	echo "# $want" >&3
	# python's exec and exit, its fork of sh, sh's exec (argc 5) and exit 7, no
	# fork for a thread; the connection's two ends, 5 bytes out and 7 in each way
	[ "$(jq -c '[.[] | .type] | sort' <<<"$want")" = '["exec","exec","exit","exit","fork","tcp","tcp"]' ] ||
		fail "unexpected records: $want"
	assert_equal "$got" "$want"
	run -0 status_json
	# every record by a takeover (tcp: each of the sockets' state changes)
	run -0 jq -c '[.probes[] | select(.name == "exec" or .name == "fork" or .name == "tcp") |
		.recovered >= 1 and .events <= .recovered and .drops == 0 and .missed == 0] | unique' <<<"$output"
	assert_output '[true]'
	# and lt_tcp_tp, the first to run on every CPU, left no closed socket behind
	run -0 map_of tcp lt_tcp_conns
	assert_output --regexp '^hash 0 '
}

# After load --replace, the new suite's *_tp program runs before its main one
# (perf keeps its place on the tracepoint from the old suite's): claims keep
# exactly one record per event whatever the order, in the thread-id hash too;
# tcp's lt_tcp_tp notes what it took and lt_tcp gives back what lt_tcp_tp counted.
# Connections run through the replace: its lt_tcp is attached before its lt_tcp_tp and
# sees changes first. The build before 2026-12-07 noted the order per CPU from the first
# program to run and from then on counted every change lt_tcp_tp ran first for as
# recovered: 353 in a 7.2 guest's CI, 357 040 here with a storm through the replace (and
# 174 connections unseen: lt_tcp opened the taken ones again).
@test "load --replace --state hash through a connection storm, the *_tp programs attached: exactly one exec, exit, fork and tcp record each, recovered what the kernel skipped" {
	local n=200 sh py storm conns stop=$BATS_TEST_TMPDIR/stop p skipped progs
	skip_without_perf_links
	run -0 env LOWTRACE_TP_LEVEL=force "$LT" load --probes exec,exit,fork,tcp
	/usr/bin/python3 -c '
import os, socket, sys
stop = sys.argv[1]
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
for i in range(1000000):
    c = socket.create_connection(l.getsockname()); a, _ = l.accept()
    c.close(); a.close()
    if i == 0: open(stop + ".go", "w").write("go\n")
    if os.path.exists(stop): break
print(i + 1, os.path.exists(stop))' "$stop" >"$stop.out" 3>&- &
	storm=$!
	bg_track "$storm"
	wait_line "$stop.go" go "$storm" || fail "the connection storm did not start"
	# and the claims in the thread-id hash (5.10's state; --state hash); the ring holds the
	# storm's records from the attach to the stop (~20 000 here)
	run -0 env LOWTRACE_TP_LEVEL=force "$LT" load --replace --state hash --probes exec,exit,fork,tcp \
		--ringbuf-size 64M
	touch "$stop"
	wait "$storm"
	bg_forget "$storm"
	conns=$(cat "$stop.out")
	echo "# $conns: connections through the replace, stopped after it" >&3
	[[ "$conns" =~ ^[0-9]+\ True$ ]] || fail "the storm ended before the replace did: $conns"
	events_bg "$OUT" --json
	bash -c 'for ((i = 0; i < '"$n"'; i++)); do /bin/true "$0"; done' "$MARK" 3>&- &
	sh=$!
	py=$(conns_10 "$n")
	wait "$sh"
	wait_record "$OUT" ".type == \"exit\" and .pid == $sh" 30
	wait_record "$OUT" ".type == \"exit\" and .pid == $py" 30
	stop_consumer "$EV_PID"
	run -0 jq -s -c --argjson s "$sh" --argjson p "$py" --arg m "$MARK" '
		([.[] | select(.type == "exec" and .filename == "/bin/true" and (.args | tostring | contains($m)))] | [length, (map(.pid) | unique | length)]),
		([.[] | select(.type == "exit" and .ppid == $s)] | [length, (map(.pid) | unique | length)]),
		([.[] | select(.type == "fork" and .pid == $s)] | [length, (map(.child_pid) | unique | length)]),
		([.[] | select(.type == "tcp" and .pid == $p and .tx_bytes == 10 and .rx_bytes == 10)] |
		 [(map(select(.direction == "connect")) | length), (map(select(.direction == "accept")) | length)])' "$OUT"
	assert_output "$(printf '[%s,%s]\n' $n $n $n $n $n $n $n $n)"
	# what status counts as recovered or missed is what the kernel skipped the main programs
	# for (0 here; on a preemptible 7.x a task preempted inside one); nothing dropped or unseen
	status_with_skips
	for p in exec exit fork tcp; do
		skipped=$(kernel_skips "$p")
		run -0 jq -c --arg p "$p" '.probes[] | select(.name == $p) | [.drops, .unseen, .missed + .recovered]' <<<"$st"
		echo "# $p: lt_$p skipped by the kernel $skipped times; [drops, unseen, missed + recovered] $output" >&3
		assert_output "[0,0,$skipped]"
	done
	# the closed sockets lt_tcp_tp left for the tp_btf programs were freed
	run -0 map_of tcp lt_tcp_conns
	assert_output --regexp '^hash 0 '
}

# lt_tcp_tp alone once the tp_btf programs stop running (as if the kernel skipped both for
# every change): it takes every change and, since a connection before showed it runs last
# (lt_tcp_tp_last, progs/tcp.bpf.c), frees each close it takes. The build before left each
# one closed for an lt_tcp after it that never came, until its address took a new socket or
# two sweeps passed: 3 entries left here after 20 connections.
@test "lt_tcp_tp alone once the tp_btf programs stop: every connection's two records, each close freed by lt_tcp_tp" {
	local n=20 py p i
	skip_without_perf_links
	run -0 env LOWTRACE_TP_LEVEL=force "$LT" load --probes tcp
	# one connection: lt_tcp_tp finds its changes taken by lt_tcp, so it runs last
	conns_10 1 >/dev/null
	rm "$PIN/links/tcp" "$PIN/links/tcp_nest"
	# bpffs drops its reference after an RCU grace period: then the programs go
	for ((i = 0; i < 100; i++)); do
		for p in lt_tcp lt_tcp_nest; do
			bpftool prog show name "$p" >/dev/null 2>&1 && break
		done || break
		sleep 0.05
	done
	for p in lt_tcp lt_tcp_nest; do
		run -255 bpftool prog show name "$p"
	done
	py=$(conns_10 "$n")
	# (bpftool, not status: a status sweeps, and two sweeps would free closed entries too)
	run -0 bpftool -j map dump pinned "$PIN/maps/lt_tcp_conns"
	assert_output '[]'
	"$LT" events --json --duration 1 >"$OUT" 2>"$OUT.err"
	run -0 jq -s -c --argjson p "$py" '[.[] | select(.type == "tcp" and .pid == $p and
		.tx_bytes == 10 and .rx_bytes == 10) | .direction] | group_by(.) | map([.[0], length])' "$OUT"
	assert_output "[[\"accept\",$n],[\"connect\",$n]]"
}

# conns_10 N: N loopback connections, one after the other, 10 bytes each way; prints the pid
conns_10() {
	/usr/bin/python3 -c '
import os, socket, sys
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
for i in range(int(sys.argv[1])):
    c = socket.create_connection(l.getsockname()); a, _ = l.accept()
    c.sendall(b"x" * 10); a.recv(10); a.sendall(b"y" * 10); c.recv(10)
    c.close(); a.close()
print(os.getpid())' "$1" 3>&-
}
