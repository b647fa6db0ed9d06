# shellcheck shell=bash
# bench/lib.sh: what the bench scripts share. Each sources it right after its header comment
# (which is its -h text) and `set -u`:
#
#   # shellcheck source=bench/lib.sh
#   . "$(dirname "$0")/lib.sh"
#
# Sourcing it moves to the top of the tree, sets REPO, LT (build/lowtrace), BIN (build/bench:
# the programs `make bench` builds), PIN_DIR, BPFTOOL and BENCH (bench/NAME, for messages),
# and sets the traps: at exit, on an error and on Ctrl-C, `cleanup` runs the script's on_exit
# functions, stops every tracked process, unloads the suite a lt_load pinned and removes the
# scratch directory. The scripts compile nothing: `make bench` builds what they run.

BENCH=bench/${0##*/}
export LC_ALL=C # numbers as the tables print them, whatever the locale
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
REPO=$PWD
LT=$REPO/build/lowtrace
BIN=$REPO/build/bench
PIN_DIR=/sys/fs/bpf/lowtrace
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)

# ---- errors and arguments ----
die() {
	echo "$BENCH: $*" >&2
	exit 1
}
# a usage error: exit 2, as lowtrace's own
usage_err() {
	echo "$BENCH: $* (see $BENCH -h)" >&2
	exit 2
}
# the -h text: the script's header comment
usage() {
	awk 'NR > 1 { if (!/^#/) exit; sub(/^# ?/, ""); print }' "$0"
	exit 0
}
# options SPEC... -- ARG...: the arguments ARG by SPEC: -F=VAR, a flag that takes a value
# (VAR=value; -F=#VAR: a whole number, -F=+VAR: one above 0), -F=VAR:VALUE, a switch
# (VAR=VALUE), and VAR, the one argument after the options. -h and --help print the -h text;
# any other option, or argument, is a usage error.
options() {
	local -A take=() switch=()
	local pos='' v
	while [ "$1" != -- ]; do
		case $1 in
		-*=*:*) switch[${1%%=*}]=${1#*=} ;;
		-*) take[${1%%=*}]=${1#*=} ;;
		*) pos=$1 ;;
		esac
		shift
	done
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) usage ;;
		--) shift; break ;;
		-?*) ;;
		*) break ;;
		esac
		if [ -n "${switch[$1]:-}" ]; then
			printf -v "${switch[$1]%%:*}" %s "${switch[$1]#*:}"
			shift
			continue
		fi
		v=${take[$1]:-}
		[ -n "$v" ] || usage_err "unknown argument '$1'"
		[ $# -ge 2 ] || usage_err "$1 takes a value"
		case $v in
		'#'*) nums 0 "$1 takes a number" "$2" ;;
		+*) nums 1 "$1 takes a number above 0" "$2" ;;
		esac
		printf -v "${v#[#+]}" %s "$2"
		shift 2
	done
	[ -z "$pos" ] || [ $# = 0 ] || { printf -v "$pos" %s "$1"; shift; }
	[ $# = 0 ] || usage_err "unknown argument '$1'"
}
# nums MIN WHAT VALUE...: every VALUE a whole number of at least MIN, else a usage error
nums() {
	local min=$1 what=$2 v
	shift 2
	for v in "$@"; do
		case $v in '' | *[!0-9]*) usage_err "$what" ;; esac
		[ "$v" -ge "$min" ] || usage_err "$what"
	done
}

# every bench's first argument may be -h
case "${1:-}" in -h | --help) usage ;; esac

