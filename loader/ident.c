// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Workload identity. One open-addressing table of cgroup ids over a fixed
 * array of entries (LRU list, a path slot each), filled by walking the
 * cgroup2 tree with getdents64 into buffers allocated at open, and a second
 * fixed table of processes whose identity came from /proc/PID/cgroup (v1).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ident.h"
#include "lt_abi.h"

#define NIL UINT32_MAX
#define WALK_DEPTH 24 /* deeper cgroups are not walked (k8s nests 5) */
#define WALK_BUF 8192
#define PATH_LEN 4096 /* longer paths are not walked */
#define LINE_MAX_V1 4096
#define EXIT_GRACE_NS 1000000000ull /* a process's v1 entry outlives its exit record by this */

enum { E_FREE, E_POS, E_NEG };

struct entry {
	uint64_t id;
	uint64_t used_ns; /* last hit */
	uint64_t gone_ns; /* first rescan that missed it (positive), expiry (negative); 0: none */
	uint32_t prev, next; /* LRU list, most recent first; or the free list (next) */
	uint32_t gen; /* the last rescan that saw it */
	uint8_t state;
	struct lt_ident ident;
};

struct pentry {
	uint32_t pid; /* 0: free */
	uint32_t prev, next;
	uint64_t exit_ns; /* its exit record's time, 0: alive */
	bool known; /* /proc named a workload; else the v2 identity is used */
	struct lt_ident ident;
};

/* An exit record's process and time, queued until its v1 entry may go */
struct xq {
	uint32_t pid;
	uint64_t exit_ns;
};

/* A fixed table of `cap` entries with an LRU list; slots map key -> index + 1. */
struct lru {
	uint32_t cap, n, mask;
	uint32_t head, tail, free;
	uint32_t *slots;
};

struct ident_impl {
	struct lt_ident_cfg cfg;
	char root[512]; /* the identity hierarchy's mount point ("" when none) */
	char v2root[512]; /* the cgroup2 mount point */
	char proc[256];
	unsigned int v1;
	struct lru t;
	struct entry *e;
	char *paths; /* cap * path_max */
	struct lru pt;
	struct pentry *pe;
	char *ppaths; /* pid_cap * path_max */
	struct xq *xq; /* pid_cap exits, oldest first: their entries go after the grace */
	uint32_t xq_head, xq_n;
	char *walk; /* WALK_DEPTH * WALK_BUF */
	char wpath[PATH_LEN];
	uint64_t scan_now; /* the running rescan's time */
	uint32_t gen;
	uint64_t want; /* the id the rescan is for */
	uint64_t now; /* the last lt_ident_get's time */
	uint64_t last_scan_ns;
	uint64_t whole_scan_ns; /* the last rescan that had room for every cgroup it walked */
	bool scanned, cut; /* cut: this walk left a cgroup out (the cache was full) */
	struct lt_ident_stats st;
	struct lt_rt_cache rt; /* cfg.runtime */
};

/* ---- derivation ---- */

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && !memcmp(s + n - k, suf, k);
}

static bool starts_with(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);

	return n >= k && !memcmp(s, pre, k);
}

/* A container id in one path component, or NULL. */
static const char *component_cid(const char *s, size_t n)
{
	/* the runtimes' systemd scopes; conmon's scope is podman's monitor, not the container */
	static const char *const pre[] = { "docker-", "cri-containerd-", "crio-", "libpod-" };

	if (n == LT_IDENT_CID_LEN)
		return is_hex(s, n) ? s : NULL; /* cgroupfs: /docker/<id>, /kubepods/.../<id> */
	if (ends_with(s, n, ".scope"))
		n -= 6;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t k = strlen(pre[i]);

		if (n == k + LT_IDENT_CID_LEN && starts_with(s, n, pre[i]) && is_hex(s + k, n - k))
			return s + k;
	}
	return NULL;
}

/* A pod uid (36 chars of hex and `sep`, dashes where a UUID has them) at s. */
static bool is_uid(const char *s, size_t n, char sep)
{
	if (n != LT_IDENT_POD_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != sep : !is_hex(s + i, 1))
			return false;
	}
	return true;
}

