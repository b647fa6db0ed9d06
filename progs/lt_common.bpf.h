/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every object of the suite carries: the ring, the per-probe stats, the
 * settings the loader writes before load, and the stats' counting. The rest is
 * split by concern, each header including what it uses:
 *   lt_cgroup.bpf.h    workload identity: the task's cgroup id, per-cgroup counts
 *   lt_filter.bpf.h    the load-time filters (lt_skip)
 *   lt_loss.bpf.h      drops, the loss window, the blame per cgroup
 *   lt_rate.bpf.h      rate limits per (probe, cgroup)
 *   lt_record.bpf.h    records: reserve, output, submit, shedding, wake-ups, lost records
 *   lt_hist.bpf.h      log2 histograms in per-CPU hashes
 *   lt_state.bpf.h     per-object state (task storage or hash), latency starts
 *   lt_takeover.bpf.h  the *_nest and *_tp programs' marks and claims
 *   lt_core.bpf.h      CO-RE shims; lt_stack.bpf.h, lt_prof.bpf.h: the profiles
 *   lt_arch.bpf.h      the syscall tracepoints' registers per architecture
 */
#ifndef LT_COMMON_BPF_H
#define LT_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lt_abi.h"
#include "lt_hist.h"

/*
 * Shared maps and settings, here and in the headers above: every object that
 * includes a header carries the same weak definition of its maps, and
 * `bpftool gen object` merges them into one, whatever the order of the
 * objects on its command line.
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

/*
 * Set by the loader before load; read-only afterwards. All in one place, in
 * one order: each object's .rodata is laid out alike, whatever it includes.
 * A probe's own settings stay in its file.
 */
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
/* where per-object state lives (LT_LOCAL_*, lt_state.bpf.h): from a feature probe */
const volatile __u32 lt_cfg_local __weak = 0;
/*
 * Claims are used where the loader attached the *_tp programs (it sets
 * lt_cfg_claims), and wherever a program finds itself preemptible: per-CPU
 * counts pair the main program and its nest only where nothing runs between
 * (lt_takeover.bpf.h).
 */
const volatile bool lt_cfg_claims __weak = false;
/* tests (LOWTRACE_TP_LEVEL=only): the main and nest programs leave every event to *_tp */
const volatile bool lt_cfg_tp_only __weak = false;

/*
 * Does this suite write what consumers read (records, counts, histograms)? In a
 * section of its own, pinned as maps/live, so a later loader reaches it: `load`
 * sets it before the attach; `load --replace` leaves the new suite's unset until
 * that suite is attached and pinned, then sets it and, in the next store, unsets
 * the old one's; unload unsets it before the links go (the kernel releases an
 * unpinned link later, and the old programs run until then). State (entries,
 * claims, ancestry) is kept either way: what spans the switch is written once,
 * by the suite live at its end. (profile and alloc sessions load a suite of
 * their own, never pinned: always live, their programs do not look.)
 */
extern volatile __u32 lt_live; /* defined once, in common.bpf.c: the section holds it alone */

static __always_inline bool lt_off(void)
{
	return !lt_live;
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

/* An event a fallback program handled because the kernel had skipped the main one. */
static __always_inline void lt_count_recovered(__u32 probe)
{
	struct lt_stat *st = lt_stat_slot(probe);

	if (st)
		st->recovered++;
}

#endif /* LT_COMMON_BPF_H */
