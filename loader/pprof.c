// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof writer: a protobuf encoder appending into one growing buffer, open-addressing hash
 * tables that deduplicate strings, functions, mappings and locations, and gzip via zlib.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "grow.h"
#include "hash.h"
#include "pprof.h"

/* field numbers of perftools.profiles */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2 };

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

#define VARINT_MAX 10
/* a field: one tag byte (all field numbers are < 16) and a varint */
#define FIELD_MAX (1 + VARINT_MAX)

struct pb {
	uint8_t *p;
	size_t len, cap;
};

struct str {
	size_t off, len; /* in the arena */
	uint64_t hash;
};

struct func {
	uint64_t name;
};

struct mapping {
	uint64_t start, limit, offset, file, build_id;
	/* has_functions only when every location in it is named */
	size_t nloc, nnamed;
};

struct loc {
	uint64_t mapping, address, func;
};

/* slots hold index + 1 of an entry, 0 is free; at most half full */
struct tab {
	uint32_t *slot;
	size_t cap;
};

enum { T_STR, T_FUNC, T_MAP, T_LOC, NTAB };

struct lt_pprof {
	/* sample types and samples; the rest is appended behind them when serializing */
	struct pb buf;
	size_t raw_len;
	struct pb arena; /* string bytes */
	struct str *strs;
	struct func *funcs;
	struct mapping *maps;
	struct loc *locs;
	uint64_t *comments;
	size_t nstr, str_cap, nfunc, func_cap, nmap, map_cap, nloc, loc_cap, ncomment, comment_cap;
	struct tab tab[NTAB];
	size_t ntypes, nsamples;
	bool has_period_type;
	uint64_t period_type, period_unit, key_comm, key_pid;
	int64_t period, time_nanos, duration_nanos;
	int err; /* the first failure: -ENOMEM anywhere, -EINVAL from a setter */
};

static void fail(struct lt_pprof *p, int err)
{
	if (!p->err)
		p->err = err;
}

/* the profile would miss data: remember it for lt_pprof_write */
static uint64_t nomem(struct lt_pprof *p)
{
	fail(p, -ENOMEM);
	return 0;
}

/* ---- protobuf encoding: callers reserve room first, the writers below do not check ---- */

