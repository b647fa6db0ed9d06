#!/usr/bin/env bats
# Consumers: one `events` at a time, --count, --duration, `run` and its
# cleanup, drops (counted and reported), and unload under a running `events`.

load helpers

setup() {
	lt_setup
	OUT="$BATS_TEST_TMPDIR/events"
	SMALL=
}

teardown() {
	# a small tmpfs of the test (small_disk): unmounted before its directory goes
	[ -z "$SMALL" ] || ! mountpoint -q "$SMALL" || umount "$SMALL" || umount -l "$SMALL"
	lt_teardown
}

# small_disk KIB FREE_KIB: a tmpfs of KIB KiB in a new directory SMALL, filled
# (SMALL/filler) until FREE_KIB KiB are left
small_disk() {
	SMALL=$(mktemp -d)
	LT_TMPDIRS+=("$SMALL")
	mount -t tmpfs -o "size=${1}k,mode=0700" lowtrace-test "$SMALL"
	head -c $((($1 - $2) * 1024)) /dev/zero >"$SMALL/filler"
}

@test "a second events while one that serves no subscribers runs: exit 1 with one clear line; after the first, a new one works" {
	run -0 "$LT" load
	# (one that serves subscribers takes the second one on: subscribers.bats)
	local sock="$BATS_TEST_TMPDIR/none.sock"
	events_bg "$OUT" --max-subscribers 0 --socket "$sock"
	run --separate-stderr "$LT" events --count 1 --socket "$sock"
	assert_equal "$status" 1
	assert_one_error_line
	assert_output ''
	assert_equal "$stderr" "lowtrace: another 'lowtrace events' is reading the ring; only one consumer at a time (it serves no subscribers at $sock)"
	# the first one is unaffected
	if proc_gone "$EV_PID"; then
		fail "the first events exited when the second was refused"
	fi
	local sp
	/bin/sh -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	wait_record "$OUT" ".type == \"exec\" and .pid == $sp"
	stop_consumer "$EV_PID"
	run -0 cat "$OUT.err"
	assert_output ''

	# now a new consumer gets the ring
	/bin/true
	run --separate-stderr -0 timeout 10 "$LT" events --count 1
	assert_equal "${#lines[@]}" 1
	run -0 jq -e -c . <<<"$output"
	# status does not count as a consumer
	events_bg "$OUT.2"
	run -0 "$LT" status
}

@test "events --count N stops after exactly N records" {
	run -0 "$LT" load
	local i
	for i in $(seq 10); do /bin/true; done
	run --separate-stderr -0 timeout 10 "$LT" events --count 5
	assert_equal "${#lines[@]}" 5
	assert_equal "$stderr" ""
	printf '%s\n' "${lines[@]}" >"$OUT.a"
	run -0 jq -e -c . "$OUT.a"
	# with a type filter, N records of that type
	run --separate-stderr -0 timeout 10 "$LT" events --count 3 --type exit --text
	assert_equal "${#lines[@]}" 3
	run -1 grep -v '^exit ' <<<"$output"
	# the next consumer continues where the last stopped: nothing seen twice
	run --separate-stderr -0 timeout 10 "$LT" events --count 5
	assert_equal "${#lines[@]}" 5
	printf '%s\n' "${lines[@]}" >"$OUT.b"
	run -1 grep -Fxf "$OUT.a" "$OUT.b"
}

@test "events --duration 1 stops by itself within a few seconds, exit 0" {
	run -0 "$LT" load
	run --separate-stderr timeout 10 "$LT" events --duration 1 --type fork
	assert_equal "$status" 0
	assert_equal "$stderr" ""
	run --separate-stderr timeout 10 "$LT" events --duration 1 --text
	assert_equal "$status" 0
}

