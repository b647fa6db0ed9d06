// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The map audit (kernel_audit.h): entries, maximum and memlock of the loaded probes'
 * stateful maps, counted into buffers sized when the maps are added.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_audit.h"
#include "kernel_int.h"
#include "lowtrace.h"

/* a batch lookup's value buffer: at most this many bytes, and 8 to 256 keys */
#define MAPS_BATCH_BYTES (256u << 10)
#define MAPS_CHUNK_MAX 256
#define MAPS_CHUNK_MIN 8

struct map_ent {
	struct lt_map_use u;
	int fd; /* -1: the same map as ent[same] */
	int same;
	__u32 type, key_size, max_entries;
	__u32 chunk; /* keys per batch lookup */
};

struct lt_maps {
	struct map_ent *ent;
	size_t n, cap;
	int ncpu;
	bool no_batch; /* the kernel refused a batch lookup: per key from now on */
	bool batched;
	void *keys, *vals; /* shared by all maps: sized for the largest */
	size_t keys_size, vals_size;
};

struct lt_maps *lt_maps_new(void)
{
	struct lt_maps *m = calloc(1, sizeof(*m));

	if (m)
		m->ncpu = libbpf_num_possible_cpus();
	if (m && m->ncpu <= 0) {
		free(m);
		return NULL;
	}
	return m;
}

static bool map_is_hash(__u32 type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static bool map_is_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* local storage: one entry per task, socket or inode; neither a count nor a cap */
static const char *map_per(__u32 type)
{
	switch (type) {
	case BPF_MAP_TYPE_TASK_STORAGE:
		return "task";
	case BPF_MAP_TYPE_SK_STORAGE:
		return "socket";
	case BPF_MAP_TYPE_INODE_STORAGE:
		return "inode";
	default:
		return NULL;
	}
}

/* grow a shared buffer at add time, never at read time */
static int maps_room(void **buf, size_t *size, size_t want)
{
	void *p;

	if (want <= *size)
		return 0;
	p = realloc(*buf, want);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*size = want;
	return 0;
}

int lt_maps_add(struct lt_maps *m, const char *probe, const char *name, int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	struct map_ent *e;
	size_t vsz;
	int same = -1;

	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->ent[i].u.name, name))
			continue;
		if (!strcmp(m->ent[i].u.probe, probe)) {
			close(fd); /* listed twice by one probe (.own and .map) */
			return 0;
		}
		if (same < 0)
			same = m->ent[i].same >= 0 ? m->ent[i].same : (int)i;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct map_ent *p = realloc(m->ent, cap * sizeof(*p));

		if (!p) {
			close(fd);
			return -ENOMEM;
		}
		m->ent = p;
		m->cap = cap;
	}
	e = &m->ent[m->n];
	memset(e, 0, sizeof(*e));
	e->u.probe = probe;
	e->u.name = name;
	e->u.entries = e->u.max_entries = e->u.memlock = -1;
	e->fd = -1;
	e->same = same;
	if (same >= 0) {
		close(fd); /* shared by several probes: read once */
		e->u.type = m->ent[same].u.type;
		e->u.per = m->ent[same].u.per;
		m->n++;
		return 0;
	}
	if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
		int err = -errno;

		close(fd);
		return err;
	}
	e->fd = fd;
	e->type = mi.type;
	e->key_size = mi.key_size;
	e->max_entries = mi.max_entries;
	e->u.type = libbpf_bpf_map_type_str(mi.type);
	if (!e->u.type)
		e->u.type = "unknown";
	e->u.per = map_per(mi.type);
	if (!e->u.per)
		e->u.max_entries = mi.max_entries;
	m->n++;
	if (!map_is_hash(mi.type))
		return 0;
	/* the kernel's value layout: per-CPU values are 8-byte aligned, one per possible CPU */
	vsz = map_is_percpu(mi.type) ? (size_t)((mi.value_size + 7) & ~7u) * m->ncpu
				     : mi.value_size;
	e->chunk = MAPS_BATCH_BYTES / (vsz ? vsz : 1);
	if (e->chunk > MAPS_CHUNK_MAX)
		e->chunk = MAPS_CHUNK_MAX;
	if (e->chunk < MAPS_CHUNK_MIN)
		e->chunk = MAPS_CHUNK_MIN;
	if (maps_room(&m->keys, &m->keys_size, (size_t)e->chunk * mi.key_size + 2 * mi.key_size) ||
	    maps_room(&m->vals, &m->vals_size, (size_t)e->chunk * vsz))
		return -ENOMEM;
	return 0;
}