/* The pod uid in one component: kubepods[-QOS]-pod<uid_with_underscores>.slice or pod<uid>. */
static bool component_pod(const char *s, size_t n, char *uid)
{
	const char *p;

	if (starts_with(s, n, "kubepods") && ends_with(s, n, ".slice")) {
		n -= 6;
		p = n > LT_IDENT_POD_LEN + 4 ? s + n - LT_IDENT_POD_LEN - 4 : NULL;
		if (!p || memcmp(p, "-pod", 4) || !is_uid(p + 4, LT_IDENT_POD_LEN, '_'))
			return false;
		p += 4;
	} else if (n == LT_IDENT_POD_LEN + 3 && starts_with(s, n, "pod") &&
		   is_uid(s + 3, LT_IDENT_POD_LEN, '-')) {
		p = s + 3;
	} else {
		return false;
	}
	for (size_t i = 0; i < LT_IDENT_POD_LEN; i++)
		uid[i] = p[i] == '_' ? '-' : p[i];
	uid[LT_IDENT_POD_LEN] = 0;
	return true;
}

void lt_ident_derive(const char *path, size_t len, struct lt_ident *id)
{
	size_t i = 0;

	id->cid_len = id->pod_len = id->unit_len = 0;
	id->container_id[0] = id->pod_uid[0] = id->unit[0] = 0;
	id->meta = NULL;
	while (i < len) {
		size_t k;
		const char *s, *cid;

		while (i < len && path[i] == '/')
			i++;
		s = path + i;
		while (i < len && path[i] != '/' && path[i])
			i++;
		k = path + i - s;
		if (!k)
			break;
		/* the innermost of each wins */
		cid = component_cid(s, k);
		if (cid) {
			memcpy(id->container_id, cid, LT_IDENT_CID_LEN);
			id->container_id[LT_IDENT_CID_LEN] = 0;
			id->cid_len = LT_IDENT_CID_LEN;
		}
		if (component_pod(s, k, id->pod_uid))
			id->pod_len = LT_IDENT_POD_LEN;
		if ((ends_with(s, k, ".service") || ends_with(s, k, ".scope")) && k > 6 &&
		    k <= LT_IDENT_UNIT_MAX) {
			memcpy(id->unit, s, k);
			id->unit[k] = 0;
			id->unit_len = k;
		}
		if (i < len && !path[i])
			break;
	}
}

/* Bytes JSON and text both write as they are: then the encoders copy them without a scan. */
static bool is_plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

static void set_plain(struct lt_ident *id)
{
	id->plain = (is_plain(id->cgroup, id->cgroup_len) ? LT_IDENT_PLAIN_CGROUP : 0) |
		    (is_plain(id->unit, id->unit_len) ? LT_IDENT_PLAIN_UNIT : 0);
}

/* ---- the tables ---- */

static uint32_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

static int lru_init(struct lru *t, uint32_t cap)
{
	uint32_t size = 4;

	while (size < cap * 2)
		size <<= 1;
	t->cap = cap;
	t->mask = size - 1;
	t->n = 0;
	t->head = t->tail = NIL;
	t->slots = calloc(size, sizeof(*t->slots));
	return t->slots ? 0 : -ENOMEM;
}

/* Entry i's key, whichever table it is */
typedef uint64_t (*key_fn)(const void *base, uint32_t i);

static uint64_t ekey(const void *base, uint32_t i)
{
	return ((const struct entry *)base)[i].id;
}

static uint64_t pkey(const void *base, uint32_t i)
{
	return ((const struct pentry *)base)[i].pid;
}

/* slot of `key`, or of the empty slot where it would go */
static uint32_t lru_slot(const struct lru *t, const void *base, key_fn kf, uint64_t key)
{
	uint32_t s = hash64(key) & t->mask;

	while (t->slots[s] && kf(base, t->slots[s] - 1) != key)
		s = (s + 1) & t->mask;
	return s;
}

/* remove a slot, shifting the probe chain back (no tombstones) */
static void lru_slot_del(struct lru *t, const void *base, key_fn kf, uint32_t s)
{
	uint32_t j = s;

	t->slots[s] = 0;
	for (;;) {
		uint32_t home;

		j = (j + 1) & t->mask;
		if (!t->slots[j])
			return;
		home = hash64(kf(base, t->slots[j] - 1)) & t->mask;
		/* move j to s when its home is not in (s, j] */
		if ((s <= j) ? (home <= s || home > j) : (home <= s && home > j)) {
			t->slots[s] = t->slots[j];
			t->slots[j] = 0;
			s = j;
		}
	}
}

/* The list links are prev/next members at the same offsets in both entry types. */
#define L_PREV(arr, i) ((arr)[i].prev)
#define L_NEXT(arr, i) ((arr)[i].next)

#define LRU_UNLINK(t, arr, i)                                      \
	do {                                                       \
		uint32_t p_ = L_PREV(arr, i), n_ = L_NEXT(arr, i); \
		if (p_ != NIL)                                     \
			L_NEXT(arr, p_) = n_;                      \
		else                                               \
			(t)->head = n_;                            \
		if (n_ != NIL)                                     \
			L_PREV(arr, n_) = p_;                      \
		else                                               \
			(t)->tail = p_;                            \
	} while (0)

