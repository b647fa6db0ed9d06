#!/usr/bin/env bats
# open: one record per open, openat and openat2 (the classic syscalls:sys_*_open*
# tracepoints where perf links exist, 5.15+; tp_btf sys_enter/sys_exit before, or with
# LOWTRACE_OPEN_HOOK=tp_btf, the loader's switch for tests). open(2) only where the machine
# has it (x86-64; arm64 has openat and openat2 alone): the numbers are the build's (sys_nr).

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
	DIR="$BATS_TEST_TMPDIR/d-$MARK"
	mkdir -p "$DIR"
	OPENER="$BATS_TEST_TMPDIR/opener.py"
	# this machine's numbers of openat2 and open(2) ("-": none)
	NR_OPENAT2=$(sys_nr openat2)
	NR_OPEN=$(sys_nr open) || NR_OPEN=-
	# each call through its own syscall, printing "name ret" (fd or -errno)
	cat >"$OPENER" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
d, nr_openat2, nr_open = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def ret(r):
    return r if r >= 0 else -ctypes.get_errno()
def show(name, r):
    print(name, r, flush=True)
# openat(AT_FDCWD) as glibc does it, with O_CLOEXEC added by Python
show("openat", os.open(d + "/created", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640))
try:
    os.open(d + "/missing", os.O_RDONLY)
except FileNotFoundError:
    show("missing", -2)
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
show("dirfd", dfd)
show("relative", os.open("created", os.O_RDWR | os.O_APPEND, dir_fd=dfd))
# the legacy open(2) syscall, where the machine has one
if nr_open != "-":
    show("open", ret(libc.syscall(int(nr_open), (d + "/created").encode(), os.O_RDONLY | os.O_NOFOLLOW, 0)))
# openat2: flags and mode come from struct open_how
how = ctypes.create_string_buffer(struct.pack("QQQ", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, 0))
show("openat2", ret(libc.syscall(nr_openat2, -100, (d + "/o2").encode(), how, 24)))
PY
}

# run_opener: python3 opener.py DIR, its pid in OPENER_PID and "name ret" lines in OPENED
run_opener() {
	python3 "$OPENER" "$DIR" "$NR_OPENAT2" "$NR_OPEN" >"$BATS_TEST_TMPDIR/opened" 3>&- &
	OPENER_PID=$!
	wait_rc "$OPENER_PID" 20
	assert_equal "$RC" 0
	OPENED=$(cat "$BATS_TEST_TMPDIR/opened")
}

opened() { awk -v n="$1" '$1 == n { print $2 }' <<<"$OPENED"; }

# the hook status shows for open here
open_hook() {
	if perf_links && [ "${LOWTRACE_OPEN_HOOK:-}" != tp_btf ]; then echo tracepoint; else echo tp_btf; fi
}

@test "open is opt-in: load without --probes leaves it out" {
	run -0 "$LT" load
	assert_line --regexp '^open +- *$'
	run -0 "$LT" load --replace --probes open
	assert_line --regexp "^open +$(open_hook) +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\$"
	# where perf links exist, the six classic tracepoints (four without open(2)); before, the
	# two raw ones
	run -0 ls "$PIN/links"
	if perf_links && has_syscall open; then
		assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir open_eat open_eat2 open_eo open_xat open_xat2 open_xo)"
	elif perf_links; then
		assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir open_eat open_eat2 open_xat open_xat2)"
	else
		assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir open_e open_x)"
	fi
}

# table_misaligned HEAD NLEFT: the rows (stdin) of the table whose header matches
# HEAD, up to the first line that is not a probe's row, whose columns are not
# under the header's names: the first NLEFT start where their names start, the
# others end where theirs end (columns past the header's are notes); then "rows N"
table_misaligned() {
	awk -v head="$1" -v nleft="$2" '
	function cols(line, st, en,   n, i, in_word) {
		n = 0
		in_word = 0
		for (i = 1; i <= length(line); i++) {
			if (substr(line, i, 1) != " " && !in_word) {
				st[++n] = i
				in_word = 1
			} else if (substr(line, i, 1) == " " && in_word) {
				en[n] = i - 1
				in_word = 0
			}
		}
		if (in_word)
			en[n] = length(line)
		return n
	}
	!on && $0 ~ head { hn = cols($0, hs, he); on = 1; next }
	on && $1 !~ /^[a-z0-9_]+$/ { on = 0 }
	on {
		rows++
		n = cols($0, rs, re)
		for (i = 1; i <= n && i <= hn; i++)
			if (i <= nleft ? rs[i] != hs[i] : re[i] != he[i]) {
				print "misaligned: " $0
				break
			}
	}
	END { print "rows " rows + 0 }'
}

