/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Records into the ring: the header, reserve and submit (constant size),
 * output (built in a buffer, as long as what it carries), shedding, wake-ups,
 * and the lost records that carry the loss windows.
 */
#ifndef LT_RECORD_BPF_H
#define LT_RECORD_BPF_H

#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"
#include "lt_loss.bpf.h"
#include "lt_rate.bpf.h"

/* when a record last woke the consumer because the ring was empty (lt_wake_on) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lt_wake __weak SEC(".maps");

static __always_inline void lt_hdr_fill(struct lt_hdr *h, __u16 type, __u16 size)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->flags = LT_HDR_CGROUP;
	h->ts_ns = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	/* the current task's cgroup; records written for another task overwrite it */
	h->cgroup_id = lt_cg_id();
}

/* The loss window of `st` as a lost record: `n` lost, `t` of them held back by a rate limit. */
static __always_inline void lt_lost_fill(struct lt_lost *lost, struct lt_stat *st, __u32 probe,
					 __u64 n, __u64 t)
{
	lt_hdr_fill(&lost->hdr, LT_TYPE_LOST, sizeof(*lost));
	lost->probe = probe;
	__builtin_memset(lost->_pad0, 0, sizeof(lost->_pad0));
	lost->count = n - t;
	lost->first_ts_ns = st->lost_first_ns;
	lost->last_ts_ns = st->lost_last_ns;
	lost->throttled = t;
	lost->unseen = 0;
}

/*
 * The ring's size: the loader's constant (load --ringbuf-size), else asked. The
 * bytes in use are asked once per record (lt_ring_used): that query reads the
 * consumer's position, a cache line userspace writes, and cost ~0.3 µs an exec
 * here each time it was asked.
 */
static __always_inline __u64 lt_ring_size(void)
{
	return lt_cfg_ring_size ? lt_cfg_ring_size
				: bpf_ringbuf_query(&lt_events, BPF_RB_RING_SIZE);
}

static __always_inline __u64 lt_ring_used(void)
{
	return bpf_ringbuf_query(&lt_events, BPF_RB_AVAIL_DATA);
}

/*
 * A loss window of the probe on this CPU as a lost record, submitted: the slow path of
 * lt_reserve and lt_output, out of line (a subprogram), so that the records' path, which a
 * storm without losses never leaves, does not carry it. The record it precedes is reserved by
 * the caller right after (5.10's verifier takes no reference out of a subprogram): the window
 * is reported only while the ring has room for both (else it stays for later), so that a full
 * ring does not fill with lost records; a record that still does not fit opens the next window.
 */
static __noinline void lt_report_lost(struct lt_stat *st, __u32 probe, __u32 size)
{
	struct lt_lost *lost;
	__u32 *b;

	/* each record's 8-byte ring header besides */
	if (!st || lt_ring_used() + sizeof(*lost) + size + 16 > lt_ring_size())
		return;
	b = lt_busy();
	/* another program on this CPU is changing a window: it stays for later */
	lost = b && *b == 1 ? bpf_ringbuf_reserve(&lt_events, sizeof(*lost), 0) : NULL;
	if (lost) {
		__u64 n = st->lost_count, t = st->lost_throttled;

		lt_lost_fill(lost, st, probe, n, t);
		/* the record that follows wakes the consumer if it is time */
		bpf_ringbuf_submit(lost, BPF_RB_NO_WAKEUP);
		/* minus what it reported: a preempting program's drop stays counted */
		st->lost_count -= n;
		st->lost_throttled -= t;
	}
	lt_unbusy(b);
}

/*
 * Reserve a record of a constant size and fill its header; a failure is counted
 * as a drop, never silent, and joins this CPU's loss window of the probe, as
 * does an event the probe's rate limit holds back (lt_throttled). The next
 * record the probe writes here carries the window: a struct lt_lost just before
 * it in the ring (lt_report_lost), so a consumer sees where the stream has a
 * hole. NULL, with nothing counted, while the suite is not live (lt_off).
 * Records of a length known only at run time: lt_output.
 */
