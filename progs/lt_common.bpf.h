/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What every probe shares: the ring, the stats, the load-time filters. */
#ifndef LT_COMMON_BPF_H
#define LT_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lt_abi.h"
#include "lt_hist.h"

/*
 * Shared maps and settings: every object that includes this header carries
 * the same weak definition, and `bpftool gen object` merges them into one,
 * whatever the order of the objects on its command line.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LT_RINGBUF_DEFAULT);
} lt_events __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_PROBE_SLOTS);
	__type(key, __u32);
	__type(value, struct lt_stat);
} lt_stats __weak SEC(".maps");

/* the ring consumer's position in the loss counters (userspace only, pinned) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_PROBE_SLOTS);
	__type(key, __u32);
	__type(value, struct lt_seen);
} lt_seen __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} lt_cgroup __weak SEC(".maps");

/* per-cgroup lifecycle counts (metrics --by); preallocated, full: lt_stat.cg_full */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, LT_CG_MAX);
	__type(key, __u64);
	__type(value, struct lt_cg_count);
} lt_cg_counts __weak SEC(".maps");

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

/* when a record last woke the consumer because the ring was empty (lt_wake_on) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lt_wake __weak SEC(".maps");

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

/* Set by the loader before load; read-only afterwards. */
const volatile __u32 lt_cfg_tgid __weak = 0; /* 0: any process */
const volatile __u64 lt_cfg_cgroup_id __weak = 0; /* 0: any; else only tasks under lt_cgroup[0] */
/* 1: exec and open write short records when the ring is three quarters full (load --no-shed: 0) */
const volatile __u32 lt_cfg_shed __weak = 0;
/* load --ringbuf-size, as the loader sized lt_events (0: ask the ring) */
const volatile __u64 lt_cfg_ring_size __weak = 0;
/* load --rate-limit: events per second each cgroup may have recorded per probe; 0: no limit */
const volatile __u32 lt_cfg_rate[LT_PROBE_SLOTS] __weak = {};

/* load --identity-cgroup: the hierarchy whose cgroup ids records and per-cgroup maps carry */
const volatile __u32 lt_cfg_cg_ctrl __weak = LT_CTRL_V2;

/* The kernel's index of the identity hierarchy's controller (enum cgroup_subsys_id); -1: none */
static __always_inline int lt_cg_ssid(void)
{
#define LT_SSID(c, e)                                                               \
	case c:                                                                     \
		return bpf_core_enum_value_exists(enum cgroup_subsys_id, e)         \
			       ? (int)bpf_core_enum_value(enum cgroup_subsys_id, e) \
			       : -1
	switch (lt_cfg_cg_ctrl) {
		LT_SSID(LT_CTRL_PIDS, pids_cgrp_id);
		LT_SSID(LT_CTRL_MEMORY, memory_cgrp_id);
		LT_SSID(LT_CTRL_CPU, cpu_cgrp_id);
		LT_SSID(LT_CTRL_CPUACCT, cpuacct_cgrp_id);
		LT_SSID(LT_CTRL_BLKIO, io_cgrp_id);
		LT_SSID(LT_CTRL_DEVICES, devices_cgrp_id);
		LT_SSID(LT_CTRL_FREEZER, freezer_cgrp_id);
		LT_SSID(LT_CTRL_CPUSET, cpuset_cgrp_id);
	}
#undef LT_SSID
	return -1;
}

/*
 * The current task's cgroup id in the identity hierarchy. cgroup2: the helper.
 * A v1 controller's: css_set -> its css -> cgroup -> kernfs id, read each time
 * (a task that moved and then execs is named from the exec on). The branch not
 * taken is pruned at load: a cgroup2 node pays nothing for it.
 */
/* Where the kernel has it (5.11+), the current task as a BTF pointer: plain loads, no helper. */
#define LT_TASK_BTF bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)