# ---- what a bench needs ----
need_root() { [ "$(id -u)" = 0 ] || die "run as root (it loads BPF programs)"; }
# need CMD...: each installed (bpftool where Debian puts it, too)
need() {
	local c
	for c in "$@"; do
		case $c in
		bpftool) [ -x "$BPFTOOL" ] || die "bpftool is needed (make deps)" ;;
		*) command -v "$c" >/dev/null || die "$c is needed" ;;
		esac
	done
}
# a pinned suite may be someone else's: exit 4, as load's "already loaded"
need_unpinned() {
	[ -e "$PIN_DIR" ] || return 0
	echo "$BENCH: a lowtrace suite is already pinned at $PIN_DIR; unload it first if it is yours" >&2
	exit 4
}
need_lowtrace() { [ -x "$LT" ] || die "build/lowtrace is missing: run make bench"; }
# need_built [--make] PATH...: build/PATH exist and are newer than their sources (make -q), else
# stop: "run make bench". --make: make them instead (the benches that always built lowtrace)
need_built() {
	local mk='' t=() p
	[ "${1:-}" = --make ] && { mk=1; shift; }
	for p in "$@"; do t+=("build/$p"); done
	if [ -n "${LT_CROSS_BUILD:-}" ]; then
		# a guest running the host's cross build (tests/vm/init): built there, by its make
		for p in "${t[@]}"; do
			[ -e "$REPO/$p" ] || die "$p: missing from the host's cross build: run make ARCH=arm64 bench there"
		done
	elif [ -n "$mk" ]; then
		make -s -C "$REPO" "${t[@]}" >/dev/null || die "make ${t[*]} failed (someone mid-edit? retry in a minute)"
	elif ! make -s -q -C "$REPO" "${t[@]}" >/dev/null 2>&1; then
		die "${t[*]}: missing or older than the sources: run make bench"
	fi
}
# tracefs where the peers look for their tracepoints: mounted when it is not
need_tracefs() {
	[ -d /sys/kernel/tracing/events ] || [ -d /sys/kernel/debug/tracing/events ] ||
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
}
# the mount of load's identity hierarchy: a v1 controller's (pids first) on a hybrid or v1 host,
# else cgroup2
cgroup_root() {
	local c m
	for c in pids memory cpu cpuacct blkio devices freezer cpuset; do
		m=$(findmnt -n -o TARGET -t cgroup -O "$c" | head -n1)
		[ -z "$m" ] || { echo "$m"; return; }
	done
	findmnt -n -o TARGET -t cgroup2 | head -n1
}

# ---- processes, the suite, the scratch directory; cleanup ----
PIDS=()     # our processes: stopped at exit
LOADED=     # the lowtrace binary whose suite we pinned: unloaded at exit
LOADING=    # a load of ours was running: if it got as far as pinning, the suite is ours
WORK=       # the scratch directory: removed at exit
EXIT_FNS=() # the script's own cleanup, run first

track() { PIDS+=("$@"); }
forget() {
	local keep=() p
	for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}
