#!/usr/bin/env bats
# bio: block I/O latency histograms per device and operation (tp_btf
# block_rq_issue/block_rq_complete), read by `lowtrace hist bio`. The I/O goes
# to a loop device over a file, with O_DIRECT so the page cache cannot absorb it.

load helpers

setup() {
	lt_setup
	LOOP=
}

teardown() {
	[ -z "$LOOP" ] || losetup -d "$LOOP" 2>/dev/null || true
	lt_teardown
}

# loop_dev: a 32 MiB loop device; sets LOOP and DEV (major:minor), or skips
loop_dev() {
	local img="$BATS_TEST_TMPDIR/disk.img"
	truncate -s 32M "$img"
	# the loop driver may be a module nothing has loaded yet (the test VMs)
	[ -e /dev/loop-control ] || modprobe loop 2>/dev/null || true
	LOOP=$(losetup -f --show "$img" 2>"$BATS_TEST_TMPDIR/losetup.err") ||
		skip "no loop device: $(head -n1 "$BATS_TEST_TMPDIR/losetup.err")"
	DEV=$((16#$(stat -c %t "$LOOP"))):$((16#$(stat -c %T "$LOOP")))
}

count_of() { # JSON device op
	jq -r --arg d "$2" --arg o "$3" '[.histograms[] | select(.device == $d and .op == $o) | .count] | add // 0' <<<"$1"
}

@test "dd with O_DIRECT to a loop device: its write and read histograms count the I/O" {
	loop_dev
	run -0 "$LT" load --probes bio
	run --separate-stderr -0 "$LT" hist bio --json
	local before=$output
	run -0 dd if=/dev/zero of="$LOOP" bs=1M count=8 oflag=direct
	run -0 dd if="$LOOP" of=/dev/null bs=64k count=16 iflag=direct
	run --separate-stderr -0 "$LT" hist bio --json
	local after=$output w0 w1 r0 r1
	w0=$(count_of "$before" "$DEV" write)
	w1=$(count_of "$after" "$DEV" write)
	r0=$(count_of "$before" "$DEV" read)
	r1=$(count_of "$after" "$DEV" read)
	# 8 MiB of writes: at least 8 requests (the block layer may split them);
	# 16 reads of 64 KiB: at least 16
	[ $((w1 - w0)) -ge 8 ] || fail "writes on $DEV: $w0 -> $w1"
	[ $((r1 - r0)) -ge 16 ] || fail "reads on $DEV: $r0 -> $r1"
	run -0 jq -e '[.histograms[] | ([.buckets[].count] | add) == .count and .sum_ns > 0] | all' <<<"$after"
	# text: a titled histogram for the device
	run --separate-stderr -0 "$LT" hist bio
	assert_line --regexp "^bio $DEV write: count [0-9]+, sum [0-9]+ ns, mean [0-9]+ ns\$"
	assert_line --regexp "^bio $DEV read: count [0-9]+, "
}

@test "bio is opt-in and hist bio without it exits 3" {
	run -0 "$LT" load
	assert_line --regexp '^bio +- *$'
	run --separate-stderr "$LT" hist bio
	assert_equal "$status" 3
	assert_equal "$stderr" "lowtrace: not loaded: probe bio is not attached (lowtrace load --probes ...,bio)"
}
