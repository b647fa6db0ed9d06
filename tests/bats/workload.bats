#!/usr/bin/env bats
# metrics --by: lifecycle counters per workload (lt_cg_counts), and the suite's own cost
# (probe run time while kernel.bpf_stats_enabled=1). Run on the host, the matrix's ends and the
# cgroup-v1 guest (tests/vm/guest-skips: the cgroup programs it reads are tested in every guest).

load helpers

teardown() {
	[ -z "${BPF_STATS_OLD:-}" ] || echo "$BPF_STATS_OLD" >/proc/sys/kernel/bpf_stats_enabled
	lt_teardown
}

# metrics_bg ARGS...: lowtrace metrics on a free port in the background; sets PORT, MPID
metrics_bg() {
	PORT=$(free_port)
	serve "$@"
}

# scrape_to FILE: GET /metrics into FILE, which promtool must accept
scrape_to() {
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())' \
		"$PORT" >"$1"
	promtool check metrics <"$1"
}

# sample FILE SERIES: the value of one series (exact name and labels)
sample() {
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}

@test "metrics --by unit: lifecycle counters per unit, at most --by-max series, the rest under other" {
	local p m="$BATS_TEST_TMPDIR/m1" u n total=0 own=0
	new_cgroup
	p=$NEW_CG
	for u in a b c; do
		mkdir "$p/lt-$u.service"
		LT_CGROUPS=("$p/lt-$u.service" "${LT_CGROUPS[@]}") # removed before the parent
	done
	# only this subtree: the host's other processes stay out of the counts
	"$LT" load --probes exec,exit,fork --cgroup "$p" >/dev/null
	metrics_bg --by unit --by-max 2
	execs "$p/lt-a.service" 3
	execs "$p/lt-b.service" 5
	execs "$p/lt-c.service" 7
	sleep 0.3
	scrape_to "$m"
	# two units with series of their own, each with its exact count; one folded
	for u in a b c; do
		n=$(sample "$m" "lowtrace_workload_events_total{probe=\"exec\",unit=\"lt-$u.service\"}")
		[ -z "$n" ] || own=$((own + 1))
		# and the bash that runs them: one exec more
		case $u in a) [ -z "$n" ] || [ "$n" = 4 ] ;; b) [ -z "$n" ] || [ "$n" = 6 ] ;;
		c) [ -z "$n" ] || [ "$n" = 8 ] ;; esac
	done
	assert_equal "$own" 2
	assert_equal "$(sample "$m" 'lowtrace_workload_folded{by="unit"}')" 1
	[ -n "$(sample "$m" 'lowtrace_workload_events_total{probe="exec",unit="other"}')" ]
	# nothing lost or counted twice: the sum is the probe's own counter
	total=$(grep -E '^lowtrace_workload_events_total\{probe="exec",' "$m" | awk '{ s += $2 } END { print s }')
	assert_equal "$total" 18
	assert_equal "$(sample "$m" 'lowtrace_events_total{probe="exec"}')" 18
	assert_equal "$(grep -c '^lowtrace_workload_events_total{probe="exec",' "$m")" 3
	assert_equal "$(sample "$m" 'lowtrace_workload_untracked_total{probe="exec"}')" 0

	# a folded unit stays folded (no series comes and goes): more of each, same series
	execs "$p/lt-a.service" 1
	execs "$p/lt-b.service" 1
	execs "$p/lt-c.service" 1
	sleep 0.3
	scrape_to "$m.2"
	assert_equal "$(grep '^lowtrace_workload_events_total' "$m" | cut -d' ' -f1)" \
		"$(grep '^lowtrace_workload_events_total' "$m.2" | cut -d' ' -f1)"
	total=$(grep -E '^lowtrace_workload_events_total\{probe="exec",' "$m.2" | awk '{ s += $2 } END { print s }')
	assert_equal "$total" 24
}

# cg_entries: lt_cg_counts' entries, as status counts them
cg_entries() {
	"$LT" status --json | jq -r '.probes[] | select(.name == "exec") | .maps[] | select(.name == "lt_cg_counts") | .entries'
}

# churn_cg DIR N: N cgroups made in DIR, each one exec'd in (a child that moves itself in and
# execs /bin/true), then removed; the names come again every 100 (a new cgroup of a dead one's
# name is another cgroup, another id). One python for all: a fork and an exec per cgroup
churn_cg() {
	python3 -c 'import os, sys
for i in range(int(sys.argv[2])):
    d = "%s/lt-churn%d.scope" % (sys.argv[1], i % 100)
    os.mkdir(d)
    pid = os.fork()
    if pid == 0:
        try:
            with open(d + "/cgroup.procs", "w") as f:
                f.write(str(os.getpid()))
            os.execv("/bin/true", ["true"])
        finally:
            os._exit(127)
    _, st = os.waitpid(pid, 0)
    if st:
        sys.exit("churn: the child in %s failed: %#x" % (d, st))
    os.rmdir(d)' "$1" "$2" 3>&-
}

