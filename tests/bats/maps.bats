#!/usr/bin/env bats
# The map audit: status (text and JSON) shows each loaded probe's stateful maps,
# their kernel type, entries in use and limit, and where per-object state lives.

load helpers

# map_json PROBE MAP: that map's object in `status --json`
map_json() {
	"$LT" status --json | jq -e -c --arg p "$1" --arg m "$2" \
		'.probes[] | select(.name == $p) | .maps[] | select(.name == $m)'
}

@test "syscalls: by number a per-CPU array (full by construction), the hash shrunk; --per-pid: lt_sys_hist counted (0 < entries <= 4096), text and JSON agree" {
	run -0 "$LT" load --probes syscalls,tcp
	run -0 map_json syscalls lt_sys_nr
	run -0 jq -e '.type == "percpu_array" and .entries == .max_entries and .max_entries > 300' <<<"$output"
	run -0 map_json syscalls lt_sys_hist
	run -0 jq -c '[.type, .max_entries]' <<<"$output"
	assert_output '["percpu_hash",1]'
	run -0 "$LT" load --replace --probes syscalls,tcp --per-pid
	run -0 map_json syscalls lt_sys_nr
	run -0 jq -c '[.type, .entries, .max_entries]' <<<"$output"
	assert_output '["percpu_array",1,1]'
	# syscalls nobody else makes, so the histogram has keys of this test's own
	python3 -c 'import os
for _ in range(200): os.getppid(); os.umask(0o22); os.getpgrp()'
	run -0 map_json syscalls lt_sys_hist
	local m=$output n
	run -0 jq -r '[.type, .max_entries] | @tsv' <<<"$m"
	assert_output "$(printf 'percpu_hash\t4096')"
	n=$(jq -r .entries <<<"$m")
	[ "$n" -ge 3 ] && [ "$n" -le 4096 ] || fail "entries: $n"
	# the kernel reports its memory (fdinfo memlock): a 4096-key per-CPU hash takes pages
	run -0 jq -e '.memlock > 4096' <<<"$m"
	# one row per (syscall, pid) key: as many as bpftool counts
	local keys
	keys=$(bpftool map dump pinned "$PIN/maps/lt_sys_hist" -j | jq length)
	run -0 map_json syscalls lt_sys_hist
	run -0 jq -e --argjson k "$keys" '.entries >= $k' <<<"$output"
	# the text table: PROBE MAP TYPE ENTRIES MAX
	run -0 "$LT" status
	assert_line --regexp '^PROBE +MAP +TYPE +ENTRIES +MAX$'
	assert_line --regexp '^syscalls +lt_sys_hist +percpu_hash +[0-9]+ +4096$'
	n=$(awk '$1 == "syscalls" && $2 == "lt_sys_hist" {print $4}' <<<"$output")
	[ "$n" -ge 3 ] && [ "$n" -le 4096 ] || fail "text entries: $n"
}

@test "runq: its per-CPU array histogram is full by construction (entries = max = 1)" {
	run -0 "$LT" load --probes runq,exec
	run -0 map_json runq lt_runq_hist
	run -0 jq -c '[.type, .entries, .max_entries]' <<<"$output"
	assert_output '["percpu_array",1,1]'
	run -0 "$LT" status --json
	# not loaded: no maps key; loaded: a list (possibly empty)
	run -0 jq -c '[.probes[] | select(.name == "bio" or .name == "exec") | [.name, (.maps | type)]]' <<<"$output"
	assert_output '[["exec","array"],["bio","null"]]'
}

# local_or_skip ARGS: load ARGS --state local, or skip where the kernel has no local storage
local_or_skip() {
	run --separate-stderr "$LT" load "$@" --state local
	[ "$status" != 5 ] || skip "kernel before 5.11: no task/socket local storage for tracing programs"
	assert_equal "$status" 0
}

@test "local storage: task_storage and sk_storage rows with no count and no cap ('-', null)" {
	local_or_skip --probes syscalls,tcp,tcp_retrans
	run -0 "$LT" status --json
	local st=$output
	run -0 jq -c .state <<<"$st"
	assert_output '{"task":"local","sk":"local"}'
	run -0 jq -c '[.probes[] | select(.loaded) | .name as $p | .maps[] | select(.type | endswith("_storage")) | [$p, .name, .type, .entries, .max_entries]]' <<<"$st"
	assert_output '[["tcp","lt_tcp_conns","sk_storage",null,null],["tcp_retrans","lt_tcp_conns","sk_storage",null,null],["syscalls","lt_sys_start","task_storage",null,null]]'
	run -0 "$LT" status
	assert_line "state: task-local storage, socket-local storage"
	assert_line --regexp '^syscalls +lt_sys_start +task_storage +- +- per task$'
	assert_line --regexp '^tcp +lt_tcp_conns +sk_storage +- +- per socket$'
	assert_line --regexp '^syscalls +lt_sys_nr +percpu_array +[0-9]+ +[0-9]+$'
	assert_line --regexp '^syscalls +lt_sys_hist +percpu_hash +0 +1$'
}

