#!/usr/bin/env bats
# Errors: one line on stderr starting "lowtrace: ", the documented exit code,
# nothing on stdout, and a failed load leaves nothing loaded or pinned.

load helpers

@test "--cgroup on a path that is not a cgroup directory of the identity hierarchy: exit 2" {
	lt_fails 2 load --cgroup /tmp
	assert_equal "$stderr" "lowtrace: --cgroup /tmp: not a cgroup directory"
	assert_nothing_loaded
	lt_fails 2 load --cgroup /nonexistent-lowtrace-dir
	assert_equal "$stderr" "lowtrace: --cgroup /nonexistent-lowtrace-dir: No such file or directory"
	assert_nothing_loaded
	# another v1 hierarchy than the identity one; a v1 one where the identity is cgroup2's
	local v1
	v1=$(findmnt -n -o TARGET -t cgroup | grep -vx "$ID_ROOT" | head -n1)
	if [ -n "$v1" ] && [ "$ID_CTRL" != cgroup2 ]; then
		lt_fails 2 load --cgroup "$v1"
		assert_equal "$stderr" "lowtrace: --cgroup $v1: not a directory of the identity hierarchy (cgroup v1 $ID_CTRL at $ID_ROOT)"
	fi
	if [ -n "$v1" ] && [ -n "$CG2_ROOT" ]; then
		lt_fails 2 load --cgroup "$v1" --identity-cgroup cgroup2
		assert_equal "$stderr" "lowtrace: --cgroup $v1: not a cgroup v2 directory"
	fi
	assert_nothing_loaded
	# a hierarchy that is not mounted, one that does not exist
	if ! findmnt -n -t cgroup -O freezer >/dev/null; then
		lt_fails 2 load --identity-cgroup freezer
		assert_equal "$stderr" "lowtrace: --identity-cgroup freezer: no such hierarchy is mounted"
	fi
	lt_fails 2 load --identity-cgroup net_cls
	assert_equal "$stderr" "lowtrace: --identity-cgroup: 'net_cls' is not auto, cgroup2 or one of pids, memory, cpu, cpuacct, blkio, devices, freezer, cpuset"
	assert_nothing_loaded
}

# what a status says that no load or failed load changes: without the counters, the cgroups, and
# exec's process table and its counts (every fork and exit on the machine changes those)
# (run_cnt and run_time_ns move while the kernel's BPF statistics are on)
STABLE='del(.probes[].events, .probes[].drops, .probes[].shed, .probes[].run_cnt, .probes[].run_time_ns,
	.identity.cgroups, .drops_by_cgroup, .ancestry,
	(.probes[].maps[]? | select(.name == "lt_procs") | .entries))'

@test "load while loaded: exit 4, the existing suite is intact" {
	run -0 "$LT" load --ringbuf-size 8192 --probes exec,exit
	local ids before
	ids=$(lt_prog_names | paste -sd' ')
	before=$(status_json | jq -c "$STABLE")
	local ls_before
	ls_before=$(ls -lR "$PIN")

	lt_fails 4 load
	assert_equal "$stderr" "lowtrace: already loaded (pinned at /sys/fs/bpf/lowtrace): run 'lowtrace unload' first, or load --replace"

	run -0 status_json
	run -0 jq -c "$STABLE" <<<"$output"
	assert_output "$before"
	run -0 ls -lR "$PIN"
	assert_output "$ls_before"
	wait_prog_names "$ids"
	# and it still records
	local out="$BATS_TEST_TMPDIR/ev" sp
	events_bg "$out"
	/bin/sh -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	wait_record "$out" ".type == \"exec\" and .pid == $sp"
}

@test "load --replace with a bad --cgroup: exit 2 and the existing suite is intact" {
	run -0 "$LT" load
	local before
	before=$(status_json | jq -c "$STABLE")
	lt_fails 2 load --replace --cgroup /tmp
	assert_equal "$stderr" "lowtrace: --cgroup /tmp: not a cgroup directory"
	# a usage error changes nothing
	run -0 status_json
	run -0 jq -c "$STABLE" <<<"$output"
	assert_output "$before"
}

