#!/usr/bin/env bats
# Records: every field of exec, exit and fork records, exact where the kernel
# makes it exact, in JSON and text.

load helpers

setup() {
	lt_setup
	run -0 "$LT" load
	OUT="$BATS_TEST_TMPDIR/events"
}

@test "exec and exit records of /bin/sh -c 'exit 7' with two args: every field" {
	events_bg "$OUT" --json
	local me=$BASHPID cg rc=0 sp pns mns nns
	cg=$(own_cgroup_id)
	pns=$(ns_inode pid) mns=$(ns_inode mnt) nns=$(ns_inode net)

	/bin/sh -c 'exit 7' lowtrace-arg1 "arg with spaces" 3>&- &
	sp=$!
	wait "$sp" || rc=$?
	assert_equal "$rc" 7

	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	stop_consumer "$EV_PID"

	# every line is a complete JSON object
	run -0 jq -e -c . "$OUT"

	run -0 records "$OUT" ".type == \"exec\" and .pid == $sp"
	assert_equal "${#lines[@]}" 1
	local exec=$output
	run -0 jq -c 'del(.ts_ns, .cpu, .exec_id, .parent_exec_id, .ancestors, .ancestors_truncated)' <<<"$exec"
	assert_output "{\"type\":\"exec\",\"pid\":$sp,\"tid\":$sp,\"cgroup_id\":$cg,\"ppid\":$me,\"uid\":0,\"gid\":0,\"pid_ns\":$pns,\"mnt_ns\":$mns,\"net_ns\":$nns,\"comm\":\"sh\",\"filename\":\"/bin/sh\",\"filename_truncated\":false,\"argc\":5,\"args\":[\"/bin/sh\",\"-c\",\"exit 7\",\"lowtrace-arg1\",\"arg with spaces\"],\"args_truncated\":false,\"args_shed\":false,\"euid\":0,\"egid\":0,\"fileless\":false$(own_ident json)}"
	# its ancestry: the parent (this shell) first, its exec_id the record's parent_exec_id
	run -0 jq -c '[(.exec_id | test("^[1-9][0-9]*$")), .ancestors[0].pid, .ancestors[0].exec_id == .parent_exec_id, (.ancestors | length), .ancestors_truncated]' <<<"$exec"
	assert_output --regexp "^\[true,$me,true,[1-3],(true|false)\]\$"

	run -0 records "$OUT" ".type == \"exit\" and .pid == $sp"
	assert_equal "${#lines[@]}" 1
	local exit=$output
	run -0 jq -c 'del(.ts_ns, .cpu, .lifetime_ns)' <<<"$exit"
	assert_output "{\"type\":\"exit\",\"pid\":$sp,\"tid\":$sp,\"cgroup_id\":$cg,\"ppid\":$me,\"comm\":\"sh\",\"exit_code\":7,\"signal\":0,\"core_dumped\":false$(own_ident json)}"

	# the cpu is a real one; the process lived at least from exec to exit
	local ncpu
	ncpu=$(getconf _NPROCESSORS_CONF)
	run -0 jq -n -e --argjson e "$exec" --argjson x "$exit" --argjson n "$ncpu" \
		'$e.cpu < $n and $x.cpu < $n and $x.ts_ns > $e.ts_ns and $x.lifetime_ns > 0
		 and $x.lifetime_ns >= ($x.ts_ns - $e.ts_ns)'
}

@test "ts_ns is CLOCK_MONOTONIC: between two readings taken around the exec" {
	events_bg "$OUT"
	local t0 t1 sp
	t0=$(/usr/bin/python3 -c 'import time; print(time.monotonic_ns())')
	/bin/sh -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	t1=$(/usr/bin/python3 -c 'import time; print(time.monotonic_ns())')
	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".pid == $sp and .type == \"exec\" and .ts_ns > $t0 and .ts_ns < $t1"
	assert_equal "${#lines[@]}" 1
	run -0 records "$OUT" ".pid == $sp and .type == \"exit\" and .ts_ns > $t0 and .ts_ns < $t1"
	assert_equal "${#lines[@]}" 1
}