# HOOK was 8 wide and open's "tracepoint" is 10: every table status prints takes
# its widths from the values
@test "status, status --measure: columns line up, with open on its classic tracepoints where it takes them" {
	# (before 5.15 open stays on tp_btf: the same widths are checked)
	local hook
	hook=$(open_hook)
	run -0 "$LT" load --probes exec,open,syscalls
	run -0 "$LT" status
	local st=$output
	assert_line --regexp "^open +$hook +[0-9]+ "
	assert_line --regexp '^exec +tp_btf +[0-9]+ '
	assert_line --regexp '^fork +-$'
	run -0 table_misaligned '^PROBE +HOOK +PROG_ID +EVENTS +DROPS +MISSED$' 3 <<<"$st"
	assert_output --regexp '^rows [1-9][0-9]*$'
	run -0 table_misaligned '^PROBE +MAP +TYPE +ENTRIES +MAX$' 3 <<<"$st"
	assert_output --regexp '^rows [1-9][0-9]*$'
	run -0 "$LT" status --measure 1
	assert_line --regexp "^open +$hook +[0-9]+ "
	run -0 table_misaligned '^PROBE +HOOK +RUNS +RUNS/S +NS/RUN$' 2 <<<"$output"
	assert_output --regexp '^rows [1-9][0-9]*$'
}

# What open costs other syscalls: with the classic tracepoints its programs do
# not run for them at all; with tp_btf on sys_enter/sys_exit they run for each
@test "other syscalls: 20 000 getppid run no open program (classic tracepoints); twice each on tp_btf" {
	local runs
	run -0 "$LT" load --probes open
	runs=$(runs_over_getppid '^lt_open')
	echo "# open's programs ran $runs times during 20 000 getppid ($(open_hook))" >&3
	if perf_links; then
		# (other processes' opens meanwhile: a few)
		[ $runs -lt 2000 ] || fail "$runs runs"
	else
		[ $runs -ge 40000 ] || fail "$runs runs"
	fi
}

# exact_records: with open loaded, the opener's records are exactly its calls (open(2)'s
# only where the machine has it), each with its comm and tid
exact_records() {
	events_bg "$OUT" --json --type open
	run_opener
	wait_record "$OUT" ".pid == $OPENER_PID and .syscall == \"openat2\""
	stop_consumer "$EV_PID"
	local sel=".pid == $OPENER_PID and (.path | contains(\"$MARK\") or . == \"created\")"
	run -0 records "$OUT" "$sel"
	run -0 jq -s -c "map([.syscall, .dfd, .path, .flags, .mode, .ret])" <<<"$output"
	local d=$DIR n=5
	assert_output "[$(
		printf '%s' "[\"openat\",-100,\"$d/created\",[\"O_WRONLY\",\"O_CREAT\",\"O_EXCL\",\"O_CLOEXEC\"],416,$(opened openat)],"
		printf '%s' "[\"openat\",-100,\"$d/missing\",[\"O_RDONLY\",\"O_CLOEXEC\"],0,-2],"
		printf '%s' "[\"openat\",-100,\"$d\",[\"O_RDONLY\",\"O_DIRECTORY\",\"O_CLOEXEC\"],0,$(opened dirfd)],"
		printf '%s' "[\"openat\",$(opened dirfd),\"created\",[\"O_RDWR\",\"O_APPEND\",\"O_CLOEXEC\"],0,$(opened relative)],"
		[ "$NR_OPEN" = - ] ||
			printf '%s' "[\"open\",-100,\"$d/created\",[\"O_RDONLY\",\"O_NOFOLLOW\"],0,$(opened open)],"
		printf '%s' "[\"openat2\",-100,\"$d/o2\",[\"O_WRONLY\",\"O_CREAT\",\"O_TRUNC\"],384,$(opened openat2)]"
	)]"
	[ "$NR_OPEN" = - ] || n=6
	# every record of the opener carries its comm and tid
	run -0 records "$OUT" "$sel and .comm == \"python3\" and .tid == $OPENER_PID and .path_truncated == false"
	assert_equal "${#lines[@]}" "$n"
}

