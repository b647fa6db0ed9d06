// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The text format of the output table (proffmt.h): allocation sites by estimated bytes, a table
 * of the allocated and, with --leaks, one of the blocks not freed.
 */
#include <stdlib.h>
#include <string.h>

#include "lowtrace.h"
#include "proffmt.h"

#define TEXT_ROWS 20

/* a text row: sites whose stacks print the same are one row */
struct trow {
	char *s; /* first, as in every row (lt_pwriter.rows) */
	struct lt_psite v;
};

static const char *const text_titles[2] = {
	"ALLOCATIONS by stack, estimated (top ",
	"LEAKS: blocks not freed at the end, estimated from the sampled ones (top ",
};

static const char *const text_columns[2] = {
	")\n      BYTES     ALLOCS    SAMPLED  STACK (caller first)\n",
	")\n      BYTES     BLOCKS    SAMPLED  STACK (caller first)\n",
};

static int trow_str_cmp(const void *a, const void *b)
{
	return strcmp(((const struct trow *)a)->s, ((const struct trow *)b)->s);
}

static int trow_bytes_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	return x->v.bytes < y->v.bytes ? 1 : x->v.bytes > y->v.bytes ? -1 : strcmp(x->s, y->s);
}

/* " <- "-joined user frames, the allocator's own frame (frame 0) left out */
static void put_site_frames(struct lt_buf *b, const struct lt_sstack *ss)
{
	char name[NAME_MAX_OUT];

	if (ss->nu < 2) {
		lt_put_s(b, ss->nu ? "(no caller)" : "(no stack)");
		return;
	}
	for (int i = 1; i < ss->nu; i++) {
		size_t n = lt_frame_name(&ss->u[i], name, sizeof(name));

		if (i > 1)
			lt_put_s(b, " <- ");
		lt_put_text_str(b, name, n);
	}
}

static int text_begin(struct lt_pwriter *w)
{
	w->rows[0].elem = w->rows[1].elem = sizeof(struct trow);
	return LT_OK;
}

static bool text_wants(const struct lt_pwriter *w, const struct lt_psample *s)
{
	return s->site[0].samples || (w->kind->sites > 1 && s->site[1].samples);
}

static void text_sample(struct lt_pwriter *w, const struct lt_psample *s,
			const struct lt_sstack *ss)
{
	struct lt_buf *b = &w->out->b;
	size_t start;

	/* the frames are encoded at the end of the output buffer, then copied */
	lt_pout_room(w->out, (size_t)(ss->nu + 1) * (NAME_MAX_OUT * 4 + 8));
	start = b->len;
	put_site_frames(b, ss);
	for (int t = 0; t < w->kind->sites; t++) {
		struct trow *r;

		if (!s->site[t].samples || !(r = lt_vec_push(&w->rows[t])))
			continue;
		r->s = strndup(b->p + start, b->len - start);
		r->v = s->site[t];
		if (!r->s)
			w->rows[t].n--;
	}
	b->len = start;
}

/* rows that print the same stack summed, by bytes; the number left */
static size_t text_merge(struct trow *r, size_t n)
{
	size_t nr = 0;

	if (n)
		qsort(r, n, sizeof(*r), trow_str_cmp);
	for (size_t i = 0; i < n; i++) {
		if (nr && !strcmp(r[nr - 1].s, r[i].s)) {
			r[nr - 1].v.bytes += r[i].v.bytes;
			r[nr - 1].v.count_fp += r[i].v.count_fp;
			r[nr - 1].v.samples += r[i].v.samples;
			free(r[i].s);
			continue;
		}
		r[nr++] = r[i];
	}
	if (nr)
		qsort(r, nr, sizeof(*r), trow_bytes_cmp);
	return nr;
}

static void text_table(struct lt_pwriter *w, int t)
{
	struct lt_buf *b = &w->out->b;
	struct trow *r = w->rows[t].p;
	size_t nr = text_merge(r, w->rows[t].n);

	w->rows[t].n = 0;
	lt_pout_room(w->out, 256);
	lt_put_s(b, text_titles[t]);
	lt_put_u64(b, TEXT_ROWS);
	lt_put_s(b, " of ");
	lt_put_u64(b, nr);
	lt_put_s(b, text_columns[t]);
	for (size_t i = 0; i < nr; i++) {
		char num[64];

		if (i < TEXT_ROWS) {
			lt_pout_room(w->out, strlen(r[i].s) + 100);
			snprintf(num, sizeof(num), "%11llu %10llu %10llu  ",
				 (unsigned long long)r[i].v.bytes,
				 (unsigned long long)lt_fp_round(r[i].v.count_fp),
				 (unsigned long long)r[i].v.samples);
			lt_put_s(b, num);
			lt_put_s(b, r[i].s);
			lt_put_c(b, '\n');
		}
		free(r[i].s);
	}
}

static int text_end(struct lt_pwriter *w)
{
	for (int t = 0; t < w->kind->sites; t++)
		text_table(w, t);
	return LT_OK;
}

const struct lt_pfmt lt_pfmt_text = {
	.name = "text",
	.begin = text_begin,
	.wants = text_wants,
	.sample = text_sample,
	.end = text_end,
};
