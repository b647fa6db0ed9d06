// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cgroup births, renames and deaths in the identity hierarchy: each cgroup's
 * path when it is made, so a cgroup that lived a millisecond still names its
 * records, and its end, which frees what the per-cgroup maps hold for it a
 * grace later. Not a probe: loaded with every suite (lt_cg_names, the loader).
 * The kernel fires these tracepoints under cgroup_mutex: one runs at a time.
 */
#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_CGN_MAX);
	__type(key, __u64);
	__type(value, struct lt_cg_name);
} lt_cg_names SEC(".maps");

/* deaths, oldest first: each rmdir frees those past the grace */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_CGN_MAX);
	__type(value, struct lt_cg_dead);
} lt_cg_dead SEC(".maps");

/* [0] the programs' counts; [1] the loader's seed (seeded, full): readers sum the two */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct lt_cg_stat);
} lt_cg_stat SEC(".maps");

/* a name is built here: too big for the stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_cg_name);
} lt_cg_scratch SEC(".maps");

/* load --cgroup-grace: how long a dead cgroup's name and counts stay */
const volatile __u64 lt_cfg_cg_grace_ns = LT_CG_GRACE_S * 1000000000ull;

#define CG_REAP_BATCH 32 /* deaths one rmdir frees at most: more than one, so they keep up */

static __always_inline struct lt_cg_stat *cg_stat(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&lt_cg_stat, &zero);
}

/* Is cg in the identity hierarchy: cgroup2's (id 0), or the one the controller is bound to? */
static __always_inline bool cg_ours(struct cgroup *cg)
{
	int ssid;

	if (lt_cfg_cg_ctrl == LT_CTRL_V2)
		return BPF_CORE_READ(cg, root, hierarchy_id) == 0;
	ssid = lt_cg_ssid();
	return ssid >= 0 && ssid < 32 && (BPF_CORE_READ(cg, root, subsys_mask) >> ssid) & 1;
}

/* path into n: cut at LT_CG_PATH - 1 bytes (flagged) */
static __always_inline void cg_path(struct lt_cg_name *n, const char *path)
{
	long len = bpf_probe_read_kernel_str(n->path, sizeof(n->path), path);
	char more = 0;

	if (len <= 0) {
		n->path[0] = 0;
		len = 1;
	}
	n->path_len = len - 1;
	n->flags &= ~LT_CGN_CUT;
	if (len == sizeof(n->path) && !bpf_probe_read_kernel(&more, 1, path + len - 1) && more)
		n->flags |= LT_CGN_CUT;
}

SEC("raw_tp/cgroup_mkdir")
int BPF_PROG(lt_cg_mkdir, struct cgroup *cg, const char *path)
{
	struct lt_cg_stat *st = cg_stat();
	struct lt_cg_name *n;
	__u32 zero = 0;
	__u64 id;

	if (!st)
		return 0;
	if (!cg_ours(cg)) {
		st->other++;
		return 0;
	}
	n = bpf_map_lookup_elem(&lt_cg_scratch, &zero);
	if (!n)
		return 0;
	id = BPF_CORE_READ(cg, kn, id);
	n->born_ns = bpf_ktime_get_ns();
	n->dead_ns = 0;
	n->hier = BPF_CORE_READ(cg, root, hierarchy_id);
	n->level = BPF_CORE_READ(cg, level);
	n->flags = 0;
	n->_pad0 = 0;
	cg_path(n, path);
	if (bpf_map_update_elem(&lt_cg_names, &id, n, BPF_ANY))
		st->full++;
	else
		st->born++;
	return 0;
}

SEC("raw_tp/cgroup_rename")
int BPF_PROG(lt_cg_rename, struct cgroup *cg, const char *path)
{
	struct lt_cg_stat *st = cg_stat();
	struct lt_cg_name *n;
	__u64 id;

	if (!st || !cg_ours(cg))
		return 0;
	id = BPF_CORE_READ(cg, kn, id);
	n = bpf_map_lookup_elem(&lt_cg_names, &id);
	if (!n)
		return 0;
	cg_path(n, path);
	st->renamed++;
	return 0;
}

/* A cgroup's entries end: its name and its lifecycle counts. */
static __always_inline void cg_free(__u64 id)
{
	bpf_map_delete_elem(&lt_cg_names, &id);
	bpf_map_delete_elem(&lt_cg_counts, &id);
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(lt_cg_rmdir, struct cgroup *cg, const char *path)
{
	struct lt_cg_stat *st = cg_stat();
	struct lt_cg_dead d;
	struct lt_cg_name *n;
	__u64 now;

	if (!st || !cg_ours(cg))
		return 0;
	now = bpf_ktime_get_ns();
	d.id = BPF_CORE_READ(cg, kn, id);
	d.dead_ns = now;
	n = bpf_map_lookup_elem(&lt_cg_names, &d.id);
	if (n)
		n->dead_ns = now;
	st->died++;
	if (bpf_map_push_elem(&lt_cg_dead, &d, 0)) {
		/* no room to wait: its entries go now (counted) */
		st->queue_full++;
		cg_free(d.id);
	}
	for (int i = 0; i < CG_REAP_BATCH; i++) {
		if (bpf_map_peek_elem(&lt_cg_dead, &d) || now - d.dead_ns < lt_cfg_cg_grace_ns)
			break;
		if (bpf_map_pop_elem(&lt_cg_dead, &d))
			break;
		cg_free(d.id);
		st->reaped++;
	}
	return 0;
}