@test "run --duration: its own unpinned copy streams an exec, then everything is gone" {
	wait_prog_names ""
	# long enough for the checks below in a TCG guest beside others (8 s was not, at times:
	# the stream over before the exec, or before it was read)
	run_bg "$OUT" --duration 20
	# the exec first, while the copy surely runs; then the checks
	local sp rc=0
	/bin/sh -c 'exit 3' "$MARK" 3>&- &
	sp=$!
	wait "$sp" || rc=$?
	assert_equal "$rc" 3
	# loaded in the kernel, pinned nowhere
	wait_prog_names "$DEFAULT_PROGS"
	[ ! -e "$PIN" ]
	run -3 "$LT" status
	wait_record "$OUT" ".type == \"exit\" and .pid == $sp"
	wait_rc "$RUN_PID" 40
	assert_equal "$RC" 0
	run -0 cat "$OUT.err"
	assert_output ''
	run -0 records "$OUT" ".type == \"exec\" and .pid == $sp"
	run -0 jq -c '.args' <<<"$output"
	assert_output "[\"/bin/sh\",\"-c\",\"exit 3\",\"$MARK\"]"
	run -0 jq -e -c . "$OUT"
	assert_nothing_loaded
	wait_map_names ""
}

@test "run without --duration stops on SIGTERM and on SIGINT, exit 0, nothing left" {
	local sig sp
	for sig in TERM INT; do
		run_bg "$OUT.$sig" --text
		wait_prog_names "$DEFAULT_PROGS"
		/bin/sh -c 'exit 0' "$MARK-$sig" 3>&- &
		sp=$!
		wait "$sp"
		local i
		for ((i = 0; i < 100; i++)); do
			grep -q "^exit .* pid=$sp " "$OUT.$sig" && break
			sleep 0.1
		done
		run -0 grep -c "^exec .* pid=$sp .* args=/bin/sh -c exit\\\\x200 $MARK-$sig euid=0 egid=0 exec_id=[0-9]* .*$(own_ident text)\$" "$OUT.$sig"
		assert_output 1
		kill "-$sig" "$RUN_PID"
		wait_rc "$RUN_PID" 10
		assert_equal "$RC" 0
		assert_nothing_loaded
		wait_map_names ""
	done
}

@test "run killed by SIGKILL: the kernel frees everything, nothing was pinned" {
	run_bg "$OUT" --probes exec,fork
	wait_prog_names "$(with_tp lt_exec lt_exec_nest lt_fork lt_fork_nest)"
	kill -KILL "$RUN_PID"
	wait_rc "$RUN_PID" 5
	assert_equal "$RC" $((128 + 9))
	assert_nothing_loaded
	wait_map_names ""
}

@test "run --pid P --count 1 exits after P's exec and cleans up" {
	local gate="$BATS_TEST_TMPDIR/gate" p
	mkfifo "$gate"
	/bin/sh -c 'read _ <"$1"; exec /bin/sh -c "exit 0" "$2"' sh "$gate" "$MARK" 3>&- &
	p=$!
	bg_track "$p"
	run_bg "$OUT" --pid "$p" --count 1 --type exec --probes exec
	wait_prog_names "$(with_tp lt_exec lt_exec_nest)"
	echo go >"$gate"
	wait_rc "$p" 10
	wait_rc "$RUN_PID" 10
	assert_equal "$RC" 0
	run -0 jq -c '[.type, .pid, .args]' "$OUT"
	assert_output "[\"exec\",$p,[\"/bin/sh\",\"-c\",\"exit 0\",\"$MARK\"]]"
	assert_nothing_loaded
}

