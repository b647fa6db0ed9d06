#!/usr/bin/env bats
# Filters: --pid and --cgroup in the kernel (load), --pid and --type in
# userspace (events).

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
}

# start_loop: a long-running bash that forks a /bin/true and a sleep every 0.1 s
start_loop() {
	bash -c 'while :; do /bin/true; sleep 0.1; done' 3>&- &
	LOOP=$!
	bg_track "$LOOP"
}

@test "load --pid P: only records of thread group P reach the ring" {
	start_loop
	# (signal keeps signals *to* P as well: tests/bats/signal.bats)
	run -0 "$LT" load --pid "$LOOP" --probes exec,exit,fork
	assert_line -n 2 "filters: pid=$LOOP cgroup_id=any"
	events_bg "$OUT"

	wait_record "$OUT" ".type == \"fork\" and .pid == $LOOP"
	# an unrelated process, after which P forks at least twice more
	local sp n
	/bin/sh -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	n=$(count_records "$OUT" ".type == \"fork\" and .pid == $LOOP")
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(count_records "$OUT" ".type == \"fork\" and .pid == $LOOP")" -ge $((n + 2)) ] && break
		sleep 0.1
	done
	[ "$(count_records "$OUT" ".type == \"fork\" and .pid == $LOOP")" -ge $((n + 2)) ]

	# P's end is recorded too
	kill -TERM "$LOOP"
	wait_rc "$LOOP" 5
	wait_record "$OUT" ".type == \"exit\" and .pid == $LOOP"
	stop_consumer "$EV_PID"

	run -0 jq -e -c . "$OUT"
	# nothing but P: its forks and its exit, never its children's exec/exit
	run -0 count_records "$OUT" ".pid != $LOOP"
	assert_output 0
	run -0 count_records "$OUT" ".type == \"exec\""
	assert_output 0
	run -0 count_records "$OUT" ".child_pid == $sp or (.args // [] | index([\"$MARK\"]))"
	assert_output 0
	run -0 records "$OUT" ".type == \"exit\" and .pid == $LOOP"
	run -0 jq -c '[.comm, .signal]' <<<"$output"
	assert_output '["bash",15]'
	# the kernel counted only P's records
	run -0 probe_field exec events
	assert_output 0
	run -0 probe_field exit events
	assert_output 1
	local forks
	forks=$(count_records "$OUT" ".type == \"fork\"")
	run -0 probe_field fork events
	assert_output "$forks"
}

@test "load --pid P: a process that execs keeps its pid, so its exec record is kept" {
	# the shell waits for a go file, then execs: same thread group before and after
	local go="$BATS_TEST_TMPDIR/go" p
	/bin/sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec /bin/sh -c "exit 3" "$2"' sh "$go" "$MARK" 3>&- &
	p=$!
	bg_track "$p"
	run -0 "$LT" load --pid "$p" --probes exec,exit,fork
	events_bg "$OUT"
	touch "$go"
	wait_rc "$p" 10
	assert_equal "$RC" 3
	wait_record "$OUT" ".type == \"exit\" and .pid == $p"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exec\""
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.pid, .args]' <<<"$output"
	assert_output "[$p,[\"/bin/sh\",\"-c\",\"exit 3\",\"$MARK\"]]"
	run -0 records "$OUT" ".type == \"exit\""
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.pid, .exit_code]' <<<"$output"
	assert_output "[$p,3]"
	run -0 count_records "$OUT" ".pid != $p"
	assert_output 0
}

@test "load --cgroup: records of a process inside the cgroup appear, outside ones do not" {
	[ -n "$CG2_ROOT" ] || skip "no cgroup v2 mount: findmnt -t cgroup2 finds nothing"
	local cg id
	new_cgroup
	cg=$NEW_CG
	id=$(stat -c %i "$cg")
	run -0 "$LT" load --cgroup "$cg" --probes exec,exit,fork
	assert_line -n 2 "filters: pid=any cgroup_id=$id"
	events_bg "$OUT"

	# outside first, then inside: the inside exit is the last record to wait for
	local out_pid in_pid rc=0
	/bin/sh -c 'exit 0' "$MARK-outside" 3>&- &
	out_pid=$!
	wait "$out_pid"
	# a subshell moves itself into the cgroup, then execs
	(
		echo "$BASHPID" >"$cg/cgroup.procs"
		exec /bin/sh -c '/bin/true; exit 5' "$MARK-inside"
	) 3>&- &
	in_pid=$!
	wait "$in_pid" || rc=$?
	assert_equal "$rc" 5

	wait_record "$OUT" ".type == \"exit\" and .pid == $in_pid"
	stop_consumer "$EV_PID"
	run -0 jq -e -c . "$OUT"

	run -0 records "$OUT" ".type == \"exec\" and .pid == $in_pid"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.cgroup_id, .args]' <<<"$output"
	assert_output "[$id,[\"/bin/sh\",\"-c\",\"/bin/true; exit 5\",\"$MARK-inside\"]]"
	# the inside shell forked /bin/true, which exec'd and exited, all inside
	run -0 records "$OUT" ".type == \"fork\" and .pid == $in_pid"
	assert_equal "${#lines[@]}" 1
	local child
	child=$(jq -r .child_pid <<<"$output")
	run -0 records "$OUT" ".type == \"exec\" and .pid == $child"
	run -0 jq -c '[.cgroup_id, .filename]' <<<"$output"
	assert_output "[$id,\"/bin/true\"]"

	# every exec record is from inside; the outside process left no trace
	run -0 count_records "$OUT" ".type == \"exec\" and .cgroup_id != $id"
	assert_output 0
	run -0 count_records "$OUT" ".pid == $out_pid or .child_pid == $out_pid"
	assert_output 0
	run -0 count_records "$OUT" ".pid == $BASHPID"
	assert_output 0
	# exactly: inside sh exec, fork of true, true exec, true exit, sh exit
	run -0 count_records "$OUT" "true"
	assert_output 5
}