# lt_tcp_tp (a classic tracepoint's program) cannot reach socket storage: where
# it is attached (preemptible tracepoints: 7.x; LOWTRACE_TP_LEVEL here) the
# sockets are in the hash; --state local keeps socket storage, without it
@test "the tcp takeover on the classic tracepoint: sockets in the hash, task storage stays; --state local: socket storage without lt_tcp_tp" {
	local env=()
	tp_preemptible || env=(LOWTRACE_TP_LEVEL=force)
	# (before 5.15 a perf event's program is no link the loader could pin)
	perf_links ||
		skip "no perf_event links before 5.15 ($(uname -r)): lt_tcp_tp cannot stay attached"
	run -0 env "${env[@]}" "$LT" load --probes syscalls,tcp
	run -0 ls "$PIN/links"
	assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir sys_e sys_x tcp tcp_nest tcp_tp)"
	run -0 "$LT" status
	assert_line "state: task-local storage, per-socket bounded hash"
	assert_line --regexp '^tcp +lt_tcp_conns +hash +[0-9]+ +65536$'
	run -0 "$LT" unload
	run -0 env "${env[@]}" "$LT" load --probes syscalls,tcp --state local
	run -0 ls "$PIN/links"
	assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir sys_e sys_x tcp tcp_nest tcp_sweep)"
	run -0 "$LT" status --json
	assert_equal "$(jq -c .state <<<"$output")" '{"task":"local","sk":"local"}'
}

@test "--state hash --max-threads 1000 --max-conns 500: the bounded hashes with those caps" {
	run -0 "$LT" load --probes syscalls,tcp,tcp_retrans,open,runq --state hash --max-threads 1000 --max-conns 500
	# the load summary says it too
	assert_line "state: bounded hashes (kernel without local storage for tracing, or --state hash)"
	run -0 "$LT" status --json
	local st=$output
	run -0 jq -c .state <<<"$st"
	assert_output '{"task":"hash","sk":"hash"}'
	run -0 jq -r '.probes[] | select(.loaded) | .name as $p | .maps[] | select(.name | test("_start|_args|_conns")) | "\($p) \(.name) \(.type) \(.max_entries)"' <<<"$st"
	assert_output "$(printf '%s\n' 'tcp lt_tcp_conns hash 500' 'tcp_retrans lt_tcp_conns hash 500' \
		'open lt_open_args hash 1000' 'syscalls lt_sys_start hash 1000' 'runq lt_runq_start hash 1000')"
	# counted: this status itself is in a syscall while it reads
	run -0 jq -e '.probes[] | select(.name == "syscalls") | .maps[] | select(.name == "lt_sys_start") | .entries >= 1 and .entries <= 1000' <<<"$st"
	run -0 "$LT" status
	assert_line --regexp '^syscalls +lt_sys_start +hash +[0-9]+ +1000$'
	assert_line --regexp '^tcp +lt_tcp_conns +hash +[0-9]+ +500$'
}

conns_entries() {
	"$LT" status --json | jq '.probes[] | select(.name == "tcp") | .maps[] | select(.name == "lt_tcp_conns") | .entries'
}

@test "tcp fallback: 30 open loopback connections are 60 entries of lt_tcp_conns, 0 once closed" {
	run -0 "$LT" load --probes tcp --state hash --max-conns 500
	conns_py
	local before line
	before=$(conns_entries)
	coproc CONNS { python3 "$BATS_TEST_TMPDIR/conns.py" 30; }
	bg_track "$CONNS_PID"
	read -r -t 10 -u "${CONNS[0]}" line
	assert_equal "$line" open
	# both ends of each: the connecting and the accepted socket
	run -0 conns_entries
	[ "$output" -ge $((before + 60)) ] || fail "entries with 30 open: $output (before: $before)"
	echo >&"${CONNS[1]}"
	read -r -t 10 -u "${CONNS[0]}" line
	assert_equal "$line" closed
	local i n
	for ((i = 0; i < 50; i++)); do
		n=$(conns_entries)
		[ "$n" -le "$before" ] && break
		sleep 0.1
	done
	[ "$n" -le "$before" ] || fail "entries after close: $n (before: $before)"
}

@test "a full map: --max-conns 40 and 30 connections (60 sockets) show 40 of 40, and tcp drops" {
	run -0 "$LT" load --probes tcp --state hash --max-conns 40
	conns_py
	local line
	coproc CONNS { python3 "$BATS_TEST_TMPDIR/conns.py" 30; }
	bg_track "$CONNS_PID"
	read -r -t 10 -u "${CONNS[0]}" line
	assert_equal "$line" open
	run -0 "$LT" status
	assert_line --regexp '^tcp +lt_tcp_conns +hash +40 +40$'
	run -0 probe_field tcp drops
	[ "$output" -ge 1 ] || fail "tcp drops with a full map: $output"
	echo >&"${CONNS[1]}"
	read -r -t 10 -u "${CONNS[0]}" line
	assert_equal "$line" closed
}

sys_start_entries() {
	"$LT" status --json | jq '.probes[] | select(.name == "syscalls") | .maps[] | select(.name == "lt_sys_start") | .entries'
}

@test "the audit finds no leak: 300 processes and 100 threads leave lt_sys_start's count where it was" {
	# exit and exit_group never return: an entry made for them would stay until the map is full
	run -0 "$LT" load --probes syscalls --state hash --max-threads 5000
	local before after i
	before=$(sys_start_entries)
	for ((i = 0; i < 300; i++)); do /bin/true; done
	python3 -c 'import threading, time
ts = [threading.Thread(target=time.sleep, args=(0.05,)) for _ in range(100)]
[t.start() for t in ts]; [t.join() for t in ts]'
	after=$(sys_start_entries)
	# other threads of the host may be inside a syscall at either read: a margin far below 400
	[ "$after" -le $((before + 40)) ] || fail "lt_sys_start: $before before, $after after 400 exits"
	run -0 probe_field syscalls drops
	assert_output 0
}