static __always_inline struct cgroup_subsys_state *lt_cg_css(void)
{
	struct task_struct *t;
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cs;
	int i = lt_cg_ssid();

	if (i < 0 || i >= (int)(bpf_core_field_size(struct css_set, subsys) / sizeof(void *)))
		return NULL;
	if (LT_TASK_BTF) {
		/* i is a constant to the verifier (rodata, CO-RE): a fixed offset */
		cs = bpf_get_current_task_btf()->cgroups;
		return cs ? cs->subsys[i] : NULL;
	}
	t = (struct task_struct *)bpf_get_current_task();
	cs = BPF_CORE_READ(t, cgroups);
	if (!cs || bpf_core_read(&css, sizeof(css), &cs->subsys[i]))
		return NULL;
	return css;
}

static __always_inline __u64 lt_cg_id(void)
{
	struct cgroup_subsys_state *css;
	struct cgroup *cg;
	struct kernfs_node *kn;

	if (lt_cfg_cg_ctrl == LT_CTRL_V2)
		return bpf_get_current_cgroup_id();
	css = lt_cg_css();
	if (!css)
		return 0;
	if (LT_TASK_BTF) {
		cg = css->cgroup;
		kn = cg ? cg->kn : NULL;
		return kn ? kn->id : 0;
	}
	return BPF_CORE_READ(css, cgroup, kn, id);
}

#define LT_CG_DEPTH 16 /* --cgroup in a v1 hierarchy: ancestors looked at (k8s nests 5) */

/* --cgroup: is the current task in lt_cfg_cgroup_id or below it, in the identity hierarchy? */
static __always_inline bool lt_cg_under(void)
{
	struct cgroup_subsys_state *css;

	if (lt_cfg_cg_ctrl == LT_CTRL_V2)
		return bpf_current_task_under_cgroup(&lt_cgroup, 0) == 1;
	css = lt_cg_css();
	for (int d = 0; d < LT_CG_DEPTH && css; d++) {
		if (BPF_CORE_READ(css, cgroup, kn, id) == lt_cfg_cgroup_id)
			return true;
		css = BPF_CORE_READ(css, parent);
	}
	return false;
}

/* True when a load-time filter is set: an event whose process is unknown is then skipped. */
static __always_inline bool lt_filtering(void)
{
	return lt_cfg_tgid || lt_cfg_cgroup_id;
}

/* What an event is tested against: lt_skip's flags. */
#define LT_SKIP_CURRENT (1u << 0) /* the event is the current task's, not `task`'s */
#define LT_SKIP_CGROUP (1u << 1) /* --cgroup applies: it can only test the current task */

/*
 * The load-time filters, tested here and nowhere else: true when an event is
 * skipped. --pid keeps the thread group of the current task or `task` (flags)
 * and `also`, another process the event is about (a signal's target, an OOM
 * victim; 0: none). A new filter goes here and in lt_filtering.
 */
static __always_inline bool lt_skip(struct task_struct *task, __u32 also, unsigned int flags)
{
	if (lt_cfg_tgid) {
		/* read only with --pid: these probes run on every event */
		__u32 tgid = flags & LT_SKIP_CURRENT ? bpf_get_current_pid_tgid() >> 32
						     : BPF_CORE_READ(task, tgid);

		if (tgid != lt_cfg_tgid && (!also || also != lt_cfg_tgid))
			return true;
	}
	return flags & LT_SKIP_CGROUP && lt_cfg_cgroup_id && !lt_cg_under();
}

/* The usual case: the event is the current task's, every filter applies. */
static __always_inline bool lt_skip_current(void)
{
	return lt_skip(NULL, 0, LT_SKIP_CURRENT | LT_SKIP_CGROUP);
}

static __always_inline struct lt_stat *lt_stat_slot(__u32 probe)
{
	return bpf_map_lookup_elem(&lt_stats, &probe);
}

/*
 * Record probes count records written as events and failed reserves as drops;
 * aggregate probes count map updates as events and failed inserts (map full) as drops.
 */