@test "openat, a missing file, a dirfd-relative path, open(2) where there is one, and openat2: exact records" {
	run -0 "$LT" load --probes open
	exact_records
}

# the other hook on the same kernel: tp_btf on sys_enter/sys_exit, the syscall's number and
# arguments read from its registers (progs/lt_arch.bpf.h)
@test "LOWTRACE_OPEN_HOOK=tp_btf: open on tp_btf sys_enter/sys_exit, the same exact records" {
	export LOWTRACE_OPEN_HOOK=tp_btf
	run -0 "$LT" load --probes open
	assert_line --regexp '^open +tp_btf +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$'
	run -0 ls "$PIN/links"
	assert_output "$(printf '%s\n' cg_mkdir cg_rename cg_rmdir open_e open_x)"
	exact_records
}

@test "open text: flags joined with |, mode in octal, ret" {
	run -0 "$LT" load --probes open
	events_bg "$OUT" --text --type open
	run_opener
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "pid=$OPENER_PID .*syscall=openat2" "$OUT" && break
		sleep 0.1
	done
	stop_consumer "$EV_PID"
	run -0 grep -c "^open ts_ns=[0-9]* cpu=[0-9]* pid=$OPENER_PID tid=$OPENER_PID cgroup_id=$(own_cgroup_id) comm=python3 syscall=openat dfd=-100 path=$DIR/created flags=O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC mode=0640 ret=$(opened openat)$(own_ident text)\$" "$OUT"
	assert_output 1
	run -0 grep -c "^open .* pid=$OPENER_PID .* syscall=openat dfd=-100 path=$DIR/missing flags=O_RDONLY|O_CLOEXEC mode=0 ret=-2$(own_ident text)\$" "$OUT"
	assert_output 1
}

@test "load --pid P --probes open: only P's opens" {
	sleep 30 3>&- &
	local other=$!
	bg_track "$other"
	run_opener # warm-up: the opener's files exist from here on
	rm -rf "$DIR" && mkdir -p "$DIR"
	# the opener waits for a go file, so its pid is known before it opens
	local go="$BATS_TEST_TMPDIR/go" p
	bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec python3 "$2" "$3" "$4" "$5"' bash "$go" "$OPENER" "$DIR" "$NR_OPENAT2" "$NR_OPEN" \
		>/dev/null 3>&- &
	p=$!
	bg_track "$p"
	run -0 "$LT" load --pid "$p" --probes open
	cat "$DIR" 2>/dev/null || true # an open of another process
	touch "$go"
	wait_rc "$p" 20
	assert_equal "$RC" 0
	run -0 status_json
	local st=$output
	run --separate-stderr -0 timeout 10 "$LT" events --json --count "$(jq -r '.probes[] | select(.name == "open") | .events' <<<"$st")"
	printf '%s\n' "${lines[@]}" >"$OUT"
	run -0 count_records "$OUT" ".pid != $p"
	assert_output 0
	run -0 count_records "$OUT" ".path == \"$DIR/created\" and .syscall == \"openat\""
	assert_output 1
}

@test "shedding: past three quarters of a 16 KiB ring, opens are written short (path cut at 63 bytes, path_shed)" {
	new_cgroup
	local long
	long="$DIR/$(printf 'p%.0s' {1..150})"
	: >"$long"
	run -0 "$LT" load --ringbuf-size 16K --probes open --cgroup "$NEW_CG"
	# 60 opens by the shell itself (a redirection is one openat), no consumer
	in_cg "$NEW_CG" bash -c 'for ((i = 0; i < 60; i++)); do : <"$0"; done' "$long"
	local shed
	shed=$(probe_field open shed)
	[ "$shed" -gt 0 ]
	run --separate-stderr -0 timeout 20 "$LT" events --duration 2
	printf '%s\n' "${lines[@]}" >"$OUT"
	# the short ones are the last written, their path the first 63 bytes of the full one
	run -0 jq -s -c --arg p "$long" '[.[] | select(.type == "open" and (.path | startswith($p[0:63])))] |
		[([.[] | select(.path_shed)] | length), (map(.path_shed) | . == sort),
		 all(select(.path_shed) | .path == $p[0:63] and .path_truncated and .ret >= 0),
		 all(select(.path_shed | not) | .path == $p and (.path_truncated | not))]' "$OUT"
	assert_output "[$shed,true,true,true]"
}
