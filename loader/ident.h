/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Workload identity: a cgroup v2 id to its path below the cgroup2 root, and
 * the container id, pod uid and systemd unit the path names. A pure layer
 * (files in /proc and the cgroup2 mount, no libbpf). Everything is allocated
 * by lt_ident_open; a cache hit allocates nothing.
 */
#ifndef LT_IDENT_H
#define LT_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

#define LT_IDENT_CID_LEN 64 /* container ids: 64 hex digits */
#define LT_IDENT_POD_LEN 36 /* pod uids: a UUID */
#define LT_IDENT_UNIT_MAX 128 /* longer unit names are not kept */

#define LT_IDENT_PLAIN_CGROUP 1 /* the encoders copy it as it is */
#define LT_IDENT_PLAIN_UNIT 2

/* What a cgroup path names; a field is empty ("") when the path names none. */
struct lt_ident {
	const char *cgroup; /* path below the cgroup2 root ("/" for the root), NUL-terminated */
	uint16_t cgroup_len;
	uint8_t cid_len, pod_len, unit_len;
	uint8_t plain; /* LT_IDENT_PLAIN_*: printable ASCII without space, quote or backslash */
	char container_id[LT_IDENT_CID_LEN + 1];
	char pod_uid[LT_IDENT_POD_LEN + 1];
	char unit[LT_IDENT_UNIT_MAX + 1];
	/* the runtime's names of container_id (lt_ident_cfg.runtime), NULL: none known */
	const struct lt_rt_meta *meta;
};

struct lt_ident_cfg {
	uint32_t cap; /* cgroup entries (0: 16384) */
	uint32_t pid_cap; /* processes with a v1 identity (0: 4096) */
	uint32_t
		path_max; /* bytes of one stored path (0: 256, at most 1024); longer ones are cut */
	uint64_t rescan_ns; /* least time between rescans (0: 100 ms) */
	uint64_t grace_ns; /* kept after its cgroup is gone (0: 30 s) */
	uint64_t neg_ns; /* an id no rescan found stays unknown (0: 10 s) */
	/* for tests, NULL for this machine's: */
	const char *mountinfo; /* /proc/self/mountinfo */
	const char *root; /* the cgroup2 root, instead of the mountinfo's */
	const char *proc; /* /proc, for PID/cgroup */
	bool no_v2; /* a pure v1 host (tests) */
	/*
	 * The identity hierarchy the records' ids are in (enum lt_cg_ctrl: 0 is cgroup2, else
	 * a v1 controller's, walked at its mount); with a v1 one no /proc/PID/cgroup is read.
	 */
	int ctrl;
	/*
	 * The kernel's names (lt_cg_names), asked on a miss before any walk: the path of `id`
	 * into buf (at most cap bytes, no NUL needed), its length; < 0: unknown. NULL: none.
	 */
	int (*kname)(void *ctx, uint64_t id, char *buf, size_t cap);
	void *kctx;
	/* names from the container runtimes' files (loader/runtime.c): meta of a container */
	bool runtime;
	const char *rt_root; /* tests: the directory that stands for "/" */
};

/* The controllers a v1 identity hierarchy can be named by (enum lt_cg_ctrl), "cgroup2" first. */
const char *lt_ident_ctrl_name(int ctrl);
/*
 * The identity hierarchy for `want` ("auto" or NULL, "cgroup2", or a controller name) on
 * the host `mountinfo` describes (NULL: /proc/self/mountinfo): auto picks a v1 controller's
 * hierarchy when one is mounted (cgroupfs runtimes place every container there; the
 * unified one of a hybrid host holds none of them), preferring pids, memory, cpu, cpuacct,
 * blkio, devices, freezer, cpuset; else cgroup2. Returns enum lt_cg_ctrl, or -ENOENT when
 * the wanted one is not mounted (mount point, when found, into `mnt`), -EINVAL: unknown.
 */
int lt_ident_pick(const char *want, const char *mountinfo, char *mnt, size_t mnt_len);

struct lt_ident_stats {
	uint64_t entries, cap; /* cgroups cached now (negative ones included), the cap */
	uint64_t hits, misses, unknown; /* unknown: misses no rescan resolved */
	uint64_t rescans, evictions, expired; /* expired: gone past the grace, negative timed out */
	uint64_t v1_lookups, v1_entries, v1_evictions; /* /proc/PID/cgroup reads, per-pid cache */
	uint64_t v1_cap, v1_expired; /* v1_expired: dropped past their exit's grace */
	uint64_t knamed; /* misses the kernel's names answered */
	struct lt_rt_stats rt; /* the runtimes' names */
};

struct ident_impl;
/* Opaque: everything behind one pointer, allocated by lt_ident_open. */
struct lt_ident_cache {
	struct ident_impl *impl;
};

/*
 * Find the cgroup2 mount (and the v1 hierarchies) in the mountinfo, allocate
 * everything and walk the tree once. Returns 0, or -ENOMEM; a host without
 * cgroups gives a cache that knows nothing. Close it even when open failed.
 */
int lt_ident_open(struct lt_ident_cache *c, const struct lt_ident_cfg *cfg);
void lt_ident_close(struct lt_ident_cache *c);

/*
 * The identity of a record's task: its cgroup v2 id and process. NULL when
 * unknown. On a hybrid or v1 host, when the v2 path names no container or
 * pod, /proc/PID/cgroup is read at the process's first record and kept until
 * lt_ident_exit. The pointer is valid until the next call.
 */
const struct lt_ident *lt_ident_get(struct lt_ident_cache *c, uint64_t cgroup_id, uint32_t pid,
				    uint64_t now_ns);
/* The process exited: its v1 entry goes 1 s later (records its exit causes come after it). */
void lt_ident_exit(struct lt_ident_cache *c, uint32_t pid);

/*
 * For readers that keep cgroup ids of their own (metrics --by): whether the
 * last rescan missed this id (it is gone), or, for an id not cached, whether
 * a rescan that began after `since_ns` (when the reader learnt of the id)
 * walked the whole tree without finding it; and a rescan now, within the
 * rate limit (a cache that only rescans on a miss never learns that a cached
 * cgroup went away).
 */
bool lt_ident_gone(struct lt_ident_cache *c, uint64_t cgroup_id, uint64_t since_ns);
void lt_ident_refresh(struct lt_ident_cache *c, uint64_t now_ns);

void lt_ident_stats(const struct lt_ident_cache *c, struct lt_ident_stats *st);
/* The runtime's names of container `cid` (cfg.runtime), NULL: unknown. Valid until the next call. */
const struct lt_rt_meta *lt_ident_runtime(struct lt_ident_cache *c, const char *cid,
					  uint64_t now_ns);
/* The cgroup2 mount found ("" when none), and how many v1 hierarchies. */
const char *lt_ident_root(const struct lt_ident_cache *c);
unsigned int lt_ident_v1_count(const struct lt_ident_cache *c);

/*
 * Every cgroup of the tree mounted at `root`, the root first: fn gets its id (the
 * directory's inode) and its path below the root (len 0 for the root). For the loader's
 * seed of the kernel's names; allocates its buffers for the walk. 0, or -errno.
 */
int lt_ident_walk(const char *root,
		  void (*fn)(void *ctx, uint64_t id, const char *path, size_t len), void *ctx);

/*
 * From a cgroup path: container_id, pod_uid and unit (empty when absent).
 * Pure; `id->cgroup` is not touched.
 */
void lt_ident_derive(const char *path, size_t len, struct lt_ident *id);

#endif
