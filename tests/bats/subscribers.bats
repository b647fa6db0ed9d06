#!/usr/bin/env bats
# Subscribers: the `events` that owns the ring serves other `events` on a unix socket
# (loader/sub.c, loader/subcli.c): filters applied in the owner, a bounded queue per
# subscriber (a slow one loses, counted, never the owner), hostile bytes and floods of
# connections, the owner's end, --follow, and who may connect. Counts, never times.

load helpers

setup() {
	lt_setup
	# the socket in a directory of the test's (never /run/lowtrace)
	SD=$(mktemp -d)
	LT_TMPDIRS+=("$SD")
	chmod 0755 "$SD"
	SOCK="$SD/run/events.sock"
	OUT="$BATS_TEST_TMPDIR/owner"
}

teardown() { lt_teardown; }

# owner_start [events options]: the ring's owner, -o OUT (stderr OUT.err), serving at SOCK;
# sets OWN
owner_start() {
	"$LT" events -o "$OUT" --socket "$SOCK" "$@" 2>"$OUT.err" 3>&- &
	OWN=$!
	bg_track "$OWN"
	wait_consumer_ready "$OWN"
	[ -S "$SOCK" ] || {
		echo "no socket at $SOCK" >&2
		cat "$OUT.err" >&2
		return 1
	}
}

# owner_stat NAME: NAME=N of a fresh stats line of the owner (SIGUSR1)
owner_stat() {
	local before i line
	before=$(grep -c 'stats:' "$OUT.err" || true)
	kill -USR1 "$OWN"
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c 'stats:' "$OUT.err" || true)" -gt "$before" ] && break
		sleep 0.05
	done
	line=$(grep 'stats:' "$OUT.err" | tail -n 1)
	[[ "$line" =~ \ $1=([0-9]+) ]] || {
		echo "no $1 in the owner's stats: $line" >&2
		return 1
	}
	echo "${BASH_REMATCH[1]}"
}

# wait_subs N: the owner serves N subscribers (their hellos taken)
wait_subs() {
	local i n
	for ((i = 0; i < 100; i++)); do
		n=$(owner_stat subscribers)
		[ "$n" = "$1" ] && return 0
		sleep 0.1
	done
	echo "the owner serves $n subscribers, not $1" >&2
	return 1
}

# sub_bg FILE N [events options]: a subscriber writing FILE (stderr FILE.err), the N-th the
# owner serves; sets SUB
sub_bg() {
	local f=$1 n=$2
	shift 2
	"$LT" events --socket "$SOCK" "$@" >"$f" 2>"$f.err" 3>&- &
	SUB=$!
	bg_track "$SUB"
	wait_subs "$n"
}

# hello TYPES PID: a subscriber's hello frame (sub.h), on stdout as bytes
PYHELLO='
import struct
def hello(types=0, pid=0):
    body = b"LTSB" + struct.pack("<HHQIBBBB", 1, 0, types, pid, 0, 0, 0, 0)
    return struct.pack("<IB3x", len(body), 1) + body
'

@test "a second events --pid X gets exactly X's records while the owner writes them all" {
	run -0 "$LT" load --probes exec,exit,fork
	owner_start
	local x gx y gy
	gated_forker 40
	x=$FORKER gx=$GATE
	# another process forking as much: the owner writes its forks, the subscriber gets none
	gated_forker 40
	y=$FORKER gy=$GATE
	sub_bg "$BATS_TEST_TMPDIR/sub" 1 --pid "$x"
	release_forker "$gy" "$y"
	release_forker "$gx" "$x"
	wait_record "$BATS_TEST_TMPDIR/sub" ".type == \"exit\" and .pid == $x"
	run -0 count_records "$BATS_TEST_TMPDIR/sub" ".type == \"fork\" and .pid == $x"
	assert_output 40
	# nothing of anyone else crossed
	run -0 count_records "$BATS_TEST_TMPDIR/sub" ".pid != $x"
	assert_output 0
	wait_record "$OUT" ".type == \"exit\" and .pid == $x"
	wait_record "$OUT" ".type == \"exit\" and .pid == $y"
	run -0 count_records "$OUT" ".type == \"fork\" and .pid == $x"
	assert_output 40
	run -0 count_records "$OUT" ".type == \"fork\" and .pid == $y"
	assert_output 40
	run -0 cat "$BATS_TEST_TMPDIR/sub.err"
	assert_output ''
}

