// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel layer, part two: reading what a suite (in-process or pinned) holds. Plain map
 * reads, the pins a consumer opens, the counters, the aggregates, the ring and the status.
 * Split from kernel.c, which brings suites up and down: readers never load, attach or pin.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "histfmt.h"
#include "kernel_int.h"
#include "lowtrace.h"

int lt_map_each(int fd, void *key, void *next, void *val, lt_map_fn cb, void *ctx)
{
	void *cur = NULL;
	size_t ksz;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	ksz = info.key_size;
	while (bpf_map_get_next_key(fd, cur, next) == 0) {
		memcpy(key, next, ksz);
		cur = key;
		if (bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile */
		if (cb(ctx, key, val) < 0)
			break;
	}
	return 0;
}

int lt_map_lookup(int fd, const void *key, void *val)
{
	return bpf_map_lookup_elem(fd, key, val) ? -errno : 0;
}

int lt_percpu_u64(int fd, uint32_t key, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[ncpu > 0 ? ncpu : 1];

	*sum = 0;
	if (ncpu <= 0 || bpf_map_lookup_elem(fd, &key, v))
		return -errno;
	for (int c = 0; c < ncpu; c++)
		*sum += v[c];
	return 0;
}

/*
 * A pin this reader only reads: opened read-only, so a reader of `load --pin-group` (the
 * units' lowtrace user) needs only read permission on it (kernel.c's pin modes). Links,
 * programs, the ring and the maps a reader writes are opened read-write (bpf_obj_get).
 */
static int pin_get_ro(const char *path)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);

	return bpf_obj_get_opts(path, &o);
}

int lt_open_pinned(struct lt_handles *h, bool lock_consumer)
{
	h->ring_fd = h->stats_fd = h->seen_fd = h->flush_fd = -1;
	h->suite = NULL;
	/* a replace a killed loader left half done: finish it, or this reader sees no suite */
	lt_pins_tidy();
	h->dir_fd = open(LT_PIN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->dir_fd < 0) {
		if (errno == EACCES || errno == EPERM)
			return lt_error(LT_ENV, "permission denied: %s (run as root)", LT_PIN_DIR);
		return lt_error(errno == ENOENT ? LT_NOT_LOADED : LT_FAIL,
				"not loaded: %s: %s (run 'lowtrace load' first)", LT_PIN_DIR,
				strerror(errno));
	}
	/* the ring has one consumer position: a second reader would split records */
	if (lock_consumer && flock(h->dir_fd, LOCK_EX | LOCK_NB)) {
		lt_close_handles(h);
		return lt_error(LT_FAIL, "another 'lowtrace events' is reading the ring; "
					 "only one consumer at a time");
	}
	h->ring_fd = bpf_obj_get(LT_PIN_DIR "/maps/lt_events");
	h->stats_fd = pin_get_ro(LT_PIN_DIR "/maps/lt_stats");
	h->seen_fd = bpf_obj_get(LT_PIN_DIR "/maps/lt_seen");
	h->flush_fd = bpf_obj_get(LT_PIN_DIR "/lost_flush"); /* -1: an older suite */
	h->flush_err = h->flush_fd < 0 && errno != ENOENT ? errno : 0;
	if (h->seen_fd >= 0) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		/* another lowtrace's layout: start from zero rather than misread it */
		if (bpf_obj_get_info_by_fd(h->seen_fd, &mi, &len) ||
		    mi.value_size != sizeof(struct lt_seen)) {
			close(h->seen_fd);
			h->seen_fd = -1;
		}
	}
	if (h->ring_fd < 0 || h->stats_fd < 0) {
		int e = errno;

		lt_close_handles(h);
		return lt_error(e == EPERM ? LT_ENV : LT_FAIL, "cannot open the pinned maps: %s",
				strerror(e));
	}
	return LT_OK;
}

