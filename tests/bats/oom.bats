#!/usr/bin/env bats
# oom: one record per OOM kill, from tp_btf/mark_victim.

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
}

LIMIT_MB=64

# mem_cgroup: a child cgroup with a $LIMIT_MB MiB memory limit and no swap,
# cgroup v2 where it has the memory controller, else the v1 memory hierarchy;
# sets MEM_CG, or skips with the reason
mem_cgroup() {
	local v1
	if [ -n "$CG2_ROOT" ] && grep -qw memory "$CG2_ROOT/cgroup.controllers" 2>/dev/null; then
		grep -qw memory "$CG2_ROOT/cgroup.subtree_control" ||
			echo +memory >"$CG2_ROOT/cgroup.subtree_control" ||
			skip "cannot enable the memory controller in $CG2_ROOT"
		new_cgroup
		MEM_CG=$NEW_CG
		echo "${LIMIT_MB}M" >"$MEM_CG/memory.max"
		[ ! -e "$MEM_CG/memory.swap.max" ] || echo 0 >"$MEM_CG/memory.swap.max"
		return 0
	fi
	v1=$(findmnt -n -o TARGET -t cgroup 2>/dev/null | while read -r m; do
		[ -e "$m/memory.limit_in_bytes" ] && echo "$m" && break
	done)
	[ -n "$v1" ] || skip "no memory cgroup: neither cgroup v2 with the memory controller nor v1 memory"
	MEM_CG="$v1/lowtrace-test-$$-$BATS_TEST_NUMBER-$RANDOM"
	mkdir "$MEM_CG"
	LT_CGROUPS+=("$MEM_CG")
	echo "${LIMIT_MB}M" >"$MEM_CG/memory.limit_in_bytes"
	[ ! -e "$MEM_CG/memory.memsw.limit_in_bytes" ] ||
		echo "${LIMIT_MB}M" >"$MEM_CG/memory.memsw.limit_in_bytes"
}

# hog: a python3 in MEM_CG that touches 512 MiB; sets HOG, waits for its end
hog() {
	(
		echo "$BASHPID" >"$MEM_CG/cgroup.procs"
		exec python3 -c 'b = bytearray(512 << 20); print(len(b))'
	) 3>&- &
	HOG=$!
	bg_track "$HOG"
	wait_rc "$HOG" 60
}

@test "a process over its cgroup's memory limit: one oom record naming it" {
	mem_cgroup
	run -0 "$LT" load
	events_bg "$OUT" --json --type oom
	hog
	assert_equal "$RC" $((128 + 9))
	wait_record "$OUT" ".victim_pid == $HOG"
	stop_consumer "$EV_PID"
	run -0 records "$OUT" ".victim_pid == $HOG"
	assert_equal "${#lines[@]}" 1
	local rec=$output
	# the victim ran out of memory itself: it is also the trigger
	# the trigger's v2 cgroup: the limited one under cgroup v2, else this shell's
	local cg
	if [ -n "$CG2_ROOT" ] && [ "${MEM_CG#"$CG2_ROOT"}" != "$MEM_CG" ]; then
		cg=$(stat -c %i "$MEM_CG")
	else
		cg=$(own_cgroup_id)
	fi
	run -0 jq -c 'del(.ts_ns, .cpu, .pages, .total_vm_pages, .cgroup, .container_id, .pod_uid, .unit)' <<<"$rec"
	assert_output "{\"type\":\"oom\",\"pid\":$HOG,\"tid\":$HOG,\"cgroup_id\":$cg,\"comm\":\"python3\",\"victim_pid\":$HOG,\"victim_comm\":\"python3\",\"victim_uid\":0}"
	# resident pages: most of the limit (page cache charged elsewhere may add to it);
	# mapped pages: at least the resident ones
	local page
	page=$(getconf PAGESIZE)
	run -0 jq -e --argjson lim $((LIMIT_MB << 20)) --argjson page "$page" \
		'.pages * $page >= $lim / 2 and .pages * $page <= $lim * 2 and .total_vm_pages >= .pages' <<<"$rec"
}

@test "oom with --pid of an unrelated process: no record, the kill still happens" {
	mem_cgroup
	sleep 30 3>&- &
	local other=$!
	bg_track "$other"
	run -0 "$LT" load --pid "$other" --probes oom
	hog
	assert_equal "$RC" $((128 + 9))
	run -0 status_json
	run -0 jq -c '.probes[] | select(.name == "oom") | [.events, .drops]' <<<"$output"
	assert_output '[0,0]'
}