@test "--type is applied in the owner: only the records the filter passes cross the socket" {
	run -0 "$LT" load --probes exec,exit,fork
	owner_start
	sub_bg "$BATS_TEST_TMPDIR/sub" 1 --type exit
	local i sent
	for i in $(seq 30); do /bin/true "$MARK"; done
	wait_record "$BATS_TEST_TMPDIR/sub" ".type == \"exit\" and .comm == \"true\""
	sent=$(owner_stat sub_sent)
	[ "$sent" -gt 0 ]
	# what crossed is what the subscriber wrote: every one an exit
	for ((i = 0; i < 100; i++)); do
		[ "$(count_records "$BATS_TEST_TMPDIR/sub" true)" -ge "$sent" ] && break
		sleep 0.1
	done
	run -0 count_records "$BATS_TEST_TMPDIR/sub" '.type != "exit"'
	assert_output 0
	stop_consumer "$SUB"
	stop_consumer "$OWN"
	# the owner wrote the 30 execs: none of them crossed (sent counts exits only)
	run -0 count_records "$OUT" ".type == \"exec\" and (.args | index(\"$MARK\"))"
	assert_output 30
	[ "$sent" -le "$(count_records "$OUT" '.type == "exit"')" ]
}

@test "a stopped subscriber loses records (counted, told as lost) and resumes; the owner keeps every record" {
	run -0 "$LT" load --probes exec,exit,fork --ringbuf-size 16M
	owner_start
	sub_bg "$BATS_TEST_TMPDIR/sub" 1
	kill -STOP "$SUB"
	local i big
	# 400 execs of 3 KiB of arguments: ~1.3 MB, past the queue (256 KiB) and the socket
	big=$(head -c 3000 /dev/zero | tr '\0' x)
	for i in $(seq 400); do /bin/true "$MARK" "$big"; done
	for ((i = 0; i < 300; i++)); do
		[ "$(count_records "$OUT" ".type == \"exec\" and .args[1] == \"$MARK\"")" = 400 ] && break
		sleep 0.1
	done
	run -0 count_records "$OUT" ".type == \"exec\" and .args[1] == \"$MARK\""
	assert_output 400
	[ "$(owner_stat sub_lost)" -gt 0 ]
	kill -CONT "$SUB"
	# after the queue drained: a lost record, then new records again
	for i in $(seq 5); do /bin/true "$MARK-after"; done
	wait_record "$BATS_TEST_TMPDIR/sub" ".type == \"exec\" and .args[1] == \"$MARK-after\"" 30
	run -0 count_records "$BATS_TEST_TMPDIR/sub" '.type == "lost" and .probe == "exec" and .count > 0'
	[ "$output" -gt 0 ]
	# fewer marked execs than the owner's, and lost + received covers them all
	run -0 count_records "$BATS_TEST_TMPDIR/sub" ".type == \"exec\" and .args[1] == \"$MARK\""
	[ "$output" -lt 400 ]
	local got=$output lost
	lost=$(records "$BATS_TEST_TMPDIR/sub" '.type == "lost" and .probe == "exec"' | jq -s 'map(.count) | add')
	[ $((got + lost)) -ge 400 ]
	wait_line "$BATS_TEST_TMPDIR/sub.err" 'the owner dropped [0-9]+ records for this subscriber' "$SUB"
	# and the owner is whole: every marked exec in its file, stderr only the stats lines
	run -0 sed '/stats:/d' "$OUT.err"
	assert_output ''
}

