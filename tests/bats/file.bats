#!/usr/bin/env bats
# file: a record per call that changes a file by name (unlink, rename, chmod, chown, link,
# symlink, truncate, mkdir, rmdir in each of their syscalls), at its return. Where perf links
# exist (5.15+) one program per hook on the classic syscalls:sys_{enter,exit}_X tracepoints of
# just those syscalls; before, tp_btf on sys_enter/sys_exit (LOWTRACE_OPEN_HOOK=tp_btf forces
# that here too). The calls come from coreutils, as a user's shell would make them.

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
	# readable by nobody: its chmod fails with EPERM, not on the way there
	DIR=$(mktemp -d "/tmp/lowtrace-file-$MARK.XXXXXX")
	LT_TMPDIRS+=("$DIR")
	chmod 0755 "$DIR"
}

teardown() { lt_teardown; }

# the hook the syscall-set probes take here
set_hook() {
	if perf_links && [ "${LOWTRACE_OPEN_HOOK:-}" != tp_btf ]; then echo tracepoint; else echo tp_btf; fi
}

# file_ops: the calls, each by its own command (the records' pids differ); a failed rm and a
# failed chmod by nobody on root's file among them
file_ops() {
	local d=$DIR
	need_workloads privops
	mkdir "$d/sub"
	: >"$d/a"
	: >"$d/r"
	mv "$d/a" "$d/b"
	chmod 640 "$d/b"
	chown 65534:65534 "$d/b"
	ln "$d/b" "$d/c"
	ln -s "$d/b" "$d/s"
	truncate -s 100 "$d/$MARK-t"
	rm "$d/c"
	rmdir "$d/sub"
	! rm "$d/missing" 2>/dev/null
	! setpriv --reuid=65534 --regid=65534 --clear-groups chmod 600 "$d/r" 2>/dev/null
	! "$WLDIR/privops" unlink-fault >/dev/null
}

# exact_records: the records of file_ops, in order, each with what its op writes
exact_records() {
	events_bg "$OUT" --json --type file
	file_ops
	wait_record "$OUT" '.op == "unlink" and .path_unreadable'
	stop_consumer "$EV_PID"
	local d=$DIR
	run -0 jq -c -R --arg d "$d" --arg m "$MARK" 'fromjson? | select((.path | startswith($d) or startswith($m)) or .path_unreadable)
		| [.op, .path, .new_path, .mode, .owner_uid, .owner_gid, .length, .path_from_fd, .path_truncated, .path_unreadable, .ret]' "$OUT"
	assert_output "$(
		cat <<-EOF
			["mkdir","$d/sub",null,511,null,null,null,false,false,false,0]
			["rename","$d/a","$d/b",null,null,null,null,false,false,false,0]
			["chmod","$d/b",null,416,null,null,null,false,false,false,0]
			["chown","$d/b",null,null,65534,65534,null,false,false,false,0]
			["link","$d/b","$d/c",null,null,null,null,false,false,false,0]
			["symlink","$d/b","$d/s",null,null,null,null,false,false,false,0]
			["truncate","$MARK-t",null,null,null,null,100,true,false,false,0]
			["unlink","$d/c",null,null,null,null,null,false,false,false,0]
			["rmdir","$d/sub",null,null,null,null,null,false,false,false,0]
			["unlink","$d/missing",null,null,null,null,null,false,false,false,-2]
			["chmod","$d/r",null,384,null,null,null,false,false,false,-1]
			["unlink","",null,null,null,null,null,false,false,true,-14]
		EOF
	)"
}