@test "a child killed by SIGKILL: exit record with signal 9 and exit_code 0" {
	events_bg "$OUT"
	local me=$BASHPID kp rc=0
	sleep 100 3>&- &
	kp=$!
	kill -9 "$kp"
	wait "$kp" || rc=$?
	assert_equal "$rc" $((128 + 9))

	wait_record "$OUT" ".type == \"exit\" and .pid == $kp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exit\" and .pid == $kp"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.pid, .tid, .ppid, .exit_code, .signal, .core_dumped, (.lifetime_ns > 0)]' <<<"$output"
	assert_output "[$kp,$kp,$me,0,9,false,true]"
}

@test "a process killed by SIGTERM from outside: signal 15" {
	events_bg "$OUT"
	local kp rc=0
	/bin/sh -c 'while :; do sleep 0.05; done' 3>&- &
	kp=$!
	sleep 0.2
	kill -TERM "$kp"
	wait "$kp" || rc=$?
	assert_equal "$rc" $((128 + 15))
	wait_record "$OUT" ".type == \"exit\" and .pid == $kp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exit\" and .pid == $kp"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.comm, .exit_code, .signal, .core_dumped]' <<<"$output"
	assert_output '["sh",0,15,false]'
}

@test "a fork: record with pid = parent, child_pid = child, comm = parent's" {
	events_bg "$OUT"
	local me=$BASHPID comm cp
	comm=$(cat "/proc/$BASHPID/comm")
	/bin/true 3>&- &
	cp=$!
	wait "$cp"

	wait_record "$OUT" ".type == \"exit\" and .pid == $cp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"fork\" and .child_pid == $cp"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c 'del(.ts_ns, .cpu)' <<<"$output"
	assert_output "{\"type\":\"fork\",\"pid\":$me,\"tid\":$me,\"cgroup_id\":$(own_cgroup_id),\"comm\":$(jq -n --arg c "$comm" '$c'),\"child_pid\":$cp$(own_ident json)}"
	# the child's own records follow: its exec and its exit
	run -0 records "$OUT" ".type == \"exec\" and .pid == $cp"
	run -0 jq -c '[.ppid, .filename, .args]' <<<"$output"
	assert_output "[$me,\"/bin/true\",[\"/bin/true\"]]"
}

