#!/usr/bin/env bats
# Workload identity: cgroup, container_id, pod_uid, unit on every record of a
# task, from cgroups shaped like each runtime's in the identity hierarchy (a v1
# controller's on hybrid and v1 hosts, else cgroup2; helpers.bash ID_ROOT); a
# process that joins a container's v1 cgroups and then execs; cgroups that live
# a millisecond; namespaces on exec; a churn of cgroups.

load helpers

H64=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
POD=1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b

setup() {
	lt_setup
	[ -n "$ID_ROOT" ] || skip "no cgroup hierarchy mounted"
	OUT="$BATS_TEST_TMPDIR/events"
	WORK="$BATS_TEST_TMPDIR/work.py"
	# in its cgroup already (the caller moved the shell that execs it): a child that
	# execs (fork, exec, exit), an open, a loopback connection, a signal; prints its pid
	cat >"$WORK" <<'PY'
import os, signal, socket, sys, time
print(os.getpid(), flush=True)
p = os.fork()
if p == 0:
    os.execv("/bin/true", ["/bin/true"])
os.waitpid(p, 0)
open(sys.argv[1], "w").close()
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname()); a = l.accept()[0]
c.close(); a.close(); l.close()
k = os.fork()
if k == 0:
    time.sleep(30)
    os._exit(0)
os.kill(k, signal.SIGTERM)
os.waitpid(k, 0)
time.sleep(float(sys.argv[2]))  # the stream sees the cgroup while it exists
PY
	CREATED=()
}