static __always_inline void lt_count(__u32 probe, bool dropped)
{
	struct lt_stat *st = lt_stat_slot(probe);

	if (!st)
		return;
	if (dropped)
		st->drops++;
	else
		st->events++;
}

/* The value of `key` in a hash `map`, added as `zero` if missing; NULL when it cannot be. */
static __always_inline void *lt_lookup_or_add(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	/* -EEXIST: another CPU added it first; the lookup finds it */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* One exec, exit or fork of the current task's cgroup, in lt_cg_counts; returns that cgroup. */
static __always_inline __u64 lt_cg_count(__u32 probe, enum lt_cg_kind kind)
{
	static const struct lt_cg_count zero;
	__u64 id = lt_cg_id();
	struct lt_cg_count *c = lt_lookup_or_add(&lt_cg_counts, &id, &zero);

	if (c && kind < LT_CG_KINDS) {
		c->n[kind]++; /* per CPU: no other writer */
	} else {
		struct lt_stat *st = lt_stat_slot(probe);

		if (st)
			st->cg_full++;
	}
	return id;
}

/* An event a fallback program handled because the kernel had skipped the main one. */
static __always_inline void lt_count_recovered(__u32 probe)
{
	struct lt_stat *st = lt_stat_slot(probe);

	if (st)
		st->recovered++;
}

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
 * Reserve a record of a constant size and fill its header; a failure is counted
 * as a drop, never silent, and joins this CPU's loss window of the probe, as
 * does an event the probe's rate limit holds back (lt_throttled). The next
 * record the probe writes here carries the window: a struct lt_lost just before
 * it in the ring, so a consumer sees where the stream has a hole. The lost
 * record is reserved first (the ring keeps reservation order) and given back if
 * the record itself does not fit: then the window grows instead. Each
 * reservation is tested once: 5.10's verifier explores a second NULL test of a
 * pointer it knows is valid and then finds its reference unreleased. Records
 * of a length known only at run time: lt_output.
 */
static __always_inline void *lt_reserve(__u32 probe, __u16 type, __u16 size)
{
	struct lt_stat *st = lt_stat_slot(probe);
	struct lt_lost *lost;
	void *rec;

	if (lt_throttled(st, probe))
		return NULL;
	if (st && st->lost_count) {
		__u32 *b = lt_busy();

		/* another program on this CPU is changing a window: it stays for later */
		lost = b && *b == 1 ? bpf_ringbuf_reserve(&lt_events, sizeof(*lost), 0) : NULL;
		if (lost) {
			__u64 n = st->lost_count, t = st->lost_throttled;

			lt_lost_fill(lost, st, probe, n, t);
			rec = bpf_ringbuf_reserve(&lt_events, size, 0);
			if (!rec) {
				bpf_ringbuf_discard(lost, BPF_RB_NO_WAKEUP);
				lt_unbusy(b);
				lt_drop(st, probe);
				return NULL;
			}
			/* the record that follows wakes the consumer if it is time */
			bpf_ringbuf_submit(lost, BPF_RB_NO_WAKEUP);
			/* minus what it reported: a preempting program's drop stays counted */
			st->lost_count -= n;
			st->lost_throttled -= t;
			lt_unbusy(b);
			lt_hdr_fill(rec, type, size);
			return rec;
		}
		lt_unbusy(b);
	}
	rec = bpf_ringbuf_reserve(&lt_events, size, 0);
	if (!rec) {
		lt_drop(st, probe);
		return NULL;
	}
	lt_hdr_fill(rec, type, size);
	return rec;
}

/*
 * The consumer's claim of this CPU's loss windows (lt_lost_flush, run on each
 * CPU in turn, at least once a second and at its stop): each pending window
 * announced now as a lost record, so none waits for the CPU's next record of
 * its probe. It runs with preemption disabled, in an interrupt when on another
 * CPU than the caller's: no program of this CPU moves while it runs, and it
 * leaves the windows alone while one is inside a change (lt_busy): they are
 * claimed exactly once, by it or by the record that would carry them. 0: all
 * claimed; 1: try again (busy, or the ring was full).
 */
static __always_inline int lt_lost_claim(void)
{
	__u32 zero = 0, *b = bpf_map_lookup_elem(&lt_lost_busy, &zero);
	int ret = 0;

	if (!b || *b)
		return 1;
	__sync_fetch_and_add(b, 1);
	for (__u32 probe = 0; probe < LT_PROBE_SLOTS; probe++) {
		struct lt_stat *st = lt_stat_slot(probe);
		struct lt_lost *lost;
		__u64 n, t;

		if (!st || !st->lost_count)
			continue;
		lost = bpf_ringbuf_reserve(&lt_events, sizeof(*lost), 0);
		if (!lost) {
			ret = 1;
			break;
		}
		n = st->lost_count;
		t = st->lost_throttled;
		lt_lost_fill(lost, st, probe, n, t);
		/* no task wrote it: not the one this interrupt happened to stop */
		lost->hdr.pid = lost->hdr.tid = 0;
		lost->hdr.cgroup_id = 0;
		bpf_ringbuf_submit(lost, 0);
		st->lost_count -= n;
		st->lost_throttled -= t;
	}
	__sync_fetch_and_add(b, -1);
	return ret;
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
 * tested lt_throttled before building it. `size` is bounded by the buffer; `used`
 * is lt_ring_used() as the caller read it (for shedding).
 */
static __always_inline bool lt_output(__u32 probe, __u16 type, void *rec, __u64 size, bool shed,
				      __u64 used)
{
	struct lt_stat *st = lt_stat_slot(probe);
	__u64 flags = lt_wake_on(used + size, size);
	struct lt_lost *lost;

	if (st && st->lost_count) {
		__u32 *b = lt_busy();

		lost = b && *b == 1 ? bpf_ringbuf_reserve(&lt_events, sizeof(*lost), 0) : NULL;
		if (lost) {
			__u64 n = st->lost_count, t = st->lost_throttled;

			/* the lost record's time first: it comes before the record it precedes */
			lt_lost_fill(lost, st, probe, n, t);
			lt_hdr_fill(rec, type, size);
			/* reserved after the lost record: read after it */
			if (bpf_ringbuf_output(&lt_events, rec, size, BPF_RB_NO_WAKEUP)) {
				bpf_ringbuf_discard(lost, BPF_RB_NO_WAKEUP);
				lt_unbusy(b);
				lt_drop(st, probe);
				return false;
			}
			bpf_ringbuf_submit(lost, flags);
			st->lost_count -= n;
			st->lost_throttled -= t;
			lt_unbusy(b);
			st->shed += shed;
			lt_count(probe, false);
			return true;
		}
		lt_unbusy(b);
	}
	lt_hdr_fill(rec, type, size);
	if (bpf_ringbuf_output(&lt_events, rec, size, flags)) {
		lt_drop(st, probe);
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

static __always_inline void lt_hist_add(struct lt_hist *h, __u64 v)
{
	__u32 s = lt_hist_slot(v);

	h->count++;
	h->sum_ns += v;
	if (s < LT_HIST_SLOTS)
		h->slot[s]++;
}

/* The histogram of `key` in a per-CPU hash of struct lt_hist, created empty if missing. */
static __always_inline struct lt_hist *lt_hist_of(void *map, const void *key)
{
	static const struct lt_hist zero;

	return lt_lookup_or_add(map, key, &zero);
}

/* Add `v` to the histogram of `key` (lt_hist_of) and count it, or count the drop. */
static __always_inline void lt_hist_count(__u32 probe, void *map, const void *key, __u64 v)
{
	struct lt_hist *h = lt_hist_of(map, key);

	if (!h) {
		lt_count(probe, true);
		return;
	}
	lt_hist_add(h, v);
	lt_count(probe, false);
}

/*
 * Per-object state: what a probe keeps about a thread or a socket between two
 * of its events. Where tracing programs can use local storage (5.11+) it lives
 * in the task or the socket, grows and shrinks with them and is freed with
 * them; elsewhere in a preallocated hash keyed by thread id or socket address,
 * sized by a load option, where a full map is counted as a drop. The loader
 * sets lt_cfg_local from a feature probe and retypes the maps to match; the
 * verifier prunes the branch a kernel does not take (the value is frozen).
 */
const volatile __u32 lt_cfg_local __weak = 0;

/* A task state map: value V, one per thread. */
#define LT_TASK_STATE_MAX 256 /* bytes lt_task_new can create zeroed on the fallback */
#define LT_TASK_STATE(name, V)                                                     \
	_Static_assert(sizeof(V) <= LT_TASK_STATE_MAX, #name ": state too large"); \
	struct {                                                                   \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);                           \
		__uint(map_flags, BPF_F_NO_PREALLOC);                              \
		__type(key, int);                                                  \
		__type(value, V);                                                  \
	} name SEC(".maps")

/* The state of task `t` (thread id `tid`) in `map`, or NULL. */
static __always_inline void *lt_task_get(void *map, struct task_struct *t, __u32 tid)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		return bpf_task_storage_get(map, t, NULL, 0);
	return bpf_map_lookup_elem(map, &tid);
}

/*
 * The state of task `t`, created zeroed if it has none. NULL when it cannot
 * be created (the fallback hash is full; local storage busy on this CPU, or
 * out of memory): the caller counts what that loses.
 */
static __always_inline void *lt_task_new(void *map, struct task_struct *t, __u32 tid)
{
	static const __u8 zero[LT_TASK_STATE_MAX];
	void *v;

	if (lt_cfg_local & LT_LOCAL_TASK) {
		v = bpf_task_storage_get(map, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	} else {
		v = bpf_map_lookup_elem(map, &tid);
		if (!v) {
			bpf_map_update_elem(map, &tid, zero, BPF_NOEXIST);
			v = bpf_map_lookup_elem(map, &tid);
		}
	}
	return v;
}

/*
 * Set task `t`'s state to `size` bytes at `val`: false when it cannot be kept
 * (as lt_task_new; the caller counts it). One update on the fallback hash.
 */
static __always_inline bool lt_task_put(void *map, struct task_struct *t, __u32 tid,
					const void *val, __u32 size)
{
	void *v;

	if (lt_cfg_local & LT_LOCAL_TASK) {
		v = bpf_task_storage_get(map, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!v)
			return false;
		__builtin_memcpy(v, val, size);
		return true;
	}
	return bpf_map_update_elem(map, &tid, val, BPF_ANY) == 0;
}

/*
 * Done with a task's state `v` (its first u64 is zeroed: local storage stays
 * with the task until it exits, cheaper than a delete per event); the
 * fallback frees the hash slot.
 */
static __always_inline void lt_task_done(void *map, void *v, __u32 tid)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		*(__u64 *)v = 0;
	else
		bpf_map_delete_elem(map, &tid);
}

/* The current task for lt_task_*: its BTF pointer only where local storage is used. */
static __always_inline struct task_struct *lt_current(void)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		return bpf_get_current_task_btf();
	return NULL;
}

/* The current thread's id for lt_task_*: only the fallback needs it (a helper call saved). */
static __always_inline __u32 lt_current_tid(void)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		return 0;
	return (__u32)bpf_get_current_pid_tgid();
}

/*
 * Takeover of a skipped event. The kernel skips a tracing program that fires
 * while it already runs on that CPU (a softirq inside it; on kernels with
 * preemptible tracepoints, another task preempted inside it) and only counts
 * it. A probe's *_nest program, attached after the main one to the same
 * tracepoint, runs the same code for exactly the events the main one did not
 * see: the main program counts each event it saw (per kind), the nest program
 * takes one back or, if there is none, handles the event itself and counts it
 * as recovered.
 *
 * Where a tracepoint calls its programs with preemption disabled (up to
 * 6.18), nothing else runs on the CPU between the two but interrupts, whose
 * own events leave the count as they found it: a per-CPU count is exact and
 * costs a lookup. Where tracepoints are preemptible (7.x: each program runs
 * with migration disabled only), the task can be preempted or moved between
 * the two, so the count is the task's own (task storage; the thread-id hash
 * where there is none), atomic since a signal can be generated in an
 * interrupt over the task's own. That costs a storage allocation per new
 * task (docs/performance.md), so it is used only there, and by signal only:
 * exec, exit and fork claim their events there instead (lt_claim, below).
 */
enum { LT_MARK_EXEC, LT_MARK_EXIT, LT_MARK_FORK, LT_MARK_SIGNAL, LT_MARK_KINDS };
struct lt_mark {
	__u32 n[LT_MARK_KINDS];
	/* the claims of lt_claim (exec, exit, fork where tracepoints are preemptible) */
	__u32 fork_tid;
	__u32 exited;
	__u64 exec_mm;
	__u64 owner; /* the fallback hash: the thread's start time (a tid is reused) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_mark);
} lt_marks_cpu __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_mark);
} lt_marks __weak SEC(".maps");

/*
 * Is this tracing program preemptible? The kernel disabled migration for it
 * (7.x) rather than preemption for the whole tracepoint. Before the field
 * (5.10) nothing is.
 */
static __always_inline bool lt_run_preemptible(void)
{
	struct task_struct *t;

	if (!bpf_core_field_exists(struct task_struct, migration_disabled))
		return false;
	t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, migration_disabled) != 0;
}

/* The main program saw an event of `kind` (a constant). */
static __always_inline void lt_mark(__u32 kind)
{
	__u32 zero = 0;
	struct lt_mark *m;

	if (kind >= LT_MARK_KINDS)
		return;
	if (!lt_run_preemptible()) {
		m = bpf_map_lookup_elem(&lt_marks_cpu, &zero);
		if (m)
			m->n[kind]++;
		return;
	}
	m = lt_task_new(&lt_marks, lt_current(), (__u32)bpf_get_current_pid_tgid());
	if (m)
		__sync_fetch_and_add(&m->n[kind], 1);
}

/* In a *_nest program: did the main program see this event? Takes its mark back. */
static __always_inline bool lt_marked(__u32 kind)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct lt_mark *m;

	if (kind >= LT_MARK_KINDS)
		return false;
	if (!lt_run_preemptible()) {
		m = bpf_map_lookup_elem(&lt_marks_cpu, &zero);
		if (!m || !m->n[kind])
			return false;
		m->n[kind]--;
		return true;
	}
	m = lt_task_get(&lt_marks, lt_current(), tid);
	if (!m || !m->n[kind])
		return false;
	__sync_fetch_and_add(&m->n[kind], -1);
	/* the fallback hash holds marks in flight only */
	if (!(lt_cfg_local & LT_LOCAL_TASK) && !m->n[0] && !m->n[1] && !m->n[2] && !m->n[3])
		bpf_map_delete_elem(&lt_marks, &tid);
	return true;
}

