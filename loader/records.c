// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Lookups in the probe table, and the one encoder: it walks a record's field
 * descriptors (probes.c) to write its JSON line or its text line.
 */
#include <arpa/inet.h>
#include <string.h>

#include "records.h"

_Static_assert(sizeof(struct lt_exec) <= LT_RECORD_MAX, "records fit struct lt_rec");
_Static_assert(sizeof(struct lt_lost) <= LT_RECORD_MAX, "records fit struct lt_rec");

const struct lt_probe *lt_probe_by_name(const char *name, size_t len)
{
	for (size_t i = 0; i < lt_nprobes; i++)
		if (strlen(lt_probes[i].name) == len && !memcmp(lt_probes[i].name, name, len))
			return &lt_probes[i];
	return NULL;
}

const char *lt_link_name(const char *prog)
{
	return strncmp(prog, "lt_", 3) ? prog : prog + 3;
}

bool lt_prog_is_fallback(const char *prog)
{
	size_t n = strlen(prog);

	return (n > 5 && !strcmp(prog + n - 5, "_nest")) || lt_prog_is_tp_level(prog);
}

bool lt_prog_writes_no_record(const struct lt_probe *p, const char *prog)
{
	for (int k = 0; k < LT_PROBE_PROGS && p->no_record[k]; k++)
		if (!strcmp(p->no_record[k], prog))
			return true;
	return false;
}

bool lt_prog_is_tp_level(const char *prog)
{
	size_t n = strlen(prog);

	return n > 3 && !strcmp(prog + n - 3, "_tp");
}

const struct lt_probe *lt_probe_by_type(unsigned int type)
{
	if (type == LT_TYPE_LOST)
		return &lt_lost_record;
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].type && lt_probes[i].type == type)
			return &lt_probes[i];
	return NULL;
}

const struct lt_probe *lt_probe_by_id(unsigned int id)
{
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].id == id)
			return &lt_probes[i];
	return NULL;
}

unsigned int lt_rec_probe_type(const struct lt_probe *p, const struct lt_rec *r)
{
	const struct lt_probe *of;

	if (p->type != LT_TYPE_LOST)
		return p->type;
	of = lt_probe_by_id(((const struct lt_lost *)r->raw)->probe);
	return of ? of->type : 0;
}

/* ---- the encoder ---- */