#define LRU_PUSH(t, arr, i)                         \
	do {                                        \
		L_PREV(arr, i) = NIL;               \
		L_NEXT(arr, i) = (t)->head;         \
		if ((t)->head != NIL)               \
			L_PREV(arr, (t)->head) = i; \
		else                                \
			(t)->tail = i;              \
		(t)->head = i;                      \
	} while (0)

#define LRU_PUSH_TAIL(t, arr, i)                    \
	do {                                        \
		L_NEXT(arr, i) = NIL;               \
		L_PREV(arr, i) = (t)->tail;         \
		if ((t)->tail != NIL)               \
			L_NEXT(arr, (t)->tail) = i; \
		else                                \
			(t)->head = i;              \
		(t)->tail = i;                      \
	} while (0)

/* ---- cgroup entries ---- */

static struct entry *find(struct ident_impl *c, uint64_t id, uint32_t *slot)
{
	uint32_t s = lru_slot(&c->t, c->e, ekey, id);

	if (slot)
		*slot = s;
	return c->t.slots[s] ? &c->e[c->t.slots[s] - 1] : NULL;
}

static void drop(struct ident_impl *c, struct entry *e)
{
	uint32_t i = e - c->e, s = lru_slot(&c->t, c->e, ekey, e->id);

	lru_slot_del(&c->t, c->e, ekey, s);
	LRU_UNLINK(&c->t, c->e, i);
	e->state = E_FREE;
	e->next = c->t.free;
	c->t.free = i;
	c->t.n--;
}

/* A new entry for `id` (not in the table), evicting the least recently used when full. */
static struct entry *add(struct ident_impl *c, uint64_t id, uint64_t now)
{
	struct entry *e;
	uint32_t i, s;

	if (c->t.free == NIL) {
		drop(c, &c->e[c->t.tail]);
		c->st.evictions++;
	}
	i = c->t.free;
	e = &c->e[i];
	c->t.free = e->next;
	c->t.n++;
	s = lru_slot(&c->t, c->e, ekey, id);
	e->id = id;
	e->used_ns = now;
	e->gone_ns = 0;
	e->gen = c->gen;
	c->t.slots[s] = i + 1;
	LRU_PUSH(&c->t, c->e, i);
	return e;
}

static void set_path(struct ident_impl *c, struct entry *e, const char *path, size_t len)
{
	char *slot = c->paths + (size_t)(e - c->e) * c->cfg.path_max;

	lt_ident_derive(path, len, &e->ident);
	if (len >= c->cfg.path_max)
		len = c->cfg.path_max - 1; /* cut: the derived fields came from the whole path */
	memcpy(slot, path, len);
	slot[len] = 0;
	e->ident.cgroup = slot;
	e->ident.cgroup_len = len;
	set_plain(&e->ident);
}