void lt_close_handles(struct lt_handles *h)
{
	if (h->dir_fd < 0)
		return; /* in-process: the suite owns the fds */
	if (h->ring_fd >= 0)
		close(h->ring_fd);
	if (h->stats_fd >= 0)
		close(h->stats_fd);
	if (h->seen_fd >= 0)
		close(h->seen_fd);
	if (h->flush_fd >= 0)
		close(h->flush_fd);
	close(h->dir_fd);
	h->ring_fd = h->stats_fd = h->seen_fd = h->flush_fd = h->dir_fd = -1;
}

bool lt_pinned_gone(const struct lt_handles *h)
{
	struct stat st, now;

	if (h->dir_fd < 0)
		return false;
	/* unload and replace move the directory away before they empty it */
	return fstat(h->dir_fd, &st) || st.st_nlink == 0 || stat(LT_PIN_DIR, &now) ||
	       now.st_ino != st.st_ino || now.st_dev != st.st_dev;
}

bool lt_pinned_removed(const struct lt_handles *h)
{
	struct stat st;

	return h->dir_fd < 0 || fstat(h->dir_fd, &st) || st.st_nlink == 0;
}

int lt_seen_read(const struct lt_handles *h, uint32_t probe, struct lt_seen *v)
{
	memset(v, 0, sizeof(*v));
	if (h->seen_fd < 0)
		return -ENOENT;
	return bpf_map_lookup_elem(h->seen_fd, &probe, v) ? -errno : 0;
}

int lt_seen_write(const struct lt_handles *h, uint32_t probe, const struct lt_seen *v)
{
	if (h->seen_fd < 0)
		return -ENOENT;
	return bpf_map_update_elem(h->seen_fd, &probe, v, BPF_ANY) ? -errno : 0;
}

/* A fd of the program behind a pinned link, or -1. */
static int pinned_prog_fd(const char *prog)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	char path[PATH_MAX];
	int lfd, pfd = -1, e = EPERM;

	snprintf(path, sizeof(path), "%s/links/%s", LT_PIN_DIR, lt_link_name(prog));
	lfd = bpf_obj_get(path);
	if (lfd < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(lfd, &li, &len) == 0) {
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		e = errno;
	}
	close(lfd);
	if (pfd >= 0 || e != EPERM)
		return pfd;
	/* by id needs CAP_SYS_ADMIN: a --pin-group suite pins its programs for its readers */
	snprintf(path, sizeof(path), "%s/progs/%s", LT_PIN_DIR, prog);
	return bpf_obj_get(path);
}

int lt_stats_open(struct lt_stats_reader *r, const struct lt_handles *h)
{
	struct bpf_map_info mi = {};
	__u32 mlen = sizeof(mi);

	memset(r->prog_fd, -1, sizeof(r->prog_fd));
	r->percpu = NULL;
	if (h->suite) {
		r->sweep_fd = bpf_map__fd(h->suite->skel->maps.lt_sweep);
		r->sweep_fd = r->sweep_fd >= 0 ? fcntl(r->sweep_fd, F_DUPFD_CLOEXEC, 0) : -1;
	} else {
		r->sweep_fd = pin_get_ro(LT_PIN_DIR "/maps/lt_sweep"); /* -1: no tcp, or older */
	}
	r->fd = h->stats_fd;
	r->ncpu = libbpf_num_possible_cpus();
	if (r->ncpu <= 0)
		return lt_error(LT_FAIL, "cannot count possible CPUs");
	/* the suite may come from another lowtrace: its lt_stat may be smaller
	 * (older) or larger (newer); read what both know, per CPU */
	r->vsize = sizeof(struct lt_stat);
	if (bpf_obj_get_info_by_fd(r->fd, &mi, &mlen) == 0 && mi.value_size)
		r->vsize = mi.value_size;
	r->stride = (r->vsize + 7) & ~7u;
	r->percpu = calloc(r->ncpu, r->stride);
	if (!r->percpu)
		return lt_error(LT_FAIL, "out of memory");
	for (size_t i = 0; i < lt_nprobes; i++) {
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			int *fd = &r->prog_fd[lt_probes[i].id][k];

			if (!h->suite) {
				*fd = pinned_prog_fd(lt_probes[i].progs[k]);
			} else if (h->suite->links[lt_probes[i].id][k]) {
				struct bpf_program *p = bpf_object__find_program_by_name(
					h->suite->skel->obj, lt_probes[i].progs[k]);

				*fd = p ? fcntl(bpf_program__fd(p), F_DUPFD_CLOEXEC, 0) : -1;
			}
		}
	}
	return LT_OK;
}