@test "file is opt-in; its two classic programs are attached to each of its syscalls the kernel has" {
	run -0 "$LT" load
	assert_line --regexp '^file +- *$'
	run -0 "$LT" load --replace --probes file
	assert_line --regexp "^file +$(set_hook) +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\$"
	run -0 ls "$PIN/links"
	if perf_links; then
		# one link per hook and syscall: unlinkat and renameat2 everywhere, unlink only where
		# the architecture has it (x86-64, not arm64)
		assert_line file_se-unlinkat
		assert_line file_sx-renameat2
		if has_syscall unlink; then assert_line file_sx-unlink; else refute_line file_sx-unlink; fi
		refute_line file_e
		local n
		n=$(grep -c '^file_se-' <<<"$output")
		assert_equal "$(grep -c '^file_sx-' <<<"$output")" "$n"
		[ "$n" -ge 12 ] || fail "$n syscalls"
	else
		assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir file_e file_x)"
	fi
}

@test "mkdir, mv, chmod, chown, ln, ln -s, truncate, rm, rmdir, failures: exact records" {
	run -0 "$LT" load --probes file
	exact_records
}

@test "LOWTRACE_OPEN_HOOK=tp_btf: file on tp_btf sys_enter/sys_exit, the same exact records" {
	load_on_tp_btf file
	exact_records
}

@test "file text: op, paths, octal mode; a path cut at 255 bytes is flagged" {
	local long
	long="$DIR/$(printf 'q%.0s' {1..200})/$(printf 'r%.0s' {1..100})"
	run -0 "$LT" load --probes file
	events_bg "$OUT" --text --type file
	chmod 751 "$DIR"
	! rm "$long" 2>/dev/null
	wait_line "$OUT" "path=$DIR/q" "$EV_PID"
	stop_consumer "$EV_PID"
	run -0 grep -c "^file .* comm=chmod op=chmod syscall=[a-z0-9]* path=$DIR dfd=-100 mode=0751 flags=0 ret=0$(own_ident text)\$" "$OUT"
	assert_output 1
	# 255 bytes of the path, then "..."
	run -0 grep -c "^file .* comm=rm op=unlink syscall=[a-z0-9]* path=${long:0:255}\\.\\.\\. dfd=-100 flags=0 ret=-2" "$OUT"
	assert_output 1
}

# What the syscall-set probes cost other syscalls: on their classic tracepoints nothing
@test "other syscalls: 20 000 getppid run no file, cred or priv program (classic tracepoints); each twice on tp_btf" {
	local runs
	run -0 "$LT" load --probes file,cred,priv
	runs=$(runs_over_getppid '^lt_(file|cred|priv)_')
	echo "# file, cred and priv programs ran $runs times during 20 000 getppid ($(set_hook))" >&3
	if perf_links; then
		[ $runs -lt 2000 ] || fail "$runs runs"
	else
		# three probes, an entry and an exit program each
		[ $runs -ge 120000 ] || fail "$runs runs"
	fi
}

@test "metrics: lowtrace_ops_total per probe and op, every op of a loaded probe; they add up to its events" {
	new_cgroup
	http_setup
	run -0 "$LT" load --probes file,cred,priv --cgroup "$NEW_CG"
	serve
	local d=$DIR
	in_cg "$NEW_CG" bash -c 'mkdir "$1/m" && chmod 700 "$1/m" && chmod 755 "$1/m" && mv "$1/m" "$1/n" && rmdir "$1/n"' bash "$d"
	run -0 scrape
	local body=$output
	run -0 grep -E '^lowtrace_ops_total\{probe="file",op="(mkdir|chmod|rename|rmdir|unlink)"\} ' <<<"$body"
	assert_output "$(printf 'lowtrace_ops_total{probe="file",op="%s"} %s\n' unlink 0 rename 1 chmod 2 mkdir 1 rmdir 1)"
	# cred's and priv's series are there, at 0 (nothing of theirs ran in the cgroup)
	run -0 grep -c '^lowtrace_ops_total{probe="cred",op="[a-z]*"} 0$' <<<"$body"
	assert_output 11
	run -0 grep -c '^lowtrace_ops_total{probe="priv",op="[a-z_]*"} 0$' <<<"$body"
	assert_output 9
	run -0 awk '/^lowtrace_ops_total\{probe="file"/ { s += $2 } /^lowtrace_events_total\{probe="file"\}/ { e = $2 } END { print s, e }' <<<"$body"
	assert_output "5 5"
}