/*
 * The third level. Where tracepoints are preemptible, two tasks preempted on
 * one CPU inside the main program and its nest hold both: a third task's event
 * would be lost. There the loader also attaches a *_tp program to the classic
 * tracepoint of the same event: perf runs it with preemption disabled, so no
 * preempted task can hold it. Three programs see each event and the perf one
 * can run first (load --replace, another perf user of the event registered
 * before us), so counts cannot pair them: each event has an identity (exec:
 * its new mm; exit: the thread; fork: the child's tid) and the first program
 * to claim it in the task's storage writes the record. Exec, exit and fork
 * never happen in an interrupt, so the task's own claims need no atomics.
 */
static __always_inline bool lt_claim(__u32 kind, __u64 id, bool main)
{
	struct lt_mark *m = lt_task_new(&lt_marks, lt_current(), (__u32)bpf_get_current_pid_tgid());

	/* no room for the claim: the main program writes the event, a takeover
	 * does not (else every event would be written thrice); what that loses
	 * stays in missed */
	if (!m)
		return main;
	if (!(lt_cfg_local & LT_LOCAL_TASK)) {
		struct task_struct *t = (struct task_struct *)bpf_get_current_task();
		__u64 start = BPF_CORE_READ(t, start_time);

		if (m->owner != start) { /* a dead thread's claims, under its reused tid */
			m->exec_mm = m->fork_tid = m->exited = 0;
			m->owner = start;
		}
	}
	if (kind == LT_MARK_EXEC) {
		if (m->exec_mm == id)
			return false;
		m->exec_mm = id;
	} else if (kind == LT_MARK_FORK) {
		if (m->fork_tid == (__u32)id)
			return false;
		m->fork_tid = id;
	} else if (kind == LT_MARK_EXIT) {
		if (m->exited)
			return false;
		m->exited = 1;
	}
	return true;
}

