#!/usr/bin/env bats
# priv: a record per privileged operation, at its return: ptrace attach/seize/traceme,
# mount, umount, the bpf(2) commands that make or attach, modules loaded and removed,
# unshare, setns (file's hooks: file.bats), and fileless execs (sched_process_exec).

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
	need_workloads privops
	DIR=$(mktemp -d "/tmp/lowtrace-priv-$MARK.XXXXXX")
	LT_TMPDIRS+=("$DIR")
	BPIN=/sys/fs/bpf/lt-test-$BATS_TEST_NUMBER-$$
}

teardown() {
	rm -f "$BPIN"
	lt_teardown
}

# priv_ops: the operations, their pids and what the helper printed
priv_ops() {
	local o=$BATS_TEST_TMPDIR/ops
	"$WLDIR/privops" ptrace >"$o.ptrace"
	CHILD=$(awk '$1 == "child" { print $2 }' "$o.ptrace")
	# the tracer traceme names: its parent, this shell
	PARENT=$BASHPID
	"$WLDIR/privops" traceme >/dev/null &
	TRACEME=$!
	wait "$TRACEME"
	unshare -n true &
	UNSHARE=$!
	wait "$UNSHARE"
	# a tmpfs in a private mount namespace, then gone
	unshare -m sh -c 'mount -t tmpfs -o size=1m "$0" "$1" && umount "$1"' "lt-$MARK" "$DIR"
	bpftool map create "$BPIN" type hash key 4 value 4 entries 4 name lt_priv_test
	"$WLDIR/privops" setns /proc/self/ns/net >"$o.setns" &
	SETNS=$!
	wait "$SETNS"
	SETNS_FD=$(awk '$1 == "fd" { print $2 }' "$o.setns")
	"$WLDIR/privops" memfd-exec /bin/true &
	MEMFD=$!
	wait "$MEMFD"
	cp /bin/true "$DIR/gone"
	"$WLDIR/privops" gone-exec "$DIR/gone" &
	GONE=$!
	wait "$GONE"
}

exact_records() {
	events_bg "$OUT" --json --type priv
	priv_ops
	wait_record "$OUT" ".pid == $GONE"
	stop_consumer "$EV_PID"
	run -0 jq -c -R "fromjson? | select(.pid == $TRACEME or .pid == $UNSHARE or .pid == $SETNS or
			.pid == $MEMFD or .pid == $GONE or .target_pid == $CHILD or
			(.source // \"\" | startswith(\"lt-\")) or (.target // \"\" | startswith(\"$DIR\")) or
			.target == \"$BPIN\" or .name == \"lt_priv_test\")
		| del(.type, .ts_ns, .cpu, .tid, .cgroup_id, .cgroup, .container_id, .pod_uid, .unit, .comm)" "$OUT"
	local o
	o=$(
		cat <<-EOF
			{"pid":PID,"op":"ptrace","syscall":"ptrace","request":"attach","target_pid":$CHILD,"ret":0}
			{"pid":$TRACEME,"op":"ptrace","syscall":"ptrace","request":"traceme","target_pid":$PARENT,"ret":0}
			{"pid":$UNSHARE,"op":"unshare","syscall":"unshare","flags":["CLONE_NEWNET"],"ret":0}
			{"pid":PID,"op":"mount","syscall":"mount","source":"lt-$MARK","target":"$DIR","source_truncated":false,"target_truncated":false,"fstype":"tmpfs","flags":0,"ret":0}
			{"pid":PID,"op":"umount","syscall":"umount2","target":"$DIR","target_truncated":false,"flags":0,"ret":0}
			{"pid":PID,"op":"bpf","syscall":"bpf","target":"","target_truncated":false,"bpf_cmd":"MAP_CREATE","map_type":1,"name":"lt_priv_test","ret":FD}
			{"pid":PID,"op":"bpf","syscall":"bpf","target":"$BPIN","target_truncated":false,"bpf_cmd":"OBJ_PIN","name":"","ret":0}
			{"pid":$SETNS,"op":"setns","syscall":"setns","flags":[],"fd":$SETNS_FD,"ret":0}
			{"pid":$MEMFD,"op":"fileless_exec","filename":"FILENAME","name":"memfd:lt-memfd","memfd":true,"ret":0}
			{"pid":$GONE,"op":"fileless_exec","filename":"FILENAME","name":"gone","memfd":false,"ret":0}
		EOF
	)
	# pids of processes the test did not start itself, fds, /dev/fd/N: their shapes
	assert_output --regexp "^$(sed -e 's/[][{}.+^$|()]/\\&/g' -e 's/PID/[0-9]+/; s/FD/[0-9]+/; s/FILENAME/\/dev\/fd\/[0-9]+/' <<<"$o")\$"
}

@test "ptrace attach and traceme, unshare -n, a tmpfs mounted and unmounted, bpftool map create, setns, a memfd and a deleted file exec'd: exact records" {
	run -0 "$LT" load --probes priv
	assert_line --regexp "^priv +(tracepoint|tp_btf) +[0-9]+ "
	exact_records
}

@test "LOWTRACE_OPEN_HOOK=tp_btf: priv on tp_btf sys_enter/sys_exit, the same exact records" {
	load_on_tp_btf priv
	exact_records
}

@test "modules: delete_module of a missing one and finit_module of a file that is none, with their results" {
	[ -e /proc/modules ] || skip "no CONFIG_MODULES: this kernel has no module syscalls"
	local o=$BATS_TEST_TMPDIR/ops
	printf 'not a module\n' >"$DIR/lt_nomod.ko"
	run -0 "$LT" load --probes priv
	events_bg "$OUT" --json --type priv
	"$WLDIR/privops" delete-module "lt_nomod_$$" >"$o.del" || true
	"$WLDIR/privops" finit-module "$DIR/lt_nomod.ko" >"$o.fin" || true
	wait_record "$OUT" '.op == "module_load" and .name == "lt_nomod.ko"'
	stop_consumer "$EV_PID"
	run -0 jq -c -R 'fromjson? | select(.op == "module_unload" or .op == "module_load") | [.op, .syscall, .name, .name_from_fd, .fd, .flags, .ret]' "$OUT"
	assert_output "$(
		printf '["module_unload","delete_module","lt_nomod_%s",null,null,2048,%s]\n' $$ "$(awk '$1 == "delete-module" { print $2 }' "$o.del")"
		printf '["module_load","finit_module","lt_nomod.ko",true,%s,0,%s]\n' "$(awk '$1 == "fd" { print $2 }' "$o.fin")" "$(awk '$1 == "finit-module" { print $2 }' "$o.fin")"
	)"
}
