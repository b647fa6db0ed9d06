#!/usr/bin/env bats
# Untrusted bytes: comm, filename and args come from whoever runs a program.
# JSON output stays valid JSON with escapes; text output stays one line of
# printable ASCII per record.

load helpers

setup() {
	lt_setup
	run -0 "$LT" load
	OUT="$BATS_TEST_TMPDIR/events"
	# a symlink to /bin/sh whose name (so comm and filename) has ESC, newline,
	# and an invalid UTF-8 byte; plain ASCII directory
	EVDIR=$(mktemp -d /tmp/lowtrace-evil.XXXXXX)
	LT_TMPDIRS+=("$EVDIR")
	EVNAME=$'\x1b[31mev\nil\xff'
	ln -s /bin/sh "$EVDIR/$EVNAME"
}

# run_evil: exec the symlink with odd args; sets EVPID
run_evil() {
	"$EVDIR/$EVNAME" -c 'exit 0' $'\x1b]0;x\x07' $'\xc3\x28' $'a\nb' $'\x01' $'tab\there' \
		'q"uote\back' $'\x7f' 'é✓' '' 3>&- &
	EVPID=$!
	wait "$EVPID"
}

@test "JSON: control bytes and invalid UTF-8 are escaped as \\u00XX, every line parses" {
	events_bg "$OUT" --json
	run_evil
	wait_record "$OUT" ".type == \"exit\" and .pid == $EVPID"
	stop_consumer "$EV_PID"

	# every line is valid JSON (jq and python agree) and valid UTF-8
	run -0 jq -e -c . "$OUT"
	run -0 /usr/bin/python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1], "rb"):
    assert line.endswith(b"\n")
    json.loads(line.decode("utf-8", "strict"))
    n += 1
print(n)' "$OUT"
	[ "$output" -gt 0 ]
	# no raw control byte or DEL anywhere in the output, only the line ends
	run -1 env LC_ALL=C grep -caP '[\x00-\x09\x0b-\x1f\x7f]' "$OUT"
	assert_output 0

	# the exact bytes of the exec record's strings
	local esc='\u001b[31mev\u000ail\u00ff'
	run -0 grep -aF "\"pid\":$EVPID," "$OUT"
	local exec_line
	exec_line=$(grep -aF '"type":"exec"' <<<"$output")
	assert_equal "$(grep -c '' <<<"$exec_line")" 1
	run -0 grep -aoF "\"comm\":\"$esc\",\"filename\":\"$EVDIR/$esc\",\"filename_truncated\":false,\"argc\":12,\"args\":[\"$EVDIR/$esc\",\"-c\",\"exit 0\",\"\\u001b]0;x\\u0007\",\"\\u00c3(\",\"a\\u000ab\",\"\\u0001\",\"tab\\u0009here\",\"q\\\"uote\\\\back\",\"\\u007f\",\"é✓\",\"\"],\"args_truncated\":false,\"args_shed\":false,\"euid\":0,\"egid\":0,\"fileless\":false,\"exec_id\":\"" <<<"$exec_line"
	[[ "$exec_line" == *"$(own_ident json)}" ]]
	# decoded, the valid bytes come back as they were
	run -0 jq -r '.args[2:5] | @json' <<<"$exec_line"
	assert_output '["exit 0","\u001b]0;x\u0007","Ã("]'
	run -0 jq -r '.args[10]' <<<"$exec_line"
	assert_output 'é✓'

	# (raw lines: jq would re-encode the strings)
	run -0 grep -aF "{\"type\":\"exit\"," "$OUT"
	run -0 grep -aF "\"pid\":$EVPID," <<<"$output"
	assert_equal "${#lines[@]}" 1
	run -0 grep -aoF "\"comm\":\"$esc\",\"exit_code\":0," <<<"$output"
}