static __always_inline void *lt_reserve(__u32 probe, __u16 type, __u16 size)
{
	struct lt_stat *st = lt_stat_slot(probe);
	void *rec;

	if (lt_off() || lt_throttled(st, probe))
		return NULL;
	if (st && st->lost_count)
		lt_report_lost(st, probe, size);
	rec = bpf_ringbuf_reserve(&lt_events, size, 0);
	if (!rec) {
		lt_drop_out(st, probe);
		return NULL;
	}
	lt_hdr_fill(rec, type, size);
	return rec;
}

/* Would a record of `size` bytes leave the ring less than a quarter free? (lt_cfg_shed) */
static __always_inline bool lt_ring_tight(__u64 used, __u64 size)
{
	__u64 ring = lt_ring_size();

	return lt_cfg_shed && used + size > ring - ring / 4;
}

/* a record into an empty ring wakes the consumer at most this often */
#define LT_WAKE_GAP_NS 10000000ull

/*
 * The wake-up of a record of `size` bytes, `pending` bytes in the ring with it
 * (a reserved record counts itself): none until a quarter of the ring is
 * pending, so a storm is read in batches (the consumer polls every 100 ms
 * anyway); but the first record into an empty ring wakes the consumer if no
 * such record did in the last LT_WAKE_GAP_NS, so a record after a quiet spell
 * shows at once instead of at the next poll. One clock read, only then. The
 * time is shared by all CPUs, unlocked: a race costs one wake-up more.
 */
static __always_inline __u64 lt_wake_on(__u64 pending, __u64 size)
{
	__u64 ring = lt_ring_size(), now, *last;
	__u32 zero = 0;

	if (pending >= ring / 4)
		return BPF_RB_FORCE_WAKEUP;
	if (pending > size)
		return BPF_RB_NO_WAKEUP;
	last = bpf_map_lookup_elem(&lt_wake, &zero);
	if (!last)
		return BPF_RB_NO_WAKEUP;
	now = bpf_ktime_get_ns();
	if (now - *last < LT_WAKE_GAP_NS)
		return BPF_RB_NO_WAKEUP;
	*last = now;
	return BPF_RB_FORCE_WAKEUP;
}

/*
 * A record as long as what it carries: built in a per-CPU buffer (a reserve takes
 * only a constant size), then copied into the ring (bpf_ringbuf_output) as
 * lt_reserve + lt_submit would write it: its header filled, the loss window
 * carried before it, a failure counted as a drop, `shed` counted. The caller
 * tested lt_off and lt_throttled before building it. `size` is bounded by the
 * buffer; `used` is lt_ring_used() as the caller read it (for shedding).
 */
static __always_inline bool lt_output(__u32 probe, __u16 type, void *rec, __u64 size, bool shed,
				      __u64 used)
{
	struct lt_stat *st = lt_stat_slot(probe);
	__u64 flags = lt_wake_on(used + size, size);

	if (st && st->lost_count)
		lt_report_lost(st, probe, size);
	lt_hdr_fill(rec, type, size);
	if (bpf_ringbuf_output(&lt_events, rec, size, flags)) {
		lt_drop_out(st, probe);
		return false;
	}
	if (st)
		st->shed += shed;
	lt_count(probe, false);
	return true;
}

/*
 * Submit without waking the consumer until a quarter of the ring is pending:
 * a wake-up per record costs more than the record (measured in
 * docs/performance.md), and the consumer polls on a short timer anyway.
 */
static __always_inline void lt_submit(__u32 probe, void *rec)
{
	/* reserved: the ring's pending bytes include it, its 8-byte header, rounded to 8 */
	__u64 flags = lt_wake_on(lt_ring_used(), (((struct lt_hdr *)rec)->size + 15) & ~7ull);

	lt_count(probe, false);
	bpf_ringbuf_submit(rec, flags);
}

#endif /* LT_RECORD_BPF_H */
