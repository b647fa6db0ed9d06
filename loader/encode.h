/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Append-style output encoding into one reused buffer; never allocates. */
#ifndef LT_ENCODE_H
#define LT_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct lt_buf {
	char *p;
	size_t len;
	size_t cap;
};

/*
 * Room one encoded record may need: the worst case is an exec record whose
 * every byte is escaped as \u00XX (6 bytes) in JSON, plus its identity (a
 * cgroup path of up to 1024 bytes, a 128-byte unit, and the runtime's names: 576
 * bytes; escaped too). Callers flush when
 * less than this is free, so the encoders below do not check bounds per byte.
 */
#define LT_ENC_MAX (48 * 1024)

static inline void lt_put_c(struct lt_buf *b, char c)
{
	b->p[b->len++] = c;
}

/* inline: most calls copy a few bytes of a constant or known length */
static inline void lt_put_mem(struct lt_buf *b, const char *s, size_t n)
{
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void lt_put_s(struct lt_buf *b, const char *s); /* trusted literal */
void lt_put_u64(struct lt_buf *b, uint64_t v);
void lt_put_s64(struct lt_buf *b, int64_t v);
/* Octal digits of v, none for 0 (callers write the leading 0). */
void lt_put_octal(struct lt_buf *b, uint64_t v);

/*
 * The same, at a cursor: each writes at `o` and returns the end. Hot loops keep the
 * cursor in a local (a store through char * may alias the buffer's length, which the
 * compiler would then reload and store again for every byte) and set len once.
 */
char *lt_w_u64(char *o, uint64_t v);
char *lt_w_s64(char *o, int64_t v);
char *lt_w_json_str(char *o, const char *s, size_t n);
char *lt_w_text_str(char *o, const char *s, size_t n);

/* JSON string of untrusted bytes, quotes included: any input gives valid JSON. */
void lt_put_json_str(struct lt_buf *b, const char *s, size_t n);
/* Untrusted bytes for a terminal: printable ASCII as is, everything else \xNN. */
void lt_put_text_str(struct lt_buf *b, const char *s, size_t n);

/* JSON helpers: `,"key":` then the value. */
void lt_json_key(struct lt_buf *b, const char *key);
void lt_json_u64(struct lt_buf *b, const char *key, uint64_t v);
void lt_json_str(struct lt_buf *b, const char *key, const char *s, size_t n);
void lt_json_bool(struct lt_buf *b, const char *key, int v);

/* Text helpers: ` key=` then the value. */
void lt_text_u64(struct lt_buf *b, const char *key, uint64_t v);
void lt_text_str(struct lt_buf *b, const char *key, const char *s, size_t n);

/* Length of a NUL-terminated string within a fixed array (kernel bytes). */
size_t lt_strnlen(const char *s, size_t max);

#endif