static int pb_reserve(struct pb *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *q;

	if (b->cap - b->len >= n)
		return 0;
	if (n > SIZE_MAX / 4 - b->len)
		return -ENOMEM;
	while (cap - b->len < n)
		cap *= 2;
	q = realloc(b->p, cap);
	if (!q)
		return -ENOMEM;
	b->p = q;
	b->cap = cap;
	return 0;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(struct pb *b, uint64_t v)
{
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static void put_tag(struct pb *b, int field, int wire)
{
	put_varint(b, (uint64_t)field << 3 | wire);
}

/* a varint field (int64 as its two's complement); proto3 leaves zero out */
static void put_uint(struct pb *b, int field, uint64_t v)
{
	if (!v)
		return;
	put_tag(b, field, WIRE_VARINT);
	put_varint(b, v);
}

/* a packed repeated varint field; empty ones are left out */
static void put_packed(struct pb *b, int field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += varint_size(v[i]);
	put_tag(b, field, WIRE_LEN);
	put_varint(b, len);
	for (size_t i = 0; i < n; i++)
		put_varint(b, v[i]);
}

/* a nested message: its tag and a one-byte length placeholder; returns where the body starts */
static size_t msg_open(struct pb *b, int field)
{
	put_tag(b, field, WIRE_LEN);
	b->p[b->len++] = 0;
	return b->len;
}

/*
 * The body's length, minimal: most bodies fit the placeholder, longer ones move once (the
 * caller reserved FIELD_MAX for the message, so there is room).
 */
static void msg_close(struct pb *b, size_t start)
{
	size_t body = b->len - start, n = varint_size(body), end;

	if (n > 1) {
		memmove(b->p + start + n - 1, b->p + start, body);
		b->len += n - 1;
	}
	end = b->len;
	b->len = start - 1;
	put_varint(b, body);
	b->len = end;
}

/* ---- dedup tables ---- */

static uint64_t entry_hash(const struct lt_pprof *p, int t, size_t i)
{
	const struct mapping *m;

	switch (t) {
	case T_STR:
		return p->strs[i].hash;
	case T_FUNC:
		return lt_hash_mix(p->funcs[i].name);
	case T_MAP:
		m = &p->maps[i];
		return lt_hash_mix(
			m->start ^
			lt_hash_mix(m->limit ^ lt_hash_mix(m->offset ^ lt_hash_mix(m->file))));
	default:
		return lt_hash_mix(p->locs[i].address ^ lt_hash_mix(p->locs[i].mapping));
	}
}

static bool entry_eq(const struct lt_pprof *p, int t, size_t i, size_t j)
{
	const struct mapping *a, *b;

	switch (t) {
	case T_STR:
		return p->strs[i].len == p->strs[j].len &&
		       !memcmp(p->arena.p + p->strs[i].off, p->arena.p + p->strs[j].off,
			       p->strs[i].len);
	case T_FUNC:
		return p->funcs[i].name == p->funcs[j].name;
	case T_MAP:
		a = &p->maps[i];
		b = &p->maps[j];
		return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
		       a->file == b->file;
	default:
		return p->locs[i].mapping == p->locs[j].mapping &&
		       p->locs[i].address == p->locs[j].address;
	}
}

/* rehash entries [0, n) into a table with room for n + 1 */
static int tab_grow(struct lt_pprof *p, int t, size_t n)
{
	struct tab *tab = &p->tab[t];
	size_t cap = tab->cap ? tab->cap : 64;
	uint32_t *slot;

	while ((n + 1) * 2 > cap)
		cap *= 2;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t s = entry_hash(p, t, i) & (cap - 1);

		while (slot[s])
			s = (s + 1) & (cap - 1);
		slot[s] = i + 1;
	}
	free(tab->slot);
	tab->slot = slot;
	tab->cap = cap;
	return 0;
}

/*
 * The candidate is entry n, just past the committed ones: returns the id (index + 1) of an
 * equal entry, or n + 1 when it is new (the caller then commits it); 0 on allocation failure.
 */
static size_t tab_intern(struct lt_pprof *p, int t, size_t n)
{
	struct tab *tab = &p->tab[t];
	size_t s;

	if (n >= UINT32_MAX - 1)
		return 0;
	if ((n + 1) * 2 > tab->cap && tab_grow(p, t, n))
		return 0;
	for (s = entry_hash(p, t, n) & (tab->cap - 1); tab->slot[s]; s = (s + 1) & (tab->cap - 1)) {
		if (entry_eq(p, t, tab->slot[s] - 1, n))
			return tab->slot[s];
	}
	tab->slot[s] = n + 1;
	return n + 1;
}

/* the length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		len = 2;
	} else if (c < 0xf0) {
		len = 3;
		/* overlong forms; surrogates */
		lo = c == 0xe0 ? 0xa0 : lo;
		hi = c == 0xed ? 0x9f : hi;
	} else if (c < 0xf5) {
		len = 4;
		/* overlong forms; above U+10FFFF */
		lo = c == 0xf0 ? 0x90 : lo;
		hi = c == 0xf4 ? 0x8f : hi;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	}
	return len;
}

/* the string table index of s (NULL: ""), added if new */
static int intern(struct lt_pprof *p, const char *s, uint64_t *idx)
{
	const uint8_t *in = (const uint8_t *)(s ? s : "");
	size_t n = strlen((const char *)in), len = 0, id;
	uint8_t *out;

	if (LT_GROW(p->strs, p->str_cap, p->nstr + 1))
		return -ENOMEM;
	/* a copy at the end of the arena, kept only if new; U+FFFD takes 3 bytes for 1 (and
	 * the + 1 keeps the arena allocated for "") */
	if (n > SIZE_MAX / 4 || pb_reserve(&p->arena, 3 * n + 1))
		return -ENOMEM;
	out = p->arena.p + p->arena.len;
	for (size_t i = 0, k; i < n; i += k ? k : 1) {
		k = utf8_seq(in + i, n - i);
		if (k) {
			memcpy(out + len, in + i, k);
			len += k;
		} else {
			memcpy(out + len, "\xef\xbf\xbd", 3);
			len += 3;
		}
	}
	p->strs[p->nstr] = (struct str){ p->arena.len, len, lt_hash_bytes(out, len) };
	id = tab_intern(p, T_STR, p->nstr);
	if (!id)
		return -ENOMEM;
	if (id == p->nstr + 1) {
		p->nstr++;
		p->arena.len += len;
	}
	*idx = id - 1;
	return 0;
}

