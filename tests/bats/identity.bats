#!/usr/bin/env bats
# Workload identity: cgroup, container_id, pod_uid, unit on every record of a
# task, from cgroups shaped like each runtime's under the cgroup2 mount; the
# v1 layout of a hybrid host; namespaces on exec; a churn of cgroups.

load helpers

H64=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
POD=1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b

setup() {
	lt_setup
	[ -n "$CG2_ROOT" ] || skip "no cgroup2 mount"
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

# mk_cg REL: make REL (and its parents) below the cgroup2 root, removed by teardown
mk_cg() {
	local rel=$1 acc=""
	IFS=/ read -ra parts <<<"${rel#/}"
	for p in "${parts[@]}"; do
		acc+="/$p"
		if [ ! -d "$CG2_ROOT$acc" ]; then
			mkdir "$CG2_ROOT$acc"
			CREATED+=("$CG2_ROOT$acc")
		fi
	done
}

# work_in REL [SLEEP]: run work.py in cgroup REL; its pid in WPID. A shell moves itself,
# then starts it: every record of that pid is from inside the cgroup.
work_in() {
	local rel=$1
	WPID=$(sh -c 'echo $$ >"$1/cgroup.procs" && python3 "$2" "$3" "$4"' sh \
		"$CG2_ROOT$rel" "$WORK" "$BATS_TEST_TMPDIR/opened-$MARK" "${2:-0.3}" | head -n1)
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
	rmdir "$CG2_ROOT$rel"
	[ ! -d "$CG2_ROOT$rel" ]
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

@test "hybrid host: v2 root, memory:/docker/<id> in the v1 hierarchy gives that container_id" {
	local mem
	mem=$(findmnt -n -o TARGET -t cgroup 2>/dev/null | while read -r t; do
		findmnt -n -o OPTIONS "$t" | grep -qw memory && echo "$t"
	done | head -n1)
	[ -n "$mem" ] || skip "no cgroup v1 memory hierarchy mounted (a pure cgroup v2 host)"
	local d="$mem/docker/$H64"
	mkdir -p "$d"
	CREATED+=("$mem/docker" "$d")
	start_events
	# v2: the root; v1 memory: /docker/<id>
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
	local base="$CG2_ROOT/lt-churn-$MARK" i n=300
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

@test "status: where identity comes from (the cgroup2 mount, v1 hierarchies, cgroups, the cap)" {
	run -0 "$LT" load --probes exec
	local nv1
	nv1=$(findmnt -n -t cgroup -o TARGET | wc -l)
	run -0 "$LT" status
	assert_line --regexp "^identity: cgroup2 at $CG2_ROOT, $nv1 v1 hierarchies, [1-9][0-9]* cgroups \(cache cap 16384\)\$"
	run -0 status_json
	run -0 jq -c --arg r "$CG2_ROOT" '.identity | [.cgroup2 == $r, .v1_hierarchies, .cgroups > 0, .cache_cap]' <<<"$output"
	assert_output "[true,$nv1,true,16384]"
}
