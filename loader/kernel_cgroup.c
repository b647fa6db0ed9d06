// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a suite keeps per cgroup (kernel_cgroup.h): the kernel's names of cgroups
 * (identity), lifecycle counts (metrics --by), and lost records (who filled the ring).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_cgroup.h"
#include "kernel_int.h"
#include "kernel_status.h"
#include "lowtrace.h"

/* ---- lt_cg_names: the kernel's names of cgroups (identity) ---- */

int lt_identity_open(struct lt_identity *id, struct lt_handles *h)
{
	struct lt_status st;

	memset(id, 0, sizeof(*id));
	id->names_fd = -1;
	if (h->suite) {
		struct lowtrace *skel = h->suite->skel;

		id->ctrl = skel->rodata->lt_cfg_cg_ctrl;
		id->grace_ns = skel->rodata->lt_cfg_cg_grace_ns;
		id->names_fd = dup(bpf_map__fd(skel->maps.lt_cg_names));
		id->tracked = id->names_fd >= 0;
		return 0;
	}
	memset(&st, 0, sizeof(st));
	read_rodata(&st);
	id->ctrl = st.cg_ctrl;
	id->grace_ns = st.cg_grace_ns;
	id->tracked = st.cg_tracked;
	id->names_fd = pin_get_ro(LT_PIN_DIR "/maps/lt_cg_names");
	return 0;
}

int lt_identity_kname(void *ctx, uint64_t cgroup_id, char *buf, size_t cap)
{
	const struct lt_identity *id = ctx;
	struct lt_cg_name n;
	__u64 key = cgroup_id;
	size_t len;

	if (id->names_fd < 0 || bpf_map_lookup_elem(id->names_fd, &key, &n))
		return -1;
	len = n.path_len < LT_CG_PATH ? n.path_len : LT_CG_PATH - 1;
	if (len > cap)
		len = cap;
	/* "/" is the root: the caller's empty path */
	if (len == 1 && n.path[0] == '/')
		len = 0;
	memcpy(buf, n.path, len);
	return (int)len;
}

int lt_identity_stat(const struct lt_identity *id, struct lt_cg_stat *cs, uint64_t *entries,
		     uint64_t *cap)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi), zero = 0, one = 1;
	__u64 key, next, *prev = NULL;
	struct lt_cg_stat seed;
	int fd = pin_get_ro(LT_PIN_DIR "/maps/lt_cg_stat"), err = 0;

	memset(cs, 0, sizeof(*cs));
	*entries = *cap = 0;
	if (fd < 0 || bpf_map_lookup_elem(fd, &zero, cs))
		err = -errno;
	/* the loader's seed, in its own slot */
	if (!err && !bpf_map_lookup_elem(fd, &one, &seed)) {
		cs->seeded += seed.seeded;
		cs->full += seed.full;
	}
	if (fd >= 0)
		close(fd);
	if (id->names_fd < 0)
		return err ? err : -ENOENT;
	if (!bpf_obj_get_info_by_fd(id->names_fd, &mi, &len))
		*cap = mi.max_entries;
	while (bpf_map_get_next_key(id->names_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		++*entries;
	}
	return err;
}

void lt_identity_close(struct lt_identity *id)
{
	if (id->names_fd >= 0)
		close(id->names_fd);
	id->names_fd = -1;
}

/* ---- lt_cg_counts: per-cgroup lifecycle counts (metrics --by) ---- */

#define CG_BATCH 128 /* entries per batch lookup: far more than a bucket ever holds */

struct lt_cg_reader {
	int fd;
	int ncpu;
	struct lt_cg_count *percpu; /* CG_BATCH entries of one value per possible CPU */
	__u64 keys[CG_BATCH];
};

