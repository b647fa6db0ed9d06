#!/usr/bin/env bats
# The map audit: status (text and JSON) shows each loaded probe's stateful maps,
# their kernel type, entries in use and limit, and where per-object state lives.

load helpers

# map_json PROBE MAP: that map's object in `status --json`
map_json() {
	"$LT" status --json | jq -e -c --arg p "$1" --arg m "$2" \
		'.probes[] | select(.name == $p) | .maps[] | select(.name == $m)'
}

@test "syscalls: lt_sys_hist counted (0 < entries <= 4096), text and JSON agree on type and max" {
	run -0 "$LT" load --probes syscalls,tcp
	# syscalls nobody else makes, so the histogram has keys of this test's own
	python3 -c 'import os
for _ in range(200): os.getppid(); os.umask(0o22); os.getpgrp()'
	run -0 map_json syscalls lt_sys_hist
	local m=$output n
	run -0 jq -r '[.type, .max_entries] | @tsv' <<<"$m"
	assert_output "$(printf 'percpu_hash\t4096')"
	n=$(jq -r .entries <<<"$m")
	[ "$n" -ge 3 ] && [ "$n" -le 4096 ] || fail "entries: $n"
	# the kernel reports its memory (fdinfo memlock): a 4096-key per-CPU hash takes pages
	run -0 jq -e '.memlock > 4096' <<<"$m"
	# one row per (syscall, pid 0) key: as many as bpftool counts
	local keys
	keys=$(bpftool map dump pinned "$PIN/maps/lt_sys_hist" -j | jq length)
	run -0 map_json syscalls lt_sys_hist
	run -0 jq -e --argjson k "$keys" '.entries >= $k' <<<"$output"
	# the text table: PROBE MAP TYPE ENTRIES MAX
	run -0 "$LT" status
	assert_line --regexp '^PROBE +MAP +TYPE +ENTRIES +MAX$'
	assert_line --regexp '^syscalls +lt_sys_hist +percpu_hash +[0-9]+ +4096$'
	n=$(awk '$1 == "syscalls" && $2 == "lt_sys_hist" {print $4}' <<<"$output")
	[ "$n" -ge 3 ] && [ "$n" -le 4096 ] || fail "text entries: $n"
}

@test "runq: its per-CPU array histogram is full by construction (entries = max = 1)" {
	run -0 "$LT" load --probes runq,exec
	run -0 map_json runq lt_runq_hist
	run -0 jq -c '[.type, .entries, .max_entries]' <<<"$output"
	assert_output '["percpu_array",1,1]'
	run -0 "$LT" status --json
	# not loaded: no maps key; loaded: a list (possibly empty)
	run -0 jq -c '[.probes[] | select(.name == "bio" or .name == "exec") | [.name, (.maps | type)]]' <<<"$output"
	assert_output '[["exec","array"],["bio","null"]]'
}
