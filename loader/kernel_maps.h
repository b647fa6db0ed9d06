/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Plain map reads (kernel_maps.c) for the profiles' aggregates, read once at the end.
 * Readers: they print nothing and return 0 or -errno.
 */
#ifndef LT_KERNEL_MAPS_H
#define LT_KERNEL_MAPS_H

#include <stdint.h>

/* Keys and values go through the caller's buffers; `cb` returns < 0 to stop. */
typedef int (*lt_map_fn)(void *ctx, const void *key, const void *val);
int lt_map_each(int fd, void *key, void *next, void *val, lt_map_fn cb, void *ctx);
int lt_map_lookup(int fd, const void *key, void *val);
/* Sum over CPUs of slot `key` of a per-CPU array of __u64 into *sum. */
int lt_percpu_u64(int fd, uint32_t key, uint64_t *sum);

#endif
