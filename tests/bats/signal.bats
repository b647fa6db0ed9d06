#!/usr/bin/env bats
# signal: one record per signal generated, from tp_btf/signal_generate.

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
}

# sleeper [trap-args]: a sleep in the background (optionally with a
# disposition set by a trap first, inherited across exec); sets SLEEPER
sleeper() {
	if [ $# -gt 0 ]; then
		(trap "$@" && exec sleep 30) 3>&- &
	else
		sleep 30 3>&- &
	fi
	SLEEPER=$!
	bg_track "$SLEEPER"
	# until the exec: the record's target_comm is the program's
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(cat "/proc/$SLEEPER/comm" 2>/dev/null)" = sleep ] && return 0
		sleep 0.05
	done
	echo "sleeper $SLEEPER did not exec sleep" >&2
	return 1
}

@test "kill -USR1 to a sleeping child: one signal record, every field" {
	run -0 "$LT" load
	sleeper
	events_bg "$OUT" --json --type signal
	local me=$BASHPID
	kill -USR1 "$SLEEPER"
	wait_rc "$SLEEPER" 10
	assert_equal "$RC" $((128 + 10))
	wait_record "$OUT" ".target_pid == $SLEEPER and .sig == 10"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".target_pid == $SLEEPER and .sig == 10"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c 'del(.ts_ns, .cpu, .comm)' <<<"$output"
	assert_output "{\"type\":\"signal\",\"pid\":$me,\"tid\":$me,\"cgroup_id\":$(own_cgroup_id),\"target_pid\":$SLEEPER,\"target_tid\":$SLEEPER,\"target_comm\":\"sleep\",\"sig\":10,\"sig_name\":\"SIGUSR1\",\"group\":true,\"result\":\"delivered\"$(own_ident json)}"
	# the sender is this shell
	run -0 records "$OUT" ".target_pid == $SLEEPER and .sig == 10 and .comm == \"$(cat /proc/$me/comm)\""
	assert_equal "${#lines[@]}" 1
}

@test "a signal the target ignores: result ignored; text names the signal" {
	run -0 "$LT" load
	sleeper '' USR2
	events_bg "$OUT" --text --type signal
	kill -USR2 "$SLEEPER"
	kill -TERM "$SLEEPER"
	wait_rc "$SLEEPER" 10
	assert_equal "$RC" $((128 + 15))
	wait_record_text() { grep -q "target_pid=$SLEEPER .*sig=SIGTERM" "$OUT"; }
	local i
	for ((i = 0; i < 100; i++)); do
		wait_record_text && break
		sleep 0.1
	done
	stop_consumer "$EV_PID"
	run -0 grep -c "^signal .* target_pid=$SLEEPER target_tid=$SLEEPER target_comm=sleep sig=SIGUSR2 group result=ignored$(own_ident text)\$" "$OUT"
	assert_output 1
	run -0 grep -c "^signal .* target_pid=$SLEEPER target_tid=$SLEEPER target_comm=sleep sig=SIGTERM group result=delivered$(own_ident text)\$" "$OUT"
	assert_output 1
}

@test "load --pid P: signals sent to P from outside are kept, others are not" {
	sleeper
	local target=$SLEEPER other
	sleeper
	other=$SLEEPER
	run -0 "$LT" load --pid "$target" --probes signal
	kill -USR1 "$other"
	kill -USR1 "$target"
	wait_rc "$target" 10
	wait_rc "$other" 10
	# kept: USR1 to P, and the SIGCHLD P sends this shell when it dies
	run -0 status_json
	run -0 jq -c '.probes[] | select(.name == "signal") | [.events, .drops]' <<<"$output"
	assert_output '[2,0]'
	run --separate-stderr -0 timeout 10 "$LT" events --json --count 2
	run -0 jq -s -c "map([.pid, .target_pid, .sig_name])" <<<"$output"
	assert_output "[[$BASHPID,$target,\"SIGUSR1\"],[$target,$BASHPID,\"SIGCHLD\"]]"
}

@test "tgkill to one thread: target_tid is the thread, group false" {
	run -0 "$LT" load --probes signal
	local py="$BATS_TEST_TMPDIR/thr.py"
	cat >"$py" <<'PY'
import os, signal, threading, sys
got = threading.Event()
signal.signal(signal.SIGUSR2, lambda *a: got.set())
ready = threading.Event()
tid = []
def worker():
    tid.append(threading.get_native_id())
    ready.set()
    threading.Event().wait(2)
t = threading.Thread(target=worker, daemon=True)
t.start()
ready.wait()
print(tid[0], flush=True)
signal.pthread_kill(t.ident, signal.SIGUSR2)
# handled before exit (finalization restores the default action); Python
# runs handlers in the main thread between bytecodes, so poll
import time
for _ in range(200):
    if got.is_set():
        sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
PY
	events_bg "$OUT" --json
	run -0 python3 "$py"
	local tid=$output
	wait_record "$OUT" ".target_tid == $tid and .sig == 12"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".target_tid == $tid and .sig == 12"
	assert_equal "${#lines[@]}" 1
	run -0 jq -c '[.pid == .target_pid, .target_pid != .target_tid, .group, .result]' <<<"$output"
	assert_output '[true,true,false,"delivered"]'
}
