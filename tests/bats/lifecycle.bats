#!/usr/bin/env bats
# Lifecycle: load, pins, status, --probes, --replace, --ringbuf-size, unload,
# and what the kernel holds before and after.

load helpers

# prog_id_of NAME: the id bpftool reports for the lt_* program NAME
prog_ids_of() {
	bpftool prog show -j | jq -r --arg n "$1" '.[] | select(.name == $n) | .id'
}

@test "load: exit 0 and a summary of every default probe on tp_btf with the kernel's program ids" {
	run --separate-stderr -0 "$LT" load
	assert_equal "$stderr" ""
	# the probe table, then where state lives and the stateful maps of exec (six), exit
	# (four), fork (three), signal (two), oom, tcp (three) and tcp_retrans (maps.bats checks those)
	assert_equal "${#lines[@]}" $((7 + ${#ALL_PROBES[@]} + 2 + 20))
	assert_line -n 0 "loaded: pinned at /sys/fs/bpf/lowtrace"
	assert_line -n 1 "ring buffer: 1048576 bytes"
	assert_line -n 2 "filters: pid=any cgroup_id=any"
	assert_line -n 3 --regexp "$IDENTITY_RE"
	assert_line -n 4 --regexp "$CGROUPS_RE"
	assert_line -n 5 --regexp '^ancestry: [1-9][0-9]* processes known \(cap 16384; [0-9]+ execs, [0-9]+ forks, [0-9]+ freed, 0 missing, [0-9]+ unknown\)$'
	assert_line -n 6 --regexp '^PROBE +HOOK +PROG_ID +EVENTS +DROPS +MISSED$'
	local i name id
	i=7
	for name in "${DEFAULT_PROBES[@]}"; do
		id=$(prog_ids_of "lt_$name")
		[ -n "$id" ]
		[ "$(wc -w <<<"$id")" = 1 ]
		assert_line -n $i --regexp "^$name +tp_btf +$id +[0-9]+ +0 +0\$"
		i=$((i + 1))
	done
	# the opt-in ones are listed as not loaded
	for name in "${ALL_PROBES[@]:${#DEFAULT_PROBES[@]}}"; do
		assert_line -n $i --regexp "^$name +- *\$"
		i=$((i + 1))
	done
	assert_line -n $i --regexp '^state: '
	assert_line -n $((i + 1)) --regexp '^PROBE +MAP +TYPE +ENTRIES +MAX$'
}

@test "pins: /sys/fs/bpf/lowtrace, directories 0700, pins 0600, links named after the probes" {
	run -0 "$LT" load
	run -0 stat -c '%a %U' "$PIN" "$PIN/links" "$PIN/maps"
	assert_output "$(printf '700 root\n700 root\n700 root')"
	run -0 find "$PIN" -mindepth 1 -type d
	assert_equal "${#lines[@]}" 2
	run -0 find "$PIN" -mindepth 1 ! -type d ! -perm 0600
	assert_output ''
	run -0 ls "$PIN/links"
	assert_output "$(tr ' ' '\n' <<<"$DEFAULT_LINKS")"
	run -0 ls "$PIN/maps"
	assert_line lt_events
	assert_line lt_stats
	# nothing else of ours lies around in bpffs (no half-written temp dirs)
	run -0 ls /sys/fs/bpf
	assert_line lowtrace
	refute_line --regexp '^lowtrace-tmp'
	# pins are bpffs objects the kernel knows
	run -0 bpftool map show pinned "$PIN/maps/lt_events" -j
	run -0 jq -r '[.type, .name, .max_entries] | @tsv' <<<"$output"
	assert_output "$(printf 'ringbuf\tlt_events\t1048576')"
	run -0 bpftool link show pinned "$PIN/links/exec" -j
	run -0 jq -r '.prog_id' <<<"$output"
	assert_output "$(prog_ids_of lt_exec)"
}

@test "load + unload leaves bpftool prog/map lists and /sys/fs/bpf exactly as before" {
	wait_prog_names ""
	local progs_before maps_before fs_before
	progs_before=$(lt_prog_names | paste -sd' ')
	maps_before=$(lt_map_names | paste -sd' ')
	fs_before=$(ls -a /sys/fs/bpf)

	run -0 "$LT" load
	run -0 lt_prog_names
	assert_output "$(tr ' ' '\n' <<<"$DEFAULT_PROGS" | sort)"
	run -0 lt_map_names
	assert_line lt_events
	assert_line lt_stats
	assert_line lt_cgroup
	run -0 ls -a /sys/fs/bpf
	assert_line lowtrace

	run --separate-stderr -0 "$LT" unload
	assert_output "unloaded: removed /sys/fs/bpf/lowtrace"
	assert_equal "$stderr" ""
	[ ! -e "$PIN" ]
	wait_prog_names "$progs_before"
	wait_map_names "$maps_before"
	run -0 ls -a /sys/fs/bpf
	assert_output "$fs_before"
}

@test "load --probes exec: only exec attached and loaded, status shows the others as not loaded" {
	run -0 "$LT" load --probes exec
	assert_line --regexp '^exec +tp_btf +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$'
	# (the text pads the HOOK column even when nothing follows)
	assert_line --regexp '^exit +- *$'
	assert_line --regexp '^fork +- *$'
	assert_line --regexp '^oom +- *$'
	run -0 ls "$PIN/links"
	assert_output "$(with_tp exec exec_nest | tr ' ' '\n')"
	run -0 status_json
	local st=$output
	run -0 jq -c '[.probes[] | select(.name != "exec") | .loaded] | unique' <<<"$st"
	assert_output '[false]'
	run -0 jq -c '[.probes[] | select(.name == "exec" or .name == "exit") | [.name, .loaded, .hook]]' <<<"$st"
	assert_output '[["exec",true,"tp_btf"],["exit",false,null]]'
	# the programs of the other probes are not even loaded
	wait_prog_names "$(with_tp lt_exec lt_exec_nest)"
}

@test "load --probes exit,fork: the list is honoured in any order, trailing comma allowed" {
	run -0 "$LT" load --probes fork,exit,
	run -0 "$LT" status --json
	run -0 jq -c '[.probes[] | select(.loaded) | .name]' <<<"$output"
	assert_output '["exit","fork"]'
	wait_prog_names "$(with_tp lt_exit lt_exit_free lt_exit_nest lt_fork lt_fork_nest)"
}

@test "status and status --json: counters grow as processes run" {
	run -0 "$LT" load
	run -0 status_json
	local before=$output
	run -0 jq -c '[.loaded, .pin_dir, .ringbuf_size, .filter_pid, .filter_cgroup_id, [.probes[] | select(.loaded) | [.name, .loaded, .hook, .drops]]]' <<<"$before"
	assert_output "[true,\"/sys/fs/bpf/lowtrace\",1048576,0,0,$(default_status '[.,true,"tp_btf",0]')]"
	# the prog ids are the kernel's
	run -0 jq -r '.probes[] | select(.loaded) | "\(.name) \(.prog_id)"' <<<"$before"
	local name want=()
	for name in "${DEFAULT_PROBES[@]}"; do
		want+=("$name $(prog_ids_of "lt_$name")")
	done
	assert_output "$(printf '%s\n' "${want[@]}")"

	local i
	for i in 1 2 3 4 5; do /bin/true; done
	run -0 status_json
	local after=$output
	# each /bin/true is one fork, one exec and one exit at least
	run -0 jq -n -e --argjson a "$before" --argjson b "$after" \
		'[range(3) as $i | $b.probes[$i].events - $a.probes[$i].events >= 5] | all'

	# the text form shows the same counters (read after the JSON: they only grow)
	run -0 "$LT" status
	assert_line -n 0 "loaded: pinned at /sys/fs/bpf/lowtrace"
	assert_line -n 1 "ring buffer: 1048576 bytes"
	assert_line -n 2 "filters: pid=any cgroup_id=any"
	local text=$output name ev now
	for name in exec exit fork; do # (the probes /bin/true makes count)
		ev=$(jq -r --arg n "$name" '.probes[] | select(.name == $n) | .events' <<<"$after")
		now=$(awk -v n="$name" '$1 == n && $2 == "tp_btf" && $5 == 0 {print $4}' <<<"$text")
		[ -n "$now" ]
		[ "$now" -ge "$ev" ]
	done
}

@test "load --replace while loaded: new programs, same pins, exit 0" {
	run -0 "$LT" load --ringbuf-size 8192
	local old
	old=$(prog_ids_of lt_exec)
	run --separate-stderr -0 "$LT" load --replace
	assert_equal "$stderr" ""
	assert_line -n 1 "ring buffer: 1048576 bytes"
	# the old programs go away (the kernel frees them asynchronously)
	wait_prog_names "$DEFAULT_PROGS"
	local new
	new=$(prog_ids_of lt_exec)
	[ -n "$new" ]
	[ "$new" != "$old" ]
	run -0 probe_field exec prog_id
	assert_output "$new"
	run -0 ls "$PIN/links"
	assert_output "$(tr ' ' '\n' <<<"$DEFAULT_LINKS")"
}

@test "load --replace when nothing is loaded just loads" {
	run --separate-stderr -0 "$LT" load --replace
	assert_equal "$stderr" ""
	run -0 ls "$PIN/links"
	assert_output "$(tr ' ' '\n' <<<"$DEFAULT_LINKS")"
}

@test "load --ringbuf-size 65536 (and 64K): status shows ringbuf_size 65536" {
	run -0 "$LT" load --ringbuf-size 65536
	assert_line -n 1 "ring buffer: 65536 bytes"
	run -0 probe_field exec hook
	assert_output tp_btf
	run -0 "$LT" status --json
	run -0 jq -r .ringbuf_size <<<"$output"
	assert_output 65536
	run -0 bpftool map show pinned "$PIN/maps/lt_events" -j
	run -0 jq -r .max_entries <<<"$output"
	assert_output 65536

	run -0 "$LT" load --replace --ringbuf-size 64K
	run -0 "$LT" status --json
	run -0 jq -r .ringbuf_size <<<"$output"
	assert_output 65536
}

@test "load --pid and --cgroup show in status as filters" {
	local cg id
	new_cgroup
	cg=$NEW_CG
	id=$(stat -c %i "$cg")
	run -0 "$LT" load --pid $$ --cgroup "$cg"
	assert_line -n 2 "filters: pid=$$ cgroup_id=$id"
	run -0 "$LT" status --json
	run -0 jq -c '[.filter_pid, .filter_cgroup_id]' <<<"$output"
	assert_output "[$$,$id]"
}

@test "unload while nothing consumes: pins gone, programs and maps freed" {
	run -0 "$LT" load
	run -0 "$LT" unload
	[ ! -e "$PIN" ]
	wait_prog_names ""
	wait_map_names ""
	run -3 "$LT" status
}

@test "the kernel BTF is parsed once per load: one open of /sys/kernel/btf/vmlinux" {
	local trace="$BATS_TEST_TMPDIR/strace" calls=openat
	# open(2) too where the machine has it (not arm64)
	! has_syscall open || calls+=,open
	run -0 strace -f --seccomp-bpf -e trace="$calls" -o "$trace" "$LT" load
	run -0 grep -c '"/sys/kernel/btf/vmlinux"' "$trace"
	assert_output 1
	run -0 "$LT" status
}

@test "four loads at once: one wins (0), the others exit 4, no program leaks" {
	wait_prog_names ""
	local i pids=() codes=()
	for i in 1 2 3 4; do
		"$LT" load >/dev/null 2>"$BATS_TEST_TMPDIR/err$i" 3>&- &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		local rc=0
		wait "${pids[$i]}" || rc=$?
		codes+=("$rc")
	done
	run -0 bash -c "printf '%s\n' ${codes[*]} | sort | paste -sd' '"
	assert_output "0 4 4 4"
	for i in 1 2 3 4; do
		run -0 cat "$BATS_TEST_TMPDIR/err$i"
		[ -z "$output" ] || [[ "$output" == "lowtrace: "* && "${#lines[@]}" == 1 ]]
	done
	wait_prog_names "$DEFAULT_PROGS"
	run -0 ls /sys/fs/bpf
	refute_line --regexp '^lowtrace-tmp'
	run -0 ls "$PIN/links"
	assert_output "$(tr ' ' '\n' <<<"$DEFAULT_LINKS")"
}

@test "-v load: same summary on stdout, libbpf's messages on stderr" {
	run --separate-stderr -0 "$LT" -v load --probes exec
	assert_line -n 0 "loaded: pinned at /sys/fs/bpf/lowtrace"
	assert_line --regexp '^exec +tp_btf +[0-9]+ +[0-9]+ +0 +0$'
	[[ "$stderr" == *"libbpf: "* ]]
	run --separate-stderr -0 "$LT" --verbose unload
	assert_output "unloaded: removed /sys/fs/bpf/lowtrace"
}

@test "unload of a half-removed suite (links already gone, e.g. an interrupted unload) removes the rest" {
	run -0 "$LT" load
	# what an unload killed between its two steps leaves behind
	rm -r "$PIN/links"
	# only the consumers' unattached programs are left (pinned beside the maps):
	# lt_lost_flush, and tcp's reaper where sockets are in the hash
	if sk_local; then
		wait_prog_names lt_lost_flush
	else
		wait_prog_names "lt_lost_flush lt_tcp_reap"
	fi
	run --separate-stderr "$LT" unload
	assert_equal "$stderr" ""
	assert_equal "$status" 0
	[ ! -e "$PIN" ]
	wait_prog_names ""
	wait_map_names ""
}

# what bpftool and bpffs show of lowtrace: programs, maps, link pins and bpffs entries
lt_kernel_state() {
	lt_prog_names | paste -sd' '
	lt_map_names | paste -sd' '
	bpftool link show -j | jq -r '[.[] | select(.prog_id as $p | any($ids[]; . == $p))] | length' \
		--argjson ids "$(bpftool prog show -j | jq -c '[.[] | select(.name // "" | startswith("lt_")) | .id]')"
	ls -a /sys/fs/bpf | paste -sd' '
}

# running PID: the process has not exited (kill -0 succeeds on a zombie too,
# which bash may not reap while it spins: a loader that exits early, e.g. 4 for
# a load while loaded, would hold the wait loop below forever)
running() {
	local st
	read -r st 2>/dev/null <"/proc/$1/stat" || return 1
	[[ $st != *") Z "* ]]
}

@test "kill -9 at random points of load and load --replace (50; 6 in the test VMs, 4 in light ones), then one unload: kernel state as before" {
	wait_prog_names ""
	local before t0 t1 span i j pid mode
	before=$(lt_kernel_state)
	# kill anywhere in a load: the delays span one whole load on this machine
	t0=$(date +%s%N)
	run -0 "$LT" load
	t1=$(date +%s%N)
	span=$(((t1 - t0) / 1000000 + 20))
	# the recovery is userspace's: the emulated guests run fewer of them
	local kills=50
	[ -z "${VM_RESULTS:-}" ] || kills=6
	light kills 4
	for ((i = 0; i < kills; i++)); do
		mode=(load --replace)
		((i % 3)) || mode=(load)
		"$LT" "${mode[@]}" >/dev/null 2>&1 &
		pid=$!
		if ((i % 2)); then
			sleep "$(awk -v r="$RANDOM" -v s="$span" 'BEGIN { printf "%.3f", r % s / 1000 }')"
		else
			# the narrow windows: while pinning, replacing, renaming
			while [ ! -e "/sys/fs/bpf/lowtrace-tmp-$pid" ] && running "$pid"; do :; done
			for ((j = RANDOM % 40; j > 0; j--)); do :; done
		fi
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	run -0 "$LT" unload
	run --separate-stderr "$LT" status
	assert_equal "$status" 3
	assert_equal "$stderr" "lowtrace: not loaded: /sys/fs/bpf/lowtrace: No such file or directory (run 'lowtrace load' first)"
	wait_prog_names ""
	wait_map_names ""
	run -0 lt_kernel_state
	assert_output "$before"
}

@test "a suite a killed loader left half-pinned (lowtrace-tmp-PID) is removed by the next unload" {
	wait_prog_names ""
	run -0 "$LT" load
	# the state a loader killed while pinning leaves: its temporary directory, attached
	mv "$PIN" /sys/fs/bpf/lowtrace-tmp-999999
	run --separate-stderr -0 "$LT" unload
	assert_equal "$stderr" "lowtrace: removed /sys/fs/bpf/lowtrace-tmp-999999, left by a loader that was killed"
	[ ! -e /sys/fs/bpf/lowtrace-tmp-999999 ]
	wait_prog_names ""
	wait_map_names ""
}

@test "a leftover is removed by the next load, status and events finish it too" {
	run -0 "$LT" load --probes exec
	mv "$PIN" /sys/fs/bpf/lowtrace-old-999998
	run --separate-stderr -0 "$LT" load --probes exit
	[[ "$stderr" == *"removed /sys/fs/bpf/lowtrace-old-999998"* ]]
	wait_prog_names "$(with_tp lt_exit lt_exit_free lt_exit_nest)"
	# a reader (status) finishes it too, when no loader is at work
	mv "$PIN" /sys/fs/bpf/lowtrace-tmp-999997
	run --separate-stderr "$LT" status --json
	assert_equal "$status" 3
	[[ "$stderr" == *"removed /sys/fs/bpf/lowtrace-tmp-999997"* ]]
	wait_prog_names ""
}

@test "a replace a killed loader left half done (lowtrace-new-PID) is finished: the new suite is pinned" {
	# killed after the new suite was whole, before the old one moved out
	run -0 "$LT" load --probes exec
	mkdir /sys/fs/bpf/lt-test-hold
	mv "$PIN" /sys/fs/bpf/lt-test-hold/old
	run -0 "$LT" load --probes exit
	mv "$PIN" /sys/fs/bpf/lowtrace-new-999996
	mv /sys/fs/bpf/lt-test-hold/old "$PIN"
	rmdir /sys/fs/bpf/lt-test-hold
	run --separate-stderr -0 "$LT" status --json
	[[ "$stderr" == *"finished the replace a killed loader left half done"* ]]
	run -0 jq -c '[.probes[] | select(.loaded) | .name], .leftovers' <<<"$output"
	assert_output $'["exit"]\n[]'
	wait_prog_names "$(with_tp lt_exit lt_exit_free lt_exit_nest)"
	# killed after the old suite moved out: nothing at the pin path, the new one beside it
	mv "$PIN" /sys/fs/bpf/lowtrace-new-999995
	run -0 "$LT" events --count 1 --type exit --duration 5
	wait_prog_names "$(with_tp lt_exit lt_exit_free lt_exit_nest)"
	[ -d "$PIN" ]
	run -0 ls /sys/fs/bpf
	refute_line --regexp '^lowtrace-(tmp|new|old)-'
}
