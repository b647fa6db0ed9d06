// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Container names from the runtimes' state files (runtime.h). One strict JSON scanner that
 * decodes only the strings asked for, three parsers on it, and a fixed cache of container ids
 * (open-addressing index, LRU list) whose misses read the files into one buffer allocated at
 * open, opened below the root without following any symlink.
 */
#define _GNU_SOURCE /* O_PATH */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hash.h"
#include "runtime.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define NIL UINT32_MAX
#define SEC 1000000000ull
#define JS_DEPTH 64
#define KEY_MAX 48 /* longer keys than any looked for are not kept, so never match */
#define META_MAX 4096 /* containers.json's "metadata": a small JSON document in a string */
#define NS_MAX 16 /* containerd namespaces looked in per lookup */
#define DENTS_BUF 8192
/* opens one lookup may take: docker 1, containerd 1 + NS_MAX, storage 2 + 3 */
#define LOOKUP_OPENS (1 + 1 + NS_MAX + 2 + 3)

static const char SRC_DOCKER[] = "docker", SRC_CONTAINERD[] = "containerd", SRC_CRIO[] = "cri-o",
		  SRC_PODMAN[] = "podman";

/* ---- the JSON scanner: a cursor over the bytes, nothing allocated ---- */

struct js {
	const unsigned char *p, *end;
	int depth;
};

/* Where a decoded string goes: up to cap bytes, whole UTF-8 sequences only; NULL b: skipped */
struct sbuf {
	char *b;
	size_t cap, len;
	bool cut; /* longer than cap, or a NUL inside: what follows is dropped */
};