int lt_stats_read(struct lt_stats_reader *r, const struct lt_probe *p, struct lt_counts *sum)
{
	__u32 key = p->id;
	uint64_t skipped = 0;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(r->fd, &key, r->percpu))
		return -errno;
	for (int c = 0; c < r->ncpu; c++) {
		struct lt_stat v = {};

		memcpy(&v, (char *)r->percpu + (size_t)c * r->stride,
		       r->vsize < sizeof(v) ? r->vsize : sizeof(v));
		sum->events += v.events;
		sum->drops += v.drops;
		sum->recovered += v.recovered;
		sum->cg_full += v.cg_full;
		sum->throttled += v.throttled;
		sum->shed += v.shed;
		sum->unseen += v.unseen; /* the hash's reaper */
	}
	for (int k = 0; k < LT_PROBE_PROGS && p->progs[k]; k++) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);
		int fd = r->prog_fd[p->id][k];

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &pi, &len))
			continue;
		sum->run_cnt += pi.run_cnt;
		sum->run_time_ns += pi.run_time_ns;
		/* a fallback is skipped only while it runs already: its main program
		 * handles those events */
		if (!lt_prog_is_fallback(p->progs[k]))
			skipped += pi.recursion_misses;
	}
	sum->missed = skipped > sum->recovered ? skipped - sum->recovered : 0;
	if (p->id == LT_PROBE_TCP && r->sweep_fd >= 0) {
		struct lt_sweep st;

		if (lt_sweep_state(r->sweep_fd, &st) == 0)
			sum->unseen += st.unseen; /* socket storage's balance */
	}
	return 0;
}

void lt_stats_close(struct lt_stats_reader *r)
{
	free(r->percpu);
	r->percpu = NULL;
	if (r->sweep_fd >= 0)
		close(r->sweep_fd);
	r->sweep_fd = -1;
	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		for (int k = 0; k < LT_PROBE_PROGS; k++)
			if (r->prog_fd[i][k] >= 0) {
				close(r->prog_fd[i][k]);
				r->prog_fd[i][k] = -1;
			}
}

/* keys per batch lookup */
#define AGG_CHUNK 256

/* one of an aggregate's maps */
struct agg_map {
	int fd;
	__u32 type;
	__u32 key_size;
	__u32 max_entries;
	bool no_batch; /* the kernel refused a batch lookup: per key from now on */
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
		a->m[0].fd = a->m[1].fd = -1;
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
	if (m->type == BPF_MAP_TYPE_PERCPU_ARRAY && m->max_entries > 1 && !a->sum.count)
		return;
	memcpy(a->key, key, m->key_size);
	memset(a->key + m->key_size, 0, sizeof(a->key) - m->key_size);
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
	for (int i = 0; i < 2; i++)
		if (a->m[i].fd >= 0)
			close(a->m[i].fd);
	free(a->keys);
	free(a->vals);
	free(a);
}

/* ---- the map audit ---- */

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

/*
 * The ring, read from its mappings (not libbpf's ring_buffer, which moves the
 * consumer position past each record as it hands it out, and past the one its
 * callback refuses). `read` is the next record to hand out; the consumer
 * position the kernel sees (*cons) follows it at once, or in hold mode only
 * when the caller says the records before a position are done with
 * (lt_ring_release): records read but not yet written stay in the ring.
 */