@test "run is independent of a pinned suite; the pinned suite is intact afterwards" {
	run -0 "$LT" load --probes exec
	local ids
	wait_prog_names "$(with_tp lt_exec lt_exec_nest)"
	ids=$(bpftool prog show -j | jq -r '[.[] | select(.name == "lt_exec") | .id] | join(" ")')
	run_bg "$OUT.run" --probes exec,exit
	events_bg "$OUT.ev" --type exec
	local sp
	/bin/sh -c 'exit 0' "$MARK" 3>&- &
	sp=$!
	wait "$sp"
	# both copies see the same exec
	wait_record "$OUT.run" ".type == \"exec\" and .pid == $sp"
	wait_record "$OUT.ev" ".type == \"exec\" and .pid == $sp"
	stop_consumer "$RUN_PID"
	stop_consumer "$EV_PID"
	# run had no fork probe: no fork record in its stream
	run -0 count_records "$OUT.run" ".type == \"fork\""
	assert_output 0
	# the pinned program is still the same, run's copies are gone
	wait_prog_names "$(with_tp lt_exec lt_exec_nest)"
	run -0 bpftool prog show -j
	run -0 jq -r '[.[] | select(.name == "lt_exec") | .id] | join(" ")' <<<"$output"
	assert_output "$ids"
	run -0 ls "$PIN/links"
	assert_output "$(with_tp exec exec_nest | tr ' ' '\n')"
}

@test "drops without a consumer: counted per probe, events + drops = records produced" {
	gated_forker 300
	# (signal would add the SIGCHLD of each child)
	run -0 "$LT" load --ringbuf-size 4096 --pid "$FORKER" --probes exec,exit,fork
	release_forker
	run -0 status_json
	local st=$output
	# the forker forked 300 times and exited once; nothing else passes --pid
	run -0 jq -c '[.probes[] | select(.loaded) | [.name, .events + .drops, .missed]]' <<<"$st"
	assert_output '[["exec",0,0],["exit",1,0],["fork",300,0]]'
	run -0 jq -e '.probes[] | select(.name == "fork") | .drops > 0 and .events > 0' <<<"$st"
	# the text status shows the same drops
	local fdrops
	fdrops=$(jq -r '.probes[] | select(.name == "fork") | .drops' <<<"$st")
	run -0 "$LT" status
	assert_line --regexp "^fork +tp_btf +[0-9]+ +[0-9]+ +$fdrops +0\$"

	# the ring holds exactly the records that were counted as written, and the
	# lost records
	local written
	written=$(jq -r '[.probes[].events] | add' <<<"$st")
	run --separate-stderr -0 timeout 10 "$LT" events --duration 2
	printf '%s\n' "${lines[@]}" >"$OUT"
	assert_equal "$(count_records "$OUT" '.type != "lost"')" "$written"
	# (lost records the consumer announced have pid 0: they are the probe's)
	run -0 count_records "$OUT" ".type != \"lost\" and .pid != $FORKER"
	assert_output 0
	# every window announced, by a record or at the consumer's stop
	run -0 jq -s '[.[] | select(.type == "lost") | .count] | add // 0' "$OUT"
	assert_equal "$output" "$(jq -r '[.probes[].drops] | add' <<<"$st")"
	# distinct forks, as many as counted
	run -0 jq -r 'select(.type == "fork") | .child_pid' "$OUT"
	assert_equal "$(sort -u <<<"$output" | wc -l)" "$(count_records "$OUT" '.type == "fork"')"
	assert_equal "$(count_records "$OUT" '.type == "fork"')" \
		"$(jq -r '.probes[] | select(.name == "fork") | .events' <<<"$st")"
}

# mono_ns: CLOCK_MONOTONIC, the clock of ts_ns (bpf_ktime_get_ns)
mono_ns() {
	python3 -c 'import time; print(time.monotonic_ns())'
}