static uint64_t function_id(struct lt_pprof *p, const char *name)
{
	uint64_t s;
	size_t id;

	if (intern(p, name, &s) || LT_GROW(p->funcs, p->func_cap, p->nfunc + 1))
		return 0;
	p->funcs[p->nfunc].name = s;
	id = tab_intern(p, T_FUNC, p->nfunc);
	if (id == p->nfunc + 1)
		p->nfunc++;
	return id;
}

/* ---- the API ---- */

struct lt_pprof *lt_pprof_new(void)
{
	struct lt_pprof *p = calloc(1, sizeof(*p));
	uint64_t empty;

	/* string_table[0] must be "" */
	if (p && intern(p, "", &empty)) {
		lt_pprof_free(p);
		return NULL;
	}
	return p;
}

void lt_pprof_free(struct lt_pprof *p)
{
	if (!p)
		return;
	free(p->buf.p);
	free(p->arena.p);
	free(p->strs);
	free(p->funcs);
	free(p->maps);
	free(p->locs);
	free(p->comments);
	for (int t = 0; t < NTAB; t++)
		free(p->tab[t].slot);
	free(p);
}

void lt_pprof_sample_type(struct lt_pprof *p, const char *type, const char *unit)
{
	uint64_t t, u;
	size_t start;

	/* encoded in place, ahead of the samples, whose value count it fixes */
	if (p->nsamples) {
		fail(p, -EINVAL);
		return;
	}
	/* the message and 2 fields */
	if (intern(p, type, &t) || intern(p, unit, &u) || pb_reserve(&p->buf, 3 * FIELD_MAX)) {
		fail(p, -ENOMEM);
		return;
	}
	start = msg_open(&p->buf, PROFILE_SAMPLE_TYPE);
	put_uint(&p->buf, VALUE_TYPE_TYPE, t);
	put_uint(&p->buf, VALUE_TYPE_UNIT, u);
	msg_close(&p->buf, start);
	p->ntypes++;
}

void lt_pprof_period(struct lt_pprof *p, const char *type, const char *unit, int64_t period)
{
	if (intern(p, type, &p->period_type) || intern(p, unit, &p->period_unit)) {
		fail(p, -ENOMEM);
		return;
	}
	p->has_period_type = true;
	p->period = period;
}