@test "text: only printable ASCII and newlines, every odd byte as \\xNN" {
	events_bg "$OUT" --text
	run_evil
	local i
	for ((i = 0; i < 100; i++)); do
		grep -aq "^exit .* pid=$EVPID " "$OUT" && break
		sleep 0.1
	done
	stop_consumer "$EV_PID"

	# no byte < 0x20 but newline, no 0x7f..0xff, in the whole stream
	run -1 env LC_ALL=C grep -caP '[\x00-\x09\x0b-\x1f\x7f-\xff]' "$OUT"
	assert_output 0
	run -0 /usr/bin/python3 -c '
import sys
data = open(sys.argv[1], "rb").read()
bad = [b for b in data if (b < 0x20 and b != 0x0a) or b >= 0x7f]
print(len(bad))' "$OUT"
	assert_output 0
	# one line per record: every line starts with a record type
	run -1 grep -avE '^(exec|exit|fork|signal|oom|tcp|tcp_retrans|open) ts_ns=[0-9]+ ' "$OUT"

	local esc='\x1b[31mev\x0ail\xff'
	run -0 grep -a "^exec .* pid=$EVPID " "$OUT"
	assert_equal "${#lines[@]}" 1
	local expect=" comm=$esc filename=$EVDIR/$esc args=$EVDIR/$esc -c exit\\x200 \\x1b]0;x\\x07 \\xc3( a\\x0ab \\x01 tab\\x09here q\"uote\\x5cback \\x7f \\xc3\\xa9\\xe2\\x9c\\x93  euid=0 egid=0 exec_id="
	[[ "$output" == *"$expect"* && "$output" == *"$(own_ident text)" ]] || {
		echo "exec line: $output" >&2
		echo "expected it to have: $expect, and to end with its identity" >&2
		return 1
	}
	run -0 grep -a "^exit .* pid=$EVPID " "$OUT"
	assert_equal "${#lines[@]}" 1
	[[ "$output" == *" comm=$esc exit_code=0 signal=0 lifetime_ns="* ]]
}

@test "run streams the same escaped records as events" {
	run -0 "$LT" unload
	run_bg "$OUT" --json
	run_evil
	wait_record "$OUT" ".type == \"exit\" and .pid == $EVPID"
	stop_consumer "$RUN_PID"
	run -0 jq -e -c . "$OUT"
	run -0 records "$OUT" ".type == \"exec\" and .pid == $EVPID"
	run -0 jq -r '.comm | @json' <<<"$output"
	assert_output '"\u001b[31mev\nilÿ"'
}

@test "worst case: every byte of 1 KiB of args and of a long filename escaped, still valid JSON" {
	# a path of > 255 bytes made of \x01 and \xff directory names
	local p="$EVDIR" seg=$'\x01\xff\x01\xff\x01\xff\x01\xff\x01\xff\x01\xff\x01\xff\x01\xff' sp
	while [ ${#p} -lt 300 ]; do
		p="$p/$seg"
	done
	mkdir -p "$p"
	ln -s /bin/sh "$p/$EVNAME"
	local big
	big=$(printf '\x02%.0s' $(seq 4400))
	events_bg "$OUT"
	"$p/$EVNAME" -c 'exit 0' "$big" 3>&- &
	sp=$!
	wait "$sp"
	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	stop_consumer "$EV_PID"
	run -0 jq -e -c . "$OUT"
	run -0 records "$OUT" ".type == \"exec\" and .pid == $sp"
	local rec=$output
	run -0 jq -c '[.argc, .args_truncated, .filename_truncated, (.args | length), (.args[3] | length)]' <<<"$rec"
	# 4096 - len("/bin/sh-like argv0" + NUL) - 3 - 7: args[0] is the long path
	local a0=$((${#p} + 1 + ${#EVNAME} + 1))
	local want=$((4096 - a0 - 3 - 7))
	[ "$want" -gt 0 ]
	assert_output "[4,true,true,4,$want]"
	run -0 jq -e --arg c $'\x02' '.args[3] | test("^(\($c))+$")' <<<"$rec"
	# in the raw line each \x02 is the 6 bytes \u0002, each \x01/\xff of the path \u0001/\u00ff
	local raw
	raw=$(grep -aF '{"type":"exec",' "$OUT" | grep -aF "\"pid\":$sp,")
	run -0 bash -c 'grep -oF "\\u0002" | wc -l' <<<"$raw"
	assert_output "$want"
	run -1 env LC_ALL=C grep -cP '[\x00-\x1f\x7f-\xff]' <<<"$raw"
}
