#!/usr/bin/env bats
# cred: a record per call of the setuid family, setgroups or capset (with its result, the
# credentials at entry and at return), and per exec that changed them (a setuid binary).
# The hooks are file's (file.bats): classic syscall tracepoints of just these syscalls on
# 5.15+, tp_btf before (LOWTRACE_OPEN_HOOK=tp_btf forces it).

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
	need_workloads privops
	# a setuid-root copy of the helper, where nobody can run it: on a file system mounted
	# without nosuid (the guests' /tmp is a nosuid tmpfs; the build tree's is not)
	local d
	for d in /tmp /var/tmp "$BATS_TEST_DIRNAME/../../build"; do
		[[ ",$(findmnt -no OPTIONS -T "$d")," != *,nosuid,* ]] && break
	done
	SUID=$(mktemp -d "$d/lowtrace-cred-$MARK.XXXXXX")
	LT_TMPDIRS+=("$SUID")
	cp "$WLDIR/privops" "$SUID/privops"
	chmod 0755 "$SUID"
	chmod 4755 "$SUID/privops"
}

teardown() { lt_teardown; }

# cred_ops: the helper's calls, each a process of its own; IDS, SETRES, CAPSET, DENIED: pids
cred_ops() {
	local out=$BATS_TEST_TMPDIR/ops
	# nobody runs the setuid-root copy: the exec makes its effective and saved uid 0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$SUID/privops" ids >"$out" &
	IDS=$!
	wait "$IDS"
	assert_equal "$(cat "$out")" "ids 65534 0 0"
	"$WLDIR/privops" setresuid 0 1 2 >/dev/null &
	SETRES=$!
	wait "$SETRES"
	"$WLDIR/privops" capset >/dev/null &
	CAPSET=$!
	wait "$CAPSET"
	# nobody may not become root (its exec, not setuid, drops the capabilities setpriv kept)
	setpriv --reuid=65534 --regid=65534 --clear-groups "$WLDIR/privops" setresuid 0 0 0 >/dev/null &
	DENIED=$!
	! wait "$DENIED"
}

exact_records() {
	events_bg "$OUT" --json --type cred
	cred_ops
	wait_record "$OUT" ".pid == $DENIED and .op == \"setresuid\""
	stop_consumer "$EV_PID"
	local ids='[.old_uid, .new_uid, .old_euid, .new_euid, .old_suid, .new_suid, .old_fsuid, .new_fsuid]'
	local gids='[.old_gid, .new_gid, .old_egid, .new_egid, .old_sgid, .new_sgid, .old_fsgid, .new_fsgid]'
	run -0 jq -c -R "fromjson? | select(.pid == $IDS or .pid == $SETRES or .pid == $CAPSET or .pid == $DENIED)
		| select(.comm != \"setpriv\") | [.pid, .op, .ret, $ids, $gids,
		  (.old_caps.effective != .new_caps.effective), .new_caps.effective, .new_caps.permitted]" "$OUT"
	local full nraw
	full=$(jq -r -R 'fromjson? | select(.op == "setresuid" and .ret == 0) | .old_caps.effective' "$OUT" | head -1)
	# CAP_NET_RAW (13) dropped from both sets
	nraw=$(printf '0x%x' $((full & ~(1 << 13))))
	assert_output "$(
		cat <<-EOF
			[$IDS,"exec",0,[65534,65534,65534,0,65534,0,65534,0],[65534,65534,65534,65534,65534,65534,65534,65534],false,"$full","$full"]
			[$SETRES,"setresuid",0,[0,0,0,1,0,2,0,1],[0,0,0,0,0,0,0,0],true,"0x0","$full"]
			[$CAPSET,"capset",0,[0,0,0,0,0,0,0,0],[0,0,0,0,0,0,0,0],true,"$nraw","$nraw"]
			[$DENIED,"exec",0,[65534,65534,65534,65534,65534,65534,65534,65534],[65534,65534,65534,65534,65534,65534,65534,65534],true,"0x0","0x0"]
			[$DENIED,"setresuid",-1,[65534,65534,65534,65534,65534,65534,65534,65534],[65534,65534,65534,65534,65534,65534,65534,65534],false,"0x0","0x0"]
		EOF
	)"
	# an exec that changed nothing writes no record: root's execs of the helper
	run -0 count_records "$OUT" ".op == \"exec\" and (.pid == $SETRES or .pid == $CAPSET)"
	assert_output 0
}

@test "a setuid-root copy run by nobody, setresuid, capset, a denied setresuid: exact records" {
	run -0 "$LT" load --probes cred
	assert_line --regexp "^cred +(tracepoint|tp_btf) +[0-9]+ "
	exact_records
}

@test "LOWTRACE_OPEN_HOOK=tp_btf: cred on tp_btf sys_enter/sys_exit, the same exact records" {
	load_on_tp_btf cred
	exact_records
}