void lt_pprof_times(struct lt_pprof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

void lt_pprof_comment(struct lt_pprof *p, const char *text)
{
	uint64_t s;

	if (intern(p, text, &s) || LT_GROW(p->comments, p->comment_cap, p->ncomment + 1)) {
		fail(p, -ENOMEM);
		return;
	}
	p->comments[p->ncomment++] = s;
}

uint64_t lt_pprof_mapping(struct lt_pprof *p, uint64_t start, uint64_t limit, uint64_t offset,
			  const char *file, const char *build_id)
{
	struct mapping *m;
	uint64_t f, b;
	size_t id;

	if (intern(p, file, &f) || intern(p, build_id, &b) ||
	    LT_GROW(p->maps, p->map_cap, p->nmap + 1))
		return nomem(p);
	m = &p->maps[p->nmap];
	*m = (struct mapping){
		.start = start, .limit = limit, .offset = offset, .file = f, .build_id = b
	};
	id = tab_intern(p, T_MAP, p->nmap);
	if (!id)
		return nomem(p);
	if (id == p->nmap + 1)
		p->nmap++;
	return id;
}

uint64_t lt_pprof_location(struct lt_pprof *p, uint64_t mapping_id, uint64_t address,
			   const char *func)
{
	struct mapping *m = NULL;
	uint64_t f = 0;
	struct loc *l;
	size_t id;

	if (mapping_id > p->nmap)
		return 0;
	if (mapping_id)
		m = &p->maps[mapping_id - 1];
	if (func) {
		f = function_id(p, func);
		if (!f)
			return nomem(p);
	}
	if (LT_GROW(p->locs, p->loc_cap, p->nloc + 1))
		return nomem(p);
	p->locs[p->nloc] = (struct loc){ mapping_id, address, f };
	id = tab_intern(p, T_LOC, p->nloc);
	if (!id)
		return nomem(p);
	l = &p->locs[id - 1];
	if (id == p->nloc + 1) {
		p->nloc++;
		if (m) {
			m->nloc++;
			m->nnamed += !!f;
		}
	} else if (f && !l->func) {
		l->func = f;
		if (m)
			m->nnamed++;
	}
	return id;
}

int lt_pprof_sample(struct lt_pprof *p, const uint64_t *loc, size_t nloc, const int64_t *values,
		    const char *comm, int64_t pid)
{
	struct pb *b = &p->buf;
	uint64_t str = 0;
	size_t start, label;

	if (!p->ntypes || nloc > SIZE_MAX / 4 / VARINT_MAX)
		return -EINVAL;
	if (comm && !*comm)
		comm = NULL;
	for (size_t i = 0; i < nloc; i++) {
		if (!loc[i] || loc[i] > p->nloc)
			return -EINVAL;
	}
	if ((comm &&
	     ((!p->key_comm && intern(p, "comm", &p->key_comm)) || intern(p, comm, &str))) ||
	    (pid >= 0 && !p->key_pid && intern(p, "pid", &p->key_pid)) ||
	    /* the sample, two packed fields, two labels of three fields */
	    pb_reserve(b, 9 * FIELD_MAX + VARINT_MAX * (nloc + p->ntypes))) {
		nomem(p);
		return -ENOMEM;
	}

	start = msg_open(b, PROFILE_SAMPLE);
	put_packed(b, SAMPLE_LOCATION_ID, loc, nloc);
	/* int64 values as their two's complement, as protobuf encodes them */
	put_packed(b, SAMPLE_VALUE, (const uint64_t *)values, p->ntypes);
	if (comm) {
		label = msg_open(b, SAMPLE_LABEL);
		put_uint(b, LABEL_KEY, p->key_comm);
		put_uint(b, LABEL_STR, str);
		msg_close(b, label);
	}
	if (pid >= 0) {
		label = msg_open(b, SAMPLE_LABEL);
		put_uint(b, LABEL_KEY, p->key_pid);
		put_uint(b, LABEL_NUM, (uint64_t)pid);
		msg_close(b, label);
	}
	msg_close(b, start);
	p->nsamples++;
	return 0;
}

/* the tables and scalars behind the samples, in field order; buf.len stays at the samples */
static int serialize(struct lt_pprof *p)
{
	struct pb *b = &p->buf;
	size_t body = b->len, start, line;

	if (p->err)
		return p->err;
	for (size_t i = 0; i < p->nmap; i++) {
		const struct mapping *m = &p->maps[i];

		/* the message and 7 fields */
		if (pb_reserve(b, 8 * FIELD_MAX))
			goto nomem;
		start = msg_open(b, PROFILE_MAPPING);
		put_uint(b, MAPPING_ID, i + 1);
		put_uint(b, MAPPING_MEMORY_START, m->start);
		put_uint(b, MAPPING_MEMORY_LIMIT, m->limit);
		put_uint(b, MAPPING_FILE_OFFSET, m->offset);
		put_uint(b, MAPPING_FILENAME, m->file);
		put_uint(b, MAPPING_BUILD_ID, m->build_id);
		put_uint(b, MAPPING_HAS_FUNCTIONS, m->nloc && m->nnamed == m->nloc);
		msg_close(b, start);
	}
	for (size_t i = 0; i < p->nloc; i++) {
		const struct loc *l = &p->locs[i];

		/* the message, 3 fields, the line and its field */
		if (pb_reserve(b, 6 * FIELD_MAX))
			goto nomem;
		start = msg_open(b, PROFILE_LOCATION);
		put_uint(b, LOCATION_ID, i + 1);
		put_uint(b, LOCATION_MAPPING_ID, l->mapping);
		put_uint(b, LOCATION_ADDRESS, l->address);
		if (l->func) {
			line = msg_open(b, LOCATION_LINE);
			put_uint(b, LINE_FUNCTION_ID, l->func);
			msg_close(b, line);
		}
		msg_close(b, start);
	}
	for (size_t i = 0; i < p->nfunc; i++) {
		if (pb_reserve(b, 3 * FIELD_MAX))
			goto nomem;
		start = msg_open(b, PROFILE_FUNCTION);
		put_uint(b, FUNCTION_ID, i + 1);
		put_uint(b, FUNCTION_NAME, p->funcs[i].name);
		msg_close(b, start);
	}
	for (size_t i = 0; i < p->nstr; i++) {
		const struct str *s = &p->strs[i];

		if (pb_reserve(b, FIELD_MAX + s->len))
			goto nomem;
		put_tag(b, PROFILE_STRING_TABLE, WIRE_LEN);
		put_varint(b, s->len);
		memcpy(b->p + b->len, p->arena.p + s->off, s->len);
		b->len += s->len;
	}
	/* time, duration, period_type and its 2 fields, period, the packed comments */
	if (p->ncomment > SIZE_MAX / 4 / VARINT_MAX ||
	    pb_reserve(b, 7 * FIELD_MAX + VARINT_MAX * p->ncomment))
		goto nomem;
	put_uint(b, PROFILE_TIME_NANOS, (uint64_t)p->time_nanos);
	put_uint(b, PROFILE_DURATION_NANOS, (uint64_t)p->duration_nanos);
	if (p->has_period_type) {
		start = msg_open(b, PROFILE_PERIOD_TYPE);
		put_uint(b, VALUE_TYPE_TYPE, p->period_type);
		put_uint(b, VALUE_TYPE_UNIT, p->period_unit);
		msg_close(b, start);
	}
	put_uint(b, PROFILE_PERIOD, (uint64_t)p->period);
	put_packed(b, PROFILE_COMMENT, p->comments, p->ncomment);
	p->raw_len = b->len;
	b->len = body;
	return 0;
nomem:
	b->len = body;
	return -ENOMEM;
}

const void *lt_pprof_raw(struct lt_pprof *p, size_t *len)
{
	if (serialize(p))
		return NULL;
	*len = p->raw_len;
	return p->buf.p;
}

typedef int (*sink_fn)(void *ctx, const void *data, size_t len);

static int sink_fd(void *ctx, const void *data, size_t len)
{
	int fd = *(int *)ctx;

	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -EIO;
		data = (const char *)data + n;
		len -= n;
	}
	return 0;
}

