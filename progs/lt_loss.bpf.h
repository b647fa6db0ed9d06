/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Losses: a drop, this CPU's loss window of the probe (a lost record reports
 * it, lt_record.bpf.h) and the count against the current task's cgroup.
 */
#ifndef LT_LOSS_BPF_H
#define LT_LOSS_BPF_H

#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"

/*
 * Per (probe, cgroup of the task): the records lost for it, dropped (who filled the ring)
 * or held back by a rate limit, and its rate-limit bucket (status, metrics)
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_BLAME_MAX);
	__type(key, struct lt_blame_key);
	__type(value, struct lt_blame_val);
} lt_drop_cg __weak SEC(".maps");

/*
 * Per CPU: programs inside a change of a loss window (lt_busy). The consumer's
 * lt_lost_flush leaves a CPU's windows alone while one is.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} lt_lost_busy __weak SEC(".maps");

/* The (probe, current cgroup) entry of lt_drop_cg, created empty if missing; NULL: none. */
static __always_inline struct lt_blame_val *lt_blame_of(__u32 probe)
{
	static const struct lt_blame_val zero;
	struct lt_blame_key k = { .cgroup_id = lt_cg_id(), .probe = probe };

	return lt_lookup_or_add(&lt_drop_cg, &k, &zero);
}

/*
 * Enter a change of this CPU's loss windows: the count of programs inside one
 * (atomic: on 7.x another task can preempt this one here). Only where a window
 * is touched (a loss, or one to announce): the record path costs nothing more.
 */
static __always_inline __u32 *lt_busy(void)
{
	__u32 zero = 0, *b = bpf_map_lookup_elem(&lt_lost_busy, &zero);

	if (b)
		__sync_fetch_and_add(b, 1);
	return b;
}

static __always_inline void lt_unbusy(__u32 *b)
{
	if (b)
		__sync_fetch_and_add(b, -1);
}

/* One more loss in this CPU's window of the probe (lt_reserve reports it). */
static __always_inline void lt_window(struct lt_stat *st, __u64 now)
{
	__u32 *b = lt_busy();

	if (!st->lost_count)
		st->lost_first_ns = now;
	st->lost_last_ns = now;
	st->lost_count++;
	lt_unbusy(b);
}

/*
 * A failed reserve: a drop, one more in this CPU's loss window of the probe, and
 * one against the current task's cgroup (lt_drop_cg).
 */
static __always_inline void lt_drop(struct lt_stat *st, __u32 probe)
{
	struct lt_blame_val *v;

	if (st) {
		st->drops++;
		lt_window(st, bpf_ktime_get_ns());
	}
	v = lt_blame_of(probe);
	if (v)
		__sync_fetch_and_add(&v->drops, 1);
}

/* lt_drop out of line: the records' paths reach it only when the ring is full */
static __noinline void lt_drop_out(struct lt_stat *st, __u32 probe)
{
	lt_drop(st, probe);
}

#endif /* LT_LOSS_BPF_H */