@test "lost records: a 4 KiB ring, no consumer, an exec storm; the lost counts sum to the drops" {
	new_cgroup
	run -0 "$LT" load --ringbuf-size 4096 --probes exec --cgroup "$NEW_CG"
	local t0 t1 drops n=300
	[ -z "${VM_RESULTS:-}" ] || n=150
	light n 40
	t0=$(mono_ns)
	execs "$NEW_CG" "$n"
	t1=$(mono_ns)
	drops=$(probe_field exec drops)
	# a ring of two exec records: the storm dropped most of its execs
	[ "$drops" -gt $((n * 2 / 3)) ]
	# each CPU's window is carried by that CPU's next exec record: one per CPU,
	# while a consumer empties the ring (rounds until one drops nothing)
	events_bg "$OUT"
	local c cpus round before
	cpus=$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))')
	# exec_per_cpu TAG: one exec in the test's cgroup on each CPU, its argument TAG-CPU
	exec_per_cpu() {
		for c in $cpus; do
			in_cg "$NEW_CG" taskset -c "$c" /bin/true "$MARK-$1-$c"
		done
	}
	for ((round = 0; round < 5; round++)); do
		before=$(probe_field exec drops)
		exec_per_cpu "flush-$round"
		[ "$(probe_field exec drops)" = "$before" ] && break
	done
	for c in $cpus; do
		wait_exec_arg "$MARK-flush-$round-$c"
	done
	stop_consumer "$EV_PID"
	# the flush dropped nothing: every window is the storm's
	assert_equal "$(probe_field exec drops)" "$drops"
	run -0 jq -s '[.[] | select(.type == "lost") | .count] | add' "$OUT"
	assert_equal "$output" "$drops"
	run -0 count_records "$OUT" '.type == "lost" and .probe != "exec"'
	assert_output 0
	# each window inside the storm, first <= last
	run -0 count_records "$OUT" ".type == \"lost\" and ((.first_ts_ns <= .last_ts_ns and
		.first_ts_ns >= $t0 and .last_ts_ns <= $t1) | not)"
	assert_output 0
	# each lost record precedes the record that carried it: same CPU, later
	run -0 jq -s '. as $r | [range(length) | select($r[.].type == "lost") | . as $i |
		select([$r[$i + 1:][] | select(.type == "exec" and .cpu == $r[$i].cpu and
			.ts_ns > $r[$i].ts_ns)] | length == 0)] | length' "$OUT"
	assert_output 0
	# --type of another probe hides them
	run -0 "$LT" load --replace --ringbuf-size 4096 --probes exec,tcp --cgroup "$NEW_CG"
	execs "$NEW_CG" 100
	drops=$(probe_field exec drops)
	[ "$drops" -gt 0 ]
	events_bg "$OUT.tcp" --type tcp
	exec_per_cpu tcp
	sleep 1
	stop_consumer "$EV_PID"
	assert_equal "$(probe_field exec drops)" "$drops"
	run -0 count_records "$OUT.tcp" true
	assert_output 0
	# --type exec keeps them, and --pid does not hide them (pid 1 execs nothing here)
	execs "$NEW_CG" 100
	before=$drops
	drops=$(probe_field exec drops)
	[ "$drops" -gt "$before" ]
	events_bg "$OUT.pid" --type exec --pid 1
	exec_per_cpu pid
	sleep 1
	stop_consumer "$EV_PID"
	assert_equal "$(probe_field exec drops)" "$drops"
	run -0 count_records "$OUT.pid" '.type != "lost"'
	assert_output 0
	run -0 jq -s '[.[] | select(.type == "lost") | .count] | add' "$OUT.pid"
	assert_equal "$output" "$((drops - before))"
}

# shed_storm [LOAD-OPTION]: a 64 KiB ring and no consumer, 200 execs with 230 bytes of
# argv in a new cgroup; sets SHED_OUT (the records) and SHED_ST (the exec counters)
shed_storm() {
	new_cgroup
	run -0 "$LT" load --replace --ringbuf-size "$SHED_RING" --probes exec --cgroup "$NEW_CG" "$@"
	in_cg "$NEW_CG" bash -c 'for ((i = 0; i < $3; i++)); do /bin/true "$0" "$1" "$2"; done' \
		"$MARK" "$(printf 'a%.0s' {1..100})" "$(printf 'b%.0s' {1..100})" "$SHED_N"
	SHED_ST=$("$LT" status --json | jq -c '.probes[] | select(.name == "exec") | [.events, .drops, .shed]')
	SHED_OUT="$BATS_TEST_TMPDIR/shed$#.json"
	run --separate-stderr -0 timeout 20 "$LT" events --duration 2
	printf '%s\n' "${lines[@]}" >"$SHED_OUT"
}