teardown() {
	local i d
	lt_teardown || true
	# innermost first; a task that just exited may keep a cgroup busy for a moment
	for ((i = ${#CREATED[@]} - 1; i >= 0; i--)); do
		d=${CREATED[i]}
		[ -d "$d" ] || continue
		for ((k = 0; k < 20; k++)); do
			rmdir "$d" 2>/dev/null && break
			sleep 0.1
		done
	done
}

# mk_cg REL: make REL (and its parents) below the identity hierarchy's root, removed by teardown
mk_cg() {
	local rel=$1 acc=""
	IFS=/ read -ra parts <<<"${rel#/}"
	for p in "${parts[@]}"; do
		acc+="/$p"
		if [ ! -d "$ID_ROOT$acc" ]; then
			mkdir "$ID_ROOT$acc"
			CREATED+=("$ID_ROOT$acc")
		fi
	done
}

# work_in REL [SLEEP]: run work.py in cgroup REL; its pid in WPID. A shell moves itself,
# then starts it: every record of that pid is from inside the cgroup.
work_in() {
	local rel=$1
	WPID=$(sh -c 'echo $$ >"$1/cgroup.procs" && python3 "$2" "$3" "$4"' sh \
		"$ID_ROOT$rel" "$WORK" "$BATS_TEST_TMPDIR/opened-$MARK" "${2:-0.3}" | head -n1)
	[ -n "$WPID" ]
}

# assert_ident FILE PID JSON-IDENTITY: the workload's records of each type, and every
# one of them has exactly this identity ({cgroup, container_id, pod_uid, unit}, nulls absent)
assert_ident() {
	local f=$1 pid=$2 want=$3
	wait_record "$f" ".type == \"exit\" and .pid == $pid"
	stop_consumer "$EV_PID"
	run -0 jq -s -c --argjson p "$pid" --argjson w "$want" '
		[.[] | select(.pid == $p or (.type == "exit" and .ppid == $p)
			or (.type == "exec" and .args == ["/bin/true"] and .ppid == $p))] as $r
		| [([$r[].type] | unique),
		   ([$r[] | {cgroup, container_id, pod_uid, unit}] | unique)]' "$f"
	assert_output "[[\"exec\",\"exit\",\"fork\",\"open\",\"signal\",\"tcp\"],[$want]]"
}

# usr1_stats: the consumer's stats line (SIGUSR1) into STATS
usr1_stats() {
	local i
	kill -USR1 "$EV_PID"
	for ((i = 0; i < 50; i++)); do
		STATS=$(grep '^lowtrace: stats: ' "$OUT.err" | tail -n1)
		[ -n "$STATS" ] && break
		sleep 0.1
	done
	[ -n "$STATS" ]
}

start_events() {
	run -0 "$LT" load --probes exec,exit,fork,signal,open,tcp
	events_bg "$OUT" --json
}

@test "docker scope: container_id and its scope as the unit on every record type" {
	local rel="/system.slice/docker-$H64.scope"
	mk_cg "$rel"
	start_events
	work_in "$rel"
	assert_ident "$OUT" "$WPID" \
		"{\"cgroup\":\"$rel\",\"container_id\":\"$H64\",\"pod_uid\":null,\"unit\":\"docker-$H64.scope\"}"
}

@test "kubepods burstable pod, cri-containerd scope: pod_uid with dashes and container_id" {
	local pu=${POD//-/_}
	local rel="/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$pu.slice/cri-containerd-$H64.scope"
	mk_cg "$rel"
	start_events
	work_in "$rel"
	assert_ident "$OUT" "$WPID" \
		"{\"cgroup\":\"$rel\",\"container_id\":\"$H64\",\"pod_uid\":\"$POD\",\"unit\":\"cri-containerd-$H64.scope\"}"
}

@test "podman libpod scope, and the same records in text form" {
	local rel="/machine.slice/libpod-$H64.scope"
	mk_cg "$rel"
	run -0 "$LT" load --probes exec,exit,fork,signal,open,tcp
	events_bg "$OUT.txt" --text
	local ev=$EV_PID
	work_in "$rel"
	sleep 0.5
	stop_consumer "$ev"
	# every record of the workload ends with the identity keys
	run -0 grep -c " pid=$WPID " "$OUT.txt"
	[ "$output" -ge 5 ]
	local all=$output
	run -0 grep -c " pid=$WPID .* cgroup=$rel container_id=$H64 unit=libpod-$H64.scope\$" "$OUT.txt"
	assert_equal "$output" "$all"
}

@test "a systemd service: unit only, no container or pod" {
	local rel="/system.slice/lt-$MARK.service"
	mk_cg "$rel"
	start_events
	work_in "$rel"
	assert_ident "$OUT" "$WPID" \
		"{\"cgroup\":\"$rel\",\"container_id\":null,\"pod_uid\":null,\"unit\":\"lt-$MARK.service\"}"
}

@test "--container PREFIX (events) and --unit NAME (run) keep only that workload's records" {
	local a="/system.slice/docker-$H64.scope" b="/system.slice/lt-$MARK.service"
	mk_cg "$a"
	mk_cg "$b"
	run -0 "$LT" load --probes exec,exit,fork,signal,open,tcp
	events_bg "$OUT" --json --container 0123456789ab
	run_bg "$OUT.u" --probes exec,exit --unit "lt-$MARK.service"
	local rp=$RUN_PID
	work_in "$a" 0.1
	local pa=$WPID
	work_in "$b" 0.1
	local pb=$WPID
	wait_record "$OUT" ".type == \"exit\" and .pid == $pa"
	wait_record "$OUT.u" ".type == \"exit\" and .pid == $pb"
	stop_consumer "$EV_PID"
	stop_consumer "$rp"
	run -0 jq -s -c '[([.[].container_id] | unique), ([.[] | select(.type == "exit")] | length > 0)]' "$OUT"
	assert_output "[[\"$H64\"],true]"
	run -0 jq -s -c '[.[].unit] | unique' "$OUT.u"
	assert_output "[\"lt-$MARK.service\"]"
}

@test "bad --container and --unit values: one error line, exit 2" {
	run --separate-stderr "$LT" events --container 0123XYZ
	assert_equal "$status" 2
	assert_one_error_line
	run --separate-stderr "$LT" events --container "${H64}0"
	assert_equal "$status" 2
	assert_one_error_line
	run --separate-stderr "$LT" run --unit foo
	assert_equal "$status" 2
	assert_one_error_line
	run --separate-stderr "$LT" run --unit a/b.service
	assert_equal "$status" 2
	assert_one_error_line
	assert_nothing_loaded
}

@test "the cgroup removed right after its process exits: the exit record keeps its identity" {
	local rel="/system.slice/docker-$H64.scope"
	mk_cg "$rel"
	start_events
	work_in "$rel" 0.5
	rmdir "$ID_ROOT$rel"
	[ ! -d "$ID_ROOT$rel" ]
	assert_ident "$OUT" "$WPID" \
		"{\"cgroup\":\"$rel\",\"container_id\":\"$H64\",\"pod_uid\":null,\"unit\":\"docker-$H64.scope\"}"
}

@test "unshare -p -m -n --fork: the exec record's namespace inodes are the new ones" {
	command -v unshare >/dev/null || skip "no unshare"
	run -0 "$LT" load --probes exec
	events_bg "$OUT" --json
	local f="$BATS_TEST_TMPDIR/ns"
	# the forked child (pid 1 inside) execs sh, which reports its own namespaces
	unshare -p -m -n --fork sh -c 'for n in pid mnt net; do readlink /proc/self/ns/$n; done >"$1"; exec /bin/true "$2"' \
		sh "$f" "$MARK"
	wait_record "$OUT" ".type == \"exec\" and .args == [\"/bin/true\", \"$MARK\"]"
	stop_consumer "$EV_PID"
	local p m n
	p=$(sed -n '1s/.*\[\(.*\)\]/\1/p' "$f")
	m=$(sed -n '2s/.*\[\(.*\)\]/\1/p' "$f")
	n=$(sed -n '3s/.*\[\(.*\)\]/\1/p' "$f")
	# /proc/self/ns/pid is the caller's: the child's is pid_for_children of the unshare
	run -0 jq -s -c --arg mark "$MARK" '[.[] | select(.type == "exec" and .args == ["/bin/true", $mark])
		| [.pid_ns, .mnt_ns, .net_ns]]' "$OUT"
	assert_output "[[$p,$m,$n]]"
	[ "$p" != "$(ns_inode pid)" ] && [ "$m" != "$(ns_inode mnt)" ] && [ "$n" != "$(ns_inode net)" ]
}

@test "--identity-cgroup cgroup2 on a hybrid host: v2 root, memory:/docker/<id> in v1 gives that container_id" {
	[ -n "$CG2_ROOT" ] || skip "no cgroup2 mount (a pure v1 host)"
	local mem
	mem=$(findmnt -n -o TARGET -t cgroup 2>/dev/null | while read -r t; do
		findmnt -n -o OPTIONS "$t" | grep -qw memory && echo "$t"
	done | head -n1)
	[ -n "$mem" ] || skip "no cgroup v1 memory hierarchy mounted (a pure cgroup v2 host)"
	local d="$mem/docker/$H64"
	mkdir -p "$d"
	CREATED+=("$mem/docker" "$d")
	run -0 "$LT" load --probes exec,exit,fork,signal,open,tcp --identity-cgroup cgroup2
	events_bg "$OUT" --json
	# v2: the root; v1 memory: /docker/<id>: read from /proc, as the records' ids are v2's
	WPID=$(sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2/cgroup.procs" && python3 "$3" "$4" 0.3' sh \
		"$CG2_ROOT" "$d" "$WORK" "$BATS_TEST_TMPDIR/opened-$MARK" | head -n1)
	# its children inherit both
	wait_record "$OUT" ".type == \"exit\" and .pid == $WPID"
	stop_consumer "$EV_PID"
	run -0 jq -s -c --argjson p "$WPID" '[.[] | select(.pid == $p) | {cgroup, container_id}] | unique' "$OUT"
	assert_output "[{\"cgroup\":\"/\",\"container_id\":\"$H64\"}]"
	rmdir "$d" "$mem/docker" 2>/dev/null || true
}

@test "churn: cgroups made and removed fast while records stream; the cache stays under its cap" {
	run -0 "$LT" load --probes exec,exit,fork
	events_bg "$OUT" --json --ident-cap 8
	local base="$ID_ROOT/lt-churn-$MARK" i n=300
	# the guests emulate their CPUs: fewer cgroups, still many times the cap
	[ -z "${VM_RESULTS:-}" ] || n=60
	mkdir "$base"
	CREATED+=("$base")
	for ((i = 0; i < n; i++)); do
		mkdir "$base/c$i.service"
		sh -c 'echo $$ >"$1/cgroup.procs"; exec /bin/true' sh "$base/c$i.service"
		rmdir "$base/c$i.service" 2>/dev/null || true
	done
	/bin/true "$MARK"
	wait_record "$OUT" ".type == \"exec\" and .args == [\"/bin/true\", \"$MARK\"]"
	kill -INT "$EV_PID"
	wait_rc "$EV_PID" 10
	assert_equal "$RC" 0
	# records were streamed and named the churned units, and the cap held
	run -0 jq -s '[.[] | select(.type == "exec" and (.unit // "" | startswith("c")))] | length' "$OUT"
	[ "$output" -gt 0 ]
	run -0 grep -o 'identity: [0-9]* cgroups cached (cap 8), [0-9]* evicted' "$OUT.err"
	local n=${output#identity: } ev=${output##*), }
	n=${n%% *}
	ev=${ev%% *}
	[ "$n" -le 8 ] && [ "$ev" -gt 0 ]
	for ((i = 0; i < n; i++)); do rmdir "$base/c$i.service" 2>/dev/null || true; done
}

@test "events: SIGUSR1 prints the caches' sizes against their caps and streams on" {
	run -0 "$LT" load --probes exec,exit,fork
	events_bg "$OUT" --json --ident-cap 64
	kill -USR1 "$EV_PID"
	local i
	for ((i = 0; i < 50; i++)); do
		grep -q '^lowtrace: stats: ' "$OUT.err" && break
		sleep 0.1
	done
	run -0 grep '^lowtrace: stats: ' "$OUT.err"
	assert_output --regexp '^lowtrace: stats: ident_cgroups=[0-9]+/64 ident_pids=[0-9]+/4096 evicted=[0-9]+ '
	/bin/true "$MARK"
	wait_record "$OUT" ".type == \"exec\" and .args == [\"/bin/true\", \"$MARK\"]"
	stop_consumer "$EV_PID"
}

@test "status: where identity comes from (the hierarchy, its mount, v1 hierarchies, cgroups, the kernel's names)" {
	run -0 "$LT" load --probes exec
	local nv1 ncg
	nv1=$(findmnt -n -t cgroup -o TARGET | wc -l)
	ncg=$(find "$ID_ROOT" -type d | wc -l)
	run -0 "$LT" status
	if [ "$ID_CTRL" = cgroup2 ]; then
		assert_line --regexp "^identity: cgroup2 at $ID_ROOT, $nv1 v1 hierarchies, [1-9][0-9]* cgroups \(cache cap 16384\)\$"
	else
		assert_line --regexp "^identity: cgroup v1 $ID_CTRL at $ID_ROOT, $nv1 v1 hierarchies, cgroup2 at ${CG2_ROOT:-\(none\)}, [1-9][0-9]* cgroups \(cache cap 16384\)\$"
	fi
	assert_line --regexp "^cgroups: [1-9][0-9]* named in the kernel \(cap 8192; [1-9][0-9]* seeded, [0-9]+ born, [0-9]+ died, [0-9]+ renamed, [0-9]+ freed 300 s after death, 0 full, 0 freed at once\)\$"
	run -0 status_json
	run -0 jq -c --arg r "$ID_ROOT" --arg h "$ID_CTRL" '.identity | [.hierarchy == $h, .mount == $r, .v1_hierarchies, .cgroups > 0, .cache_cap, .kernel.cap, .kernel.seeded > 0, .kernel.full, .kernel.grace_s]' <<<"$output"
	assert_output "[true,true,$nv1,true,16384,8192,true,0,300]"
	# the seed walked the hierarchy once: every cgroup there then (give or take the churn of others)
	run -0 jq '.identity.kernel.seeded' <<<"$(status_json)"
	[ "$output" -ge $((ncg - 5)) ] && [ "$output" -le $((ncg + 5)) ]
}

@test "a process that joins a container's v1 cgroups and then execs is named from the exec on" {
	[ "$ID_CTRL" != cgroup2 ] || skip "a pure cgroup2 host: no v1 hierarchy to join"
	local c d ds=()
	# as runc does on a cgroupfs node: every v1 controller's /docker/<id> (but cpuset's, which
	# takes no task before its cpus are set), then exec
	for c in $(findmnt -n -o TARGET -t cgroup | grep -v cpuset); do
		d="$c/docker/$H64"
		mkdir -p "$d"
		CREATED+=("$c/docker" "$d")
		ds+=("$d")
	done
	start_events
	WPID=$(sh -c 'for d in "$@"; do echo $$ >"$d/cgroup.procs"; done; exec python3 '"$WORK"' '"$BATS_TEST_TMPDIR/opened-$MARK"' 0.3' sh "${ds[@]}" | head -n1)
	# the kernel gave the id: no /proc/PID/cgroup read on a v1 identity hierarchy
	wait_record "$OUT" ".type == \"exit\" and .pid == $WPID"
	usr1_stats
	[[ $STATS =~ " proc_reads=0 " ]]
	stop_consumer "$EV_PID"
	# sh's own records (its opens of cgroup.procs) are from before the move; from the exec on,
	# the process and its children are the container's
	run -0 jq -s -c --argjson p "$WPID" '
		[.[] | select((.pid == $p and .comm != "sh") or (.type == "exit" and .ppid == $p))] as $r
		| [([$r[].type] | unique), ([$r[] | {cgroup, container_id}] | unique),
		   ([$r[] | select(.type == "exec" and .pid == $p)] | length > 0)]' "$OUT"
	assert_output "[[\"exec\",\"exit\",\"fork\",\"open\",\"signal\",\"tcp\"],[{\"cgroup\":\"/docker/$H64\",\"container_id\":\"$H64\"}],true]"
}

@test "cgroups that live a millisecond: each one's exec and exit records carry its path" {
	start_events
	local base="$ID_ROOT/lt-ms-$MARK" i n=40
	mkdir "$base"
	CREATED+=("$base")
	# made, joined, exec'd, removed: each lives about as long as /bin/true runs
	for ((i = 0; i < n; i++)); do
		sh -c 'mkdir "$1" && echo $$ >"$1/cgroup.procs" && exec /bin/true '"$MARK"' "$2"' sh "$base/j$i.scope" "$i"
		rmdir "$base/j$i.scope"
	done
	/bin/true "$MARK" end
	wait_record "$OUT" ".type == \"exec\" and .args == [\"/bin/true\", \"$MARK\", \"end\"]"
	# named by the kernel when each was made; a walk of the hierarchy (a rescan, for another
	# cgroup the kernel had no name for) finds those alive at that moment, at most a few each
	# (a busy host's scheduler can keep one alive for a while)
	usr1_stats
	echo "# $STATS" >&3
	local named rescans
	[[ $STATS =~ kernel_named=([0-9]+) ]] && named=${BASH_REMATCH[1]}
	[[ $STATS =~ rescans=([0-9]+) ]] && rescans=${BASH_REMATCH[1]}
	[ "$named" -ge $((n - 3 * rescans)) ] && [ "$named" -ge $((n / 2)) ]
	stop_consumer "$EV_PID"
	run -0 jq -s -c --arg m "$MARK" --arg b "/lt-ms-$MARK" '[.[] | select(.type == "exec" and .args[1] == $m and .args[2] != "end")
		| (.cgroup == ($b + "/j" + .args[2] + ".scope")) and .unit == ("j" + .args[2] + ".scope")] | [length, all]' "$OUT"
	assert_output "[$n,true]"
}