@test "metrics --by: a removed cgroup's counts stay with its unit; its kernel entry goes a grace after its death" {
	local p m="$BATS_TEST_TMPDIR/m" cg
	new_cgroup
	p=$NEW_CG
	mkdir "$p/lt-gone.service"
	"$LT" load --probes exec,exit,fork --cgroup "$p" --cgroup-grace 1 >/dev/null
	metrics_bg --by unit
	execs "$p/lt-gone.service" 3
	sleep 0.3
	scrape_to "$m.1"
	assert_equal "$(sample "$m.1" 'lowtrace_workload_events_total{probe="exec",unit="lt-gone.service"}')" 4
	rmdir "$p/lt-gone.service"
	mkdir "$p/lt-next.service"
	LT_CGROUPS=("$p/lt-next.service" "${LT_CGROUPS[@]}")
	execs "$p/lt-next.service" 2
	sleep 0.3
	scrape_to "$m.2"
	# within the grace: both entries are there
	assert_equal "$(cg_entries)" 2
	# past it, a later death frees lt-gone's name and counts
	sleep 1.1
	churn_cg "$p" 1
	scrape_to "$m.3"
	# a counter: never down, though its cgroup's entry is gone
	assert_equal "$(sample "$m.3" 'lowtrace_workload_events_total{probe="exec",unit="lt-gone.service"}')" 4
	assert_equal "$(sample "$m.3" 'lowtrace_workload_events_total{probe="exec",unit="lt-next.service"}')" 3
	assert_equal "$(sample "$m.3" 'lowtrace_workload_events_total{probe="exit",unit="lt-gone.service"}')" 4
	# lt_cg_counts keeps lt-next (live) and the churned one (within its grace)
	assert_equal "$(cg_entries)" 2
	[ "$(sample "$m.3" 'lowtrace_cgroups_total{event="freed"}')" -ge 1 ]
}

@test "metrics --by container: a container born and dead between two scrapes is counted under its id" {
	local p m="$BATS_TEST_TMPDIR/m" i total a b
	a=$(printf 'a1%.0s' {1..32})
	b=$(printf 'b2%.0s' {1..32})
	new_cgroup
	p=$NEW_CG
	"$LT" load --probes exec,exit,fork --cgroup "$p" >/dev/null
	metrics_bg --by container
	mkdir "$p/docker-$a.scope"
	LT_CGROUPS=("$p/docker-$a.scope" "${LT_CGROUPS[@]}")
	scrape_to "$m.0"
	# b: made, run and removed between two scrapes (a runtime's short job)
	mkdir "$p/docker-$b.scope"
	execs "$p/docker-$b.scope" 2
	rmdir "$p/docker-$b.scope"
	execs "$p/docker-$a.scope" 4
	sleep 0.3
	scrape_to "$m.1"
	assert_equal "$(sample "$m.1" "lowtrace_workload_events_total{probe=\"exec\",container=\"$b\"}")" 3
	assert_equal "$(sample "$m.1" "lowtrace_workload_events_total{probe=\"exec\",container=\"$a\"}")" 5
	assert_equal "$(sample "$m.1" "lowtrace_workload_events_total{probe=\"exit\",container=\"$b\"}")" 3
	# nothing under no container
	[ -z "$(sample "$m.1" 'lowtrace_workload_events_total{probe="exec",container=""}')" ]
}

