// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/ringfill.bpf.c: the kernel side of bench/e2e. rf_fill, run by BPF_PROG_TEST_RUN,
 * writes rf.n records into the suite's ring (the pinned lt_events, reused), copies of
 * templates as the probes write them, in the order rf.mix gives: a rate no syscall-driven
 * workload reaches on this machine. Like the probes it wakes the consumer only when a quarter
 * of the ring is pending (the consumer polls every 100 ms anyway).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ringfill.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* replaced by the pinned ring */
} lt_events SEC(".maps");

struct rf_state rf;

static long rf_one(__u32 i, void *ctx)
{
	__u32 t = rf.mix[i % RF_MIX];
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct rf_tpl *p;
	__u32 size;

	if (t >= RF_TEMPLATES)
		return 1;
	p = &rf.tpl[t];
	size = p->size;
	if (size < 8 || size > RF_MAX)
		return 1;
	if (bpf_ringbuf_query(&lt_events, BPF_RB_AVAIL_DATA) + size >=
	    bpf_ringbuf_query(&lt_events, BPF_RB_RING_SIZE) / 4)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&lt_events, p->bytes, size, flags))
		rf.failed++;
	else
		rf.written++;
	return 0;
}

SEC("raw_tp")
int rf_fill(void *ctx)
{
	bpf_loop(rf.n, rf_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