struct lt_ring {
	int fd;
	int ep; /* an epoll set of the ring's fd: the kernel's wake-ups */
	bool hold;
	uint64_t *cons; /* the consumer page: the position the kernel sees */
	const uint64_t *prod; /* the producer page, then the data mapped twice */
	const char *data;
	uint64_t mask;
	size_t page, size;
	uint64_t read;
	lt_sample_fn cb;
	void *ctx;
};

#define RB_BUSY (1u << 31) /* BPF_RINGBUF_BUSY_BIT */
#define RB_DISCARD (1u << 30) /* BPF_RINGBUF_DISCARD_BIT */
#define RB_HDR 8 /* BPF_RINGBUF_HDR_SZ */

struct lt_ring *lt_ring_open(int fd, lt_sample_fn cb, void *ctx)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct lt_ring *r;
	void *m;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.max_entries ||
	    info.max_entries & (info.max_entries - 1)) {
		lt_error(LT_FAIL, "cannot read the ring buffer's size: %s", strerror(errno));
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = fd;
	r->ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->ep < 0 ||
	    epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN }))
		goto fail;
	r->cb = cb;
	r->ctx = ctx;
	r->page = sysconf(_SC_PAGESIZE);
	r->size = info.max_entries;
	r->mask = info.max_entries - 1;
	m = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	r->cons = m;
	m = mmap(NULL, r->page + 2 * r->size, PROT_READ, MAP_SHARED, fd, r->page);
	if (m == MAP_FAILED) {
		munmap(r->cons, r->page);
		goto fail;
	}
	r->prod = m;
	r->data = (const char *)m + r->page;
	r->read = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	return r;
fail:
	lt_error(LT_FAIL, "cannot map the ring buffer: %s", strerror(errno));
	if (r->ep >= 0)
		close(r->ep);
	free(r);
	return NULL;
}

void lt_ring_hold(struct lt_ring *r)
{
	r->hold = true;
}

uint64_t lt_ring_pos(const struct lt_ring *r)
{
	return r->read;
}

void lt_ring_release(struct lt_ring *r, uint64_t pos)
{
	/* never past what was read, never back */
	if (pos > r->read)
		pos = r->read;
	if (pos > *r->cons)
		__atomic_store_n(r->cons, pos, __ATOMIC_RELEASE);
}