@test "threads are not processes: no fork record, one exit record for the group" {
	events_bg "$OUT"
	local py
	# two threads that end before the process does
	py=$(/usr/bin/python3 -c '
import os, threading
ts = [threading.Thread(target=lambda: None) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
print(os.getpid())' 3>&-)
	[ -n "$py" ]
	wait_record "$OUT" ".type == \"exit\" and .pid == $py"
	stop_consumer "$EV_PID"
	run -0 count_records "$OUT" ".type == \"fork\" and .pid == $py"
	assert_output 0
	run -0 count_records "$OUT" ".type == \"exit\" and .pid == $py"
	assert_output 1
	run -0 records "$OUT" ".type == \"exit\" and .pid == $py"
	run -0 jq -c '[.exit_code, .signal]' <<<"$output"
	assert_output '[0,0]'
}

@test "an exec with more than 4 KiB of args: args cut at exactly 4096 bytes, args_truncated" {
	events_bg "$OUT"
	local big sp
	big=$(printf 'x%.0s' $(seq 5000))
	/bin/sh -c 'exit 0' "$MARK" "$big" tail-arg 3>&- &
	sp=$!
	wait "$sp"

	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exec\" and .pid == $sp"
	assert_equal "${#lines[@]}" 1
	local rec=$output
	run -0 jq -c '[.argc, .args_truncated, .filename_truncated, (.args | length), .args[0:3]]' <<<"$rec"
	assert_output "[6,true,false,5,[\"/bin/sh\",\"-c\",\"exit 0\"]]"
	run -0 jq -r '.args[3]' <<<"$rec"
	assert_output "$MARK"
	# the NUL-separated block holds exactly 4096 bytes: the last arg is cut
	local head=$((8 + 3 + 7 + ${#MARK} + 1))
	run -0 jq -r '.args[4]' <<<"$rec"
	assert_output "${big:0:$((4096 - head))}"
	run -0 jq -r '.args | join("\u0000") | utf8bytelength' <<<"$rec"
	assert_output 4096
}

@test "an exec with exactly the args that fit is not truncated" {
	events_bg "$OUT"
	local sp fill
	# /bin/sh -c 'exit 0' MARK FILL: 8 + 3 + 7 + (len(MARK)+1) + (len(FILL)+1) = 4096
	fill=$(printf 'y%.0s' $(seq $((4096 - 8 - 3 - 7 - ${#MARK} - 1 - 1))))
	/bin/sh -c 'exit 0' "$MARK" "$fill" 3>&- &
	sp=$!
	wait "$sp"
	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exec\" and .pid == $sp"
	run -0 jq -c '[.argc, .args_truncated, (.args | length), (.args[4] | length)]' <<<"$output"
	assert_output "[5,false,5,${#fill}]"
}

@test "a filename longer than 255 bytes: filename_truncated" {
	local dir="$BATS_TEST_TMPDIR" p sp
	# nested directories make a path of more than 256 bytes to a copy of sh
	p="$dir"
	while [ ${#p} -lt 300 ]; do
		p="$p/dddddddddddddddddddddddddddddddddddddddd"
	done
	mkdir -p "$p"
	ln -s /bin/sh "$p/sh"
	events_bg "$OUT"
	"$p/sh" -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exec\" and .pid == $sp"
	local rec=$output
	run -0 jq -c '[.filename_truncated, (.filename | length), .args_truncated, .args[3]]' <<<"$rec"
	assert_output "[true,255,false,\"$MARK\"]"
	run -0 jq -r '.filename' <<<"$rec"
	assert_output "${p:0:255}"
}

@test "text mode: one key=value line per record, spaces escaped as \\x20" {
	events_bg "$OUT" --text
	local me=$BASHPID cg rc=0 sp
	cg=$(own_cgroup_id)
	/bin/sh -c 'exit 7' lowtrace-arg1 "arg with spaces" 3>&- &
	sp=$!
	wait "$sp" || rc=$?
	assert_equal "$rc" 7

	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "^exit .* pid=$sp " "$OUT" && break
		sleep 0.1
	done
	stop_consumer "$EV_PID"

	run -0 grep "^exec .* pid=$sp " "$OUT"
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^exec ts_ns=[0-9]+ cpu=[0-9]+ pid=$sp tid=$sp cgroup_id=$cg ppid=$me uid=0 gid=0 pid_ns=[0-9]+ mnt_ns=[0-9]+ net_ns=[0-9]+ comm=sh filename=/bin/sh args=/bin/sh -c exit\\\\x207 lowtrace-arg1 arg\\\\x20with\\\\x20spaces euid=0 egid=0 exec_id=[1-9][0-9]* parent_exec_id=[0-9]+ ancestors=$me:[^ ]+( \\.\\.\\.)?$(own_ident text)\$"
	run -0 grep "^exit .* pid=$sp " "$OUT"
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^exit ts_ns=[0-9]+ cpu=[0-9]+ pid=$sp tid=$sp cgroup_id=$cg ppid=$me comm=sh exit_code=7 signal=0 lifetime_ns=[1-9][0-9]*$(own_ident text)\$"
	run -0 grep "^fork .* child_pid=$sp$(own_ident text)\$" "$OUT"
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^fork ts_ns=[0-9]+ cpu=[0-9]+ pid=$me tid=$me cgroup_id=$cg comm=[^ ]+ child_pid=$sp$(own_ident text)\$"
	# every line is one record of a known type
	run -1 grep -vE '^(exec|exit|fork|signal|oom|tcp|tcp_retrans|open|file|cred|priv) ts_ns=[0-9]+ cpu=[0-9]+ pid=[0-9]+ tid=[0-9]+ ' "$OUT"
	assert_output ''
}

@test "text mode marks truncated args with ' ...'" {
	events_bg "$OUT" --text
	local big sp
	big=$(printf 'z%.0s' $(seq 4500))
	/bin/sh -c 'exit 0' "$MARK" "$big" 3>&- &
	sp=$!
	wait "$sp"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "^exit .* pid=$sp " "$OUT" && break
		sleep 0.1
	done
	stop_consumer "$EV_PID"
	run -0 grep "^exec .* pid=$sp " "$OUT"
	local head=$((8 + 3 + 7 + ${#MARK} + 1))
	assert_output --regexp " args=/bin/sh -c exit\\\\x200 $MARK ${big:0:$((4096 - head))} \\.\\.\\. euid=0 "
	assert_output --regexp "$(own_ident text)\$"
}

@test "a #! script: filename is the script, args start with the interpreter" {
	local script="$BATS_TEST_TMPDIR/lt-script" sp rc=0
	printf '#!/bin/sh\nexit 2\n' >"$script"
	chmod +x "$script"
	events_bg "$OUT"
	"$script" "$MARK" 'b 2' 3>&- &
	sp=$!
	wait "$sp" || rc=$?
	assert_equal "$rc" 2
	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".type == \"exec\" and .pid == $sp"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.comm, .filename, .argc, .args, .args_truncated]' <<<"$output"
	assert_output "[\"lt-script\",\"$script\",4,[\"/bin/sh\",\"$script\",\"$MARK\",\"b 2\"],false]"
	run -0 records "$OUT" ".type == \"exit\" and .pid == $sp"
	run -0 jq -c '[.comm, .exit_code, .signal]' <<<"$output"
	assert_output '["lt-script",2,0]'
}

@test "exit_group racing a running thread on another CPU: exactly one exit record per process" {
	# each child starts a spinning thread, waits until it runs, then exits(3):
	# both threads leave do_exit at nearly the same time on two CPUs
	local src="$BATS_TEST_TMPDIR/race.c" bin="$BATS_TEST_TMPDIR/race"
	cat >"$src" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int running;
static void *spin(void *a) { (void)a; running = 1; for (;;) ; return NULL; }
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	for (int i = 0; i < n; i++) {
		int st;
		pid_t p = fork();
		if (p == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, spin, NULL))
				_exit(1);
			while (!running)
				;
			_exit(3);
		}
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
			return 1;
		printf("%d\n", p);
	}
	return 0;
}
C
	run -0 gcc -O2 -pthread -o "$bin" "$src"
	events_bg "$OUT" --type exit
	"$bin" 100 >"$BATS_TEST_TMPDIR/pids" 3>&-
	local last
	last=$(tail -n 1 "$BATS_TEST_TMPDIR/pids")
	wait_record "$OUT" ".pid == $last"
	sleep 0.2
	stop_consumer "$EV_PID"
	run -0 wc -l <"$BATS_TEST_TMPDIR/pids"
	assert_output 100
	# one exit record per child, with the group's exit code
	run -0 jq -r --slurpfile pids <(jq -s . "$BATS_TEST_TMPDIR/pids") \
		'select(.pid as $p | $pids[0] | index($p)) | "\(.pid) \(.exit_code) \(.signal)"' "$OUT"
	local dups
	dups=$(printf '%s\n' "${lines[@]}" | awk '{print $1}' | sort | uniq -d | wc -l)
	assert_equal "${#lines[@]} records, $dups processes with more than one" "100 records, 0 processes with more than one"
	run -1 grep -v ' 3 0$' <<<"$output"
}

@test "a core dump: signal 11, core_dumped true in JSON, core_dumped flag in text" {
	local pattern
	pattern=$(cat /proc/sys/kernel/core_pattern)
	[[ "$pattern" != "|"* ]] || skip "kernel.core_pattern pipes cores to a helper: $pattern"
	local dir="$BATS_TEST_TMPDIR/core" sp rc mode i
	declare -A pid
	mkdir "$dir"
	for mode in json text; do
		events_bg "$OUT.$mode" "--$mode"
		(
			cd "$dir" || exit 99
			ulimit -c unlimited 2>/dev/null || exit 98
			exec /bin/sh -c 'kill -SEGV $$' "$MARK"
		) 3>&- &
		sp=$!
		pid[$mode]=$sp
		rc=0
		wait "$sp" || rc=$?
		[ "$rc" != 98 ] || skip "RLIMIT_CORE hard limit forbids core dumps"
		assert_equal "$rc" $((128 + 11))
		for ((i = 0; i < 100; i++)); do
			grep -Eq "^(\{\"type\":\"exit\".*\"pid\":$sp,|exit .* pid=$sp )" "$OUT.$mode" && break
			sleep 0.1
		done
		stop_consumer "$EV_PID"
	done
	run -0 records "$OUT.json" ".type == \"exit\" and .pid == ${pid[json]}"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.comm, .exit_code, .signal, .core_dumped]' <<<"$output"
	assert_output '["sh",0,11,true]'
	run -0 grep "^exit .* pid=${pid[text]} " "$OUT.text"
	assert_equal "${#lines[@]}" 1
	assert_output --regexp " comm=sh exit_code=0 signal=11 core_dumped lifetime_ns=[1-9][0-9]*$(own_ident text)\$"
}