@test "shedding: past three quarters of the ring, execs are written short (argv cut, namespaces kept), so fewer are dropped than with --no-shed" {
	local full shed events drops nevents ndrops nshed
	# ~145 whole records fill 64 KiB; light storms: half of each in 32 KiB
	SHED_RING=64K SHED_N=200
	light SHED_RING 32K
	light SHED_N 100
	shed_storm --no-shed
	read -r nevents ndrops nshed < <(jq -r '@tsv' <<<"$SHED_ST")
	assert_equal "$nshed" 0
	assert_equal $((nevents + ndrops)) $((SHED_N + 1)) # the shell's exec and the storm's
	run -0 count_records "$SHED_OUT" '.type == "exec" and .args_shed'
	assert_output 0
	shed_storm
	read -r events drops shed < <(jq -r '@tsv' <<<"$SHED_ST")
	assert_equal $((events + drops)) $((SHED_N + 1))
	[ "$shed" -gt 0 ]
	echo "# $SHED_RING ring, $((SHED_N + 1)) execs: shed $events records ($shed short) and dropped $drops; --no-shed $nevents and $ndrops" >&3
	[ "$events" -gt "$nevents" ]
	[ "$drops" -lt "$ndrops" ]
	# the short ones are the last written (the ring was filling), each with the full
	# record's fields, argv cut at 128 bytes, and the namespaces moved back in place
	run -0 jq -s -c --arg m "$MARK" --argjson pid "$(ns_inode pid)" --argjson mnt "$(ns_inode mnt)" \
		--argjson net "$(ns_inode net)" '[.[] | select(.type == "exec" and .args[1] == $m)] |
		[length, ([.[] | select(.args_shed)] | length),
		 (map(.args_shed) | . == sort),
		 all(.pid_ns == $pid and .mnt_ns == $mnt and .net_ns == $net and .filename == "/bin/true"),
		 all(select(.args_shed) | .args_truncated and (.args | join(" ") | length) < 128),
		 all(select(.args_shed | not) | .args_truncated == false and (.args | length) == 4)]' "$SHED_OUT"
	assert_output "[$((events - 1)),$shed,true,true,true,true]"
}

@test "drops during a stream: events prints one 'kernel dropped' line per check on stderr" {
	gated_forker 300
	# (signal would add the SIGCHLD of each child)
	run -0 "$LT" load --ringbuf-size 4096 --pid "$FORKER" --probes exec,exit,fork
	events_bg "$OUT"
	# the consumer is paused while the burst fills the ring
	kill -STOP "$EV_PID"
	release_forker
	kill -CONT "$EV_PID"
	local i
	for ((i = 0; i < 50; i++)); do
		grep -q 'dropped' "$OUT.err" && break
		sleep 0.1
	done
	stop_consumer "$EV_PID"
	run -0 status_json
	local st=$output

	run -0 cat "$OUT.err"
	[ "${#lines[@]}" -ge 1 ]
	local l total=0 sum n
	for l in "${lines[@]}"; do
		[[ "$l" =~ ^lowtrace:\ kernel\ dropped\ ([0-9]+)\ records\ \(ring\ or\ state\ map\ full\):((\ (exec|exit|fork)=\+[0-9]+)+)$ ]] || {
			echo "unexpected stderr line: $l" >&2
			return 1
		}
		n=${BASH_REMATCH[1]}
		sum=$(grep -oE '=\+[0-9]+' <<<"${BASH_REMATCH[2]}" | tr -d '=+' | paste -sd+ | bc)
		assert_equal "$sum" "$n"
		total=$((total + n))
	done
	# every drop since the stream began was reported (nothing was produced before it)
	run -0 jq -r '[.probes[].drops] | add' <<<"$st"
	assert_equal "$total" "$output"
	[ "$total" -gt 0 ]
	# and every record written was streamed (with lost records before some)
	run -0 jq -r '[.probes[].events] | add' <<<"$st"
	assert_equal "$(count_records "$OUT" '.type != "lost"')" "$output"
}

