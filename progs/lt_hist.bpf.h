/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Aggregate probes: log2 histograms (lt_hist.h) in per-CPU maps. */
#ifndef LT_HIST_BPF_H
#define LT_HIST_BPF_H

#include "lt_common.bpf.h"

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

/* Add `v` to the histogram of `key` (lt_hist_of) and count it, or count the drop (live only). */
static __always_inline void lt_hist_count(__u32 probe, void *map, const void *key, __u64 v)
{
	struct lt_hist *h;

	if (lt_off())
		return;
	h = lt_hist_of(map, key);
	if (!h) {
		lt_count(probe, true);
		return;
	}
	lt_hist_add(h, v);
	lt_count(probe, false);
}

#endif /* LT_HIST_BPF_H */