@test "load --cgroup covers descendant cgroups" {
	[ -n "$CG2_ROOT" ] || skip "no cgroup v2 mount: findmnt -t cgroup2 finds nothing"
	local cg sub p rc=0
	new_cgroup
	cg=$NEW_CG
	sub="$cg/child"
	mkdir "$sub"
	LT_CGROUPS=("$sub" "${LT_CGROUPS[@]}")
	run -0 "$LT" load --cgroup "$cg"
	events_bg "$OUT"
	(
		echo "$BASHPID" >"$sub/cgroup.procs"
		exec /bin/sh -c 'exit 6' "$MARK"
	) 3>&- &
	p=$!
	wait "$p" || rc=$?
	assert_equal "$rc" 6
	wait_record "$OUT" ".type == \"exit\" and .pid == $p"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exec\" and .pid == $p"
	run -0 jq -c '[.cgroup_id, .args[3]]' <<<"$output"
	assert_output "[$(stat -c %i "$sub"),\"$MARK\"]"
}

@test "events --pid P filters in userspace: only P's records, the ring still has all" {
	run -0 "$LT" load
	local go="$BATS_TEST_TMPDIR/go" p
	bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; /bin/true; /bin/true; exit 9' bash "$go" 3>&- &
	p=$!
	bg_track "$p"
	events_bg "$OUT" --pid "$p"
	touch "$go"
	wait_rc "$p" 10
	assert_equal "$RC" 9
	wait_record "$OUT" ".type == \"exit\" and .pid == $p"
	# something unrelated after P's exit must not show
	/bin/sh -c 'exit 0' "$MARK" 3>&-
	sleep 0.5
	stop_consumer "$EV_PID"
	run -0 jq -e -c . "$OUT"
	run -0 count_records "$OUT" ".pid != $p"
	assert_output 0
	run -0 records "$OUT" ".type == \"exit\""
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.pid, .exit_code, .signal]' <<<"$output"
	assert_output "[$p,9,0]"
	# two /bin/true and many sleeps forked; at least the two /bin/true
	run -0 count_records "$OUT" ".type == \"fork\" and .pid == $p"
	[ "$output" -ge 2 ]
	# the kernel did not filter: unrelated records were counted
	run -0 probe_field exec events
	[ "$output" -ge 3 ]
}

@test "events --type exit: only exit records" {
	run -0 "$LT" load
	events_bg "$OUT" --type exit
	local sp rc=0
	/bin/sh -c 'exit 4' "$MARK" 3>&- &
	sp=$!
	wait "$sp" || rc=$?
	assert_equal "$rc" 4
	wait_record "$OUT" ".pid == $sp"
	stop_consumer "$EV_PID"
	run -0 jq -e -c . "$OUT"
	run -0 count_records "$OUT" ".type != \"exit\""
	assert_output 0
	run -0 records "$OUT" ".pid == $sp"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.type, .exit_code]' <<<"$output"
	assert_output '["exit",4]'
	# the exec and fork were produced, just not shown
	run -0 probe_field exec events
	[ "$output" -ge 1 ]
}

@test "events --type exec,fork: both types, no exit" {
	run -0 "$LT" load
	events_bg "$OUT" --type exec,fork --text
	local sp
	/bin/sh -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "^exec .* pid=$sp " "$OUT" && break
		sleep 0.1
	done
	# the exit of sp is after its exec; give the consumer one more ring pass
	/bin/true
	sleep 0.3
	stop_consumer "$EV_PID"
	run -0 grep -c "^fork .* child_pid=$sp$(own_ident text)\$" "$OUT"
	assert_output 1
	run -0 grep -c "^exec .* pid=$sp " "$OUT"
	assert_output 1
	run -1 grep -E '^exit ' "$OUT"
	run -1 grep -vE '^(exec|fork) ' "$OUT"
}