gone() {
	local p
	for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done
	return 0
}
# wait_for [-p PID] SECS CMD...: CMD every 0.1 s until it succeeds, for up to SECS seconds;
# with -p, give up as soon as PID has ended
wait_for() {
	local pid='' i
	[ "$1" = -p ] && { pid=$2; shift 2; }
	for ((i = $1 * 10; i > 0; i--)); do
		"${@:2}" && return 0
		[ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	"${@:2}"
}
# stop_pid PID [SIGNAL [SECS]]: SIGNAL (INT) to PID, up to SECS (3) for it to end, then SIGKILL
# (said on stderr); reaped and forgotten
stop_pid() {
	local s=${3:-3}
	kill -"${2:-INT}" "$1" 2>/dev/null || true
	if ! wait_for "$s" gone "$1"; then
		echo "$BENCH: pid $1 took over $s s to stop; killed" >&2
		kill -KILL "$1" 2>/dev/null || true
	fi
	wait "$1" 2>/dev/null || true
	forget "$1"
}
# every tracked process and its children (a tool under /usr/bin/time, which ignores SIGINT):
# SIGCONT and SIGINT; 3 s later SIGTERM (a script's background job ignores SIGINT); 1 s later
# SIGKILL; reaped
stop_all() {
	local sig p
	[ ${#PIDS[@]} -gt 0 ] || return 0
	for sig in INT TERM KILL; do
		for p in "${PIDS[@]}"; do
			kill -CONT "$p"
			pkill -"$sig" -P "$p"
			kill -"$sig" "$p"
		done 2>/dev/null
		case $sig in INT) wait_for 3 gone "${PIDS[@]}" ;; TERM) wait_for 1 gone "${PIDS[@]}" ;; esac && break
	done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
}
# on_exit FUNC: FUNC runs first at exit (it may call stop_all when it needs the processes gone)
on_exit() { EXIT_FNS+=("$1"); }
cleanup() {
	local f
	set +e
	trap - EXIT INT TERM
	for f in "${EXIT_FNS[@]}"; do "$f"; done
	stop_all
	if [ -n "$LOADED$LOADING" ] && [ -e "$PIN_DIR" ]; then
		"${LOADED:-$LOADING}" unload >/dev/null 2>&1 || echo "$BENCH: could not unload $PIN_DIR" >&2
	fi
	LOADED='' LOADING=''
	[ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "$BENCH: interrupted, cleaning up" >&2; exit 130' INT TERM

# scratch DIR: WORK, a new directory in DIR, removed at exit
scratch() { WORK=$(mktemp -d "$1/lt-${BENCH#bench/}.XXXXXX") || die "cannot make a scratch directory in $1"; }

# lt_load [-b BINARY] ARGS...: BINARY (build/lowtrace) load ARGS; the suite is unloaded at exit
# unless lt_unload did it. The caller redirects the output.
lt_load() {
	local bin=$LT
	[ "${1:-}" = -b ] && { bin=$2; shift 2; }
	LOADING=$bin
	"$bin" load "$@" || { LOADING=; return 1; }
	LOADED=$bin LOADING=
}
lt_unload() {
	[ -z "$LOADED" ] || "$LOADED" unload >/dev/null || return
	LOADED=
}
# the benches that own the machine's suite (not to run beside the tests): whatever is pinned
# goes, now and at exit
unload_any() {
	"$LT" unload >/dev/null 2>&1 || true
	LOADED=$LT
}

# stats_load LOAD-ARGS...: the start of a bench of the kernel's run-time statistics that owns
# the machine's suite: whatever is pinned goes, build/lowtrace loads LOAD-ARGS, the statistics
# are on (bench/bpfstats), WORK is in /dev/shm
stats_load() {
	need_lowtrace
	need_built bench/bpfstats
	scratch /dev/shm
	unload_any
	lt_load "$@" >/dev/null
	bpf_stats_on
}

# ---- measures ----
# bpf_stats_on: the kernel's BPF run-time statistics on until exit (build/bench/bpfstats; each
# program run then also pays two clock reads). Needs WORK.
bpf_stats_on() {
	"$BIN/bpfstats" >"$WORK/bpfstats.out" 2>&1 &
	track $!
	wait_for 5 grep -qsx on "$WORK/bpfstats.out" ||
		die "cannot turn on BPF run-time statistics: $(cat "$WORK/bpfstats.out")"
}
# prog_ids [REGEX]: ids of the loaded programs whose `bpftool prog show` line matches, sorted
# as comm wants them
prog_ids() { "$BPFTOOL" prog show 2>/dev/null | awk -F: -v re="${1:-}" '/^[0-9]+: / && $0 ~ re {print $1}' | sort; }
# new_ids BEFORE [REGEX]: the ids of prog_ids that are not in BEFORE (an earlier prog_ids)
new_ids() { comm -13 <(echo "$1") <(prog_ids "${2:-}"); }
# prog_stats ID...: "run_time_ns run_cnt", summed over the programs
prog_stats() {
	"$BPFTOOL" prog show 2>/dev/null | awk -v ids=" $* " '
		/^[0-9]+: / {
			id = $1; sub(":", "", id)
			if (index(ids, " " id " ")) {
				for (i = 1; i < NF; i++) {
					if ($i == "run_time_ns") t += $(i + 1)
					if ($i == "run_cnt") c += $(i + 1)
				}
			}
		}
		END {printf "%.0f %.0f\n", t, c}'
}
# prog_runs REGEX: "name run_cnt run_time_ns" of each program whose name matches, sorted
prog_runs() {
	"$BPFTOOL" prog show -j | jq -r --arg re "$1" '.[] | select(.name // "" | test($re)) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' | sort
}
# prog_table REGEX: prog_runs as a table, ns per run
prog_table() {
	table '%-16s %8s %8s' PROG RUNS NS/RUN
	prog_runs "$1" | awk '{ printf "%-16s %8d %8.0f\n", $1, $2, ($2 ? $3 / $2 : 0) }'
}
cpu_ms() { # CPU time of a live process's threads, ms (schedstat: ns)
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s+=$1} END {printf "%.1f", s/1e6}'
}
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -1; }
kv() { sed -n "s/.*\\b$1=\\([0-9.]*\\).*/\\1/p" "$2" | head -1; } # KEY FILE: the first KEY=value
# perf_attached PID N: `bpftool perf list` shows N attachments (or more) owned by PID (a
# tracepoint, kprobe or uprobe tool); wait_for -p PID SECS perf_attached PID N waits for it
perf_attached() { [ "$("$BPFTOOL" perf list 2>/dev/null | grep -c "^pid $1 ")" -ge "$2" ]; }
has_map_fd() {
	local f
	for f in /proc/"$1"/fd/*; do [ "$(readlink "$f" 2>/dev/null)" = anon_inode:bpf-map ] && return 0; done
	return 1
}
# wait_map_fd PID: up to 5 s for PID to hold a BPF map (a consumer has opened the ring)
wait_map_fd() { wait_for -p "$1" 5 has_map_fd "$1"; }
# rounds N FUNC ITEM...: N rounds of in_turn, each said done on stderr
rounds() {
	local r n=$1
	shift
	for ((r = 1; r <= n; r++)); do
		in_turn "$r" "$@"
		printf '# round %d/%d done, %d s\n' "$r" "$n" "$SECONDS" >&2
	done
}
# in_turn ROUND FUNC ITEM...: FUNC ITEM for each item, from the ROUNDth (1-based) on and round
# again, so that from round to round no item always comes first
in_turn() {
	local r=$1 f=$2 i
	shift 2
	for ((i = 0; i < $#; i++)); do "$f" "${@:(i + r - 1) % $# + 1:1}"; done
}

# ---- results ----
# median [FMT]: of the numbers on stdin, one a line ("-" when none); the middle one as it was
# read, or the mean of the two (%.10g), or either in FMT
# shellcheck disable=SC2120 # FMT is optional
median() {
	sort -g | awk -v f="${1:-}" '{a[NR]=$1} END {if (!NR) {print "-"; exit}
		m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2
		if (f != "") printf f "\n", m; else if (NR % 2) print m; else printf "%.10g\n", m}'
}
# minmax: "MIN-MAX" of the numbers on stdin ("-" when none), no newline
minmax() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {if (NR) printf "%s-%s", lo, hi; else printf "-"}'; }
# table FMT HEADING...: a table's row format (printf, no newline) and its header line;
# row VALUE...: one row in the last table's format
table() {
	TABLE_FMT=$1
	shift
	row "$@"
}
# shellcheck disable=SC2059 # the format is the table's
row() { printf "$TABLE_FMT\n" "$@"; }
# report_head TITLE: a report's first lines: what, when, on which machine
report_head() {
	echo "$1  $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/^Mem:/ {print $2}') GiB, kernel $(uname -r)"
}
lt_rev() { git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown; }
pkg_ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "${2:-?}"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
