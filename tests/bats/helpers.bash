# Shared by every lowtrace bats file: `load helpers`.
# The tests run as root against the real kernel; each test starts and ends
# with no suite pinned and no lowtrace of its own left running.

bats_require_minimum_version 1.5.0
# bats-support and bats-assert, their files sourced directly: their load.bash
# runs a dirname per file, ~15 processes per test, seconds per test in qemu/TCG
for f in /usr/lib/bats/bats-support/src/{output,error,lang}.bash /usr/lib/bats/bats-assert/src/*.bash; do
	# shellcheck disable=SC1090
	source "$f"
done
unset f

# LOWTRACE_BIN: another build to test (e.g. an older one, to see a new test fail there)
LT="${LOWTRACE_BIN:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/lowtrace}"
PIN=/sys/fs/bpf/lowtrace
# the owners' socket for subscribers (events --socket's default): the run's, not /run/lowtrace
export LOWTRACE_SOCKET="${BATS_RUN_TMPDIR:-/tmp}/lowtrace-run/events.sock"

# Every test sources this file, and in qemu/TCG each process it starts costs tens of
# milliseconds: the kernel's facts are read with builtins, and what takes processes
# is worked out once per bats run (lt_facts, at the end).
read -r LT_KREL </proc/sys/kernel/osrelease

# kernel_at_least MAJ MIN: the running kernel is MAJ.MIN or newer
kernel_at_least() {
	local v=${LT_KREL%%-*} maj min
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%.*}
	((maj > $1 || (maj == $1 && min >= $2)))
}

# light VAR VALUE: VAR=VALUE in a guest that runs light storms (LT_STORMS=light: tests/vm/vmtest
# gives the kernels between the matrix's ends smaller storms; the same paths, fewer objects)
light() {
	[ "${LT_STORMS:-}" != light ] || printf -v "$1" '%s' "$2"
}

# tp_preemptible: the running kernel's tracepoints are preemptible, so a task
# preempted inside a tp_btf program holds it on that CPU. Debian's 7.x kernels
# (PREEMPT_LAZY, tracepoints under SRCU); 6.18 and older disable preemption.
tp_preemptible() { kernel_at_least 7 0; }

# perf_links: a perf event's program can be pinned (a perf-event link, 5.15+):
# the *_tp programs can stay attached, and open takes the classic tracepoints
perf_links() { kernel_at_least 5 15; }

# The build's syscall numbers (lt_syscall_nr.h, made from the target's <asm/unistd.h>): beside
# $LT, else this machine's build in the repo (build/arm64 cross-built; build/ native). Numbers
# differ between architectures (arm64's are asm-generic's, without open, stat, fork, ...).
LT_SYSNR_H=
case $HOSTTYPE in aarch64) LT_HOST_ARCH=arm64 ;; *) LT_HOST_ARCH=x86 ;; esac
for f in "${LT%/*}/lt_syscall_nr.h" "$BATS_TEST_DIRNAME/../../build/$LT_HOST_ARCH/lt_syscall_nr.h" \
	"$BATS_TEST_DIRNAME/../../build/lt_syscall_nr.h"; do
	[ -f "$f" ] && LT_SYSNR_H=$f && break
done
unset f

# sys_nr NAME: the number of syscall NAME on this machine; fails when it has none (has_syscall)
sys_nr() {
	local d name nr
	[ -n "$LT_SYSNR_H" ] || {
		echo "sys_nr: no lt_syscall_nr.h beside $LT or in build/: run make" >&2
		return 2
	}
	while read -r d name nr; do
		[ "$d $name" = "#define LT_NR_$1" ] && echo "$nr" && return 0
	done <"$LT_SYSNR_H"
	return 1
}

# runs_over_getppid REGEX: how many times the loaded programs whose names match REGEX ran while
# a process made 20 000 getppid calls (the kernel's run counts, switched on for it): what a
# syscall probe costs the syscalls it does not watch
runs_over_getppid() {
	local was runs0 runs1 line sel="[.[] | select(.name // \"\" | test(\"$1\")) | .run_cnt // 0] | add"
	was=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	coproc GP { python3 -c '
import os, sys
print("ready", flush=True)
sys.stdin.readline()
for _ in range(20000): os.getppid()
print("done", flush=True)' 3>&-; }
	bg_track "$GP_PID"
	read -r -t 10 -u "${GP[0]}" line
	[ "$line" = ready ] || return 1
	runs0=$(bpftool -j prog show | jq "$sel")
	echo >&"${GP[1]}"
	read -r -t 30 -u "${GP[0]}" line
	runs1=$(bpftool -j prog show | jq "$sel")
	sysctl -qw kernel.bpf_stats_enabled="$was"
	[ "$line" = done ] || return 1
	echo $((runs1 - runs0))
}

# load_on_tp_btf PROBES: load PROBES with LOWTRACE_OPEN_HOOK=tp_btf (open and the syscall-set
# probes on tp_btf sys_enter/sys_exit even where perf links would give them the classic
# tracepoints: one kernel runs both hooks), the variable exported for the test's other loads
load_on_tp_btf() {
	local p
	export LOWTRACE_OPEN_HOOK=tp_btf
	run -0 "$LT" load --probes "$1"
	for p in ${1//,/ }; do
		assert_line --regexp "^$p +tp_btf +[0-9]+ "
	done
}

# has_syscall NAME: this machine has syscall NAME (arm64 has no open, stat, fork, ...)
has_syscall() { sys_nr "$1" >/dev/null; }

# sk_local: the default load keeps sockets in socket storage (5.11+, and no
# lt_tcp_tp: a classic tracepoint's program cannot reach it)
sk_local() {
	kernel_at_least 5 11 && ! tp_preemptible && [ -z "${LOWTRACE_TP_LEVEL:-}" ]
}

# with_tp NAME...: the names (program names: with lt_lost_flush; both: with the cgroup
# tracker's), plus where the loader attaches the *_tp programs
# (preemptible tracepoints, or LOWTRACE_TP_LEVEL) the *_tp of each of exec,
# exit, fork, tcp (lt_exec or exec) among them; sorted, on one line. (Not
# tcp's with --state local: a *_tp program cannot reach socket storage.)
# With exec, its ancestry's lt_exec_fork and lt_exec_free (exec_fork, exec_free).
# With tcp, its sweep: lt_tcp_sweep (links/tcp_sweep) with socket storage,
# lt_tcp_reap (a program pinned beside the links) with the hash.
with_tp() {
	local n out=("$@")
	# every suite with programs also loads lt_lost_flush (run by the consumer, never attached)
	[[ "${1:-}" != lt_* ]] || out+=(lt_lost_flush)
	# and the cgroup tracker (progs/cgroup.bpf.c), attached: links/cg_*
	if [[ "${1:-}" == lt_* ]]; then
		out+=(lt_cg_mkdir lt_cg_rmdir lt_cg_rename)
	elif [ $# -gt 0 ]; then
		out+=(cg_mkdir cg_rmdir cg_rename)
	fi
	if tp_preemptible || [ -n "${LOWTRACE_TP_LEVEL:-}" ]; then
		for n in "$@"; do
			case $n in lt_exec | lt_exit | lt_fork | lt_tcp | exec | exit | fork | tcp) out+=("${n}_tp") ;; esac
		done
	fi
	for n in "$@"; do
		case $n in
		lt_tcp) if sk_local; then out+=(lt_tcp_sweep); else out+=(lt_tcp_reap); fi ;;
		tcp) ! sk_local || out+=(tcp_sweep) ;;
		# exec's ancestry: its entries copied at fork, removed at the leader's free
		lt_exec) out+=(lt_exec_fork lt_exec_free) ;;
		exec) out+=(exec_fork exec_free) ;;
		esac
	done
	printf '%s\n' "${out[@]}" | sort | paste -sd' '
}

# what `load` attaches without --probes: probes in table order, their
# programs, and the link pins (one per program: its name without "lt_")
DEFAULT_PROBES=(exec exit fork signal oom tcp tcp_retrans)
ALL_PROBES=("${DEFAULT_PROBES[@]}" open file cred priv syscalls runq bio) # the opt-in ones after the default ones
# (DEFAULT_PROGS, sorted, and DEFAULT_LINKS: lt_facts)
default_progs() {
	with_tp lt_exec lt_exec_nest lt_exit lt_exit_free lt_exit_nest lt_fork lt_fork_nest lt_oom \
		lt_oom_kill lt_signal lt_signal_nest lt_tcp lt_tcp_nest lt_tcp_retrans
}
default_links() {
	with_tp exec exec_nest exit exit_free exit_nest fork fork_nest oom oom_kill signal \
		signal_nest tcp tcp_nest tcp_retrans
}

# default_status JQ: a JSON array of JQ applied to each default probe name
default_status() {
	printf '%s\n' "${DEFAULT_PROBES[@]}" | jq -R . | jq -s -c "map($1)"
}

LT_BG=()      # pids of background processes started by the test
LT_CGROUPS=() # cgroup directories created by the test
LT_TMPDIRS=() # directories created outside BATS_TEST_TMPDIR

# ---- setup / teardown ----

lt_unload_quiet() {
	local rc=0
	"$LT" unload >/dev/null 2>&1 || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || {
		echo "lowtrace unload failed with exit $rc" >&2
		return 1
	}
}

# Make sure nothing is pinned. If unload itself fails (a bug a test reports),
# remove the pins by hand so one failure does not cascade into every later test.
lt_ensure_unloaded() {
	local ok=0
	lt_unload_quiet || ok=1
	if [ -e "$PIN" ]; then
		echo "$PIN still there after unload: removing it by hand" >&2
		ok=1
	fi
	[ "$ok" = 0 ] || rm -rf "$PIN"
	return "$ok"
}

lt_setup() {
	[ "$EUID" = 0 ] || skip "not root: the tests load BPF programs"
	[ -x "$LT" ] || {
		echo "missing $LT: run make" >&2
		return 1
	}
	LT_BG=()
	LT_CGROUPS=()
	LT_TMPDIRS=()
	# nothing pinned (the last teardown unloaded): no unload to run, a process less per test
	[ ! -e "$PIN" ] || lt_ensure_unloaded || true
	[ ! -e "$PIN" ]
	# a unique word to find this test's records among everything else
	MARK="lt-mark-$BATS_TEST_NUMBER-$$-$RANDOM"
	# bats' DEBUG trap, for untraced to restore
	LT_DEBUG_TRAP=$(trap -p DEBUG)
}

lt_teardown() {
	local p cg d i fail=0
	for p in "${LT_BG[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${LT_BG[@]}"; do
		wait_gone "$p" 5 || kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	for cg in "${LT_CGROUPS[@]}"; do
		# move stragglers out before removing the cgroup
		if [ -f "$cg/cgroup.procs" ]; then
			while read -r p; do
				echo "$p" >"$CG2_ROOT/cgroup.procs" 2>/dev/null || true
			done <"$cg/cgroup.procs"
		fi
		# a task that just exited may keep it busy for a moment
		for ((i = 0; i < 20; i++)); do
			[ -d "$cg" ] || break
			rmdir "$cg" 2>/dev/null && break
			sleep 0.1
		done
		if [ -d "$cg" ]; then
			echo "cannot remove cgroup $cg" >&2
			fail=1
		fi
	done
	for d in "${LT_TMPDIRS[@]}"; do
		rm -rf "$d"
	done
	lt_ensure_unloaded || fail=1
	return "$fail"
}

setup() { lt_setup; }
teardown() { lt_teardown; }

# ---- processes ----

# untraced CMD...: CMD without bats' DEBUG trap. bats runs about 30 commands of its own before
# each of ours, in every function too (set -T), to know where a test failed: a poll of builtins
# spent more in the trap than in itself (the trap ran 92 685 times in records, consumer, lifecycle
# and tcp on this host, 37 % in wait_consumer_ready's loop; at ~0.2 ms a run here, ~10 times that
# under TCG). The polls below run untraced (a failure is still reported at their caller's line).
# CMD runs in a condition, so without errexit: it returns its status itself
untraced() {
	local rc=0
	# (nested: the outer one restores it)
	if [ -n "${LT_UNTRACED:-}" ]; then
		"$@" || rc=$?
		return "$rc"
	fi
	LT_UNTRACED=1
	trap - DEBUG
	"$@" || rc=$?
	LT_UNTRACED=
	[ -z "${LT_DEBUG_TRAP:-}" ] || eval "$LT_DEBUG_TRAP"
	return "$rc"
}

# Is the process gone (exited or zombie)? Builtins only: the waits poll it (a process costs
# tens of milliseconds in a TCG guest); the state is the field after comm's last ')'.
proc_gone() {
	local st
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null || return 0
	st=${st##*) }
	st=${st%% *}
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

# wait_gone PID SECS: poll until the process is gone; 1 on timeout.
wait_gone() { untraced _wait_gone "$@"; }
_wait_gone() {
	local i n=$((${2:-5} * 20))
	for ((i = 0; i < n; i++)); do
		proc_gone "$1" && return 0
		sleep 0.05
	done
	return 1
}

# wait_rc PID SECS: wait for a background child with a timeout; sets RC.
wait_rc() { untraced _wait_rc "$@"; }
_wait_rc() {
	if ! wait_gone "$1" "${2:-10}"; then
		echo "process $1 still running after ${2:-10}s" >&2
		return 1
	fi
	RC=0
	wait "$1" || RC=$?
	bg_forget "$1"
}

# Programs the profile and alloc tests observe (make test builds them).
WLDIR="${LT%/*}/tests/workloads"
need_workloads() {
	local w
	for w in "$@"; do
		[ -x "$WLDIR/$w" ] || {
			echo "missing $WLDIR/$w: run make test" >&2
			return 1
		}
	done
}

# wait_line FILE ERE PID: poll until FILE has a line matching ERE (10 s);
# 1 when PID exits first or on timeout
wait_line() { untraced _wait_line "$@"; }
_wait_line() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		proc_gone "$3" && break
		sleep 0.05
	done
	echo "no line /$2/ in $1" >&2
	return 1
}

# folded_sum ERE FILE: the sum of the values of the folded-stack lines matching
folded_sum() {
	grep -E "$1" "$2" | awk '{ s += $NF } END { printf "%.0f\n", s }'
}

# bg_track PID / bg_forget PID: background children teardown must stop
bg_track() { LT_BG+=("$1"); }

# gated_forker N: a bash that waits on its fifo, then forks N subshells and exits. Until
# released it does nothing at all (read is a builtin): with --pid it is the only source of
# records, so counters are exact. Sets GATE and FORKER; release_forker [GATE PID] runs it.
gated_forker() {
	GATE="$BATS_TEST_TMPDIR/gate.$RANDOM$RANDOM"
	mkfifo "$GATE"
	bash -c 'read -r _ <"$1"; for ((i = 0; i < $2; i++)); do (:); done; exit 0' \
		bash "$GATE" "$1" 3>&- &
	FORKER=$!
	bg_track "$FORKER"
}

release_forker() {
	echo go >"${1:-$GATE}"
	wait_rc "${2:-$FORKER}" 60
	assert_equal "$RC" 0
}
bg_forget() {
	local p keep=()
	for p in "${LT_BG[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	LT_BG=("${keep[@]}")
}

# contend / uncontend: a busy loop per CPU from contend until uncontend (or
# the test's end), so storms run with the CPUs contended (preemption inside a
# tracing program happens under load); sets CONTEND_PIDS
contend() {
	local i
	CONTEND_PIDS=()
	for ((i = 0; i < $(nproc); i++)); do
		bash -c 'while :; do :; done' 3>&- &
		CONTEND_PIDS+=($!)
		bg_track $!
	done
}
uncontend() {
	local p
	for p in "${CONTEND_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		bg_forget "$p"
	done
	CONTEND_PIDS=()
}

# A consumer is ready once libbpf's ring_buffer exists: an epoll fd watching the ring (a "tfd:"
# line in its fdinfo; read with builtins, as proc_gone is).
wait_consumer_ready() { untraced _wait_consumer_ready "$@"; }
_wait_consumer_ready() {
	local i f k v
	for ((i = 0; i < 200; i++)); do
		if proc_gone "$1"; then
			echo "lowtrace $1 exited before it was ready" >&2
			return 1
		fi
		for f in /proc/"$1"/fdinfo/*; do
			# (an fd closed since the glob: not one to wait for)
			while read -r k v; do
				[ "$k" != tfd: ] || return 0
			done 2>/dev/null <"$f" || true
		done
		sleep 0.05
	done
	echo "lowtrace $1 not ready after 10s" >&2
	return 1
}

# events_bg OUT [events options]: start `lowtrace events` in the background,
# stdout to OUT, stderr to OUT.err; sets EV_PID and waits until it reads.
events_bg() {
	local out=$1
	shift
	"$LT" events "$@" >"$out" 2>"$out.err" 3>&- &
	EV_PID=$!
	LT_BG+=("$EV_PID")
	wait_consumer_ready "$EV_PID" || { sed 's/^/# stderr: /' "$out.err" >&2; return 1; }
}

# run_bg OUT [run options]: same for `lowtrace run`; sets RUN_PID.
run_bg() {
	local out=$1
	shift
	"$LT" run "$@" >"$out" 2>"$out.err" 3>&- &
	RUN_PID=$!
	LT_BG+=("$RUN_PID")
	wait_consumer_ready "$RUN_PID" || { sed 's/^/# stderr: /' "$out.err" >&2; return 1; }
}

# stop_consumer PID: SIGINT, then expect a clean exit 0 within 5 s.
stop_consumer() {
	kill -INT "$1"
	wait_rc "$1" 5
	[ "$RC" = 0 ] || {
		echo "lowtrace $1 exited $RC after SIGINT" >&2
		return 1
	}
}

# ---- records ----

# records FILE JQ-CONDITION: the complete JSON lines matching (partial lines skipped).
records() {
	jq -c -R "fromjson? | select($2)" "$1"
}

# wait_record FILE JQ-CONDITION [SECS]: poll until at least one record matches.
wait_record() { untraced _wait_record "$@"; }
_wait_record() {
	local i n=$((${3:-10} * 10))
	for ((i = 0; i < n; i++)); do
		[ -n "$(records "$1" "$2")" ] && return 0
		sleep 0.1
	done
	echo "no record matching '$2' in $1 after ${3:-10}s" >&2
	record_context "$1"
	return 1
}

# wait_count FILE JQ-CONDITION N [SECS]: poll until at least N records match.
wait_count() { untraced _wait_count "$@"; }
_wait_count() {
	local i n=$((${4:-10} * 10))
	for ((i = 0; i < n; i++)); do
		[ "$(count_records "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.1
	done
	echo "fewer than $3 records matching '$2' in $1 after ${4:-10}s" >&2
	record_context "$1"
	return 1
}

# record_context FILE: what a reader of a failed wait needs: the file's last
# records, the consumer's stderr and the suite's counters
record_context() {
	echo "last records of $1:" >&2
	tail -n 12 "$1" | cut -c1-400 | sed 's/^/  /' >&2
	[ ! -s "$1.err" ] || sed 's/^/  stderr: /' "$1.err" >&2
	[ ! -d "$PIN" ] || "$LT" status 2>&1 | sed 's/^/  /' >&2
}

# count_records FILE JQ-CONDITION
count_records() {
	records "$1" "$2" | wc -l
}

# ---- kernel objects ----

lt_prog_names() {
	bpftool prog show -j | jq -r '.[].name // empty' | grep -E '^lt_' | sort || true
}

lt_map_names() {
	bpftool map show -j | jq -r '.[].name // empty' | grep -E '^(lt_|lowtrace\.)' | sort || true
}

# wait_names LISTER EXPECTED [SECS]: the kernel frees objects asynchronously,
# so poll until the lister (lt_prog_names, lt_map_names) prints EXPECTED.
wait_names() { untraced _wait_names "$@"; }
_wait_names() {
	local i n=$((${3:-5} * 10))
	for ((i = 0; i < n; i++)); do
		[ "$("$1" | paste -sd' ')" = "$2" ] && return 0
		sleep 0.1
	done
	echo "$1: '$("$1" | paste -sd' ')', expected '$2'" >&2
	return 1
}

wait_prog_names() { wait_names lt_prog_names "$@"; }
wait_map_names() { wait_names lt_map_names "$@"; }

# After a failed or finished load: nothing pinned, no program of ours left.
assert_nothing_loaded() {
	[ ! -e "$PIN" ] || {
		echo "$PIN exists:" >&2
		ls -lR "$PIN" >&2
		return 1
	}
	ls /sys/fs/bpf | grep -E '^lowtrace' && {
		echo "lowtrace leftovers in /sys/fs/bpf" >&2
		return 1
	}
	wait_prog_names ""
}

# status_json: the JSON status, validated.
status_json() {
	local out
	out=$("$LT" status --json) || return
	jq -e -c . <<<"$out"
}

# probe_field NAME FIELD: from `status --json`
probe_field() {
	local out
	out=$("$LT" status --json) || return
	jq -e -r --arg n "$1" ".probes[] | select(.name == \$n) | .$2" <<<"$out"
}

# ---- cgroups ----

# CG2_ROOT: cgroup2's mount (lt_facts). The identity hierarchy load picks by default
# (--identity-cgroup auto): the first v1 controller mounted of pids, memory, cpu, cpuacct,
# blkio, devices, freezer, cpuset; else cgroup2. ID_CTRL its name, ID_ROOT its mount:
# records' cgroup ids and paths are in it.
identity_hierarchy() {
	local c m
	CG2_ROOT=$(findmnt -n -o TARGET -t cgroup2 2>/dev/null | head -n1)
	ID_CTRL=cgroup2
	ID_ROOT=$CG2_ROOT
	for c in pids memory cpu cpuacct blkio devices freezer cpuset; do
		m=$(findmnt -n -o TARGET -t cgroup -O "$c" 2>/dev/null | head -n1)
		if [ -n "$m" ]; then
			ID_CTRL=$c
			ID_ROOT=$m
			break
		fi
	done
}

# the facts that take processes to find, worked out by the run's first test and
# read from the run's directory by the others (the mounts and the build do not
# change within a run)
lt_facts() {
	local f=${BATS_RUN_TMPDIR:-}/lowtrace-facts
	if [ -n "${BATS_RUN_TMPDIR:-}" ] && [ -f "$f" ]; then
		# shellcheck disable=SC1090
		source "$f"
		return
	fi
	DEFAULT_PROGS=$(default_progs)
	DEFAULT_LINKS=$(default_links)
	identity_hierarchy
	[ -n "${BATS_RUN_TMPDIR:-}" ] || return 0
	# plain assignments: sourced in this function, they still set globals
	printf '%s=%q\n' DEFAULT_PROGS "$DEFAULT_PROGS" DEFAULT_LINKS "$DEFAULT_LINKS" \
		CG2_ROOT "$CG2_ROOT" ID_CTRL "$ID_CTRL" ID_ROOT "$ID_ROOT" >"$f.$$" && mv -f "$f.$$" "$f"
}
lt_facts

# IDENTITY_RE: status's identity line with the default cache cap; CGROUPS_RE: the line of the
# kernel's names after it
if [ "$ID_CTRL" = cgroup2 ]; then
	IDENTITY_RE="^identity: cgroup2 at $ID_ROOT, [0-9]+ v1 hierarchies, [0-9]+ cgroups \(cache cap 16384\)\$"
else
	IDENTITY_RE="^identity: cgroup v1 $ID_CTRL at $ID_ROOT, [0-9]+ v1 hierarchies, cgroup2 at ${CG2_ROOT:-\(none\)}, [0-9]+ cgroups \(cache cap 16384\)\$"
fi
CGROUPS_RE='^cgroups: [0-9]+ named in the kernel \(cap 8192; [0-9]+ seeded, [0-9]+ born, [0-9]+ died, [0-9]+ renamed, [0-9]+ freed 300 s after death, 0 full, 0 freed at once\)$'

# own_cgroup_path: this shell's cgroup in the identity hierarchy ("/" for the root)
own_cgroup_path() {
	local path
	if [ "$ID_CTRL" = cgroup2 ]; then
		path=$(sed -n 's/^0:://p' /proc/self/cgroup)
	else
		path=$(awk -F: -v c="$ID_CTRL" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) { sub(/^[^:]*:[^:]*:/, ""); print; exit } }' /proc/self/cgroup)
	fi
	echo "${path:-/}"
}

# new_cgroup: create a child cgroup of the identity hierarchy, removed by teardown; sets
# NEW_CG (not a $(...): teardown must see the list)
new_cgroup() {
	NEW_CG="$ID_ROOT/lowtrace-test-$$-$BATS_TEST_NUMBER-$RANDOM"
	mkdir "$NEW_CG"
	LT_CGROUPS+=("$NEW_CG")
}

# The cgroup v2 id (kernfs inode) of the calling shell's cgroup.
# the inode number of this shell's namespace of kind $1 (pid, mnt, net), as exec records carry it
ns_inode() {
	local l
	l=$(readlink "/proc/$BASHPID/ns/$1") || return 1
	l=${l#*[}
	echo "${l%]}"
}

# own_ident json|text: the identity keys events appends to the records of this shell's cgroup
# (tasks of the tests run where the shell runs): ,"cgroup":... / " cgroup=...", then the
# container id and unit its path names
own_ident() {
	local path c cid="" unit="" out
	path=$(own_cgroup_path)
	IFS=/ read -ra parts <<<"$path"
	for c in "${parts[@]}"; do
		[[ $c =~ ^((docker|cri-containerd|crio|libpod)-)?([0-9a-f]{64})(\.scope)?$ ]] &&
			cid=${BASH_REMATCH[3]}
		[[ $c =~ \.(service|scope)$ && ${#c} -gt 6 && ${#c} -le 128 ]] && unit=$c
	done
	if [ "$1" = json ]; then
		out=",\"cgroup\":\"$path\""
		[ -z "$cid" ] || out+=",\"container_id\":\"$cid\""
		[ -z "$unit" ] || out+=",\"unit\":\"$unit\""
	else
		out=" cgroup=$path"
		[ -z "$cid" ] || out+=" container_id=$cid"
		[ -z "$unit" ] || out+=" unit=$unit"
	fi
	printf '%s' "$out"
}

# the id of this shell's cgroup in the identity hierarchy, as records carry it
own_cgroup_id() {
	stat -c %i "$ID_ROOT$(own_cgroup_path)"
}

# first line of stderr, and the number of stderr lines, for error checks
assert_one_error_line() {
	local n
	n=$(printf '%s\n' "$stderr" | grep -c '' || true)
	[ -n "$stderr" ] || {
		echo "nothing on stderr" >&2
		return 1
	}
	[ "$n" = 1 ] || {
		echo "stderr has $n lines, expected 1: $stderr" >&2
		return 1
	}
	[[ "$stderr" == "lowtrace: "* ]] || {
		echo "stderr does not start with 'lowtrace: ': $stderr" >&2
		return 1
	}
}

# as_nobody ARGS...: run a copy of lowtrace as uid/gid 65534 (`run` style:
# sets status, output, stderr). The copy sits where nobody can execute it.
as_nobody() {
	if [ -z "${NOBODY_LT:-}" ]; then
		local d
		d=$(mktemp -d /tmp/lowtrace-nobody.XXXXXX)
		LT_TMPDIRS+=("$d")
		cp "$LT" "$d/lowtrace"
		chmod 0755 "$d" "$d/lowtrace"
		NOBODY_LT="$d/lowtrace"
	fi
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$NOBODY_LT" "$@"
}

# conns_py: writes conns.py; `python3 conns.py N` holds N loopback connections open until a
# line on stdin, then closes them, says so, and waits for its stdin's end (run it as coprocess
# CONNS: bash closes a coprocess's fds once it has reaped it, so one that exits right after its
# last line can leave the read of that line with no fd; the teardown stops it)
conns_py() {
	cat >"$BATS_TEST_TMPDIR/conns.py" <<'PY'
import socket, sys
n = int(sys.argv[1])
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(n)
cs = [socket.create_connection(l.getsockname()) for _ in range(n)]
ss = [l.accept()[0] for _ in range(n)]
print("open", flush=True)
sys.stdin.readline()
for s in cs + ss: s.close()
l.close()
print("closed", flush=True)
sys.stdin.read()
PY
}

# http_setup: PORT, a free port for metrics --listen, and HTTP, a client
http_setup() {
	PORT=$(free_port)
	HTTP="$BATS_TEST_TMPDIR/http.py"
	# http.py PORT MODE: "get PATH" prints status and body; "raw" sends stdin's
	# bytes as they are and prints the status line of the answer; "rawend" does
	# the same and then how the connection ended: "eof", or "reset" when the
	# server closed with the request unread (the client may lose the answer)
	cat >"$HTTP" <<'PY'
import socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=10)
if sys.argv[2] == "get":
    s.sendall(("%s %s HTTP/1.1\r\nHost: x\r\n\r\n" % (sys.argv[4] if len(sys.argv) > 4 else "GET", sys.argv[3])).encode())
else:
    try:
        s.sendall(sys.stdin.buffer.read())
    except OSError:
        pass
data = b""
end = "eof"
while True:
    try:
        d = s.recv(65536)
    except OSError as e:
        end = "reset" if isinstance(e, ConnectionResetError) else "error: %s" % e
        break
    if not d:
        break
    data += d
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode() if head else "(no answer)")
if sys.argv[2] == "get":
    sys.stdout.write(body.decode())
if sys.argv[2] == "rawend":
    print(end)
PY
}

# scrape: GET /metrics from `serve`, status line and body
scrape() { python3 "$HTTP" "$PORT" get /metrics; }

# serve [options]: lowtrace metrics on 127.0.0.1:$PORT in the background; sets MPID
serve() {
	"$LT" metrics --listen "127.0.0.1:$PORT" "$@" >"$BATS_TEST_TMPDIR/metrics.out" \
		2>"$BATS_TEST_TMPDIR/metrics.err" 3>&- &
	MPID=$!
	bg_track "$MPID"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q '^serving ' "$BATS_TEST_TMPDIR/metrics.out" && return 0
		proc_gone "$MPID" && break
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/metrics.err" >&2
	return 1
}

# lt_fails CODE ARGS...: run lowtrace, expect CODE, one error line, no stdout
lt_fails() {
	local code=$1
	shift
	run --separate-stderr "$LT" "$@"
	assert_equal "$status" "$code"
	assert_one_error_line
	assert_output ''
}

# free_port: a TCP port below the ephemeral range (32768-) that nothing uses now
free_port() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + RANDOM % 12000))
		ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q . || {
			echo "$p"
			return 0
		}
	done
	return 1
}

# in_cg CG CMD...: run CMD in cgroup CG (a subshell that moves itself first)
in_cg() {
	local cg=$1
	shift
	(
		echo "$BASHPID" >"$cg/cgroup.procs"
		exec "$@"
	)
}

# execs CG N: N short processes (fork, exec, exit) in cgroup CG
execs() {
	in_cg "$1" bash -c 'for ((i = 0; i < '"$2"'; i++)); do /bin/true "$0"; done' "$MARK"
}
