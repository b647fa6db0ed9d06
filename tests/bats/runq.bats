#!/usr/bin/env bats
# runq: run-queue latency log2 histogram (tp_btf sched_wakeup,
# sched_wakeup_new, sched_switch), read by `lowtrace hist runq`.

load helpers

setup() { lt_setup; }

@test "runq: wake-ups of a sleeping loop fill the histogram; buckets add up" {
	run -0 "$LT" load --probes runq
	run --separate-stderr -0 "$LT" hist runq --json
	local before
	before=$(jq '.histograms[0].count // 0' <<<"$output")
	# 50 sleeps: 50 wake-ups of this loop alone
	bash -c 'for i in $(seq 50); do sleep 0.01; done' 3>&-
	run --separate-stderr -0 "$LT" hist runq --json
	local h=$output
	run -0 jq -c '[.probe, (.histograms | length)]' <<<"$h"
	assert_output '["runq",1]'
	run -0 jq -e --argjson b "$before" '.histograms[0].count >= $b + 50' <<<"$h"
	run -0 jq -e '.histograms[0] | ([.buckets[].count] | add) == .count and .sum_ns > 0' <<<"$h"
	run -0 probe_field runq events
	[ "$output" -ge 50 ]
}

@test "runq --pid P: only P's threads are measured" {
	sleep 30 3>&- &
	local idle=$!
	bg_track "$idle"
	run -0 "$LT" load --probes runq --pid "$idle"
	bash -c 'for i in $(seq 20); do sleep 0.01; done' 3>&-
	# the sleeping process never woke: nothing measured
	run --separate-stderr -0 "$LT" hist runq
	assert_output "(no events yet)"
	run -0 probe_field runq events
	assert_output 0
}