/* Hand out the records written so far, up to a stop; records handed out, or the stop. */
static int ring_drain(struct lt_ring *r)
{
	uint64_t next, prod = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	int n = 0, err = 0;

	while (r->read < prod && !err) {
		const uint32_t *hdr = (const uint32_t *)(r->data + (r->read & r->mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t size = len & ~(RB_BUSY | RB_DISCARD);

		if (len & RB_BUSY)
			break; /* reserved, not yet submitted: records after it wait */
		if (size > r->size - RB_HDR)
			return -EBADMSG; /* the kernel writes no such length */
		next = r->read + ((size + RB_HDR + 7) & ~7ull);
		if (!(len & RB_DISCARD)) {
			uint64_t at = r->read;

			r->read = next; /* lt_ring_pos in the callback: this record's end */
			err = r->cb(r->ctx, (void *)(hdr + 2), size);
			if (err == LT_RING_AGAIN) {
				r->read = at;
				break;
			}
			n++;
		}
		r->read = next;
		if (!r->hold)
			__atomic_store_n(r->cons, r->read, __ATOMIC_RELEASE);
	}
	return err < 0 ? err : n;
}

int lt_ring_poll(struct lt_ring *r, int timeout_ms)
{
	uint64_t prod = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	struct epoll_event ev;
	int n = 0, m;

	/*
	 * The kernel says readable while records are held (its consumer position
	 * is behind): then a poll would not wait. Records not yet handed out: no wait.
	 */
	if (timeout_ms > 0 && r->read == prod) {
		if (*r->cons == r->read)
			n = epoll_wait(r->ep, &ev, 1, timeout_ms);
		else
			n = usleep(timeout_ms * 1000);
		if (n < 0 && errno != EINTR)
			return -errno;
		n = n < 0 ? -EINTR : 0;
	}
	/* producers wake us only when the ring fills up: drain on the timer too */
	m = ring_drain(r);
	return m ? m : n;
}

int lt_lost_flush(const struct lt_handles *h)
{
	int ncpu = libbpf_num_possible_cpus(), left = 0;

	if (h->flush_fd < 0 || ncpu <= 0)
		return -h->flush_err;
	for (int c = 0; c < ncpu; c++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = c);

		/* ENXIO: an offline CPU, whose windows wait for it */
		if (bpf_prog_test_run_opts(h->flush_fd, &o)) {
			if (errno != ENXIO)
				return -errno;
			continue;
		}
		left += o.retval != 0;
	}
	return left;
}

void lt_ring_free(struct lt_ring *r)
{
	if (!r)
		return;
	munmap((void *)r->prod, r->page + 2 * r->size);
	munmap(r->cons, r->page);
	close(r->ep);
	free(r);
}

/* The type of a link's program, or -1. */
static int link_prog_type(const struct bpf_link_info *li)
{
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi);
	int fd = bpf_prog_get_fd_by_id(li->prog_id), t = -1;

	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &pi, &len) == 0)
		t = (int)pi.type;
	if (fd >= 0)
		close(fd);
	return t;
}

/* The hook as the kernel reports it: link type, refined by the program type. */
static const char *hook_name(const struct bpf_link_info *li)
{
	switch (li->type) {
	case BPF_LINK_TYPE_TRACING:
		switch (li->tracing.attach_type) {
		case BPF_TRACE_RAW_TP:
			return "tp_btf";
		case BPF_TRACE_FENTRY:
			return "fentry";
		case BPF_TRACE_FEXIT:
			return "fexit";
		default:
			return "tracing";
		}
	case BPF_LINK_TYPE_RAW_TRACEPOINT:
		/* newer kernels give tp_btf (a tracing program) a raw_tracepoint link */
		return link_prog_type(li) == BPF_PROG_TYPE_TRACING ? "tp_btf" : "raw_tp";
	case BPF_LINK_TYPE_PERF_EVENT:
		/* a classic tracepoint's program (open where perf links exist; *_tp) */
		return link_prog_type(li) == BPF_PROG_TYPE_TRACEPOINT ? "tracepoint" : "perf_event";
	default:
		return "other";
	}
}

static void set_state_kinds(struct lt_status *st, __u32 bits)
{
	st->state_task = bits & LT_LOCAL_TASK ? LT_KIND_LOCAL : LT_KIND_HASH;
	st->state_sk = bits & LT_LOCAL_SK ? LT_KIND_LOCAL : LT_KIND_HASH;
}

/* a variable of the pinned rodata: its name, where it goes, its size and its skeleton offset */
struct rd_var {
	const char *name;
	void *out;
	size_t size, skel_off;
	bool found;
};

/*
 * Variables of the pinned rodata, found by name in its BTF (older suites lack some).
 * Without the BTF (by id it needs CAP_SYS_ADMIN: a --pin-group reader), the skeleton's
 * layout, as for the filters (lt_read_status reads those so).
 */
