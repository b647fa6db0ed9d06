#!/usr/bin/env bats
# Names from real container runtimes on this node: podman (runc, the cgroupfs manager) and
# containerd (ctr, runc) with a task whose OCI spec carries the CRI annotations a kubelet's
# containerd would write (no kubelet here). The images are made from busybox-static: no
# registry is reachable. Every container and image a test makes is removed.

load helpers

PODMAN=(podman --runtime runc --cgroup-manager cgroupfs)
RUN_OPTS=(--network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

setup_file() {
	local r="$BATS_FILE_TMPDIR/rootfs" c
	mkdir -p "$r/bin"
	cp /bin/busybox "$r/bin/"
	for c in sh true sleep cat; do ln -s busybox "$r/bin/$c"; done
	tar -C "$r" -cf "$BATS_FILE_TMPDIR/bb.tar" .
	export IMG="localhost/lt-bb:t$$"
	HAD_LIBPOD=$(findmnt -n -o TARGET -t cgroup,cgroup2 | while read -r m; do
		[ -d "$m/libpod_parent" ] && echo yes; done | head -n1)
	export HAD_LIBPOD
	if command -v podman >/dev/null; then
		podman import -q "$BATS_FILE_TMPDIR/bb.tar" "$IMG" >/dev/null
	fi
}

teardown_file() {
	! command -v podman >/dev/null || podman rmi -f "$IMG" >/dev/null 2>&1 || true
	# the cgroups the runtimes made for these containers: podman's parent (when it was not
	# there before) and the kubepods tree the containerd task was put in
	local m d
	for m in $(findmnt -n -o TARGET -t cgroup,cgroup2); do
		for d in kubepods/burstable/pod1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b kubepods/burstable \
			kubepods $([ -n "$HAD_LIBPOD" ] || echo libpod_parent); do
			[ -d "$m/$d" ] && find "$m/$d" -depth -type d -exec rmdir {} \; 2>/dev/null
		done
	done
	return 0
}

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
	NAMES=()
}

teardown() {
	local n
	for n in "${NAMES[@]}"; do
		"${PODMAN[@]}" rm -f "$n" >/dev/null 2>&1 || true
	done
	[ -z "${CTR_ID:-}" ] || { ctr task kill -s KILL "$CTR_ID" 2>/dev/null; ctr container rm "$CTR_ID" 2>/dev/null; } || true
	[ -z "${CTRD_PID:-}" ] || { kill "$CTRD_PID"; wait "$CTRD_PID"; rm -rf /run/containerd /var/lib/containerd; } 2>/dev/null || true
	lt_teardown
}

# curl_metrics: GET /metrics of `serve`, the body alone
curl_metrics() {
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())' "$PORT"
}

# sample FILE SERIES: the value of one series (exact name and labels)
sample() {
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}

need_podman() {
	command -v podman >/dev/null && command -v runc >/dev/null || skip "no podman or runc (make deps installs them)"
}

# prun NAME CMD...: a podman container NAME running CMD in the image; its id in CID
prun() {
	local name=$1
	shift
	NAMES+=("$name")
	"${PODMAN[@]}" run -d --name "$name" "${RUN_OPTS[@]}" "$IMG" "$@" >"$BATS_TEST_TMPDIR/cid"
	CID=$(cat "$BATS_TEST_TMPDIR/cid")
	[[ $CID =~ ^[0-9a-f]{64}$ ]]
}

# pwait NAME: until container NAME exited; then removed
pwait() {
	"${PODMAN[@]}" wait "$1" >/dev/null
	"${PODMAN[@]}" rm -f "$1" >/dev/null
}

@test "podman: exec records inside two containers carry their id, name and image; --container-name keeps one" {
	need_podman
	run -0 "$LT" load --probes exec,exit
	events_bg "$OUT" --json
	prun "lt-web-$MARK" sh -c "cat /dev/null; true $MARK"
	local a=$CID
	prun "lt-db-$MARK" sh -c "cat /dev/null; true $MARK"
	local b=$CID
	pwait "lt-web-$MARK"
	pwait "lt-db-$MARK"
	wait_record "$OUT" ".type == \"exit\" and .container_id == \"$b\" and .comm == \"sh\""
	stop_consumer "$EV_PID"
	# every exec inside (sh, and cat: busybox runs its applets through /proc/self/exe) names
	# its container
	run -0 jq -s -c --arg a "$a" --arg b "$b" '[.[] | select(.type == "exec" and (.container_id == $a or .container_id == $b)
		and (.args[0] == "sh" or .args[0] == "cat")) | [.container_id == $a, .args[0], .container_name, .image]] | sort' "$OUT"
	assert_output "[[false,\"cat\",\"lt-db-$MARK\",\"$IMG\"],[false,\"sh\",\"lt-db-$MARK\",\"$IMG\"],[true,\"cat\",\"lt-web-$MARK\",\"$IMG\"],[true,\"sh\",\"lt-web-$MARK\",\"$IMG\"]]"
	# every record in them (runc's own exec of its init too) has the names
	run -0 jq -s -c --arg a "$a" '[.[] | select(.container_id == $a) | [.container_name, .image]] | unique' "$OUT"
	assert_output "[[\"lt-web-$MARK\",\"$IMG\"]]"
	# and the cgroup is podman's, in the identity hierarchy
	run -0 jq -s -r --arg a "$a" '[.[] | select(.container_id == $a) | .cgroup] | unique | .[]' "$OUT"
	assert_output "/libpod_parent/libpod-$a"
	# the same in text
	events_bg "$OUT.txt" --text --container-name "lt-web-$MARK"
	local web=$EV_PID
	prun "lt-web2-$MARK" sh -c "cat /dev/null; true $MARK"
	local c=$CID
	pwait "lt-web2-$MARK"
	# the stats line counts what was found, and nothing skipped (every file well formed)
	kill -USR1 "$web"
	local i st=
	for ((i = 0; i < 50; i++)); do
		st=$(grep '^lowtrace: stats: ' "$OUT.txt.err" | tail -n1)
		[ -n "$st" ] && break
		sleep 0.1
	done
	[[ $st =~ " names_found="([1-9][0-9]*)" names_skipped=0"( |$) ]]
	# --container-name: that container's records alone
	prun "lt-web-$MARK" sh -c "cat /dev/null; true $MARK"
	local d=$CID
	pwait "lt-web-$MARK"
	wait_line "$OUT.txt" "^exit .* comm=sh .* container_id=$d container_name=lt-web-$MARK image=$IMG\$"
	stop_consumer "$web"
	run -0 grep -c "container_id=$d container_name=lt-web-$MARK image=$IMG\$" "$OUT.txt"
	local n=$output
	run -0 grep -c "" "$OUT.txt"
	assert_equal "$output" "$n"
	[ "$n" -ge 4 ]
}