@test "garbage, a client that never reads and 1000 connections: the owner survives, a subscriber keeps receiving" {
	run -0 "$LT" load --probes exec,exit,fork
	owner_start
	sub_bg "$BATS_TEST_TMPDIR/sub" 1 --type fork
	local x gx
	# the attack runs on in the background: the lazy subscriber holds its connection
	python3 - "$SOCK" "$BATS_TEST_TMPDIR/attack" <<EOF 3>&- &
import os, socket, struct, sys, time
$PYHELLO
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
# garbage of every shape: random bytes, a huge length, a bad magic, a bad version, hostile
# string lengths, types no record has, bytes after a hello, an unknown frame kind
bad = [os.urandom(65536), struct.pack("<IB3x", 0xffffffff, 1),
       struct.pack("<IB3x", 24, 1) + b"XXXX" + bytes(20),
       struct.pack("<IB3x", 24, 1) + b"LTSB" + struct.pack("<HHQIBBBB", 9, 0, 0, 0, 0, 0, 0, 0),
       struct.pack("<IB3x", 24, 1) + b"LTSB" + struct.pack("<HHQIBBBB", 1, 0, 0, 0, 200, 0, 0, 0),
       struct.pack("<IB3x", 24, 1) + b"LTSB" + struct.pack("<HHQIBBBB", 1, 0, 1 << 63, 0, 0, 0, 0, 0),
       struct.pack("<IB3x", 27, 1) + b"LTSB" + struct.pack("<HHQIBBBB", 1, 0, 0, 0, 3, 0, 0, 0) + b"\x00\xff/",
       hello() + b"more", struct.pack("<IB3x", 24, 9) + bytes(24), b"\x00"]
refused = 0
for b in bad:
    s = conn()
    try:
        s.sendall(b)
        s.settimeout(10)
        r = s.recv(4096)
        refused += len(r) > 8 and r[4] == 3
    except OSError:
        pass
    s.close()
# a subscriber that never reads
lazy = conn()
lazy.sendall(hello())
# 1000 connections at once, a third with half a hello, then all closed
many = []
for i in range(1000):
    try:
        s = conn()
    except OSError:
        continue
    if i % 3 == 0:
        try:
            s.send(hello()[:10])
        except OSError:
            pass
    many.append(s)
for s in many:
    s.close()
open(sys.argv[2], "w").write("%d %d\n" % (refused, len(many)))
time.sleep(600)
EOF
	bg_track $!
	for ((i = 0; i < 600; i++)); do [ -s "$BATS_TEST_TMPDIR/attack" ] && break; sleep 0.1; done
	read -r refused conns <"$BATS_TEST_TMPDIR/attack"
	# every malformed hello got a refusal line (the owner read them all)
	[ "$refused" -ge 7 ]
	assert_equal "$conns" 1000
	# the owner runs on; the subscriber before the attack and the lazy one are served
	if proc_gone "$OWN"; then fail "the owner died"; fi
	wait_subs 2
	# records flow: the lazy one's queue fills (it loses), the first one gets each fork
	gated_forker 3000
	x=$FORKER gx=$GATE
	release_forker "$gx" "$x"
	wait_record "$BATS_TEST_TMPDIR/sub" ".pid == $x" 30
	for ((i = 0; i < 300; i++)); do
		[ "$(count_records "$BATS_TEST_TMPDIR/sub" ".type == \"fork\" and .pid == $x")" = 3000 ] && break
		sleep 0.1
	done
	run -0 count_records "$BATS_TEST_TMPDIR/sub" ".type == \"fork\" and .pid == $x"
	assert_output 3000
	[ "$(owner_stat sub_lost)" -gt 0 ]
	[ "$(owner_stat sub_dropped)" -ge 8 ]
	run -0 count_records "$OUT" ".type == \"fork\" and .pid == $x"
	assert_output 3000
	# and a new subscriber still gets in
	gated_forker 1
	"$LT" events --socket "$SOCK" --pid "$FORKER" --type fork --count 1 \
		>"$BATS_TEST_TMPDIR/late" 2>&1 3>&- &
	local late=$!
	bg_track "$late"
	wait_subs 3
	release_forker "$GATE" "$FORKER"
	wait_rc "$late" 10
	assert_equal "$RC" 0
}

@test "subscriber N+1 gets one line of refusal; the others keep theirs" {
	run -0 "$LT" load --probes exec,exit,fork
	owner_start --max-subscribers 2
	sub_bg "$BATS_TEST_TMPDIR/s1" 1
	sub_bg "$BATS_TEST_TMPDIR/s2" 2
	run --separate-stderr timeout 10 "$LT" events --socket "$SOCK"
	assert_equal "$status" 1
	assert_one_error_line
	assert_equal "$stderr" "lowtrace: the owner of the ring refused this subscriber: too many subscribers (this owner serves 2)"
	assert_equal "$(owner_stat subscribers)" 2
	assert_equal "$(owner_stat sub_refused)" 1
}

@test "the owner stops: a subscriber ends with one line and exit 7; a killed owner's socket is replaced" {
	run -0 "$LT" load --probes exec,exit,fork
	owner_start
	sub_bg "$BATS_TEST_TMPDIR/sub" 1
	stop_consumer "$OWN"
	wait_rc "$SUB" 10
	assert_equal "$RC" 7
	run -0 cat "$BATS_TEST_TMPDIR/sub.err"
	assert_output "lowtrace: the owner of the ring (pid $OWN) stopped; 'events --follow' waits for the next one"
	# killed: no goodbye, the same end; its socket stays, and the next owner replaces it
	owner_start
	sub_bg "$BATS_TEST_TMPDIR/sub2" 1
	kill -KILL "$OWN"
	wait_rc "$SUB" 10
	assert_equal "$RC" 7
	run -0 cat "$BATS_TEST_TMPDIR/sub2.err"
	assert_output "lowtrace: the owner of the ring (pid $OWN) went away"
	[ -S "$SOCK" ]
	owner_start
	sub_bg "$BATS_TEST_TMPDIR/sub3" 1
}