int lt_cg_open(struct lt_cg_reader **out)
{
	struct lt_cg_reader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->fd = bpf_obj_get(LT_PIN_DIR "/maps/lt_cg_counts");
	if (r->fd < 0) {
		err = -errno;
		free(r);
		return err;
	}
	r->ncpu = libbpf_num_possible_cpus();
	r->percpu = r->ncpu > 0 ? calloc((size_t)CG_BATCH * r->ncpu, sizeof(*r->percpu)) : NULL;
	if (!r->percpu) {
		lt_cg_close(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

/* entry i of the last lookup: its counts summed over CPUs, to the callback */
static void cg_give(struct lt_cg_reader *r, __u32 i, lt_cg_fn cb, void *ctx)
{
	const struct lt_cg_count *v = r->percpu + (size_t)i * r->ncpu;
	uint64_t n[LT_CG_KINDS] = {};

	for (int c = 0; c < r->ncpu; c++)
		for (int k = 0; k < LT_CG_KINDS; k++)
			n[k] += v[c].n[k];
	cb(ctx, r->keys[i], n);
}

/*
 * Whole buckets at a time: an entry that stays in the map through the read is given exactly
 * once. A key-by-key walk is not: while cgroups come and go, the entry it stands on can be
 * deleted and its element reused in another bucket, and the rest of its bucket is skipped.
 * 0, or -errno (nothing said about the entries already given).
 */
static int cg_read_batch(struct lt_cg_reader *r, lt_cg_fn cb, void *ctx)
{
	__u64 cursor = 0; /* a bucket index (4 bytes for a hash): room to spare */
	bool first = true;

	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		__u32 count = CG_BATCH;
		int err = bpf_map_lookup_batch(r->fd, first ? NULL : &cursor, &cursor, r->keys,
					       r->percpu, &count, &o);

		err = err < 0 ? -errno : 0;
		for (__u32 i = 0; i < count && i < CG_BATCH; i++)
			cg_give(r, i, cb, ctx);
		if (err == -ENOENT)
			return 0; /* the last buckets */
		if (err)
			return err;
		first = false;
	}
}

/* one key at a time (a kernel without batch lookups): can skip an entry, see above */
static int cg_read_keys(struct lt_cg_reader *r, lt_cg_fn cb, void *ctx)
{
	__u64 key, next;
	__u64 *prev = NULL;

	while (bpf_map_get_next_key(r->fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(r->fd, &key, r->percpu))
			continue; /* deleted meanwhile */
		r->keys[0] = key;
		cg_give(r, 0, cb, ctx);
	}
	return errno == ENOENT ? 0 : -errno;
}

int lt_cg_read(struct lt_cg_reader *r, lt_cg_fn cb, void *ctx)
{
	/* a failed batch read gave some entries: given again, they count nothing twice */
	if (cg_read_batch(r, cb, ctx) == 0)
		return 0;
	return cg_read_keys(r, cb, ctx);
}

int lt_cg_get(struct lt_cg_reader *r, uint64_t cgroup_id, lt_cg_fn cb, void *ctx)
{
	r->keys[0] = cgroup_id;
	if (bpf_map_lookup_elem(r->fd, &r->keys[0], r->percpu))
		return -errno;
	cg_give(r, 0, cb, ctx);
	return 0;
}

void lt_cg_delete(struct lt_cg_reader *r, uint64_t cgroup_id)
{
	__u64 key = cgroup_id;

	bpf_map_delete_elem(r->fd, &key);
}

void lt_cg_close(struct lt_cg_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->percpu);
	free(r);
}

/* ---- lt_drop_cg: drops per (probe, cgroup) ---- */

static int blame_cmp(const void *a, const void *b)
{
	const struct lt_blame *x = a, *y = b;
	uint64_t nx = x->drops + x->throttled, ny = y->drops + y->throttled;

	if (nx != ny)
		return nx < ny ? 1 : -1;
	if (x->probe != y->probe)
		return x->probe < y->probe ? -1 : 1;
	return x->cgroup_id < y->cgroup_id ? -1 : x->cgroup_id > y->cgroup_id;
}

int lt_blame_read(struct lt_blame *out, int max)
{
	static struct lt_blame all[LT_BLAME_MAX];
	struct lt_blame_key key, next, *prev = NULL;
	int fd = pin_get_ro(LT_PIN_DIR "/maps/lt_drop_cg"), n = 0, err = 0;
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	/* a suite before rate limits keeps drops alone, a __u64 */
	union {
		struct lt_blame_val v;
		__u64 drops;
	} v;

	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len) ||
	    (mi.value_size != sizeof(v.v) && mi.value_size != sizeof(v.drops))) {
		close(fd);
		return -EINVAL;
	}
	while (n < LT_BLAME_MAX && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		memset(&v, 0, sizeof(v));
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue; /* evicted meanwhile */
		if (!v.v.drops && !v.v.throttled)
			continue; /* a rate-limit bucket that lost nothing */
		all[n++] = (struct lt_blame){ key.cgroup_id, v.v.drops, v.v.throttled, key.probe };
	}
	if (n < LT_BLAME_MAX && errno != ENOENT)
		err = -errno;
	close(fd);
	if (err)
		return err;
	qsort(all, n, sizeof(all[0]), blame_cmp);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(*out));
	return n;
}