/* one directory of the walk: path[0, len) below the root ("" for the root) */
static void seen_dir(struct ident_impl *c, uint64_t id, const char *path, size_t len, uint64_t now)
{
	struct entry *e = find(c, id, NULL);
	const char *p = len ? path : "/";

	if (!len)
		len = 1;
	if (e && e->state == E_NEG) {
		drop(c, e);
		e = NULL;
	}
	if (!e) {
		/* full: only the id a record asked for evicts (a walk would only churn the cache) */
		if (c->t.free == NIL && id != c->want) {
			c->cut = true;
			return;
		}
		e = add(c, id, now);
		e->state = E_POS;
		set_path(c, e, p, len);
	}
	e->gen = c->gen;
	e->gone_ns = 0;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* A walk of a cgroup tree: one getdents64 buffer per level, the path being built. */
struct walker {
	char *bufs; /* WALK_DEPTH * WALK_BUF */
	char *path; /* PATH_LEN */
	void (*fn)(void *ctx, uint64_t id, const char *path, size_t len);
	void *ctx;
};

static void walk(struct walker *w, int dfd, size_t len, int depth)
{
	char *buf = w->bufs + (size_t)depth * WALK_BUF;
	long n;

	while ((n = syscall(SYS_getdents64, dfd, buf, WALK_BUF)) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			size_t k = strlen(d->d_name);
			struct stat st;
			int fd;

			off += d->d_reclen;
			if (d->d_type != DT_DIR || d->d_name[0] == '.')
				continue;
			if (len + 1 + k >= PATH_LEN)
				continue;
			w->path[len] = '/';
			memcpy(w->path + len + 1, d->d_name, k + 1);
			fd = openat(dfd, d->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				continue; /* removed meanwhile */
			/*
			 * The directory's inode is the cgroup id. From fstat, not d_ino: the
			 * two agree on cgroupfs, not on every file system (overlayfs remaps
			 * st_ino), and a test's made tree may be anywhere.
			 */
			if (!fstat(fd, &st))
				w->fn(w->ctx, st.st_ino, w->path, len + 1 + k);
			if (depth + 1 < WALK_DEPTH)
				walk(w, fd, len + 1 + k, depth + 1);
			close(fd);
		}
	}
}

/* the root, then every cgroup below it, to fn; root is an open directory */
static void walk_tree(struct walker *w, int fd)
{
	struct stat st;

	if (!fstat(fd, &st))
		w->fn(w->ctx, st.st_ino, w->path, 0);
	walk(w, fd, 0, 0);
}

int lt_ident_walk(const char *root,
		  void (*fn)(void *ctx, uint64_t id, const char *path, size_t len), void *ctx)
{
	struct walker w = { .fn = fn, .ctx = ctx };
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	w.bufs = malloc((size_t)WALK_DEPTH * WALK_BUF);
	w.path = malloc(PATH_LEN);
	if (w.bufs && w.path)
		walk_tree(&w, fd);
	close(fd);
	free(w.bufs);
	free(w.path);
	return w.bufs && w.path ? 0 : -ENOMEM;
}

static void rescan_dir(void *ctx, uint64_t id, const char *path, size_t len)
{
	struct ident_impl *c = ctx;

	seen_dir(c, id, path, len, c->scan_now);
}

static void rescan(struct ident_impl *c, uint64_t now)
{
	struct walker w = { .bufs = c->walk, .path = c->wpath, .fn = rescan_dir, .ctx = c };
	int fd;

	c->last_scan_ns = now;
	c->scanned = true;
	if (!c->root[0])
		return;
	fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	c->st.rescans++;
	c->gen++;
	c->cut = false;
	c->scan_now = now;
	walk_tree(&w, fd);
	close(fd);
	if (!c->cut)
		c->whole_scan_ns = now;
	/* what this walk did not see is gone: kept for the grace period, then dropped */
	for (uint32_t i = c->t.head; i != NIL;) {
		struct entry *e = &c->e[i];

		i = e->next;
		/* negative ids of short-lived cgroups: no record may ask for them again */
		if (e->state == E_NEG && now >= e->gone_ns) {
			drop(c, e);
			c->st.expired++;
			continue;
		}
		if (e->state != E_POS || e->gen == c->gen)
			continue;
		if (!e->gone_ns)
			e->gone_ns = now;
		else if (now >= e->gone_ns + c->cfg.grace_ns) {
			drop(c, e);
			c->st.expired++;
		}
	}
}

static const struct lt_ident *v2_get(struct ident_impl *c, uint64_t id, uint64_t now)
{
	struct entry *e = find(c, id, NULL);

	if (e && e->state == E_NEG && now >= e->gone_ns) {
		drop(c, e);
		c->st.expired++;
		e = NULL;
	}
	if (e) {
		uint32_t i = e - c->e;

		e->used_ns = now;
		if (c->t.head != i) {
			LRU_UNLINK(&c->t, c->e, i);
			LRU_PUSH(&c->t, c->e, i);
		}
		if (e->state == E_NEG)
			return NULL;
		c->st.hits++;
		return &e->ident;
	}
	c->st.misses++;
	if (c->cfg.kname) {
		/* the kernel named it when it was made: no walk, and a dead one too */
		int n = c->cfg.kname(c->cfg.kctx, id, c->wpath, sizeof(c->wpath) - 1);

		if (n >= 0) {
			e = add(c, id, now);
			e->state = E_POS;
			set_path(c, e, n ? c->wpath : "/", n ? (size_t)n : 1);
			c->st.knamed++;
			return &e->ident;
		}
	}
	if (!c->root[0] || (c->scanned && now < c->last_scan_ns + c->cfg.rescan_ns)) {
		c->st.unknown++;
		return NULL; /* rate-limited: unknown until the next rescan */
	}
	c->want = id;
	rescan(c, now);
	c->want = 0;
	e = find(c, id, NULL);
	if (e)
		return &e->ident;
	/* gone before we looked: a negative entry, so it does not rescan again */
	e = add(c, id, now);
	e->state = E_NEG;
	e->gone_ns = now + c->cfg.neg_ns;
	e->ident.cgroup = "";
	c->st.unknown++;
	return NULL;
}

/* ---- v1: /proc/PID/cgroup ---- */

static struct pentry *pfind(struct ident_impl *c, uint32_t pid, uint32_t *slot)
{
	uint32_t s = lru_slot(&c->pt, c->pe, pkey, pid);

	*slot = s;
	return c->pt.slots[s] ? &c->pe[c->pt.slots[s] - 1] : NULL;
}

static void pdrop(struct ident_impl *c, struct pentry *e)
{
	uint32_t i = e - c->pe, s;

	pfind(c, e->pid, &s);
	lru_slot_del(&c->pt, c->pe, pkey, s);
	LRU_UNLINK(&c->pt, c->pe, i);
	e->pid = 0;
	e->next = c->pt.free;
	c->pt.free = i;
	c->pt.n--;
}

/*
 * Drop the v1 entries of processes that exited more than the grace ago (or,
 * with `force`, the oldest exit's). Without it an exited process's entry would
 * stay until the LRU pushed it out: a churning host would fill and touch the
 * whole table (pid_cap entries and paths) however few processes live at once.
 */
static void reap(struct ident_impl *c, bool force)
{
	while (c->xq_n) {
		struct xq *q = &c->xq[c->xq_head];
		struct pentry *e;
		uint32_t s;

		if (!force && c->now <= q->exit_ns + EXIT_GRACE_NS)
			return;
		force = false;
		e = pfind(c, q->pid, &s);
		/* the same process's exit: a pid used again is a new entry (exit_ns 0 or later) */
		if (e && e->exit_ns == q->exit_ns) {
			pdrop(c, e);
			c->st.v1_expired++;
		}
		c->xq_head = (c->xq_head + 1) % c->cfg.pid_cap;
		c->xq_n--;
	}
}

static void put_path(struct lt_ident *id, char *slot, size_t max, const char *p, size_t n)
{
	if (n >= max)
		n = max - 1;
	memmove(slot, p, n);
	slot[n] = 0;
	id->cgroup = slot;
	id->cgroup_len = n;
}

/*
 * Parse /proc/PID/cgroup lines "ID:CONTROLLERS:PATH": the first v1 path that
 * names a container or pod gives the identity; the name=systemd path gives
 * the unit when that one names none. Returns whether a workload was named.
 */
static bool parse_v1(const char *buf, size_t n, struct lt_ident *out, char *path, size_t max)
{
	const char *l = buf, *end = buf + n;
	struct lt_ident tmp, sd = { .cgroup = NULL };
	bool found = false;

	while (l < end) {
		const char *nl = memchr(l, '\n', end - l), *c1, *c2;

		if (!nl)
			nl = end;
		c1 = memchr(l, ':', nl - l);
		c2 = c1 ? memchr(c1 + 1, ':', nl - c1 - 1) : NULL;
		if (c2 && c2 != c1 + 1) { /* "0::/x" is v2, resolved by id already */
			lt_ident_derive(c2 + 1, nl - c2 - 1, &tmp);
			if (!found && (tmp.cid_len || tmp.pod_len)) {
				*out = tmp;
				put_path(out, path, max, c2 + 1, nl - c2 - 1);
				found = true;
			} else if (!sd.cgroup && c2 - c1 - 1 == 12 &&
				   !memcmp(c1 + 1, "name=systemd", 12)) {
				sd = tmp;
				sd.cgroup = c2 + 1;
				sd.cgroup_len = nl - c2 - 1;
			}
		}
		l = nl + 1;
	}
	if (!found) {
		if (!sd.cgroup)
			return false;
		/* no workload: the systemd hierarchy's path and unit (pure v1 hosts) */
		*out = sd;
		put_path(out, path, max, sd.cgroup, sd.cgroup_len);
	} else if (!out->unit_len && sd.unit_len) {
		memcpy(out->unit, sd.unit, sd.unit_len + 1);
		out->unit_len = sd.unit_len;
	}
	return found;
}

static const struct lt_ident *v1_get(struct ident_impl *c, uint32_t pid, const struct lt_ident *v2)
{
	char name[300], buf[LINE_MAX_V1];
	struct pentry *e;
	uint32_t s, i;
	char *slot;
	ssize_t n;
	bool named;
	int fd;

	e = pfind(c, pid, &s);
	/* records after its exit (SIGCHLD to the parent, sockets closed) come soon after it */
	if (e && e->exit_ns && c->now > e->exit_ns + EXIT_GRACE_NS) {
		pdrop(c, e);
		pfind(c, pid, &s);
		e = NULL;
	}
	if (e) {
		i = e - c->pe;
		if (c->pt.head != i) {
			LRU_UNLINK(&c->pt, c->pe, i);
			LRU_PUSH(&c->pt, c->pe, i);
		}
		return e->known ? &e->ident : v2;
	}
	/* first record of this process: read its v1 cgroups once */
	reap(c, false);
	pfind(c, pid, &s);
	if (c->pt.free == NIL) {
		pdrop(c, &c->pe[c->pt.tail]);
		c->st.v1_evictions++;
		pfind(c, pid, &s);
	}
	i = c->pt.free;
	e = &c->pe[i];
	c->pt.free = e->next;
	c->pt.n++;
	e->pid = pid;
	e->exit_ns = 0;
	e->known = false;
	c->pt.slots[s] = i + 1;
	LRU_PUSH(&c->pt, c->pe, i);
	c->st.v1_lookups++;
	snprintf(name, sizeof(name), "%s/%u/cgroup", c->proc, pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return v2; /* exited already: what v2 says */
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return v2;
	slot = c->ppaths + (size_t)i * c->cfg.path_max;
	named = parse_v1(buf, n, &e->ident, slot, c->cfg.path_max);
	if (named && v2) {
		/* the cgroup stays the v2 path (copied: its entry may go); v1 named the workload */
		put_path(&e->ident, slot, c->cfg.path_max, v2->cgroup, v2->cgroup_len);
		if (!e->ident.unit_len && v2->unit_len) {
			memcpy(e->ident.unit, v2->unit, v2->unit_len + 1);
			e->ident.unit_len = v2->unit_len;
		}
	}
	/* without v2, the systemd hierarchy is all there is */
	e->known = named || (!v2 && e->ident.cgroup == slot);
	if (e->known)
		set_plain(&e->ident);
	return e->known ? &e->ident : v2;
}

const struct lt_ident *lt_ident_get(struct lt_ident_cache *pc, uint64_t cgroup_id, uint32_t pid,
				    uint64_t now_ns)
{
	struct ident_impl *c = pc->impl;
	const struct lt_ident *id = NULL;

	if (!c)
		return NULL;
	c->now = now_ns;
	if (cgroup_id && (c->root[0] || c->cfg.kname))
		id = v2_get(c, cgroup_id, now_ns);
	/* a v1 identity hierarchy: the kernel gave the id, no /proc read */
	if (c->v1 && pid && c->cfg.ctrl == LT_CTRL_V2 && !(id && (id->cid_len || id->pod_len)))
		id = v1_get(c, pid, id);
	if (id && c->cfg.runtime) {
		/* every returned identity lives in a mutable entry; the runtime's names are
		 * looked for once per container (the cache answers the rest) */
		struct lt_ident *m = (struct lt_ident *)id;

		m->meta = id->cid_len ? lt_rt_get(&c->rt, id->container_id, now_ns) : NULL;
	}
	return id;
}

bool lt_ident_gone(struct lt_ident_cache *pc, uint64_t cgroup_id, uint64_t since_ns)
{
	struct ident_impl *c = pc->impl;
	const struct entry *e = c ? find(c, cgroup_id, NULL) : NULL;

	if (!e)
		/* a short-lived cgroup gone before any walk: never cached, never a negative entry */
		return c && c->whole_scan_ns > since_ns;
	return e->state == E_NEG || e->gone_ns;
}

void lt_ident_refresh(struct lt_ident_cache *pc, uint64_t now_ns)
{
	struct ident_impl *c = pc->impl;

	if (!c || !c->root[0] || (c->scanned && now_ns < c->last_scan_ns + c->cfg.rescan_ns))
		return;
	c->now = now_ns;
	rescan(c, now_ns);
}

void lt_ident_exit(struct lt_ident_cache *pc, uint32_t pid)
{
	struct ident_impl *c = pc->impl;
	struct pentry *e;
	uint64_t t;
	uint32_t s;

	if (!c || !c->v1 || !pid)
		return;
	e = pfind(c, pid, &s);
	if (!e)
		return;
	/* kept a moment for the records its exit causes, and first to be evicted */
	e->exit_ns = c->now ? c->now : 1;
	if (c->pt.tail != (uint32_t)(e - c->pe)) {
		LRU_UNLINK(&c->pt, c->pe, (uint32_t)(e - c->pe));
		LRU_PUSH_TAIL(&c->pt, c->pe, (uint32_t)(e - c->pe));
	}
	/* then dropped by reap(); a full queue (pid_cap exits within the grace) drops its oldest */
	t = e->exit_ns;
	reap(c, c->xq_n == c->cfg.pid_cap);
	c->xq[(c->xq_head + c->xq_n) % c->cfg.pid_cap] = (struct xq){ pid, t };
	c->xq_n++;
}

/* ---- open, close ---- */

/* Unescape mountinfo's \040-style octal escapes in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static const char *const ctrl_names[LT_CTRL_N] = {
	[LT_CTRL_V2] = "cgroup2",      [LT_CTRL_PIDS] = "pids",	      [LT_CTRL_MEMORY] = "memory",
	[LT_CTRL_CPU] = "cpu",	       [LT_CTRL_CPUACCT] = "cpuacct", [LT_CTRL_BLKIO] = "blkio",
	[LT_CTRL_DEVICES] = "devices", [LT_CTRL_FREEZER] = "freezer", [LT_CTRL_CPUSET] = "cpuset",
};

const char *lt_ident_ctrl_name(int ctrl)
{
	return ctrl >= 0 && ctrl < LT_CTRL_N ? ctrl_names[ctrl] : "?";
}

/* Is `name` one of the comma-separated words of `opts`? */
static bool has_word(const char *opts, const char *name)
{
	size_t k = strlen(name);

	for (const char *p = opts; *p;) {
		size_t n = strcspn(p, ",");

		if (n == k && !memcmp(p, name, k))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/*
 * The cgroup mounts of a mountinfo: the cgroup2 one into mnt[LT_CTRL_V2], each controller's
 * v1 one into mnt[ctrl] (the first of each); the count of v1 mounts.
 */
static unsigned int cgroup_mounts(const char *mountinfo, char (*mnt)[512])
{
	FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	unsigned int v1 = 0;
	char line[4096];

	for (int i = 0; i < LT_CTRL_N; i++)
		mnt[i][0] = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *tok[6], *sep = strstr(line, " - "), *save = NULL, *fstype, *opts;
		int n = 0, ctrl = -1;

		if (!sep)
			continue;
		*sep = 0;
		for (char *t = strtok_r(line, " ", &save); t && n < 6;
		     t = strtok_r(NULL, " ", &save))
			tok[n++] = t;
		fstype = strtok_r(sep + 3, " ", &save);
		if (n < 5 || !fstype || strlen(tok[4]) >= 512)
			continue;
		if (!strcmp(fstype, "cgroup2")) {
			ctrl = LT_CTRL_V2;
		} else if (!strcmp(fstype, "cgroup")) {
			v1++;
			strtok_r(NULL, " ", &save); /* the source */
			opts = strtok_r(NULL, " \n", &save);
			for (int i = LT_CTRL_V2 + 1; opts && i < LT_CTRL_N && ctrl < 0; i++)
				if (has_word(opts, ctrl_names[i]) && !mnt[i][0])
					ctrl = i;
			/* cpu,cpuacct co-mounted: the one mount answers for both */
			for (int i = LT_CTRL_V2 + 1; opts && ctrl >= 0 && i < LT_CTRL_N; i++)
				if (i != ctrl && has_word(opts, ctrl_names[i]) && !mnt[i][0]) {
					strcpy(mnt[i], tok[4]);
					unescape(mnt[i]);
				}
		}
		if (ctrl >= 0 && !mnt[ctrl][0]) {
			strcpy(mnt[ctrl], tok[4]);
			unescape(mnt[ctrl]);
		}
	}
	fclose(f);
	return v1;
}

int lt_ident_pick(const char *want, const char *mountinfo, char *out, size_t out_len)
{
	/* auto's order: what systemd accounts every unit in first, then what runtimes limit */
	static const int pref[] = { LT_CTRL_PIDS,    LT_CTRL_MEMORY, LT_CTRL_CPU,
				    LT_CTRL_CPUACCT, LT_CTRL_BLKIO,  LT_CTRL_DEVICES,
				    LT_CTRL_FREEZER, LT_CTRL_CPUSET };
	char mnt[LT_CTRL_N][512];
	int ctrl = -1;

	cgroup_mounts(mountinfo, mnt);
	if (out_len)
		out[0] = 0;
	if (!want || !strcmp(want, "auto")) {
		for (size_t i = 0; i < sizeof(pref) / sizeof(pref[0]) && ctrl < 0; i++)
			if (mnt[pref[i]][0])
				ctrl = pref[i];
		if (ctrl < 0)
			ctrl = LT_CTRL_V2;
	} else {
		for (int i = 0; i < LT_CTRL_N && ctrl < 0; i++)
			if (!strcmp(want, ctrl_names[i]) ||
			    (i == LT_CTRL_V2 && !strcmp(want, "v2")))
				ctrl = i;
		if (ctrl < 0)
			return -EINVAL;
		if (!mnt[ctrl][0])
			return -ENOENT;
	}
	if (out_len)
		snprintf(out, out_len, "%s", mnt[ctrl]);
	return ctrl;
}

static void find_mounts(struct ident_impl *c)
{
	char mnt[LT_CTRL_N][512];

	c->v1 = cgroup_mounts(c->cfg.mountinfo, mnt);
	memcpy(c->v2root, mnt[LT_CTRL_V2], sizeof(c->v2root));
	if (c->cfg.ctrl > LT_CTRL_V2 && c->cfg.ctrl < LT_CTRL_N)
		memcpy(c->root, mnt[c->cfg.ctrl], sizeof(c->root));
	else
		memcpy(c->root, mnt[LT_CTRL_V2], sizeof(c->root));
}

static void impl_free(struct ident_impl *c)
{
	if (!c)
		return;
	free(c->e);
	free(c->paths);
	free(c->pe);
	free(c->ppaths);
	free(c->walk);
	free(c->xq);
	free(c->t.slots);
	free(c->pt.slots);
	lt_rt_close(&c->rt);
	free(c);
}

int lt_ident_open(struct lt_ident_cache *pc, const struct lt_ident_cfg *cfg)
{
	struct ident_impl *c = calloc(1, sizeof(*c));
	struct timespec ts;

	pc->impl = NULL;
	if (!c)
		return -ENOMEM;
	if (cfg)
		c->cfg = *cfg;
	if (!c->cfg.cap)
		c->cfg.cap = 16384;
	if (!c->cfg.pid_cap)
		c->cfg.pid_cap = 4096;
	if (c->cfg.path_max < 16)
		c->cfg.path_max = 256;
	if (c->cfg.path_max > 1024)
		c->cfg.path_max = 1024; /* LT_ENC_MAX counts on it */
	if (!c->cfg.rescan_ns)
		c->cfg.rescan_ns = 100000000ull;
	if (!c->cfg.grace_ns)
		c->cfg.grace_ns = 30000000000ull;
	if (!c->cfg.neg_ns)
		c->cfg.neg_ns = 10000000000ull;
	snprintf(c->proc, sizeof(c->proc), "%s", c->cfg.proc ? c->cfg.proc : "/proc");
	find_mounts(c);
	if (c->cfg.root)
		snprintf(c->root, sizeof(c->root), "%s", c->cfg.root);
	if (c->cfg.no_v2)
		c->root[0] = 0;
	c->e = calloc(c->cfg.cap, sizeof(*c->e));
	c->paths = malloc((size_t)c->cfg.cap * c->cfg.path_max);
	c->pe = calloc(c->cfg.pid_cap, sizeof(*c->pe));
	c->ppaths = malloc((size_t)c->cfg.pid_cap * c->cfg.path_max);
	c->walk = malloc((size_t)WALK_DEPTH * WALK_BUF);
	c->xq = malloc((size_t)c->cfg.pid_cap * sizeof(*c->xq));
	if (!c->e || !c->paths || !c->pe || !c->ppaths || !c->walk || !c->xq ||
	    lru_init(&c->t, c->cfg.cap) || lru_init(&c->pt, c->cfg.pid_cap) ||
	    (c->cfg.runtime && lt_rt_open(&c->rt, &(struct lt_rt_cfg){ .root = c->cfg.rt_root }))) {
		impl_free(c);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->cfg.cap; i++)
		c->e[i].next = i + 1 < c->cfg.cap ? i + 1 : NIL;
	c->t.free = 0;
	for (uint32_t i = 0; i < c->cfg.pid_cap; i++)
		c->pe[i].next = i + 1 < c->cfg.pid_cap ? i + 1 : NIL;
	c->pt.free = 0;
	c->st.cap = c->cfg.cap;
	/* the first walk; records' times are CLOCK_MONOTONIC too */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	rescan(c, (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec);
	pc->impl = c;
	return 0;
}

void lt_ident_close(struct lt_ident_cache *pc)
{
	impl_free(pc->impl);
	pc->impl = NULL;
}

void lt_ident_stats(const struct lt_ident_cache *pc, struct lt_ident_stats *st)
{
	const struct ident_impl *c = pc->impl;

	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	*st = c->st;
	if (c->cfg.runtime)
		lt_rt_stats(&c->rt, &st->rt);
	st->entries = c->t.n;
	st->v1_entries = c->pt.n;
	st->v1_cap = c->cfg.pid_cap;
}

const struct lt_rt_meta *lt_ident_runtime(struct lt_ident_cache *pc, const char *cid,
					  uint64_t now_ns)
{
	struct ident_impl *c = pc->impl;

	return c && c->cfg.runtime ? lt_rt_get(&c->rt, cid, now_ns) : NULL;
}

const char *lt_ident_root(const struct lt_ident_cache *pc)
{
	return pc->impl ? pc->impl->root : "";
}

unsigned int lt_ident_v1_count(const struct lt_ident_cache *pc)
{
	return pc->impl ? pc->impl->v1 : 0;
}