@test "unload, status, events when not loaded: exit 3" {
	lt_fails 3 unload
	assert_equal "$stderr" "lowtrace: not loaded: /sys/fs/bpf/lowtrace: No such file or directory"
	lt_fails 3 status
	assert_regex "$stderr" "^lowtrace: not loaded: "
	lt_fails 3 status --json
	assert_regex "$stderr" "^lowtrace: not loaded: "
	lt_fails 3 events
	assert_regex "$stderr" "^lowtrace: not loaded: .*run 'lowtrace load' first"
	lt_fails 3 events --count 1 --duration 1
	assert_nothing_loaded
}

@test "no privileges (uid 65534): load exits 5, nothing pinned or loaded" {
	as_nobody load
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: permission denied"
	assert_nothing_loaded

	# status and events say so too, they do not pretend nothing is loaded
	run -0 "$LT" load
	local cmd
	for cmd in status events; do
		as_nobody "$cmd"
		assert_equal "$status" 5
		assert_one_error_line
		assert_equal "$stderr" "lowtrace: permission denied: /sys/fs/bpf/lowtrace (run as root)"
	done
}

@test "no privileges (uid 65534): unload exits 5 and removes nothing" {
	run -0 "$LT" load
	as_nobody unload
	# exit 5 is "no privileges" in lowtrace -h, as status and events use it
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: permission denied"
	# the suite is untouched
	run -0 ls "$PIN/links"
	assert_output "$(tr ' ' '\n' <<<"$DEFAULT_LINKS")"
	run -0 "$LT" status
}

@test "root without CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON: load exits 5, nothing pinned or loaded" {
	# uid 0, but the capabilities are gone from the bounding set before the exec
	run --separate-stderr setpriv --bounding-set=-sys_admin,-bpf,-perfmon \
		--inh-caps=-sys_admin,-bpf,-perfmon "$LT" load
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: permission denied"
	assert_nothing_loaded
}

@test "no kernel BTF: load exits 5 naming BTF, nothing pinned or loaded" {
	run --separate-stderr unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec '$LT' load"
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: .*BTF"
	assert_nothing_loaded
}

@test "no bpffs possible: load exits 5 naming bpffs, nothing pinned or loaded" {
	run --separate-stderr unshare -m sh -c "
		if mountpoint -q /sys/fs/bpf; then umount -l /sys/fs/bpf || exit 100; fi
		mount -t tmpfs -o ro none /sys/fs || exit 101
		exec '$LT' load"
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_regex "$stderr" "^lowtrace: .*bpffs"
	assert_nothing_loaded
}

# The *_tp programs (preemptible tracepoints; LOWTRACE_TP_LEVEL here) need
# tracefs for their tracepoints' ids: in a mount namespace where /sys/kernel is
# a read-only tmpfs holding only the BTF, there is none and none can be mounted
@test "no tracefs possible where the *_tp programs attach: load exits 5 naming tracefs, nothing pinned or loaded" {
	local d=$BATS_TEST_TMPDIR/btf
	mkdir -p "$d"
	run --separate-stderr unshare -m --propagation private sh -c "
		mount --bind /sys/kernel/btf '$d' || exit 100
		mount -t tmpfs -o mode=755 none /sys/kernel || exit 101
		mkdir /sys/kernel/btf && mount --bind '$d' /sys/kernel/btf || exit 102
		mount -o remount,ro,bind /sys/kernel || exit 103
		exec env LOWTRACE_TP_LEVEL=force '$LT' load --probes exec,tcp"
	assert_equal "$status" 5
	assert_one_error_line
	assert_output ''
	assert_equal "$stderr" "lowtrace: no tracefs: cannot mount tracefs at /sys/kernel/tracing: No such file or directory"
	assert_nothing_loaded
}

@test "bpffs not mounted: load mounts it (in a private mount namespace)" {
	# in a new mount namespace, bpffs is unmounted; load mounts it again, pins there,
	# and its pins disappear with the namespace: the host stays unloaded
	run --separate-stderr unshare -m --propagation private sh -c "
		umount -l /sys/fs/bpf 2>/dev/null
		mountpoint -q /sys/fs/bpf && exit 100
		'$LT' load >/dev/null || exit \$?
		stat -f -c %T /sys/fs/bpf
		stat -c %a /sys/fs/bpf
		'$LT' status --json | jq -r .pin_dir
		'$LT' unload >/dev/null"
	assert_equal "$status" 0
	assert_equal "$stderr" ""
	# mode=0700 (bpffs adds the sticky bit to its root)
	assert_output "$(printf 'bpf_fs\n1700\n/sys/fs/bpf/lowtrace')"
	assert_nothing_loaded
}