/*
 * Claims are used where the loader attached the *_tp programs (it sets
 * lt_cfg_claims), and wherever a program finds itself preemptible: per-CPU
 * counts pair the main program and its nest only where nothing runs between.
 */
const volatile bool lt_cfg_claims __weak = false;
/* tests (LOWTRACE_TP_LEVEL=only): the main and nest programs leave every event to *_tp */
const volatile bool lt_cfg_tp_only __weak = false;

static __always_inline bool lt_claims(void)
{
	return lt_cfg_claims || lt_run_preemptible();
}

/*
 * The main program of exec, exit, fork: does it handle event `id`? Only not
 * where a *_tp program ran first and took it (and counted it recovered: the
 * count is given back, the kernel did not skip this program).
 */
static __always_inline bool lt_main_takes(__u32 probe, __u32 kind, __u64 id)
{
	struct lt_stat *st;

	if (lt_cfg_tp_only)
		return false;
	if (!lt_claims() || lt_claim(kind, id, true))
		return true;
	st = lt_stat_slot(probe);
	if (st)
		st->recovered--; /* the sum over CPUs is what counts */
	return false;
}

/* Its nest: the event is the nest's if the main program did not see it. */
static __always_inline bool lt_nest_takes(__u32 kind, __u64 id)
{
	if (lt_cfg_tp_only)
		return false;
	if (!lt_claims())
		return !lt_marked(kind);
	return lt_claim(kind, id, false);
}