static void read_rodata_vars(const struct bpf_map_info *mi, const char *rodata, struct rd_var *vars,
			     int n)
{
	struct btf *btf = mi->btf_id ? btf__load_from_kernel_by_id(mi->btf_id) : NULL;
	const struct btf_type *sec = btf ? btf__type_by_id(btf, mi->btf_value_type_id) : NULL;
	const struct btf_var_secinfo *v;

	if (!btf && mi->value_size >= sizeof(struct lowtrace__rodata)) {
		for (int k = 0; k < n; k++) {
			memcpy(vars[k].out, rodata + vars[k].skel_off, vars[k].size);
			vars[k].found = true;
		}
		return;
	}
	if (!sec || !btf_is_datasec(sec)) {
		btf__free(btf);
		return;
	}
	v = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *t = btf__type_by_id(btf, v->type);

		for (int k = 0; t && k < n; k++) {
			if (strcmp(btf__name_by_offset(btf, t->name_off), vars[k].name) ||
			    v->size != vars[k].size || v->offset + v->size > mi->value_size)
				continue;
			memcpy(vars[k].out, rodata + v->offset, v->size);
			vars[k].found = true;
		}
	}
	btf__free(btf);
}

#define RD_VAR(n, o)                                                                     \
	{                                                                                \
		.name = #n, .out = o, .size = sizeof(((struct lowtrace__rodata *)0)->n), \
		.skel_off = offsetof(struct lowtrace__rodata, n)                         \
	}

static void read_state(const struct bpf_map_info *mi, const char *rodata, struct lt_status *st)
{
	__u32 bits = 0, ctrl = 0;
	__u64 grace = 0;
	struct rd_var v[] = { RD_VAR(lt_cfg_local, &bits), RD_VAR(lt_cfg_cg_ctrl, &ctrl),
			      RD_VAR(lt_cfg_cg_grace_ns, &grace) };

	read_rodata_vars(mi, rodata, v, 3);
	if (v[0].found)
		set_state_kinds(st, bits);
	/* a suite before the identity hierarchy: its ids are cgroup2's */
	st->cg_ctrl = v[1].found && ctrl < LT_CTRL_N ? (int)ctrl : LT_CTRL_V2;
	st->cg_tracked = v[1].found;
	st->cg_grace_ns = grace;
}

/* the loaded probes' stateful maps into st->maps */
static int read_maps(struct lt_status *st)
{
	bool loaded[LT_PROBE_SLOTS];
	struct lt_maps *m;
	int err;

	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		loaded[i] = st->probe[i].loaded;
	err = lt_maps_open(&m, loaded);
	if (err)
		return err;
	err = lt_maps_read(m, true);
	if (err) {
		lt_maps_close(m);
		return lt_error(LT_FAIL, "cannot count map entries: %s", strerror(-err));
	}
	for (size_t i = 0; i < lt_maps_count(m) && st->nmaps < LT_STATUS_MAPS; i++)
		st->maps[st->nmaps++] = *lt_maps_at(m, i); /* names are the table's and libbpf's */
	lt_maps_close(m);
	return LT_OK;
}

/* the pinned rodata: the filters, the state modes and the identity hierarchy */
static void read_rodata(struct lt_status *st)
{
	static union {
		struct lowtrace__rodata r;
		char bytes[64 * 1024];
	} rodata_buf;
	char *rodata = rodata_buf.bytes;
	const struct lowtrace__rodata *cfg = &rodata_buf.r;
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi), key = 0;
	int fd = pin_get_ro(LT_PIN_DIR "/maps/rodata");

	st->cg_ctrl = LT_CTRL_V2;

	len = sizeof(mi);
	/* the section also holds static constants the skeleton's struct does not
	 * name: read the whole value, then the struct's fields at their offsets */
	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 &&
	    mi.value_size <= sizeof(rodata_buf) && mi.value_size >= sizeof(*cfg) &&
	    bpf_map_lookup_elem(fd, &key, rodata) == 0) {
		st->filter_pid = cfg->lt_cfg_tgid;
		st->filter_cgroup_id = cfg->lt_cfg_cgroup_id;
		for (int i = 0; i < LT_PROBE_SLOTS; i++)
			st->probe[i].rate = cfg->lt_cfg_rate[i];
		read_state(&mi, rodata, st);
	}
	if (fd >= 0)
		close(fd);
}