@test "unload under a running events: it exits 6 with one line, and the programs go" {
	run -0 "$LT" load
	events_bg "$OUT"
	run -0 "$LT" unload
	wait_rc "$EV_PID" 5
	assert_equal "$RC" 6
	run -0 cat "$OUT.err"
	assert_output "lowtrace: the suite was unloaded"
	assert_nothing_loaded
	wait_map_names ""
}

@test "drops before events starts: reported once by the next events, not again by the one after" {
	gated_forker 300
	run -0 "$LT" load --ringbuf-size 4096 --pid "$FORKER" --probes exec,exit,fork
	release_forker
	run -0 status_json
	local st=$output total list
	total=$(jq -r '[.probes[].drops] | add' <<<"$st")
	list=$(jq -r '[.probes[] | select(.loaded and .drops > 0) | " \(.name)=+\(.drops)"] | add' <<<"$st")
	[ "$total" -gt 0 ]
	run --separate-stderr -0 "$LT" events --duration 1
	assert_equal "$stderr" "lowtrace: kernel dropped $total records (ring or state map full) before this consumer started:$list"
	# what one consumer reported stays reported: the next one starts from there
	run --separate-stderr -0 "$LT" events --duration 1
	assert_equal "$stderr" ""
	# and a burst between two consumers is reported by the second, exactly
	rm "$GATE"
	gated_forker 300
	run -0 "$LT" load --replace --ringbuf-size 4096 --pid "$FORKER" --probes fork
	run --separate-stderr -0 "$LT" events --duration 1
	local first=$(probe_field fork drops)
	release_forker
	local second=$(probe_field fork drops)
	run --separate-stderr -0 "$LT" events --duration 1
	assert_equal "$stderr" "lowtrace: kernel dropped $((second - first)) records (ring or state map full) before this consumer started: fork=+$((second - first))"
}

@test "load --replace under a running events: exit 6 naming the replace; the old ring's records are printed" {
	run -0 "$LT" load --probes exec
	events_bg "$OUT"
	/bin/true "$MARK-old"
	run -0 "$LT" load --replace --probes exec
	wait_rc "$EV_PID" 5
	assert_equal "$RC" 6
	run -0 cat "$OUT.err"
	assert_output "lowtrace: the suite was replaced by another load; 'events --follow' streams on across replaces"
	run -0 count_records "$OUT" ".type == \"exec\" and (.args | index(\"$MARK-old\"))"
	assert_output 1
}

# wait_exec_arg ARG: until $OUT has the exec of a command whose first argument is ARG
wait_exec_arg() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(count_records "$OUT" ".type == \"exec\" and .args[1] == \"$1\"")" = 1 ] && return 0
		sleep 0.1
	done
	echo "no exec of $1 in $OUT" >&2
	return 1
}