/* The end of the main program: a per-CPU mark where claims are not used. */
static __always_inline void lt_main_done(__u32 kind)
{
	if (!lt_claims())
		lt_mark(kind);
}

/* Latency probes: the start time of the current thread; a lost one is counted as a drop. */
static __always_inline void lt_start(__u32 probe, void *map, struct task_struct *t, __u32 tid)
{
	__u64 now = bpf_ktime_get_ns();

	if (!lt_task_put(map, t, tid, &now, sizeof(now)))
		lt_count(probe, true);
}

/* The time since lt_start for this thread, which is forgotten; false if there was none. */
static __always_inline bool lt_elapsed(void *map, struct task_struct *t, __u32 tid, __u64 *delta)
{
	__u64 *start = lt_task_get(map, t, tid);

	if (!start || !*start)
		return false;
	*delta = bpf_ktime_get_ns() - *start;
	lt_task_done(map, start, tid);
	return true;
}

/* Per-object state of objects without local storage (block requests): a hash by `key`. */
static __always_inline void lt_key_start(__u32 probe, void *map, const void *key)
{
	__u64 now = bpf_ktime_get_ns();

	if (bpf_map_update_elem(map, key, &now, BPF_ANY))
		lt_count(probe, true);
}

static __always_inline bool lt_key_elapsed(void *map, const void *key, __u64 *delta)
{
	__u64 *start = bpf_map_lookup_elem(map, key);

	if (!start)
		return false;
	*delta = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(map, key);
	return true;
}

#endif /* LT_COMMON_BPF_H */