int lt_maps_open(struct lt_maps **out, const bool loaded[LT_PROBE_SLOTS])
{
	struct lt_maps *m = lt_maps_new();
	char path[PATH_MAX];
	int err = 0;

	if (!m)
		return lt_error(LT_FAIL, "out of memory");
	for (size_t i = 0; i < lt_nprobes && !err; i++) {
		const struct lt_probe *p = &lt_probes[i];

		if (!loaded[p->id])
			continue;
		for (int k = 0; k <= LT_PROBE_OWN && !err; k++) {
			const char *name = k < LT_PROBE_OWN ? p->own[k] : p->map;
			int fd;

			if (!name)
				continue;
			snprintf(path, sizeof(path), "%s/maps/%s", LT_PIN_DIR, name);
			fd = pin_get_ro(path);
			if (fd < 0 && errno == ENOENT)
				continue; /* a suite of a lowtrace without it */
			if (fd < 0)
				err = lt_error(errno == EPERM || errno == EACCES ? LT_ENV : LT_FAIL,
					       "%s: %s", path, strerror(errno));
			else if ((err = lt_maps_add(m, p->name, name, fd)))
				err = lt_error(LT_FAIL, "%s: %s", path, strerror(-err));
		}
	}
	if (err) {
		lt_maps_close(m);
		return err;
	}
	*out = m;
	return LT_OK;
}

/* keys of a hash map by get_next_key (a deleted key restarts the walk: capped at max) */
static int maps_count_keys(struct lt_maps *m, struct map_ent *e)
{
	char *key = m->keys, *next = key + e->key_size;
	void *prev = NULL;
	int64_t n = 0;

	while (bpf_map_get_next_key(e->fd, prev, next) == 0) {
		memcpy(key, next, e->key_size);
		prev = key;
		if (++n >= e->max_entries)
			break;
	}
	if (n < e->max_entries && errno != ENOENT)
		return -errno;
	e->u.entries = n;
	return 0;
}

static int maps_count_batch(struct lt_maps *m, struct map_ent *e)
{
	__u64 in = 0, out = 0;
	bool first = true;
	int64_t total = 0;

	for (;;) {
		__u32 n = e->chunk;
		int err;
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		err = bpf_map_lookup_batch(e->fd, first ? NULL : &in, &out, m->keys, m->vals, &n,
					   &opts);
		if (err && errno != ENOENT) {
			if (errno == ENOSPC) /* a bucket holds more than a chunk: rare */
				return maps_count_keys(m, e);
			if (first &&
			    (errno == EINVAL || errno == ENOTSUP || errno == 524 /* ENOTSUPP */)) {
				m->no_batch = true; /* kernels before 5.6 */
				return maps_count_keys(m, e);
			}
			return -errno;
		}
		total += n;
		if (err) /* ENOENT: that was the last chunk */
			break;
		in = out;
		first = false;
	}
	m->batched = true;
	e->u.entries = total < e->max_entries ? total : e->max_entries;
	return 0;
}

/* "memlock:" of the map's fdinfo, or -1; a stack buffer: no allocation */
static int64_t map_memlock(int fd)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int ffd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ffd = open(path, O_RDONLY | O_CLOEXEC);
	if (ffd < 0)
		return -1;
	n = read(ffd, buf, sizeof(buf) - 1);
	close(ffd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "\nmemlock:");
	return p ? strtoll(p + 9, NULL, 10) : -1;
}

int lt_maps_read(struct lt_maps *m, bool memlock)
{
	m->batched = false;
	for (size_t i = 0; i < m->n; i++) {
		struct map_ent *e = &m->ent[i];
		int err = 0;

		if (e->fd < 0) {
			e->u.entries = m->ent[e->same].u.entries;
			e->u.max_entries = m->ent[e->same].u.max_entries;
			e->u.memlock = m->ent[e->same].u.memlock;
			continue;
		}
		if (memlock)
			e->u.memlock = map_memlock(e->fd);
		if (e->u.per)
			continue; /* unknown */
		if (e->type == BPF_MAP_TYPE_ARRAY || e->type == BPF_MAP_TYPE_PERCPU_ARRAY)
			e->u.entries = e->max_entries; /* every slot exists */
		else if (!map_is_hash(e->type))
			e->u.entries = -1;
		else if (m->no_batch)
			err = maps_count_keys(m, e);
		else
			err = maps_count_batch(m, e);
		if (err)
			return err;
	}
	return 0;
}

size_t lt_maps_count(const struct lt_maps *m)
{
	return m->n;
}

const struct lt_map_use *lt_maps_at(const struct lt_maps *m, size_t i)
{
	return &m->ent[i].u;
}

void lt_maps_no_batch(struct lt_maps *m)
{
	m->no_batch = true;
}

bool lt_maps_batched(const struct lt_maps *m)
{
	return m->batched;
}

void lt_maps_close(struct lt_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		if (m->ent[i].fd >= 0)
			close(m->ent[i].fd);
	free(m->ent);
	free(m->keys);
	free(m->vals);
	free(m);
}
