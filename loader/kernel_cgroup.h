/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a suite keeps per cgroup (kernel_cgroup.c): the kernel's names of cgroups and the
 * identity hierarchy (lt_cg_names), each cgroup's lifecycle counts (lt_cg_counts) and its
 * lost records (lt_drop_cg). Readers, all of them: they print nothing and return 0 (or a
 * count) or -errno.
 */
#ifndef LT_KERNEL_CGROUP_H
#define LT_KERNEL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel_handles.h"
#include "lt_abi.h"

/*
 * The identity of a suite's records: its hierarchy, and the kernel's names of cgroups
 * (lt_cg_names) for lt_ident_cfg.kname. Pinned (h->suite NULL) or in-process. A suite of a
 * lowtrace before them: cgroup2, no names (names_fd -1). Open always returns 0.
 */
struct lt_identity {
	int ctrl; /* enum lt_cg_ctrl */
	bool tracked;
	uint64_t grace_ns;
	int names_fd;
};
int lt_identity_open(struct lt_identity *id, struct lt_handles *h);
/* cgroup_id's path into buf (at most cap bytes, "" for the root): its length, or -1 */
int lt_identity_kname(void *ctx, uint64_t cgroup_id, char *buf, size_t cap);
/* lt_cg_stat, and lt_cg_names' entries and cap (pinned suites): 0 or -errno */
int lt_identity_stat(const struct lt_identity *id, struct lt_cg_stat *cs, uint64_t *entries,
		     uint64_t *cap);
void lt_identity_close(struct lt_identity *id);

/*
 * lt_cg_counts: each cgroup's exec, exit and fork counts (summed over CPUs) for metrics --by.
 * The per-CPU buffer is allocated at open: a read allocates nothing. Open: 0 or -errno
 * (-ENOENT: a suite of a lowtrace without the map).
 */
struct lt_cg_reader;
typedef void (*lt_cg_fn)(void *ctx, uint64_t cgroup_id, const uint64_t n[LT_CG_KINDS]);
int lt_cg_open(struct lt_cg_reader **out);
int lt_cg_read(struct lt_cg_reader *r, lt_cg_fn cb, void *ctx); /* 0 or -errno */
/* one cgroup's entry to `cb`: 0, or -errno (-ENOENT: none) */
int lt_cg_get(struct lt_cg_reader *r, uint64_t cgroup_id, lt_cg_fn cb, void *ctx);
void lt_cg_delete(struct lt_cg_reader *r, uint64_t cgroup_id);
void lt_cg_close(struct lt_cg_reader *r);

/*
 * lt_drop_cg: records lost per (probe, cgroup of the writing task), dropped or held back by a
 * rate limit. Fills `out` with up to `max` entries that lost something, most lost first;
 * returns how many, or -errno (-ENOENT: a suite of a lowtrace without the map).
 */
struct lt_blame {
	uint64_t cgroup_id;
	uint64_t drops;
	uint64_t throttled;
	uint32_t probe; /* enum lt_probe_id */
};
int lt_blame_read(struct lt_blame *out, int max);

#endif