@test "events --follow: execs running through load --replace, each written once, by one suite or the other" {
	run -0 "$LT" load --probes exec
	events_bg "$OUT" --follow
	local stop="$BATS_TEST_TMPDIR/stop" count="$BATS_TEST_TMPDIR/count" storm n
	# execs before, during and after the replace (the test itself execs nothing in the loop)
	(
		i=0
		while [ ! -e "$stop" ]; do
			/bin/true "$MARK-$i"
			i=$((i + 1))
		done
		echo "$i" >"$count"
	) 3>&- &
	storm=$!
	LT_BG+=("$storm")
	wait_exec_arg "$MARK-20"
	run -0 "$LT" load --replace --probes exec
	sleep 0.3
	touch "$stop"
	wait "$storm"
	n=$(<"$count")
	wait_exec_arg "$MARK-$((n - 1))"
	stop_consumer "$EV_PID"
	run -0 jq -r --arg m "$MARK-" 'select(.type == "exec") | .args[1] // empty | select(startswith($m)) | ltrimstr($m)' "$OUT"
	assert_output "$(seq 0 $((n - 1)))"
	run -0 cat "$OUT.err"
	assert_line "lowtrace: following the new suite"
	refute_line --partial "dropped"
}

@test "events --follow: across load --replace and unload + load, every exec once, from each suite's first record" {
	run -0 "$LT" load --probes exec
	events_bg "$OUT" --follow
	local i
	for i in 1 2 3; do /bin/true "$MARK-a$i"; done
	# run right after the replace, before events notices it (it looks once a second)
	run -0 "$LT" load --replace --probes exec
	for i in 1 2 3; do /bin/true "$MARK-b$i"; done
	# (a suite unloaded before any consumer read it takes its records along)
	wait_exec_arg "$MARK-b3"
	run -0 "$LT" unload
	run -0 "$LT" load --probes exec
	for i in 1 2 3; do /bin/true "$MARK-c$i"; done
	wait_exec_arg "$MARK-c3"
	stop_consumer "$EV_PID"
	run -0 jq -r --arg m "$MARK-" 'select(.type == "exec") | .args[1] // empty | select(startswith($m)) | ltrimstr($m)' "$OUT"
	assert_output $'a1\na2\na3\nb1\nb2\nb3\nc1\nc2\nc3'
	run -0 cat "$OUT.err"
	assert_line "lowtrace: the suite was unloaded or replaced; following the next one (--follow)"
	assert_line "lowtrace: following the new suite"
	refute_line --partial "dropped"
}

@test "events with a closed reader (| head -n 1) ends quietly" {
	run -0 "$LT" load
	local i
	for i in 1 2 3; do /bin/true; done
	# keep records coming so the writer notices the closed pipe
	bash -c 'while :; do /bin/true; sleep 0.05; done' 3>&- &
	bg_track $!
	run --separate-stderr timeout 10 bash -c "'$LT' events | head -n 1; exit \${PIPESTATUS[0]}"
	assert_equal "$status" 0
	assert_equal "$stderr" ""
	assert_equal "${#lines[@]}" 1
	run -0 jq -e -c . <<<"$output"
}

@test "run stopped by SIGINT first prints what the kernel already wrote" {
	run_bg "$OUT" --probes exec --json
	local i
	kill -STOP "$RUN_PID"
	for i in 1 2 3 4 5; do
		/bin/sh -c true "$MARK-$i" 3>&-
	done
	kill -INT "$RUN_PID"
	kill -CONT "$RUN_PID"
	wait_rc "$RUN_PID" 10
	assert_equal "$RC" 0
	run -0 count_records "$OUT" ".type == \"exec\" and (.args | index(\"true\")) and (.args[-1] | startswith(\"$MARK-\"))"
	assert_output 5
	assert_nothing_loaded
}

