/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Aggregates (kernel_agg.c): a pinned per-CPU map of struct lt_hist values (hash or array),
 * read with batch lookups where the kernel has them (one get_next_key + lookup per key where
 * not). Buffers are allocated once, at open: a read allocates nothing. Each value is summed
 * over the CPUs before `cb`. The opens return an enum lt_exit_code with the error printed;
 * lt_agg_read is a reader: it prints nothing and returns 0 or -errno.
 */
#ifndef LT_KERNEL_AGG_H
#define LT_KERNEL_AGG_H

#include <stdbool.h>
#include <stdint.h>

#include "lt_hist.h"
#include "records.h"

struct lt_agg;
typedef void (*lt_agg_fn)(void *ctx, const void *key, const struct lt_hist *sum);
/* the pinned histogram maps of aggregate probe `p` (.map, then .map2), read as one */
int lt_agg_open(struct lt_agg **out, const struct lt_probe *p);
int lt_agg_open_fd(struct lt_agg **out, int fd, const char *name); /* takes the fd */
void lt_agg_no_batch(struct lt_agg *a); /* read key by key, as on kernels without batch ops */
int lt_agg_read(struct lt_agg *a, lt_agg_fn cb, void *ctx);
uint32_t lt_agg_max_entries(const struct lt_agg *a);
bool lt_agg_batched(const struct lt_agg *a); /* the last read used batch lookups */
void lt_agg_close(struct lt_agg *a);

#endif