static void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* a run of ASCII may be cut anywhere */
static void sb_ascii(struct sbuf *s, const unsigned char *p, size_t n)
{
	size_t room;

	if (!s || !s->b || s->cut)
		return;
	room = s->cap - s->len;
	if (n > room) {
		n = room;
		s->cut = true;
	}
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

/* a multibyte sequence only whole, so a cut value stays valid UTF-8 */
static void sb_seq(struct sbuf *s, const unsigned char *p, size_t n)
{
	if (!s || !s->b || s->cut)
		return;
	if (n > s->cap - s->len) {
		s->cut = true;
		return;
	}
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

/* The length of the valid UTF-8 sequence at p (no overlong, surrogate or > U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned int *v)
{
	*v = 0;
	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			*v |= (c | 0x20) - 'a' + 10;
		else
			return -1;
	}
	return 0;
}

/* A \u escape at the cursor (its backslash), surrogate pairs joined, into s. */
static int js_uescape(struct js *j, struct sbuf *s)
{
	unsigned int cp, lo;
	unsigned char u[4];
	size_t n;

	if (hex4(j->p + 2, j->end, &cp))
		return -1;
	j->p += 6;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -1; /* a low surrogate alone */
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' ||
		    hex4(j->p + 2, j->end, &lo) || lo < 0xdc00 || lo > 0xdfff)
			return -1;
		j->p += 6;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (!cp) {
		if (s)
			s->cut = true; /* C strings end at a NUL: the value is cut there */
		return 0;
	}
	if (cp < 0x80) {
		u[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = 0xc0 | cp >> 6;
		u[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = 0xe0 | cp >> 12;
		u[1] = 0x80 | ((cp >> 6) & 0x3f);
		u[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		u[0] = 0xf0 | cp >> 18;
		u[1] = 0x80 | ((cp >> 12) & 0x3f);
		u[2] = 0x80 | ((cp >> 6) & 0x3f);
		u[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	sb_seq(s, u, n);
	return 0;
}

/* The string at the cursor (at its '"'), decoded into s (NULL: only checked). */
static int js_string(struct js *j, struct sbuf *s)
{
	if (j->p >= j->end || *j->p != '"')
		return -1;
	j->p++;
	while (j->p < j->end) {
		unsigned char c = *j->p;
		const unsigned char *q;
		size_t n;

		if (c == '"') {
			j->p++;
			return 0;
		}
		if (c < 0x20)
			return -1; /* control characters only escaped */
		if (c == '\\') {
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *e;

			if (j->end - j->p < 2)
				return -1;
			if (j->p[1] == 'u') {
				if (js_uescape(j, s))
					return -1;
				continue;
			}
			e = memchr(from, j->p[1], sizeof(from) - 1);
			if (!e)
				return -1;
			sb_ascii(s, (const unsigned char *)&to[e - from], 1);
			j->p += 2;
			continue;
		}
		if (c < 0x80) {
			for (q = j->p;
			     q < j->end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\';)
				q++;
			sb_ascii(s, j->p, q - j->p);
			j->p = q;
			continue;
		}
		n = utf8_len(j->p, j->end);
		if (!n)
			return -1;
		sb_seq(s, j->p, n);
		j->p += n;
	}
	return -1;
}

static bool is_digit(const struct js *j)
{
	return j->p < j->end && *j->p >= '0' && *j->p <= '9';
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int js_number(struct js *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (!is_digit(j))
		return -1;
	if (*j->p++ != '0')
		while (is_digit(j))
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!is_digit(j))
			return -1;
		while (is_digit(j))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!is_digit(j))
			return -1;
		while (is_digit(j))
			j->p++;
	}
	return 0;
}

static int js_literal(struct js *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return -1;
	j->p += n;
	return 0;
}

/* Enter the object or array that must be at the cursor: 0, or -1 (not one, or too deep). */
static int js_open(struct js *j, char c)
{
	js_ws(j);
	if (j->p >= j->end || *j->p != c || j->depth >= JS_DEPTH)
		return -1;
	j->p++;
	j->depth++;
	return 0;
}

/* Is the value at the cursor a c ('{', '[', '"')? */
static bool js_is(struct js *j, char c)
{
	js_ws(j);
	return j->p < j->end && *j->p == c;
}

/*
 * The next item of the object or array entered (`close` ends it): 1 with the cursor at it, 0
 * when the container ends (it is left), -1 when malformed.
 */
static int js_next(struct js *j, bool *first, char close)
{
	js_ws(j);
	if (j->p >= j->end)
		return -1;
	if (*j->p == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	if (!*first) {
		if (*j->p != ',')
			return -1;
		j->p++;
		js_ws(j);
	}
	*first = false;
	return 1;
}

/* The next element of the array entered: 1 (cursor at it), 0 (the array ends, left), -1. */
static int js_elem(struct js *j, bool *first)
{
	return js_next(j, first, ']');
}

/*
 * The next member of the object entered: 1 with its key in k (cut keys: klen past KEY_MAX) and
 * the cursor at its value, 0 when the object ends (it is left), -1 when malformed.
 */
static int js_key(struct js *j, bool *first, char *k, size_t *klen)
{
	struct sbuf s = { k, KEY_MAX, 0, false };
	int r = js_next(j, first, '}');

	if (r <= 0)
		return r;
	if (js_string(j, &s))
		return -1;
	*klen = s.cut ? KEY_MAX + 1 : s.len;
	js_ws(j);
	if (j->p >= j->end || *j->p != ':')
		return -1;
	j->p++;
	return 1;
}

/* Any value at the cursor, checked and passed over. */
static int js_skip(struct js *j)
{
	char k[KEY_MAX];
	size_t kl;
	bool first = true;
	int r;

	js_ws(j);
	if (j->p >= j->end)
		return -1;
	switch (*j->p) {
	case '"':
		return js_string(j, NULL);
	case '{':
		if (js_open(j, '{'))
			return -1;
		while ((r = js_key(j, &first, k, &kl)) > 0)
			if (js_skip(j))
				return -1;
		return r;
	case '[':
		if (js_open(j, '['))
			return -1;
		while ((r = js_elem(j, &first)) > 0)
			if (js_skip(j))
				return -1;
		return r;
	case 't':
		return js_literal(j, "true");
	case 'f':
		return js_literal(j, "false");
	case 'n':
		return js_literal(j, "null");
	default:
		return js_number(j);
	}
}

/* The document's end: only white space after the value. */
static int js_end(struct js *j)
{
	js_ws(j);
	return j->p == j->end ? 0 : -1;
}

/* ---- fields ---- */

/* A candidate value: kept until the document says which one a field takes. */
struct fld {
	char b[LT_RT_IMAGE_MAX + 2];
	uint16_t len;
	bool cut, set;
};

/* The value at the cursor into f, at most cap bytes, if a string; anything else is skipped. */
static int js_fld(struct js *j, struct fld *f, size_t cap)
{
	struct sbuf s = { f->b, cap, 0, false };

	if (!js_is(j, '"'))
		return js_skip(j);
	if (js_string(j, &s))
		return -1;
	f->len = s.len;
	f->b[s.len] = 0;
	f->cut = s.cut;
	f->set = true;
	return 0;
}

static bool key_is(const char *k, size_t kl, const char *want)
{
	return kl == strlen(want) && !memcmp(k, want, kl);
}

static bool fld_is(const struct fld *f, const char *want)
{
	return f->set && !f->cut && key_is(f->b, f->len, want);
}

static bool fld_has(const struct fld *f)
{
	return f->set && f->len;
}

static bool is_plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* Copy f into a field of max bytes (f was decoded with at most that many) and its flags. */
static void put(struct lt_rt_meta *m, int bit, const struct fld *f, size_t off)
{
	char *dst;
	size_t max, n = f->set && f->len > off ? f->len - off : 0;
	bool cut = f->set && f->cut;

	switch (bit) {
	case LT_RT_NAME:
		dst = m->name, max = LT_RT_NAME_MAX;
		break;
	case LT_RT_IMAGE:
		dst = m->image, max = LT_RT_IMAGE_MAX;
		break;
	case LT_RT_POD:
		dst = m->pod_name, max = LT_RT_POD_MAX;
		break;
	default:
		dst = m->pod_ns, max = LT_RT_NS_MAX;
		break;
	}
	if (n > max) {
		/* docker's Name is decoded with its '/': cut between UTF-8 sequences */
		for (n = max; n && (f->b[off + n] & 0xc0) == 0x80; n--)
			;
		cut = true;
	}
	memcpy(dst, f->b + off, n);
	dst[n] = 0;
	if (cut)
		m->cut |= bit;
	switch (bit) {
	case LT_RT_NAME:
		m->name_len = n;
		break;
	case LT_RT_IMAGE:
		m->image_len = n;
		break;
	case LT_RT_POD:
		m->pod_name_len = n;
		break;
	default:
		m->pod_ns_len = n;
		break;
	}
}

static void meta_clear(struct lt_rt_meta *m)
{
	m->source = NULL;
	m->name_len = m->image_len = m->pod_name_len = m->pod_ns_len = 0;
	m->plain = LT_RT_NAME | LT_RT_IMAGE | LT_RT_POD | LT_RT_NS; /* "" needs no escaping */
	m->cut = 0;
	m->sandbox = false;
	m->name[0] = m->image[0] = m->pod_name[0] = m->pod_ns[0] = 0;
}

/* plain bits, and whether the document named the container */
static int meta_done(struct lt_rt_meta *m)
{
	m->plain = (is_plain(m->name, m->name_len) ? LT_RT_NAME : 0) |
		   (is_plain(m->image, m->image_len) ? LT_RT_IMAGE : 0) |
		   (is_plain(m->pod_name, m->pod_name_len) ? LT_RT_POD : 0) |
		   (is_plain(m->pod_ns, m->pod_ns_len) ? LT_RT_NS : 0);
	return m->name_len || m->pod_name_len;
}

/* ---- the parsers ---- */

/* One object's members whose keys are in keys[] go to flds[] (their caps in caps[]). */
struct pick {
	const char *const *keys;
	const size_t *caps;
	struct fld *flds;
	int n;
};

static int pick_obj(struct js *j, const struct pick *pk)
{
	char k[KEY_MAX];
	size_t kl;
	bool first = true;
	int r;

	if (!js_is(j, '{'))
		return js_skip(j); /* null, or anything but an object: nothing in it */
	if (js_open(j, '{'))
		return -1;
	while ((r = js_key(j, &first, k, &kl)) > 0) {
		int i;

		for (i = 0; i < pk->n && !key_is(k, kl, pk->keys[i]); i++)
			;
		if (i < pk->n ? js_fld(j, &pk->flds[i], pk->caps[i]) : js_skip(j))
			return -1;
	}
	return r;
}

enum {
	O_CRI_NAME,
	O_CRI_POD,
	O_CRI_NS,
	O_CRI_IMAGE,
	O_CRI_TYPE,
	O_K_NAME,
	O_K_POD,
	O_K_NS,
	O_CRIO_IMAGE,
	O_CRIO_TYPE,
	O_MANAGER,
	O_N
};

/*
 * A Kubernetes runtime's names: f points at five fields in the order name, pod, namespace,
 * image, container type (the O_CRI_* and O_K_* .. O_CRIO_TYPE runs of parse_oci's enum).
 */
static void put_k8s(struct lt_rt_meta *m, const char *source, const struct fld *f)
{
	m->source = source;
	put(m, LT_RT_NAME, &f[0], 0);
	put(m, LT_RT_POD, &f[1], 0);
	put(m, LT_RT_NS, &f[2], 0);
	put(m, LT_RT_IMAGE, &f[3], 0);
	m->sandbox = fld_is(&f[4], "sandbox");
}

int lt_rt_parse_oci(const char *buf, size_t len, struct lt_rt_meta *m)
{
	static const char *const keys[O_N] = {
		[O_CRI_NAME] = "io.kubernetes.cri.container-name",
		[O_CRI_POD] = "io.kubernetes.cri.sandbox-name",
		[O_CRI_NS] = "io.kubernetes.cri.sandbox-namespace",
		[O_CRI_IMAGE] = "io.kubernetes.cri.image-name",
		[O_CRI_TYPE] = "io.kubernetes.cri.container-type",
		[O_K_NAME] = "io.kubernetes.container.name",
		[O_K_POD] = "io.kubernetes.pod.name",
		[O_K_NS] = "io.kubernetes.pod.namespace",
		[O_CRIO_IMAGE] = "io.kubernetes.cri-o.ImageName",
		[O_CRIO_TYPE] = "io.kubernetes.cri-o.ContainerType",
		[O_MANAGER] = "io.container.manager",
	};
	static const size_t caps[O_N] = {
		[O_CRI_NAME] = LT_RT_NAME_MAX,
		[O_CRI_POD] = LT_RT_POD_MAX,
		[O_CRI_NS] = LT_RT_NS_MAX,
		[O_CRI_IMAGE] = LT_RT_IMAGE_MAX,
		[O_CRI_TYPE] = 16,
		[O_K_NAME] = LT_RT_NAME_MAX,
		[O_K_POD] = LT_RT_POD_MAX,
		[O_K_NS] = LT_RT_NS_MAX,
		[O_CRIO_IMAGE] = LT_RT_IMAGE_MAX,
		[O_CRIO_TYPE] = 16,
		[O_MANAGER] = 16,
	};
	struct fld f[O_N];
	struct pick pk = { keys, caps, f, O_N };
	struct js j = { (const unsigned char *)buf, (const unsigned char *)buf + len, 0 };
	char k[KEY_MAX];
	size_t kl;
	bool first = true;
	int r;

	meta_clear(m);
	for (int i = 0; i < O_N; i++)
		f[i].set = false;
	if (js_open(&j, '{'))
		return -EINVAL;
	while ((r = js_key(&j, &first, k, &kl)) > 0)
		if (key_is(k, kl, "annotations") ? pick_obj(&j, &pk) : js_skip(&j))
			return -EINVAL;
	if (r < 0 || js_end(&j))
		return -EINVAL;
	if (f[O_CRI_NAME].set || f[O_CRI_POD].set || f[O_CRI_NS].set || f[O_CRI_TYPE].set)
		put_k8s(m, SRC_CONTAINERD, &f[O_CRI_NAME]);
	else if (f[O_K_NAME].set || f[O_K_POD].set || fld_is(&f[O_MANAGER], "cri-o"))
		put_k8s(m, SRC_CRIO, &f[O_K_NAME]);
	else if (fld_is(&f[O_MANAGER], "libpod")) {
		m->source = SRC_PODMAN; /* its name is in containers/storage */
	} else if (f[O_CRI_IMAGE].set) {
		put(m, LT_RT_IMAGE, &f[O_CRI_IMAGE], 0);
	}
	return meta_done(m);
}

enum { D_NAME, D_IMAGE_ID, D_IMAGE, D_K_NAME, D_K_POD, D_K_NS, D_TYPE, D_N };

int lt_rt_parse_docker(const char *buf, size_t len, struct lt_rt_meta *m)
{
	static const char *const lkeys[] = { "io.kubernetes.container.name",
					     "io.kubernetes.pod.name",
					     "io.kubernetes.pod.namespace",
					     "io.kubernetes.docker.type" };
	static const size_t lcaps[] = { LT_RT_NAME_MAX, LT_RT_POD_MAX, LT_RT_NS_MAX, 16 };
	struct fld f[D_N];
	/* Config.Labels: dockershim's, in D_K_NAME.. order */
	struct pick labels = { lkeys, lcaps, &f[D_K_NAME], 4 };
	struct js j = { (const unsigned char *)buf, (const unsigned char *)buf + len, 0 };
	char k[KEY_MAX];
	size_t kl;
	bool first = true;
	int r;

	meta_clear(m);
	for (int i = 0; i < D_N; i++)
		f[i].set = false;
	if (js_open(&j, '{'))
		return -EINVAL;
	while ((r = js_key(&j, &first, k, &kl)) > 0) {
		if (key_is(k, kl, "Name")) {
			r = js_fld(&j, &f[D_NAME], LT_RT_NAME_MAX + 1); /* + its '/' */
		} else if (key_is(k, kl, "Image")) {
			r = js_fld(&j, &f[D_IMAGE_ID], LT_RT_IMAGE_MAX);
		} else if (key_is(k, kl, "Config") && js_is(&j, '{')) {
			bool cfirst = true;

			if (js_open(&j, '{'))
				return -EINVAL;
			while ((r = js_key(&j, &cfirst, k, &kl)) > 0) {
				if (key_is(k, kl, "Image"))
					r = js_fld(&j, &f[D_IMAGE], LT_RT_IMAGE_MAX);
				else if (key_is(k, kl, "Labels"))
					r = pick_obj(&j, &labels);
				else
					r = js_skip(&j);
				if (r)
					return -EINVAL;
			}
		} else {
			r = js_skip(&j);
		}
		if (r)
			return -EINVAL;
	}
	if (r < 0 || js_end(&j))
		return -EINVAL;
	m->source = SRC_DOCKER;
	/* dockershim's container name, not its k8s_<name>_<pod>_... one */
	if (fld_has(&f[D_K_NAME]))
		put(m, LT_RT_NAME, &f[D_K_NAME], 0);
	else if (f[D_NAME].set)
		put(m, LT_RT_NAME, &f[D_NAME], f[D_NAME].b[0] == '/');
	put(m, LT_RT_IMAGE, fld_has(&f[D_IMAGE]) ? &f[D_IMAGE] : &f[D_IMAGE_ID], 0);
	put(m, LT_RT_POD, &f[D_K_POD], 0);
	put(m, LT_RT_NS, &f[D_K_NS], 0);
	m->sandbox = fld_is(&f[D_TYPE], "podsandbox");
	return meta_done(m);
}

enum { S_ID, S_NAME0, S_IMAGE_ID, S_M_NAME, S_M_MNAME, S_M_IMAGE, S_M_POD, S_N };

/* the "metadata" string's document: its names into f[S_M_*] (ignored when malformed) */
static void storage_metadata(const char *md, size_t n, struct fld *f)
{
	static const char *const keys[] = { "name", "metadata-name", "image-name", "pod-name" };
	static const size_t caps[] = { LT_RT_NAME_MAX, LT_RT_NAME_MAX, LT_RT_IMAGE_MAX,
				       LT_RT_POD_MAX };
	struct pick pk = { keys, caps, &f[S_M_NAME], 4 };
	struct js j = { (const unsigned char *)md, (const unsigned char *)md + n, 0 };

	if (pick_obj(&j, &pk) || js_end(&j))
		for (int i = S_M_NAME; i < S_N; i++)
			f[i].set = false;
}

/* One element of the array: an object of one container, its fields into f. */
static int storage_entry(struct js *j, struct fld *f)
{
	char k[KEY_MAX], md[META_MAX];
	size_t kl;
	bool first = true;
	int r;

	for (int i = 0; i < S_N; i++)
		f[i].set = false;
	if (!js_is(j, '{'))
		return js_skip(j);
	if (js_open(j, '{'))
		return -1;
	while ((r = js_key(j, &first, k, &kl)) > 0) {
		if (key_is(k, kl, "id")) {
			r = js_fld(j, &f[S_ID], LT_RT_CID_LEN + 1);
		} else if (key_is(k, kl, "image")) {
			r = js_fld(j, &f[S_IMAGE_ID], LT_RT_IMAGE_MAX);
		} else if (key_is(k, kl, "names") && js_is(j, '[')) {
			bool afirst = true;

			if (js_open(j, '['))
				return -1;
			while ((r = js_elem(j, &afirst)) > 0)
				if (f[S_NAME0].set ? js_skip(j)
						   : js_fld(j, &f[S_NAME0], LT_RT_NAME_MAX))
					return -1;
		} else if (key_is(k, kl, "metadata") && js_is(j, '"')) {
			struct sbuf s = { md, sizeof(md), 0, false };

			r = js_string(j, &s);
			if (!r && !s.cut)
				storage_metadata(md, s.len, f);
		} else {
			r = js_skip(j);
		}
		if (r)
			return -1;
	}
	return r;
}

int lt_rt_parse_storage(const char *buf, size_t len, const char *cid, struct lt_rt_meta *m)
{
	struct js j = { (const unsigned char *)buf, (const unsigned char *)buf + len, 0 };
	struct fld f[S_N];
	size_t cl = cid ? strnlen(cid, LT_RT_CID_LEN + 1) : 0;
	bool first = true, found = false;
	int r;

	meta_clear(m);
	if (js_open(&j, '['))
		return -EINVAL;
	while ((r = js_elem(&j, &first)) > 0) {
		if (storage_entry(&j, f)) {
			r = -1;
			break;
		}
		/* the first entry of that id: the whole document is still checked */
		if (found || !f[S_ID].set || f[S_ID].cut || f[S_ID].len != cl ||
		    memcmp(f[S_ID].b, cid, cl))
			continue;
		found = true;
		/* CRI-O's "name" is k8s_<name>_<pod>_...; its "metadata-name" is the name */
		put(m, LT_RT_NAME,
		    fld_has(&f[S_M_MNAME])  ? &f[S_M_MNAME]
		    : fld_has(&f[S_M_NAME]) ? &f[S_M_NAME]
					    : &f[S_NAME0],
		    0);
		put(m, LT_RT_IMAGE, fld_has(&f[S_M_IMAGE]) ? &f[S_M_IMAGE] : &f[S_IMAGE_ID], 0);
		put(m, LT_RT_POD, &f[S_M_POD], 0);
		m->source = fld_has(&f[S_M_POD]) ? SRC_CRIO : SRC_PODMAN;
	}
	if (r < 0 || js_end(&j)) {
		meta_clear(m);
		return -EINVAL;
	}
	return found ? meta_done(m) : 0;
}

/* ---- files below the root, no symlink followed ---- */

enum { E_FREE, E_POS, E_NEG };

struct entry {
	uint8_t key[LT_RT_CID_LEN / 2];
	uint32_t hash;
	uint32_t prev, next; /* LRU list, most recent first; or the free list (next) */
	uint64_t retry_ns; /* a negative entry's next lookup */
	uint8_t state;
	struct lt_rt_meta meta;
};

struct rt_impl {
	struct lt_rt_cfg cfg;
	int rootfd;
	bool no_openat2; /* the kernel (or a seccomp filter) has none */
	struct entry *e;
	uint32_t *slots; /* entry index + 1, 0: empty */
	uint32_t mask, n, head, tail, free;
	char *buf; /* one file, up to the larger of file_max and storage_max */
	size_t buf_cap;
	char *dents; /* DENTS_BUF: the containerd namespaces */
	uint64_t win_ns; /* the open budget's second began here */
	uint32_t opens;
	bool win_set;
	struct lt_rt_meta res; /* a lookup's result, until an entry takes it */
	struct lt_rt_stats st;
};

/* path (relative, no "." or "..") by openat2 alone: an O_PATH fd, or -errno */
static int path_openat2(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	/* EAGAIN: a rename raced the lookup */
	for (int i = 0; i < 4; i++) {
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd < 0 ? -errno : (int)fd;
}

/* the same by hand: one O_NOFOLLOW component at a time, a link anywhere is -ELOOP */
static int path_walk(int rootfd, const char *path)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	int dfd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	for (;;) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		struct stat st;
		int fd;

		if (!len || len > NAME_MAX || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.')) {
			close(dfd);
			return -EINVAL;
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st)) {
			close(fd);
			return -errno;
		}
		if (S_ISLNK(st.st_mode)) {
			close(fd);
			return -ELOOP;
		}
		if (!e)
			return fd;
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			return -ENOTDIR;
		}
		dfd = fd;
		p = e + 1;
	}
}

/* path below the root as an O_PATH fd, or -errno; each call spends one of the second's opens */
static int path_open(struct rt_impl *c, const char *path)
{
	int fd = -ENOSYS;

	c->opens++;
	if (!c->no_openat2 && !c->cfg.no_openat2) {
		fd = path_openat2(c->rootfd, path);
		/* before 5.6; or a seccomp filter that does not know it (older ones say EPERM) */
		if (fd == -ENOSYS || fd == -EPERM)
			c->no_openat2 = true;
	}
	if (c->no_openat2 || c->cfg.no_openat2)
		fd = path_walk(c->rootfd, path);
	return fd;
}

/* A skipped file, counted by why; absent ones are not (most places have no such container). */
static void skipped(struct rt_impl *c, int err)
{
	switch (err) {
	case -ENOENT:
	case -ENOTDIR:
		break;
	case -ELOOP:
	case -EXDEV: /* RESOLVE_BENEATH: the path would leave the root */
		c->st.skipped_link++;
		break;
	case -EISDIR:
	case -EINVAL:
		c->st.skipped_type++;
		break;
	case -EFBIG:
		c->st.skipped_big++;
		break;
	default:
		c->st.skipped_error++;
		break;
	}
}

/* The regular file at path, at most max bytes, into c->buf: its length, or -errno (counted). */
static ssize_t load(struct rt_impl *c, const char *path, size_t max)
{
	char self[40];
	struct stat st, st2;
	size_t len = 0;
	int pfd, fd;

	pfd = path_open(c, path);
	if (pfd < 0) {
		skipped(c, pfd);
		return pfd;
	}
	if (fstat(pfd, &st)) {
		close(pfd);
		skipped(c, -EIO);
		return -EIO;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		skipped(c, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max) {
		close(pfd);
		skipped(c, -EFBIG);
		return -EFBIG;
	}
	/* the very inode found, opened for reading (a FIFO or device never is) */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	close(pfd);
	if (fd < 0 || fstat(fd, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		if (fd >= 0)
			close(fd);
		skipped(c, -ESTALE);
		return -ESTALE;
	}
	/* one byte more than allowed tells a file that grew since fstat */
	while (len <= max) {
		ssize_t n = read(fd, c->buf + len, max + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			skipped(c, -EIO);
			return -EIO;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > max) {
		skipped(c, -EFBIG);
		return -EFBIG;
	}
	c->st.reads++;
	return (ssize_t)len;
}

typedef int (*parse_fn)(const char *buf, size_t len, struct lt_rt_meta *m);

/* One config file parsed into c->res: the parser's answer, or -1 (no such file, or skipped) */
static int load_parse(struct rt_impl *c, const char *path, parse_fn fn)
{
	ssize_t n = load(c, path, c->cfg.file_max);
	int r;

	if (n < 0)
		return -1;
	r = fn(c->buf, (size_t)n, &c->res);
	if (r < 0) {
		c->st.skipped_malformed++;
		return -1;
	}
	return r;
}

/* a containerd task: CRI's names, else the containerd id (the cid) is the name */
static int containerd_task(struct rt_impl *c, const char *ns, const char *cid)
{
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path),
		 "run/containerd/io.containerd.runtime.v2.task/%s/%s/config.json", ns, cid);
	r = load_parse(c, path, lt_rt_parse_oci);
	if (r < 0)
		return r;
	c->res.source = SRC_CONTAINERD;
	if (!r) {
		memcpy(c->res.name, cid, LT_RT_CID_LEN + 1);
		c->res.name_len = LT_RT_CID_LEN;
		meta_done(&c->res);
	}
	return 1;
}

/* Every namespace directory of containerd's tasks (the first NS_MAX), for the cid's task. */
static int containerd(struct rt_impl *c, const char *cid)
{
	static const char dir[] = "run/containerd/io.containerd.runtime.v2.task";
	int pfd, fd, tried = 0;

	pfd = path_open(c, dir);
	if (pfd < 0) {
		skipped(c, pfd);
		return 0;
	}
	/* "." of an O_PATH directory: its listing, without following anything */
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(pfd);
	if (fd < 0) {
		skipped(c, errno == ENOTDIR ? -EINVAL : -errno);
		return 0;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, fd, c->dents, DENTS_BUF);

		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
			const char *d = c->dents + off;
			uint16_t reclen;
			uint8_t type;
			const char *name = d + 19;

			memcpy(&reclen, d + 16, 2);
			type = (uint8_t)d[18];
			off += reclen;
			if (!reclen)
				break;
			if ((type != DT_DIR && type != DT_UNKNOWN) || !strcmp(name, ".") ||
			    !strcmp(name, ".."))
				continue;
			if (containerd_task(c, name, cid) > 0) {
				close(fd);
				return 1;
			}
			if (++tried == NS_MAX) {
				close(fd);
				return 0;
			}
		}
	}
	close(fd);
	return 0;
}

/* containers/storage's list (podman): the container's entry into c->res */
static int storage_list(struct rt_impl *c, const char *cid)
{
	static const char *const lists[] = {
		"var/lib/containers/storage/overlay-containers/containers.json",
		"var/lib/containers/storage/overlay-containers/volatile-containers.json",
		/* a transient store keeps it with the run state */
		"run/containers/storage/overlay-containers/containers.json",
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		ssize_t n = load(c, lists[i], c->cfg.storage_max);
		int r;

		if (n < 0)
			continue;
		r = lt_rt_parse_storage(c->buf, (size_t)n, cid, &c->res);
		if (r < 0)
			c->st.skipped_malformed++;
		if (r > 0)
			return 1;
	}
	return 0;
}

/* The container's files, runtime by runtime, into c->res: 1 found, 0 not. */
static int resolve(struct rt_impl *c, const char *cid)
{
	static const char *const crio[] = { "run", "var/lib" };
	char path[PATH_MAX];
	bool oci = false;

	snprintf(path, sizeof(path), "var/lib/docker/containers/%s/config.v2.json", cid);
	if (load_parse(c, path, lt_rt_parse_docker) > 0)
		return 1;
	if (containerd(c, cid))
		return 1;
	for (int i = 0; i < 2 && !oci; i++) {
		int r;

		snprintf(path, sizeof(path),
			 "%s/containers/storage/overlay-containers/%s/userdata/config.json",
			 crio[i], cid);
		r = load_parse(c, path, lt_rt_parse_oci);
		if (r > 0)
			return 1;
		oci = !r;
	}
	/* a container that runs, without names in its spec: podman's are in the list */
	return oci && storage_list(c, cid);
}

/* ---- the cache ---- */

static int unhex(const char *cid, uint8_t *key)
{
	for (int i = 0; i < LT_RT_CID_LEN; i++) {
		char ch = cid[i];
		int v;

		if (ch >= '0' && ch <= '9')
			v = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			v = ch - 'a' + 10;
		else
			return -1; /* a NUL too: shorter ids stop here */
		if (i & 1)
			key[i / 2] |= v;
		else
			key[i / 2] = v << 4;
	}
	return cid[LT_RT_CID_LEN] ? -1 : 0;
}

static uint32_t find(struct rt_impl *c, const uint8_t *key, uint32_t h, uint32_t *slot)
{
	for (uint32_t s = h & c->mask;; s = (s + 1) & c->mask) {
		uint32_t i = c->slots[s];

		*slot = s;
		if (!i)
			return NIL;
		if (c->e[i - 1].hash == h && !memcmp(c->e[i - 1].key, key, sizeof(c->e->key)))
			return i - 1;
	}
}

/* linear probing's deletion: later members of the run move back, so no tombstones */
static void slot_del(struct rt_impl *c, uint32_t s)
{
	uint32_t i = s, j = s;

	for (;;) {
		uint32_t k;

		j = (j + 1) & c->mask;
		if (!c->slots[j])
			break;
		k = c->e[c->slots[j] - 1].hash & c->mask;
		/* j's home k lies cyclically outside (i, j]: it may move to i */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			c->slots[i] = c->slots[j];
			i = j;
		}
	}
	c->slots[i] = 0;
}

static void lru_unlink(struct rt_impl *c, uint32_t i)
{
	struct entry *e = &c->e[i];

	if (e->prev != NIL)
		c->e[e->prev].next = e->next;
	else
		c->head = e->next;
	if (e->next != NIL)
		c->e[e->next].prev = e->prev;
	else
		c->tail = e->prev;
}

static void lru_front(struct rt_impl *c, uint32_t i)
{
	struct entry *e = &c->e[i];

	e->prev = NIL;
	e->next = c->head;
	if (c->head != NIL)
		c->e[c->head].prev = i;
	c->head = i;
	if (c->tail == NIL)
		c->tail = i;
}

/* A new entry for key at its slot: a free one, else the least recently used. */
static uint32_t add(struct rt_impl *c, const uint8_t *key, uint32_t h)
{
	uint32_t i, s;

	if (c->free == NIL) {
		i = c->tail;
		lru_unlink(c, i);
		find(c, c->e[i].key, c->e[i].hash, &s);
		slot_del(c, s);
		c->n--;
		c->st.evictions++;
	} else {
		i = c->free;
		c->free = c->e[i].next;
	}
	memcpy(c->e[i].key, key, sizeof(c->e[i].key));
	c->e[i].hash = h;
	find(c, key, h, &s); /* after the deletion above: the slot may have moved */
	c->slots[s] = i + 1;
	lru_front(c, i);
	c->n++;
	return i;
}

const struct lt_rt_meta *lt_rt_get(struct lt_rt_cache *pc, const char *cid, uint64_t now_ns)
{
	struct rt_impl *c = pc->impl;
	uint8_t key[LT_RT_CID_LEN / 2];
	uint32_t h, i, s;
	int r;

	if (!c || !cid)
		return NULL;
	if (unhex(cid, key)) {
		c->st.bad_id++;
		return NULL;
	}
	h = (uint32_t)lt_hash_bytes(key, sizeof(key));
	i = find(c, key, h, &s);
	if (i != NIL) {
		struct entry *e = &c->e[i];

		lru_unlink(c, i);
		lru_front(c, i);
		if (e->state == E_POS || (int64_t)(now_ns - e->retry_ns) < 0) {
			c->st.hits++;
			return e->state == E_POS ? &e->meta : NULL;
		}
	}
	/* a lookup starts while the second has opens left, and takes at most LOOKUP_OPENS */
	if (!c->win_set || now_ns - c->win_ns >= SEC) {
		c->win_set = true;
		c->win_ns = now_ns;
		c->opens = 0;
	}
	if (c->opens >= c->cfg.opens_max) {
		c->st.deferred++;
		return NULL;
	}
	c->st.misses++;
	meta_clear(&c->res);
	r = resolve(c, cid);
	if (i == NIL)
		i = add(c, key, h);
	if (r > 0) {
		c->st.found++;
		c->e[i].state = E_POS;
		c->e[i].meta = c->res;
		return &c->e[i].meta;
	}
	c->st.not_found++;
	c->e[i].state = E_NEG;
	c->e[i].retry_ns = now_ns + c->cfg.retry_ns;
	return NULL;
}

static void impl_free(struct rt_impl *c)
{
	if (!c)
		return;
	if (c->rootfd >= 0)
		close(c->rootfd);
	free(c->e);
	free(c->slots);
	free(c->buf);
	free(c->dents);
	free(c);
}

int lt_rt_open(struct lt_rt_cache *pc, const struct lt_rt_cfg *cfg)
{
	struct rt_impl *c = calloc(1, sizeof(*c));
	uint32_t slots = 2;
	int err;

	pc->impl = NULL;
	if (!c)
		return -ENOMEM;
	c->rootfd = -1;
	if (cfg)
		c->cfg = *cfg;
	if (!c->cfg.cap)
		c->cfg.cap = 4096;
	if (c->cfg.cap > (1u << 24))
		c->cfg.cap = 1u << 24;
	if (!c->cfg.retry_ns)
		c->cfg.retry_ns = SEC;
	if (!c->cfg.file_max)
		c->cfg.file_max = 1 << 20;
	if (!c->cfg.storage_max)
		c->cfg.storage_max = 8 << 20;
	if (!c->cfg.opens_max)
		c->cfg.opens_max = 256;
	while (slots < 2 * c->cfg.cap)
		slots <<= 1;
	c->mask = slots - 1;
	c->buf_cap =
		(c->cfg.file_max > c->cfg.storage_max ? c->cfg.file_max : c->cfg.storage_max) + 1;
	c->e = calloc(c->cfg.cap, sizeof(*c->e));
	c->slots = calloc(slots, sizeof(*c->slots));
	c->buf = malloc(c->buf_cap);
	c->dents = malloc(DENTS_BUF);
	if (!c->e || !c->slots || !c->buf || !c->dents) {
		impl_free(c);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->cfg.cap; i++)
		c->e[i].next = i + 1 < c->cfg.cap ? i + 1 : NIL;
	c->free = 0;
	c->head = c->tail = NIL;
	c->st.cap = c->cfg.cap;
	c->rootfd = open(c->cfg.root ? c->cfg.root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->rootfd < 0) {
		err = -errno;
		impl_free(c);
		return err;
	}
	pc->impl = c;
	return 0;
}

void lt_rt_close(struct lt_rt_cache *pc)
{
	impl_free(pc->impl);
	pc->impl = NULL;
}

void lt_rt_stats(const struct lt_rt_cache *pc, struct lt_rt_stats *st)
{
	const struct rt_impl *c = pc->impl;

	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	*st = c->st;
	st->entries = c->n;
}