@test "podman: metrics --by container counts two containers apart, one born and dead between two scrapes; their names as info" {
	need_podman
	local m="$BATS_TEST_TMPDIR/m"
	run -0 "$LT" load --probes exec,exit,fork
	events_bg "$OUT" --json
	PORT=$(free_port)
	serve --by container
	prun "lt-long-$MARK" sh -c 'cat /dev/null; cat /dev/null; sleep 3'
	local long=$CID
	curl_metrics >"$m.0"
	# the short job: made, run and gone between two scrapes (well under a second here)
	NAMES+=("lt-short-$MARK")
	"${PODMAN[@]}" run --rm --name "lt-short-$MARK" --cidfile "$BATS_TEST_TMPDIR/short" "${RUN_OPTS[@]}" \
		"$IMG" sh -c 'cat /dev/null; true' >/dev/null
	local short
	short=$(cat "$BATS_TEST_TMPDIR/short")
	curl_metrics >"$m.1"
	promtool check metrics <"$m.1"
	wait_record "$OUT" ".type == \"exit\" and .container_id == \"$short\" and .comm == \"sh\""
	stop_consumer "$EV_PID"
	# each container's count is its exec records in the stream, none under no container
	local c n
	for c in "$long" "$short"; do
		n=$(jq -s --arg c "$c" '[.[] | select(.type == "exec" and .container_id == $c)] | length' "$OUT")
		[ "$n" -ge 2 ]
		assert_equal "$(sample "$m.1" "lowtrace_workload_events_total{probe=\"exec\",container=\"$c\"}")" "$n"
	done
	# the names: an info series per container, joined on the id (the short one's state was
	# gone, --rm, before the scrape that first saw it: its id alone)
	run -0 grep -F "lowtrace_container_info{container=\"$long\",container_name=\"lt-long-$MARK\",image=\"$IMG\"} 1" "$m.1"
	pwait "lt-long-$MARK"
}

@test "containerd (ctr, runc): a task with the CRI annotations: pod_name, pod_namespace, container_name, image, pod_uid" {
	command -v ctr >/dev/null && command -v containerd >/dev/null || skip "no containerd (make deps installs it)"
	local r="$BATS_FILE_TMPDIR/rootfs" uid=1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b
	CTR_ID=$(printf 'c%.0s' {1..32})$(printf '%016x' $$)$(printf '%016x' "$RANDOM")
	if [ ! -S /run/containerd/containerd.sock ]; then
		containerd >"$BATS_TEST_TMPDIR/containerd.log" 2>&1 3>&- &
		CTRD_PID=$!
		local i
		for ((i = 0; i < 100; i++)); do
			[ -S /run/containerd/containerd.sock ] && break
			sleep 0.05
		done
	fi
	run -0 "$LT" load --probes exec,exit
	events_bg "$OUT" --json
	ctr run --rm --rootfs --env PATH=/bin \
		--annotation io.kubernetes.cri.container-type=container \
		--annotation io.kubernetes.cri.container-name=web \
		--annotation io.kubernetes.cri.sandbox-name="shop-$MARK" \
		--annotation io.kubernetes.cri.sandbox-namespace=prod \
		--annotation io.kubernetes.cri.image-name=registry.example/shop:1.2 \
		--cgroup "/kubepods/burstable/pod$uid/$CTR_ID" "$r" "$CTR_ID" /bin/sh -c 'cat /dev/null; sleep 0.5' 3>&-
	CTR_ID=
	wait_record "$OUT" ".type == \"exit\" and .comm == \"sleep\" and .pod_uid == \"$uid\""
	stop_consumer "$EV_PID"
	# runc's own `runc init` execs while runc moves it into the task's cgroup: on a busy host
	# the move can come first, so that exec is the task's sometimes; the task's own execs always
	run -0 jq -s -c --arg u "$uid" '[.[] | select(.type == "exec" and .pod_uid == $u and .args[0] != "runc")
		| [.args[0], .container_name, .pod_name, .pod_namespace, .image, (.container_id | length)]] | sort' "$OUT"
	assert_output "[[\"/bin/sh\",\"web\",\"shop-$MARK\",\"prod\",\"registry.example/shop:1.2\",64],[\"cat\",\"web\",\"shop-$MARK\",\"prod\",\"registry.example/shop:1.2\",64],[\"sleep\",\"web\",\"shop-$MARK\",\"prod\",\"registry.example/shop:1.2\",64]]"
}
