// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target: a ring sample (header and body, any size, type and contents) through the decoder
 * and both encoders, as `events` runs them; also the aggregate key writers and histogram formats
 * of `hist`, with the key and the histogram taken from the same bytes.
 *
 * Checked, besides the sanitizers: a JSON line is one valid JSON object and a newline; a text
 * line is printable ASCII and a newline (the text encoder writes every other byte as \xNN);
 * neither exceeds the room its caller leaves (LT_ENC_MAX, LT_HIST_ENC_MAX): the buffers are
 * exactly that big, so AddressSanitizer sees a write past it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histfmt.h"
#include "ident.h"
#include "records.h"

#include "json_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *s, size_t n)
{
	fprintf(stderr, "fuzz_records: %s (%zu bytes):\n", what, n);
	fwrite(s, 1, n, stderr);
	fputc('\n', stderr);
	abort();
}

/* one JSON object then '\n', nothing else */
static void check_json_line(const struct lt_buf *b)
{
	if (!b->len || b->p[b->len - 1] != '\n' || memchr(b->p, '\n', b->len - 1))
		fail("JSON line does not end in its one newline", b->p, b->len);
	if (b->p[0] != '{' || !jc_valid(b->p, b->len - 1))
		fail("invalid JSON", b->p, b->len);
}

static bool printable(const char *s, size_t n, bool newlines)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if ((c < 0x20 || c >= 0x7f) && !(c == '\n' && newlines))
			return false;
	}
	return true;
}

/* printable ASCII, lines ended by '\n' (one line when `one`) */
static void check_text(const char *s, size_t n, bool one)
{
	if (!n || s[n - 1] != '\n')
		fail("text does not end in a newline", s, n);
	if (!printable(s, n - 1, !one))
		fail("raw control or non-ASCII byte in text", s, n);
}

/* exactly the room the callers leave: one byte more is a heap overflow */
static void buf_init(struct lt_buf *b, size_t cap)
{
	if (!b->p) {
		b->p = malloc(cap);
		b->cap = cap;
		if (!b->p)
			abort();
	}
	b->len = 0;
}

/*
 * The same record with an identity derived from the sample's own bytes taken as a cgroup path
 * (any byte; plain left 0, so every field goes through the escaping path).
 */
static void identity(struct lt_buf *enc, const struct lt_probe *p, const struct lt_rec *r,
		     const uint8_t *data, size_t size)
{
	static char path[512];
	struct lt_ident id = { 0 };
	size_t n = size < sizeof(path) - 1 ? size : sizeof(path) - 1;

	memcpy(path, data, n);
	path[n] = 0;
	n = strlen(path);
	lt_ident_derive(path, n, &id);
	id.cgroup = path;
	id.cgroup_len = n;
	enc->len = 0;
	lt_encode_json_id(enc, p, r, &id);
	check_json_line(enc);
	enc->len = 0;
	lt_encode_text_id(enc, p, r, &id);
	check_text(enc->p, enc->len, true);
}

static void records(const uint8_t *data, size_t size)
{
	static struct lt_buf enc; /* the room events leaves per record */
	struct lt_decode_stats st = { 0 };
	const struct lt_probe *p;
	struct lt_rec r;

	buf_init(&enc, LT_ENC_MAX);
	memset(&r, 0xa5, sizeof(r)); /* what the last record left: must not matter */
	p = lt_decode(data, size, &r, &st);
	if (st.fast + st.packed + st.older + st.newer + st.v0 + st.rejected + st.unknown != 1)
		abort(); /* every sample is counted exactly once */
	if (!p)
		return;
	enc.len = 0;
	lt_encode_json(&enc, p, &r);
	check_json_line(&enc);
	enc.len = 0;
	lt_encode_text(&enc, p, &r);
	check_text(enc.p, enc.len, true);
	identity(&enc, p, &r, data, size);
}

/* hist's output per histogram (hist.c hist_print), for every aggregate probe */
static void aggregates(const uint8_t *data, size_t size)
{
	static struct lt_buf hb; /* the room hist leaves per histogram */
	unsigned char key[LT_AGG_KEY_MAX] = { 0 };
	struct lt_hist h = { 0 };
	char title[96], labels[96];

	memcpy(key, data, size < sizeof(key) ? size : sizeof(key));
	if (size > sizeof(key))
		memcpy(&h, data + sizeof(key),
		       size - sizeof(key) < sizeof(h) ? size - sizeof(key) : sizeof(h));
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe *p = &lt_probes[i];
		struct lt_buf *b = &hb;

		if (!p->key_json)
			continue;
		buf_init(b, LT_HIST_ENC_MAX);
		lt_put_c(b, '{');
		p->key_json(b, key);
		lt_hist_json(b, &h);
		lt_put_c(b, '}');
		lt_put_c(b, '\n');
		check_json_line(b);

		p->key_title(title, sizeof(title), p, key);
		if (!memchr(title, 0, sizeof(title)) || !printable(title, strlen(title), false))
			fail("title not a printable string", title, sizeof(title));
		buf_init(b, LT_HIST_ENC_MAX);
		lt_hist_text(b, title, &h);
		check_text(b->p, b->len, false);

		if (p->prom && p->prom->labels) {
			p->prom->labels(labels, sizeof(labels), key);
			if (!printable(labels, strlen(labels), false))
				fail("raw byte in metric labels", labels, strlen(labels));
		}
		if (p->prom && p->prom->nnames) {
			unsigned int k = p->prom->key_name(key);
			const char *nm = k < p->prom->nnames ? p->prom->name(k) : NULL;

			if (nm && !*nm)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	records(data, size);
	/* the same bytes with a size field that fits them: the decoder's accepting paths */
	if (size >= sizeof(struct lt_hdr) && size <= LT_RECORD_MAX + 64) {
		uint8_t *copy = malloc(size);
		struct lt_hdr h;

		if (!copy)
			abort();
		memcpy(copy, data, size);
		memcpy(&h, copy, sizeof(h));
		h.size = (__u16)size;
		memcpy(copy, &h, sizeof(h));
		records(copy, size);
		free(copy);
	}
	aggregates(data, size);
	return 0;
}
