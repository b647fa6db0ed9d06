/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Log2 histograms as text (bars, like libbpf-tools) and as JSON; append-style, no allocation. */
#ifndef LT_HIST_FMT_H
#define LT_HIST_FMT_H

#include "encode.h"
#include "lt_hist.h"

/* dst += src, field by field (every field is a __u64 counter) */
static inline void lt_hist_merge(struct lt_hist *dst, const struct lt_hist *src)
{
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	for (int i = 0; i < LT_HIST_SLOTS; i++)
		dst->slot[i] += src->slot[i];
}

/* "read", "write", "flush", "discard" or "other" */
const char *lt_bio_op_name(unsigned int op);

/* Room one histogram needs in either form: callers flush below this (a bar line is at
 * most 102 bytes, with a count of 20 digits). */
#define LT_HIST_ENC_MAX (LT_HIST_SLOTS * 110 + 256)

/* "TITLE: count N, sum S ns, mean M ns" then one bar line per bucket from the
 * first to the last non-empty one */
void lt_hist_text(struct lt_buf *b, const char *title, const struct lt_hist *h);
/* ,"count":N,"sum_ns":S,"buckets":[{"lo":L,"hi":H,"count":C},...] (non-empty buckets;
 * hi is exclusive) */
void lt_hist_json(struct lt_buf *b, const struct lt_hist *h);

#endif
