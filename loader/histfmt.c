// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Log2 histograms as text and JSON. */
#include <stdbool.h>

#include "histfmt.h"

#define BAR_WIDTH 40
/* the range columns: wide enough for every bound, 2^(LT_HIST_SLOTS-1) < 10^16 */
#define RANGE_WIDTH 16
_Static_assert(LT_HIST_SLOTS - 1 <= 53, "bucket bounds fit RANGE_WIDTH digits");
/* the count column: at least this wide, wider when a count needs it */
#define COUNT_WIDTH 10

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* v right-aligned in width columns */
static void put_u64_w(struct lt_buf *b, uint64_t v, int width)
{
	for (int pad = width - digits(v); pad > 0; pad--)
		lt_put_c(b, ' ');
	lt_put_u64(b, v);
}

/* v left-aligned in width columns */
static void put_u64_l(struct lt_buf *b, uint64_t v, int width)
{
	size_t before = b->len;

	lt_put_u64(b, v);
	for (int pad = width - (int)(b->len - before); pad > 0; pad--)
		lt_put_c(b, ' ');
}

/* s left-aligned in width columns */
static void put_s_l(struct lt_buf *b, const char *s, int width)
{
	size_t before = b->len;

	lt_put_s(b, s);
	for (int pad = width - (int)(b->len - before); pad > 0; pad--)
		lt_put_c(b, ' ');
}

static int used_range(const struct lt_hist *h, int *lo, int *hi)
{
	*lo = -1;
	*hi = -1;
	for (int i = 0; i < LT_HIST_SLOTS; i++) {
		if (!h->slot[i])
			continue;
		if (*lo < 0)
			*lo = i;
		*hi = i;
	}
	return *lo >= 0;
}

void lt_hist_text(struct lt_buf *b, const char *title, const struct lt_hist *h)
{
	uint64_t max = 0;
	int lo, hi, cw;

	lt_put_s(b, title);
	lt_put_s(b, ": count ");
	lt_put_u64(b, h->count);
	if (!lt_hist_timed(h)) {
		lt_put_s(b, " (not timed: load --count-only)\n");
		return;
	}
	lt_put_s(b, ", sum ");
	lt_put_u64(b, h->sum_ns);
	lt_put_s(b, " ns, mean ");
	lt_put_u64(b, h->count ? h->sum_ns / h->count : 0);
	lt_put_s(b, " ns\n");
	if (!used_range(h, &lo, &hi))
		return;
	for (int i = lo; i <= hi; i++)
		if (h->slot[i] > max)
			max = h->slot[i];
	cw = digits(max) > COUNT_WIDTH ? digits(max) : COUNT_WIDTH;
	lt_put_s(b, "               nsecs                : ");
	put_s_l(b, "count", cw);
	lt_put_s(b, " distribution\n");
	for (int i = lo; i <= hi; i++) {
		int stars = max ? (int)(h->slot[i] * BAR_WIDTH / max) : 0;

		put_u64_w(b, lt_hist_lo(i), RANGE_WIDTH);
		lt_put_s(b, " -> ");
		if (i == LT_HIST_SLOTS - 1) {
			put_s_l(b, "inf", RANGE_WIDTH);
		} else {
			put_u64_l(b, lt_hist_hi(i) - 1, RANGE_WIDTH);
		}
		lt_put_s(b, ": ");
		put_u64_l(b, h->slot[i], cw);
		lt_put_s(b, " |");
		for (int s = 0; s < BAR_WIDTH; s++)
			lt_put_c(b, s < stars ? '*' : ' ');
		lt_put_s(b, "|\n");
	}
}

const char *lt_bio_op_name(unsigned int op)
{
	static const char *const names[] = { "read", "write", "flush", "discard", "other" };

	return names[op <= LT_BIO_OTHER ? op : LT_BIO_OTHER];
}

void lt_hist_json(struct lt_buf *b, const struct lt_hist *h)
{
	bool first = true;

	lt_json_u64(b, "count", h->count);
	lt_json_u64(b, "sum_ns", h->sum_ns);
	if (!lt_hist_timed(h))
		lt_put_s(b, ",\"timed\":false");
	lt_json_key(b, "buckets");
	lt_put_c(b, '[');
	for (int i = 0; i < LT_HIST_SLOTS; i++) {
		if (!h->slot[i])
			continue;
		lt_put_s(b, first ? "{\"lo\":" : ",{\"lo\":");
		first = false;
		lt_put_u64(b, lt_hist_lo(i));
		lt_put_s(b, ",\"hi\":");
		if (i == LT_HIST_SLOTS - 1)
			lt_put_s(b, "null");
		else
			lt_put_u64(b, lt_hist_hi(i));
		lt_put_s(b, ",\"count\":");
		lt_put_u64(b, h->slot[i]);
		lt_put_c(b, '}');
	}
	lt_put_c(b, ']');
}