@test "metrics --by: 2500 cgroups come and go, scraped only at the end; lt_cg_counts and the kernel's names hold the live ones, nothing untracked" {
	local p m="$BATS_TEST_TMPDIR/m" n=2500 total g=4 cap=1024
	# a dead cgroup's counts wait a grace in a queue of --cgroup-cap: the cap must exceed
	# the deaths of a grace, else the newest go at once (freed_at_once). The guests
	# emulate their CPUs: fewer cgroups, still more than the cap, and a shorter grace (up
	# to ~50 deaths a second there, ~100 on this host)
	[ -z "${VM_RESULTS:-}" ] || { n=400; cap=256; g=2; }
	new_cgroup
	p=$NEW_CG
	"$LT" load --probes exec,exit,fork --cgroup "$p" --cgroup-grace "$g" --cgroup-cap "$cap" >/dev/null
	metrics_bg --by unit
	# no scrape during the churn, which lasts many graces: metrics reads the counts itself
	churn_cg "$p" "$n"
	# past the grace, the next deaths free what is left of the churn
	sleep "$g.1"
	churn_cg "$p" 20
	sleep "$g.1"
	churn_cg "$p" 1
	scrape_to "$m"
	# every exec counted under a unit, none untracked: lt_cg_counts never filled, no
	# death's counts freed before metrics read them
	assert_equal "$(sample "$m" 'lowtrace_workload_untracked_total{probe="exec"}')" 0
	assert_equal "$(sample "$m" 'lowtrace_cgroups_total{event="freed_at_once"}')" 0
	total=$(grep -E '^lowtrace_workload_events_total\{probe="exec",' "$m" | awk '{ s += $2 } END { print s }')
	# (no consumer: the ring fills, and what it had no room for is dropped, counted)
	assert_equal "$total" $(($(sample "$m" 'lowtrace_events_total{probe="exec"}') + $(sample "$m" 'lowtrace_drops_total{probe="exec"}')))
	[ "$total" -ge $((n + 21)) ]
	# the names never filled; what is left is the last death's and the live ones
	assert_equal "$(sample "$m" 'lowtrace_cgroups_total{event="full"}')" 0
	[ "$(sample "$m" 'lowtrace_cgroups_total{event="freed"}')" -ge $((n + 20)) ]
	[ "$(sample "$m" 'lowtrace_cgroup_names')" -le $((cap / 4)) ]
	assert_equal "$(sample "$m" 'lowtrace_cgroup_names_capacity')" "$cap"
	[ "$(cg_entries)" -le 2 ]
}

@test "metrics --by: bad values are usage errors" {
	run --separate-stderr "$LT" metrics --by node
	assert_failure 2
	assert_equal "$stderr" "lowtrace: --by: 'node' is not unit, container or pod"
	run --separate-stderr "$LT" metrics --by unit --by-max 0
	assert_failure 2
	assert_equal "$stderr" "lowtrace: --by-max: must be at least 1"
}

@test "metrics: probe run seconds and runs while kernel.bpf_stats_enabled=1, absent otherwise" {
	local m="$BATS_TEST_TMPDIR/m" old s1 s2 r1 r2
	[ -w /proc/sys/kernel/bpf_stats_enabled ] || skip "no kernel.bpf_stats_enabled (kernel before 5.8)"
	old=$(cat /proc/sys/kernel/bpf_stats_enabled)
	BPF_STATS_OLD=$old # teardown restores it if this test fails
	"$LT" load --probes exec,exit,fork >/dev/null
	metrics_bg
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
	scrape_to "$m"
	! grep -q '^lowtrace_probe_run' "$m"
	# the map memory gauge is there either way
	[ "$(sample "$m" 'lowtrace_map_memory_bytes{probe="exec",map="lt_cg_counts"}')" -gt 0 ]
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	/bin/true
	scrape_to "$m.1"
	for i in 1 2 3 4 5; do /bin/true; done
	scrape_to "$m.2"
	echo "$old" >/proc/sys/kernel/bpf_stats_enabled
	s1=$(sample "$m.1" 'lowtrace_probe_run_seconds_total{probe="exec"}')
	s2=$(sample "$m.2" 'lowtrace_probe_run_seconds_total{probe="exec"}')
	r1=$(sample "$m.1" 'lowtrace_probe_runs_total{probe="exec"}')
	r2=$(sample "$m.2" 'lowtrace_probe_runs_total{probe="exec"}')
	[ "$r2" -ge $((r1 + 5)) ]
	python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); assert 0 < a < b, (a, b)' "$s1" "$s2"
}

@test "metrics --by container and --by pod: the ids of runtime-shaped cgroups" {
	local p m="$BATS_TEST_TMPDIR/m" cid=$(printf 'ab%.0s' {1..32}) uid=0d5b6c3e-1f2a-4b5c-8d9e-0a1b2c3d4e5f
	local pod cg
	new_cgroup
	p=$NEW_CG
	pod="$p/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice"
	cg="$pod/cri-containerd-$cid.scope"
	mkdir -p "$cg"
	LT_CGROUPS=("$cg" "$pod" "$p/kubepods.slice/kubepods-burstable.slice" "$p/kubepods.slice" \
		"${LT_CGROUPS[@]}")
	"$LT" load --probes exec,exit,fork --cgroup "$p" >/dev/null
	metrics_bg --by container
	execs "$cg" 4
	sleep 0.3
	scrape_to "$m"
	assert_equal "$(sample "$m" "lowtrace_workload_events_total{probe=\"exec\",container=\"$cid\"}")" 5
	assert_equal "$(sample "$m" 'lowtrace_workload_folded{by="container"}')" 0
	kill "$MPID"
	wait_rc "$MPID" 5
	metrics_bg --by pod
	scrape_to "$m.pod"
	assert_equal "$(sample "$m.pod" "lowtrace_workload_events_total{probe=\"exec\",pod=\"$uid\"}")" 5
	! grep -q 'pod="other"' "$m.pod"
}
