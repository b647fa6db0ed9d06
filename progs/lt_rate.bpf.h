/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Rate limits (load --rate-limit): a schedule per (probe, cgroup), in lt_drop_cg. */
#ifndef LT_RATE_BPF_H
#define LT_RATE_BPF_H

#include "lt_common.bpf.h"
#include "lt_loss.bpf.h"

/* A rate limit lets a cgroup run this far ahead of its schedule: one second's events at once. */
#define LT_RATE_BURST_NS 1000000000ull

/*
 * load --rate-limit: is this event over its cgroup's rate for the probe? A virtual
 * schedule per (probe, cgroup) in lt_drop_cg (GCRA, the token bucket as one time): each
 * event it lets through moves the cgroup's due time 1/rate on, and an event is held back
 * while that time is a second or more ahead. So a storm in one cgroup cannot take another
 * one's share of the ring. The schedule is read and written without a lock (5.10 has no
 * cmpxchg): CPUs racing on one cgroup may let a few more events through, never fewer. A
 * held-back event is counted as throttled, joins the loss window (lt_reserve) and is
 * counted against the cgroup. Without a limit for the probe the verifier drops all this
 * (the rate is a constant of the frozen .rodata).
 */
static __always_inline bool lt_throttled(struct lt_stat *st, __u32 probe)
{
	__u32 rate = probe < LT_PROBE_SLOTS ? lt_cfg_rate[probe] : 0;
	struct lt_blame_val *v;
	__u64 now, due;

	if (!rate)
		return false;
	v = lt_blame_of(probe);
	if (!v)
		return false; /* no bucket (cannot happen in an LRU): not held back */
	now = bpf_ktime_get_ns();
	due = v->due_ns > now ? v->due_ns : now;
	if (due - now < LT_RATE_BURST_NS) {
		v->due_ns = due + 1000000000ull / rate;
		return false;
	}
	__sync_fetch_and_add(&v->throttled, 1);
	if (st) {
		__u32 *b = lt_busy();

		st->throttled++;
		lt_window(st, now);
		st->lost_throttled++;
		lt_unbusy(b);
	}
	return true;
}

#endif /* LT_RATE_BPF_H */
