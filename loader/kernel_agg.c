// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Aggregate probes' histograms (kernel_agg.h): per-CPU maps of struct lt_hist, read in
 * batches where the kernel can, into buffers allocated at open.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "histfmt.h"
#include "kernel_agg.h"
#include "kernel_int.h"
#include "lowtrace.h"

/* keys per batch lookup */
#define AGG_CHUNK 256

/* one of an aggregate's maps */
struct agg_map {
	int fd;
	__u32 type;
	__u32 key_size;
	__u32 max_entries;
	bool no_batch; /* the kernel refused a batch lookup: per key from now on */
	int keys_fd; /* an array of its keys by index (the probe's map2_keys), or -1 */
	__u32 ikey_size; /* their size */
};

/* the histograms of one aggregate probe: its map, and its second map if it has one */
struct lt_agg {
	struct agg_map m[2];
	int nmaps;
	int ncpu;
	size_t stride; /* one CPU's value: round_up(value_size, 8) */
	bool batched;
	void *keys; /* AGG_CHUNK keys of LT_AGG_KEY_MAX bytes */
	void *vals; /* AGG_CHUNK x ncpu x stride */
	char key[LT_AGG_KEY_MAX]; /* the key handed out, zero past the map's key size */
	struct lt_hist sum;
};

static int agg_open_pin(int *fd, const char *path, const char *probe)
{
	*fd = pin_get_ro(path);
	if (*fd >= 0)
		return LT_OK;
	if (errno == ENOENT)
		return lt_error(LT_NOT_LOADED,
				"not loaded: %s: no such pin (lowtrace load --probes ...,%s)", path,
				probe);
	if (errno == EACCES || errno == EPERM)
		return lt_error(LT_ENV, "permission denied: %s (run as root)", path);
	return lt_error(LT_FAIL, "%s: %s", path, strerror(errno));
}

static struct lt_agg *agg_new(void)
{
	struct lt_agg *a = calloc(1, sizeof(*a));

	if (a)
		a->m[0].fd = a->m[1].fd = a->m[0].keys_fd = a->m[1].keys_fd = -1;
	return a;
}

/* add the map at `fd` (taken) to `a` */
static int agg_add(struct lt_agg *a, int fd, const char *path)
{
	struct agg_map *m = &a->m[a->nmaps++];
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	m->fd = fd;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len) ||
	    (mi.type != BPF_MAP_TYPE_PERCPU_HASH && mi.type != BPF_MAP_TYPE_PERCPU_ARRAY) ||
	    mi.value_size != sizeof(struct lt_hist) || mi.key_size > LT_AGG_KEY_MAX)
		return lt_error(LT_FAIL, "%s: not a per-CPU histogram map of this version", path);
	m->type = mi.type;
	m->key_size = mi.key_size;
	m->max_entries = mi.max_entries;
	a->stride = (mi.value_size + 7) & ~7u;
	return LT_OK;
}

static int agg_alloc(struct lt_agg **out, struct lt_agg *a)
{
	a->ncpu = libbpf_num_possible_cpus();
	if (a->ncpu <= 0) {
		lt_agg_close(a);
		return lt_error(LT_FAIL, "cannot count possible CPUs");
	}
	a->keys = calloc(AGG_CHUNK, LT_AGG_KEY_MAX);
	a->vals = calloc((size_t)AGG_CHUNK * a->ncpu, a->stride);
	if (!a->keys || !a->vals) {
		lt_agg_close(a);
		return lt_error(LT_FAIL, "out of memory");
	}
	*out = a;
	return LT_OK;
}

/* the array of map `m`'s keys by index at `fd` (taken): as many, each a key */
static int agg_add_keys(struct agg_map *m, int fd, const char *path)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	m->keys_fd = fd;
	if (m->type != BPF_MAP_TYPE_PERCPU_ARRAY || bpf_obj_get_info_by_fd(fd, &mi, &len) ||
	    mi.type != BPF_MAP_TYPE_ARRAY || mi.max_entries != m->max_entries ||
	    mi.value_size > LT_AGG_KEY_MAX)
		return lt_error(LT_FAIL, "%s: not the keys of a histogram array of this version",
				path);
	m->ikey_size = mi.value_size;
	return LT_OK;
}

int lt_agg_open(struct lt_agg **out, const struct lt_probe *p)
{
	const char *names[2] = { p->map, p->map2 };
	char path[PATH_MAX];
	struct lt_agg *a = agg_new();
	int err, fd;

	if (!a)
		return lt_error(LT_FAIL, "out of memory");
	for (int i = 0; i < 2 && names[i]; i++) {
		snprintf(path, sizeof(path), "%s/maps/%s", LT_PIN_DIR, names[i]);
		err = agg_open_pin(&fd, path, p->name);
		if (!err)
			err = agg_add(a, fd, path);
		if (!err && i == 1 && p->map2_keys) {
			snprintf(path, sizeof(path), "%s/maps/%s", LT_PIN_DIR, p->map2_keys);
			err = agg_open_pin(&fd, path, p->name);
			if (!err)
				err = agg_add_keys(&a->m[1], fd, path);
		}
		if (err) {
			lt_agg_close(a);
			return err;
		}
	}
	return agg_alloc(out, a);
}