@test "run without privileges: exit 5, nothing loaded, no temp pin dir" {
	as_nobody run --duration 1
	assert_equal "$status" 5
	assert_one_error_line
	assert_nothing_loaded # includes: no lowtrace* entry in /sys/fs/bpf
}

@test "load/run --pid of no process, or of a thread: exit 2; events --pid filters any pid" {
	local free=$((0x3ffffff0))
	lt_fails 2 load --pid "$free"
	assert_equal "$stderr" "lowtrace: --pid $free: no such process"
	lt_fails 2 run --pid "$free" --duration 1
	assert_equal "$stderr" "lowtrace: --pid $free: no such process"
	# the kernel filters compare the thread group: a thread's id would match nothing
	python3 -c 'import threading, time
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
time.sleep(30)' 3>&- &
	local p=$! tid= i
	bg_track "$p"
	for ((i = 0; i < 100; i++)); do
		tid=$(ls "/proc/$p/task" 2>/dev/null | grep -vx "$p" | head -n1)
		[ -z "$tid" ] || break
		sleep 0.05
	done
	[ -n "$tid" ]
	lt_fails 2 load --pid "$tid"
	assert_equal "$stderr" "lowtrace: --pid $tid: a thread of process $p (--pid takes the process id)"
	lt_fails 2 profile -p "$tid" --duration 1
	assert_equal "$stderr" "lowtrace: --pid $tid: a thread of process $p (--pid takes the process id)"
	assert_nothing_loaded
	# load -h says so
	run -0 "$LT" load -h
	assert_line "                         the process must exist (a process id, not a thread's)"
	# events filters records already in the ring: those of a process gone since count
	run -0 "$LT" load --probes exec
	run --separate-stderr -0 "$LT" events --pid "$free" --duration 1
	assert_output ''
}

@test "--cgroup on a file: not a cgroup directory (exit 2), also while loaded" {
	lt_fails 2 load --cgroup /etc/passwd
	assert_equal "$stderr" "lowtrace: --cgroup /etc/passwd: not a cgroup directory"
	lt_fails 2 load --cgroup "$ID_ROOT/cgroup.procs"
	assert_equal "$stderr" "lowtrace: --cgroup $ID_ROOT/cgroup.procs: not a cgroup directory"
	lt_fails 2 profile -c "$ID_ROOT/cgroup.procs" --duration 1
	assert_equal "$stderr" "lowtrace: --cgroup $ID_ROOT/cgroup.procs: not a cgroup directory"
	assert_nothing_loaded
	# a usage error is one before "already loaded"
	run -0 "$LT" load --probes exec
	lt_fails 2 load --cgroup /etc/passwd
	assert_equal "$stderr" "lowtrace: --cgroup /etc/passwd: not a cgroup directory"
}

@test "load --state, --max-threads, --max-conns: bad values exit 2 with one line, nothing loaded" {
	local args
	for args in "--state lru" "--state" "--max-threads 0" "--max-conns 0" "--max-conns x" \
		"--max-threads 99999999"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$LT" load $args
		assert_equal "$status" 2
		assert_one_error_line
		assert_nothing_loaded
	done
	run --separate-stderr "$LT" load --state lru
	assert_equal "$stderr" "lowtrace: --state: 'lru' is not auto, local or hash"
}

@test "load --state local: loads with local storage (5.11+); elsewhere exit 5, one line, nothing loaded" {
	run --separate-stderr "$LT" load --state local
	if [ "$status" = 0 ]; then
		run -0 status_json
		assert_equal "$(jq -c .state <<<"$output")" '{"task":"local","sk":"local"}'
		return
	fi
	assert_equal "$status" 5
	assert_one_error_line
	assert_nothing_loaded
}