static inline uint64_t get_u(const unsigned char *p, unsigned int size)
{
	switch (size) {
	case 1:
		return *p;
	case 2: {
		__u16 v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
	case 4: {
		__u32 v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
	default: {
		__u64 v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
	}
}

/* the integer as its member's type has it, widened */
static inline int64_t get_int(const unsigned char *r, const struct lt_field *f)
{
	uint64_t v = get_u(r + f->off, f->size);

	if (f->sgn && f->size < 8) {
		uint64_t m = 1ull << (f->size * 8 - 1);

		return (int64_t)((v ^ m) - m);
	}
	return (int64_t)v;
}

static inline char *put_int_w(char *o, const struct lt_field *f, int64_t v)
{
	return f->sgn ? lt_w_s64(o, v) : lt_w_u64(o, (uint64_t)v);
}

static inline void put_int(struct lt_buf *b, const struct lt_field *f, int64_t v)
{
	b->len = put_int_w(b->p + b->len, f, v) - b->p;
}

/* bytes of a string or argv member: the array, or less when its length member says so */
static inline size_t str_max(const unsigned char *r, const struct lt_field *f)
{
	size_t n = f->size;

	if (f->len_size) {
		uint64_t l = get_u(r + f->len_off, f->len_size);

		if (l < n)
			n = l;
	}
	return n;
}

static inline bool get_flag(const unsigned char *r, const struct lt_field *f)
{
	uint64_t v = get_u(r + f->off, f->size);

	return f->bit ? v & f->bit : v != 0;
}

static void put_enum(struct lt_buf *b, const struct lt_field *f, int64_t v)
{
	if (v >= 0 && (uint64_t)v < f->nnames && f->names[v]) {
		lt_put_s(b, f->names[v]);
		return;
	}
	lt_put_s(b, f->unknown);
	if (f->unknown_num)
		put_int(b, f, v);
}

/* an address as inet_ntop writes it; IPv4, the common case, without its printf */
static void put_addr(struct lt_buf *b, const unsigned char *r, const struct lt_field *f)
{
	char s[INET6_ADDRSTRLEN];
	const unsigned char *a = r + f->off;

	if (get_u(r + f->len_off, f->len_size) != 6) {
		for (int i = 0; i < 4; i++) {
			if (i)
				lt_put_c(b, '.');
			lt_put_u64(b, a[i]);
		}
		return;
	}
	if (!inet_ntop(AF_INET6, a, s, sizeof(s)))
		strcpy(s, "?");
	lt_put_s(b, s);
}

static inline char *put_bool_w(char *o, bool v)
{
	memcpy(o, v ? "true" : "false", v ? 4 : 5);
	return o + (v ? 4 : 5);
}

/*
 * One walker writes both forms: the per-kind emitters below take `json` and are
 * inlined into it, and it is inlined into one function per form, so each form's
 * loop is compiled with the other form's tests folded away (no call or branch
 * per field for the form).
 *
 * The walker writes at a local cursor (encode.h says why) and sets b->len only
 * around the helpers that take the buffer (octal, enums, addresses, formatters).
 * Keys are copied whole (LT_KEY_ROOM bytes: the buffer's LT_ENC_MAX of room
 * covers the excess, overwritten next) and the cursor advances by their length.
 */
static inline char *emit_int(struct lt_buf *b, char *o, const struct lt_field *f,
			     const unsigned char *r, bool json)
{
	if (!json && f->text == LT_T_OCTAL) {
		b->len = o - b->p;
		lt_put_octal(b, get_u(r + f->off, f->size));
		return b->p + b->len;
	}
	return put_int_w(o, f, get_int(r, f));
}

static inline char *emit_str(char *o, const char *s, size_t n, bool json)
{
	return json ? lt_w_json_str(o, s, n) : lt_w_text_str(o, s, n);
}

/* JSON: an array of the strings; text: the strings, a space between */
static inline char *emit_argv(char *o, const struct lt_field *f, const unsigned char *r, bool json)
{
	const char *s = (const char *)r + f->off;
	size_t n = str_max(r, f), i = 0;

	if (json)
		*o++ = '[';
	while (i < n) {
		size_t k = lt_strnlen(s + i, n - i);

		if (i)
			*o++ = json ? ',' : ' ';
		o = emit_str(o, s + i, k, json);
		i += k + 1;
	}
	if (json)
		*o++ = ']';
	return o;
}

/* enums and addresses (names of our own, inet_ntop's): JSON quotes them */
static inline char *emit_quote(char *o, bool json)
{
	if (json)
		*o++ = '"';
	return o;
}

static inline char *emit_fmt(struct lt_buf *b, char *o, const struct lt_field *f,
			     const unsigned char *r, bool json)
{
	b->len = o - b->p;
	f->put(b, get_int(r, f), json);
	return b->p + b->len;
}

/* text's LT_T_WORD: the key alone, when the flag is set */
static inline char *emit_word(char *o, const struct lt_field *f, const unsigned char *r)
{
	if (get_flag(r, f)) {
		memcpy(o, f->tkey, LT_KEY_ROOM);
		o += f->tlen;
	}
	return o;
}

static inline __attribute__((always_inline)) void
put_fields(struct lt_buf *b, const struct lt_field *f, const unsigned char *r, bool json)
{
	char *o = b->p + b->len;

	for (; f->name; f++) {
		/* a field of other ops */
		if (f->ops && (r[f->op_off] >= 32 || !((f->ops >> r[f->op_off]) & 1)))
			continue;
		/* JSON has "name":value for every field, text by the field's style */
		if (json) {
			memcpy(o, f->jkey, LT_KEY_ROOM);
			o += f->jlen;
		} else {
			if (f->text == LT_T_NONE)
				continue;
			if (f->text == LT_T_WORD) {
				o = emit_word(o, f, r);
				continue;
			}
			memcpy(o, f->tkey, LT_KEY_ROOM);
			o += f->tlen;
		}
		switch (f->kind) {
		case LT_F_INT:
			o = emit_int(b, o, f, r, json);
			break;
		case LT_F_STR: {
			const char *s = (const char *)r + f->off;

			o = emit_str(o, s, lt_strnlen(s, str_max(r, f)), json);
			break;
		}
		case LT_F_ARGV:
			o = emit_argv(o, f, r, json);
			break;
		case LT_F_FLAG:
			o = put_bool_w(o, get_flag(r, f));
			break;
		case LT_F_ENUM:
			b->len = emit_quote(o, json) - b->p;
			put_enum(b, f, get_int(r, f));
			o = emit_quote(b->p + b->len, json);
			break;
		case LT_F_ADDR:
			b->len = emit_quote(o, json) - b->p;
			put_addr(b, r, f);
			o = emit_quote(b->p + b->len, json);
			break;
		case LT_F_FMT:
			o = emit_fmt(b, o, f, r, json);
			break;
		case LT_F_REC:
			b->len = o - b->p;
			f->put_rec(b, r, json);
			o = b->p + b->len;
			break;
		}
	}
	b->len = o - b->p;
}

static void put_fields_json(struct lt_buf *b, const struct lt_field *f, const unsigned char *r)
{
	put_fields(b, f, r, true);
}

static void put_fields_text(struct lt_buf *b, const struct lt_field *f, const unsigned char *r)
{
	put_fields(b, f, r, false);
}

/* one name of the runtime's: key=value or "key":"value", copied as it is when plain */
static void put_name(struct lt_buf *b, const char *key, const char *v, size_t n, bool plain,
		     bool json)
{
	if (!n)
		return;
	if (json) {
		lt_put_mem(b, ",\"", 2);
		lt_put_s(b, key);
		lt_put_mem(b, "\":", 2);
		if (plain) {
			lt_put_c(b, '"');
			lt_put_mem(b, v, n);
			lt_put_c(b, '"');
		} else {
			lt_put_json_str(b, v, n);
		}
		return;
	}
	lt_put_c(b, ' ');
	lt_put_s(b, key);
	lt_put_c(b, '=');
	if (plain)
		lt_put_mem(b, v, n);
	else
		lt_put_text_str(b, v, n);
}

/* The container runtime's names of the record's container, each when it gave one. */
static void put_meta(struct lt_buf *b, const struct lt_rt_meta *m, bool json)
{
	put_name(b, "container_name", m->name, m->name_len, m->plain & LT_RT_NAME, json);
	put_name(b, "image", m->image, m->image_len, m->plain & LT_RT_IMAGE, json);
	put_name(b, "pod_name", m->pod_name, m->pod_name_len, m->plain & LT_RT_POD, json);
	put_name(b, "pod_namespace", m->pod_ns, m->pod_ns_len, m->plain & LT_RT_NS, json);
}

/* The identity keys: cgroup whenever known, the others only when the path names them. */
static void put_ident_json(struct lt_buf *b, const struct lt_ident *id)
{
	lt_put_mem(b, ",\"cgroup\":", 10);
	if (id->plain & LT_IDENT_PLAIN_CGROUP) {
		lt_put_c(b, '"');
		lt_put_mem(b, id->cgroup, id->cgroup_len);
		lt_put_c(b, '"');
	} else {
		lt_put_json_str(b, id->cgroup, id->cgroup_len);
	}
	if (id->cid_len) {
		lt_put_mem(b, ",\"container_id\":\"", 17);
		lt_put_mem(b, id->container_id, id->cid_len);
		lt_put_c(b, '"');
	}
	if (id->pod_len) {
		lt_put_mem(b, ",\"pod_uid\":\"", 12);
		lt_put_mem(b, id->pod_uid, id->pod_len);
		lt_put_c(b, '"');
	}
	if (id->unit_len) {
		lt_put_mem(b, ",\"unit\":", 8);
		if (id->plain & LT_IDENT_PLAIN_UNIT) {
			lt_put_c(b, '"');
			lt_put_mem(b, id->unit, id->unit_len);
			lt_put_c(b, '"');
		} else {
			lt_put_json_str(b, id->unit, id->unit_len);
		}
	}
	if (id->meta)
		put_meta(b, id->meta, true);
}

static void put_ident_text(struct lt_buf *b, const struct lt_ident *id)
{
	lt_put_mem(b, " cgroup=", 8);
	if (id->plain & LT_IDENT_PLAIN_CGROUP)
		lt_put_mem(b, id->cgroup, id->cgroup_len);
	else
		lt_put_text_str(b, id->cgroup, id->cgroup_len);
	if (id->cid_len) {
		lt_put_mem(b, " container_id=", 14);
		lt_put_mem(b, id->container_id, id->cid_len);
	}
	if (id->pod_len) {
		lt_put_mem(b, " pod_uid=", 9);
		lt_put_mem(b, id->pod_uid, id->pod_len);
	}
	if (id->unit_len) {
		lt_put_mem(b, " unit=", 6);
		if (id->plain & LT_IDENT_PLAIN_UNIT)
			lt_put_mem(b, id->unit, id->unit_len);
		else
			lt_put_text_str(b, id->unit, id->unit_len);
	}
	if (id->meta)
		put_meta(b, id->meta, false);
}

void lt_encode_json_id(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r,
		       const struct lt_ident *id)
{
	lt_put_mem(b, "{\"type\":\"", 9);
	lt_put_s(b, p->name);
	lt_put_c(b, '"');
	put_fields_json(b, lt_hdr_fields, r->raw);
	put_fields_json(b, p->fields, r->raw);
	if (id)
		put_ident_json(b, id);
	lt_put_c(b, '}');
	lt_put_c(b, '\n');
}

void lt_encode_text_id(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r,
		       const struct lt_ident *id)
{
	lt_put_s(b, p->name);
	put_fields_text(b, lt_hdr_fields, r->raw);
	put_fields_text(b, p->fields, r->raw);
	if (id)
		put_ident_text(b, id);
	lt_put_c(b, '\n');
}

void lt_encode_json(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r)
{
	lt_encode_json_id(b, p, r, NULL);
}

void lt_encode_text(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r)
{
	lt_encode_text_id(b, p, r, NULL);
}

/* ---- -h ---- */

#define HELP_INDENT "    "
#define HELP_WIDTH 76

struct wrap {
	FILE *f;
	size_t col; /* 0: nothing on the line yet */
};

/* greedy: a word goes on the line when it fits, else it starts the next one */
static void wrap_word(struct wrap *w, const char *s, size_t n, const char *tail)
{
	size_t len = n + strlen(tail);

	if (w->col && w->col + 1 + len > HELP_WIDTH) {
		fputc('\n', w->f);
		w->col = 0;
	}
	if (!w->col) {
		fputs(HELP_INDENT, w->f);
		w->col = strlen(HELP_INDENT);
	} else {
		fputc(' ', w->f);
		w->col++;
	}
	fwrite(s, 1, n, w->f);
	fputs(tail, w->f);
	w->col += len;
}

static void wrap_fields(struct wrap *w, const struct lt_field *f, const char *last_tail)
{
	for (const struct lt_field *first = f; f->name; f++) {
		const struct lt_field *g = first;

		/* a name two ops write from two members (priv's flags) once */
		while (g < f && strcmp(g->name, f->name))
			g++;
		if (g == f)
			wrap_word(w, f->name, strlen(f->name), f[1].name ? "" : last_tail);
	}
}

void lt_probe_fields_help(FILE *f)
{
	struct wrap w = { f, 0 };
	const struct lt_probe *ps[LT_TYPE_MAX];
	size_t n = 0;

	/* the records `events` streams: of the probes `load` attaches, in type order */
	for (unsigned int t = 1; t < LT_TYPE_MAX; t++) {
		const struct lt_probe *p = lt_probe_by_type(t);

		if (p && !p->cmd && p->fields)
			ps[n++] = p;
	}
	wrap_word(&w, "JSON", 4, "");
	wrap_word(&w, "fields:", 7, "");
	wrap_word(&w, "type", 4, "");
	wrap_fields(&w, lt_hdr_fields, n ? ";" : ".");
	for (size_t i = 0; i < n; i++) {
		wrap_word(&w, ps[i]->name, strlen(ps[i]->name), ":");
		wrap_fields(&w, ps[i]->fields, i + 1 < n ? ";" : ".");
	}
	fputc('\n', f);
}