int lt_agg_open_fd(struct lt_agg **out, int fd, const char *path)
{
	struct lt_agg *a = agg_new();
	int err;

	if (!a) {
		close(fd);
		return lt_error(LT_FAIL, "out of memory");
	}
	err = agg_add(a, fd, path);
	if (err) {
		lt_agg_close(a);
		return err;
	}
	return agg_alloc(out, a);
}

/* the CPUs' copies of one value, summed */
static void agg_sum(struct lt_agg *a, const void *percpu)
{
	memset(&a->sum, 0, sizeof(a->sum));
	for (int c = 0; c < a->ncpu; c++)
		lt_hist_merge(&a->sum, (const void *)((const char *)percpu + c * a->stride));
}

/*
 * Hand one summed entry to `cb`. An array holds every key whether used or
 * not: an empty entry of an array of many is left out. The key is widened
 * with zeros (an array's index is the first field of the probe's key).
 */
static void agg_emit(struct lt_agg *a, const struct agg_map *m, const void *key, lt_agg_fn cb,
		     void *ctx)
{
	if (m->type == BPF_MAP_TYPE_PERCPU_ARRAY && (m->max_entries > 1 || m->keys_fd >= 0) &&
	    !a->sum.count)
		return;
	if (m->keys_fd >= 0) {
		/* read after its histogram: one that counts has its key written already */
		memset(a->key, 0, sizeof(a->key));
		if (bpf_map_lookup_elem(m->keys_fd, key, a->key))
			return;
	} else {
		memcpy(a->key, key, m->key_size);
		memset(a->key + m->key_size, 0, sizeof(a->key) - m->key_size);
	}
	cb(ctx, a->key, &a->sum);
}

static int agg_read_keys(struct lt_agg *a, struct agg_map *m, lt_agg_fn cb, void *ctx)
{
	char key[LT_AGG_KEY_MAX], next[LT_AGG_KEY_MAX];
	void *prev = NULL;

	if (m->type == BPF_MAP_TYPE_PERCPU_ARRAY) {
		for (__u32 k = 0; k < m->max_entries; k++) {
			if (bpf_map_lookup_elem(m->fd, &k, a->vals))
				return -errno;
			agg_sum(a, a->vals);
			agg_emit(a, m, &k, cb, ctx);
		}
		return 0;
	}
	while (bpf_map_get_next_key(m->fd, prev, next) == 0) {
		memcpy(key, next, m->key_size);
		prev = key;
		if (bpf_map_lookup_elem(m->fd, key, a->vals)) {
			if (errno == ENOENT)
				continue; /* deleted meanwhile */
			return -errno;
		}
		agg_sum(a, a->vals);
		agg_emit(a, m, key, cb, ctx);
	}
	return errno == ENOENT ? 0 : -errno;
}

static int agg_read_map(struct lt_agg *a, struct agg_map *m, lt_agg_fn cb, void *ctx)
{
	__u64 in = 0, out = 0;
	bool first = true;
	int err;

	/* one entry: one lookup */
	if (m->no_batch || m->max_entries == 1)
		return agg_read_keys(a, m, cb, ctx);
	for (;;) {
		__u32 n = AGG_CHUNK;
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		err = bpf_map_lookup_batch(m->fd, first ? NULL : &in, &out, a->keys, a->vals, &n,
					   &opts);
		if (err && errno != ENOENT) {
			if (first &&
			    (errno == EINVAL || errno == ENOTSUP || errno == 524 /* ENOTSUPP */)) {
				m->no_batch = true; /* kernels before 5.6 */
				return agg_read_keys(a, m, cb, ctx);
			}
			return -errno;
		}
		a->batched = true;
		for (__u32 i = 0; i < n; i++) {
			agg_sum(a, (char *)a->vals + (size_t)i * a->ncpu * a->stride);
			agg_emit(a, m, (char *)a->keys + (size_t)i * m->key_size, cb, ctx);
		}
		if (err) /* ENOENT: that was the last chunk */
			return 0;
		in = out;
		first = false;
	}
}

int lt_agg_read(struct lt_agg *a, lt_agg_fn cb, void *ctx)
{
	int err = 0;

	a->batched = false;
	for (int i = 0; i < a->nmaps && !err; i++)
		err = agg_read_map(a, &a->m[i], cb, ctx);
	return err;
}

void lt_agg_no_batch(struct lt_agg *a)
{
	for (int i = 0; i < a->nmaps; i++)
		a->m[i].no_batch = true;
}

uint32_t lt_agg_max_entries(const struct lt_agg *a)
{
	uint32_t n = 0;

	for (int i = 0; i < a->nmaps; i++)
		n += a->m[i].max_entries;
	return n;
}

bool lt_agg_batched(const struct lt_agg *a)
{
	return a->batched;
}

void lt_agg_close(struct lt_agg *a)
{
	if (!a)
		return;
	for (int i = 0; i < 2; i++) {
		if (a->m[i].fd >= 0)
			close(a->m[i].fd);
		if (a->m[i].keys_fd >= 0)
			close(a->m[i].keys_fd);
	}
	free(a->keys);
	free(a->vals);
	free(a);
}