@test "a stop while the disk is full loses nothing: unwritten records stay in the ring, the next events writes them once, no broken line" {
	new_cgroup
	small_disk 4096 16
	# room for all the execs in the ring: no kernel drop should be needed; 1000
	# (200 in the emulated guests: still 5 times what the 16 KiB disk holds; 120 with light
	# storms, 3 times)
	local execs=1000
	[ -z "${VM_RESULTS:-}" ] || execs=200
	light execs 120
	run -0 "$LT" load --ringbuf-size 4M --probes exec --cgroup "$NEW_CG"
	"$LT" events -o "$SMALL/ev.json" 2>"$OUT.err" 3>&- &
	EV_PID=$!
	bg_track "$EV_PID"
	wait_consumer_ready "$EV_PID"
	in_cg "$NEW_CG" bash -c 'for ((i = 0; i < $1; i++)); do /bin/true "$0-$i"; done' "$MARK" "$execs"
	# the consumer has read the ring and found the disk full
	wait_line "$OUT.err" 'No space left on device' "$EV_PID"
	sleep 0.5
	kill -TERM "$EV_PID"
	wait_rc "$EV_PID" 5
	assert_equal "$RC" 0
	bg_forget "$EV_PID"
	grep -q 'records still in the ring were not written' "$OUT.err"
	# space again: the next consumer writes what the first could not
	rm "$SMALL/filler"
	run -0 timeout 30 "$LT" events -o "$SMALL/ev.json" --duration 2
	# every line whole, every exec once
	run -0 jq -c . "$SMALL/ev.json"
	run -0 jq -r --arg m "$MARK-" 'select(.type == "exec") | .args[1] // empty |
		select(startswith($m))' "$SMALL/ev.json"
	local n uniq drops
	n=${#lines[@]}
	uniq=$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)
	drops=$(probe_field exec drops)
	assert_equal "$uniq" "$n"
	assert_equal "$((n + drops))" "$execs"
}

# lost_sum FILE [CPU]: the sum of the counts of the lost records in FILE (of CPU's windows)
lost_sum() {
	jq -R -s --arg c "${2:-}" '[split("\n")[] | fromjson? | select(.type == "lost" and
		($c == "" or .cpu == ($c | tonumber))) | .count] | add // 0' "$1"
}

@test "every loss window is announced within a second and at the stop, exactly once, whether or not its CPU records again" {
	local cpus c0 c1 drops i n=1000
	# a ring of two records: 250 execs a CPU open both windows as surely in the guests (60 with
	# light storms: still 30 times what the ring holds)
	[ -z "${VM_RESULTS:-}" ] || n=250
	light n 60
	read -r -a cpus < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))')
	[ "${#cpus[@]}" -ge 2 ]
	c0=${cpus[0]} c1=${cpus[1]}
	new_cgroup
	run -0 "$LT" load --ringbuf-size 4096 --probes exec --cgroup "$NEW_CG"
	# no consumer: half the storm on each CPU, each CPU's window open
	in_cg "$NEW_CG" taskset -c "$c0" bash -c 'for ((i = 0; i < $0; i++)); do /bin/true; done' "$n" &
	in_cg "$NEW_CG" taskset -c "$c1" bash -c 'for ((i = 0; i < $0; i++)); do /bin/true; done' "$n" &
	wait
	drops=$(probe_field exec drops)
	[ "$drops" -gt $((n * 3 / 2)) ]
	# a consumer and no further record: both windows arrive within a second (and a poll)
	events_bg "$OUT" --type exec
	for ((i = 0; i < 20; i++)); do
		[ "$(lost_sum "$OUT")" = "$drops" ] && break
		sleep 0.1
	done
	assert_equal "$(lost_sum "$OUT")" "$drops"
	[ "$(lost_sum "$OUT" "$c0")" -gt 0 ]
	[ "$(lost_sum "$OUT" "$c1")" -gt 0 ]
	# 20 execs on one CPU (drops again, the ring holds two), then the stop: each
	# window once, the last ones by the stop
	in_cg "$NEW_CG" taskset -c "$c0" bash -c 'for ((i = 0; i < 20; i++)); do /bin/true "$0-$i"; done' "$MARK"
	stop_consumer "$EV_PID"
	assert_equal "$(lost_sum "$OUT")" "$(probe_field exec drops)"
	# the 20 execs: each written or dropped, none twice
	run -0 jq -R -r --arg m "$MARK-" 'fromjson? | select(.type == "exec") | .args[1] // empty |
		select(startswith($m))' "$OUT"
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" "${#lines[@]}"
}
