// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pure half of the exposition of lowtrace metrics: HELP and TYPE, a label, a histogram. */
#include <stdio.h>

#include "prom.h"

void lt_prom_help(struct lt_buf *b, const char *name, const char *type, const char *help)
{
	lt_put_s(b, "# HELP ");
	lt_put_s(b, name);
	lt_put_c(b, ' ');
	lt_put_s(b, help);
	lt_put_s(b, "\n# TYPE ");
	lt_put_s(b, name);
	lt_put_c(b, ' ');
	lt_put_s(b, type);
	lt_put_c(b, '\n');
}

void lt_prom_label_value(struct lt_buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			lt_put_c(b, '\\');
		if (*v == '\n') {
			lt_put_s(b, "\\n");
			continue;
		}
		lt_put_c(b, *v);
	}
}

/* seconds of 2^e nanoseconds, as a Prometheus float */
static void put_pow2_seconds(struct lt_buf *b, unsigned int e)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "%.10g", (double)(1ull << e) / 1e9);
	lt_put_s(b, tmp);
}

void lt_prom_hist(struct lt_buf *b, const char *name, const char *labels, const struct lt_hist *h)
{
	char tmp[32];
	uint64_t cum = 0;

	/* slot i holds values below 2^(i+1) ns; the last slot only counts in +Inf */
	for (unsigned int i = 0; i < LT_HIST_SLOTS - 1; i++) {
		cum += h->slot[i];
		lt_put_s(b, name);
		lt_put_s(b, "_bucket{");
		lt_put_s(b, labels);
		lt_put_s(b, *labels ? ",le=\"" : "le=\"");
		put_pow2_seconds(b, i + 1);
		lt_put_s(b, "\"} ");
		lt_put_u64(b, cum);
		lt_put_c(b, '\n');
	}
	lt_put_s(b, name);
	lt_put_s(b, "_bucket{");
	lt_put_s(b, labels);
	lt_put_s(b, *labels ? ",le=\"+Inf\"} " : "le=\"+Inf\"} ");
	lt_put_u64(b, h->count);
	lt_put_c(b, '\n');
	lt_put_s(b, name);
	lt_put_s(b, "_sum");
	if (*labels) {
		lt_put_c(b, '{');
		lt_put_s(b, labels);
		lt_put_c(b, '}');
	}
	snprintf(tmp, sizeof(tmp), " %.9f\n", (double)h->sum_ns / 1e9);
	lt_put_s(b, tmp);
	lt_put_s(b, name);
	lt_put_s(b, "_count");
	if (*labels) {
		lt_put_c(b, '{');
		lt_put_s(b, labels);
		lt_put_c(b, '}');
	}
	lt_put_c(b, ' ');
	lt_put_u64(b, h->count);
	lt_put_c(b, '\n');
}