@test "--follow: a subscriber waits for the next owner and streams from it" {
	run -0 "$LT" load --probes exec,exit,fork
	owner_start
	local x gx first=$OWN
	gated_forker 20
	x=$FORKER gx=$GATE
	sub_bg "$BATS_TEST_TMPDIR/sub" 1 --follow --pid "$x"
	stop_consumer "$OWN"
	wait_line "$BATS_TEST_TMPDIR/sub.err" 'waiting for the next owner' "$SUB"
	if proc_gone "$SUB"; then fail "the subscriber ended with --follow"; fi
	owner_start
	wait_subs 1
	release_forker "$gx" "$x"
	wait_record "$BATS_TEST_TMPDIR/sub" ".type == \"exit\" and .pid == $x"
	run -0 count_records "$BATS_TEST_TMPDIR/sub" ".type == \"fork\" and .pid == $x"
	assert_output 20
	run -0 cat "$BATS_TEST_TMPDIR/sub.err"
	assert_line "lowtrace: the owner of the ring (pid $first) stopped; 'events --follow' waits for the next one; waiting for the next owner (--follow)"
	assert_line "lowtrace: following the new owner of the ring (pid $OWN)"
}

@test "the socket: the owner's user and group only; a non-member is refused, a member served; links and foreign files refused" {
	run -0 "$LT" load --probes exec,exit,fork
	# a throwaway group owns the socket's directory (never a real system file)
	local g=61234 u=61235
	mkdir -m 0750 "$SD/run"
	chgrp "$g" "$SD/run"
	owner_start
	run -0 stat -c '%a %u %g' "$SOCK"
	assert_output "660 0 $g"
	run --separate-stderr setpriv --reuid "$u" --regid "$u" --clear-groups \
		"$LT" events --socket "$SOCK" --count 1
	assert_equal "$status" 5
	assert_one_error_line
	# (the socket refuses it, and so do the pins: it cannot own the ring either)
	assert_output --partial ''
	[[ "$stderr" == *"ermission denied"* ]]
	assert_equal "$(owner_stat subscribers)" 0
	# a member of the group is served
	gated_forker 1
	setpriv --reuid "$u" --regid "$u" --groups "$g" \
		"$LT" events --socket "$SOCK" --pid "$FORKER" --type fork --count 1 \
		>"$BATS_TEST_TMPDIR/member" 2>"$BATS_TEST_TMPDIR/member.err" 3>&- &
	local m=$!
	bg_track "$m"
	wait_subs 1
	release_forker "$GATE" "$FORKER"
	wait_rc "$m" 10
	assert_equal "$RC" 0
	run -0 count_records "$BATS_TEST_TMPDIR/member" ".type == \"fork\" and .pid == $FORKER"
	assert_output 1
	stop_consumer "$OWN"
	# the socket's name is cleared at the owner's end
	[ ! -e "$SOCK" ]

	# what is at the name is never followed nor taken from another user
	ln -s /tmp "$SOCK"
	run --separate-stderr "$LT" events --socket "$SOCK" --count 1
	assert_equal "$status" 1
	assert_equal "$stderr" "lowtrace: --socket $SOCK: not a socket (a link is never followed): refused"
	rm "$SOCK"
	# another user's socket at the name (made while the directory let it)
	chmod 0777 "$SD/run"
	setpriv --reuid "$u" --regid "$u" --clear-groups /usr/bin/python3 -c \
		'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"
	chmod 0750 "$SD/run"
	run --separate-stderr "$LT" events --socket "$SOCK" --count 1
	assert_equal "$status" 1
	assert_equal "$stderr" "lowtrace: --socket $SOCK: owned by uid $u, another user: refused"
	rm "$SOCK"
	# a directory others may write is refused
	chmod 0770 "$SD/run"
	run --separate-stderr "$LT" events --socket "$SOCK" --count 1
	assert_equal "$status" 1
	assert_equal "$stderr" "lowtrace: --socket $SOCK: $SD/run is writable by group or others: refused"
}

@test "events -h and the config name the subscriber options; bad values are usage errors" {
	run -0 "$LT" events -h
	assert_output --partial "--socket PATH"
	assert_output --partial "--max-subscribers N"
	run --separate-stderr "$LT" events --socket relative/path
	assert_equal "$status" 2
	assert_equal "$stderr" "lowtrace: --socket relative/path: want an absolute file name of at most 107 bytes"
	run --separate-stderr "$LT" events --max-subscribers 1025
	assert_equal "$status" 2
}