static int sink_file(void *ctx, const void *data, size_t len)
{
	errno = 0;
	if (fwrite(data, 1, len, ctx) != len)
		return errno ? -errno : -EIO;
	return 0;
}

static int gzip_to(struct lt_pprof *p, sink_fn sink, void *ctx)
{
	unsigned char out[16384];
	z_stream z = {};
	uint8_t *in;
	size_t left;
	int err, flush, zr;

	err = serialize(p);
	if (err)
		return err;
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	zr = deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zr != Z_OK)
		return zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	in = p->buf.p;
	left = p->raw_len;
	do {
		/* avail_in is an unsigned int */
		size_t chunk = left < (1u << 30) ? left : (1u << 30);

		z.next_in = in;
		z.avail_in = chunk;
		in += chunk;
		left -= chunk;
		flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				err = -EINVAL;
				goto out;
			}
			if (z.avail_out < sizeof(out)) {
				err = sink(ctx, out, sizeof(out) - z.avail_out);
				if (err)
					goto out;
			}
		} while (z.avail_out == 0);
	} while (flush != Z_FINISH);
	if (zr != Z_STREAM_END)
		err = -EIO;
out:
	deflateEnd(&z);
	return err;
}

int lt_pprof_write(struct lt_pprof *p, int fd)
{
	return gzip_to(p, sink_fd, &fd);
}

int lt_pprof_write_file(struct lt_pprof *p, FILE *f)
{
	int err = gzip_to(p, sink_file, f);

	if (!err && fflush(f))
		err = errno ? -errno : -EIO;
	return err;
}