int lt_read_status(struct lt_status *st)
{
	struct bpf_map_info mi = {};
	struct lt_stats_reader sr = {};
	struct lt_sweeper *sw;
	struct lt_handles h;
	__u32 len = sizeof(mi);
	char path[PATH_MAX];
	int err, fd;

	memset(st, 0, sizeof(*st));
	err = lt_open_pinned(&h, false);
	if (err)
		return err;
	if (bpf_obj_get_info_by_fd(h.ring_fd, &mi, &len) == 0)
		st->ringbuf_size = mi.max_entries;
	read_rodata(st);
	/* a sweep first, if one is due and this user may (the tcp probe's unseen closes) */
	if (lt_sweeper_open(&sw, &h) == LT_OK) {
		lt_sweep_run(sw);
		lt_sweeper_close(sw);
	}
	err = lt_stats_open(&sr, &h);
	for (size_t i = 0; !err && i < lt_nprobes; i++) {
		struct lt_probe_status *ps = &st->probe[lt_probes[i].id];
		struct bpf_link_info li = {};

		len = sizeof(li);
		/* the first attached program's link tells the hook (one of two for open);
		 * its iterators' where all those are gone (removed by hand) */
		fd = -1;
		for (int k = 0; fd < 0 && k < LT_PROBE_PROGS + LT_PROBE_ITERS; k++) {
			const char *prog = k < LT_PROBE_PROGS
						   ? lt_probes[i].progs[k]
						   : lt_probes[i].iters[k - LT_PROBE_PROGS];

			if (!prog)
				continue;
			snprintf(path, sizeof(path), "%s/links/%s", LT_PIN_DIR, lt_link_name(prog));
			fd = bpf_obj_get(path);
		}
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &li, &len) == 0) {
			ps->loaded = true;
			ps->hook = hook_name(&li);
			ps->prog_id = li.prog_id;
		}
		if (fd >= 0)
			close(fd);
		/* or its reaper's pin (a program): loaded, hook unknown */
		if (fd < 0 && lt_probes[i].reap) {
			snprintf(path, sizeof(path), "%s/%s", LT_PIN_DIR,
				 lt_link_name(lt_probes[i].reap));
			ps->loaded = faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
			ps->hook = "-";
		}
		if (!ps->loaded)
			continue;
		if (lt_stats_read(&sr, &lt_probes[i], &ps->stat))
			err = lt_error(LT_FAIL, "cannot read counters: %s", strerror(errno));
	}
	lt_stats_close(&sr);
	if (!err)
		err = read_maps(st);
	lt_close_handles(&h);
	return err;
}

int lt_enable_stats(int *fd)
{
	*fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (*fd < 0)
		return lt_error(errno == EPERM ? LT_ENV : LT_FAIL,
				"cannot enable BPF run-time statistics: %s", strerror(errno));
	return LT_OK;
}

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

struct lt_cg_reader {
	int fd;
	int ncpu;
	struct lt_cg_count *percpu; /* one value per possible CPU */
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
	r->percpu = r->ncpu > 0 ? calloc(r->ncpu, sizeof(*r->percpu)) : NULL;
	if (!r->percpu) {
		lt_cg_close(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

int lt_cg_read(struct lt_cg_reader *r, lt_cg_fn cb, void *ctx)
{
	__u64 key, next;
	__u64 *prev = NULL;

	while (bpf_map_get_next_key(r->fd, prev, &next) == 0) {
		uint64_t n[LT_CG_KINDS] = {};

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(r->fd, &key, r->percpu))
			continue; /* deleted meanwhile */
		for (int c = 0; c < r->ncpu; c++)
			for (int k = 0; k < LT_CG_KINDS; k++)
				n[k] += r->percpu[c].n[k];
		cb(ctx, key, n);
	}
	return errno == ENOENT ? 0 : -errno;
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
