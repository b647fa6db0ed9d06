// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pure half of lowtrace metrics: exposition of a histogram, and HTTP request checks. */
#include <stdio.h>
#include <string.h>

#include "prom.h"

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

int lt_http_status(const char *req, size_t n, size_t cap, bool *head)
{
	const char *end = NULL, *sp1, *sp2, *line_end;
	size_t mlen, plen;

	*head = false;
	for (size_t i = 3; i < n; i++) {
		if (req[i - 3] == '\r' && req[i - 2] == '\n' && req[i - 1] == '\r' &&
		    req[i] == '\n') {
			end = req + i;
			break;
		}
	}
	if (!end)
		return n >= cap ? 431 : 0;
	line_end = memchr(req, '\r', n);
	sp1 = memchr(req, ' ', line_end - req);
	if (!sp1)
		return 400;
	sp2 = memchr(sp1 + 1, ' ', line_end - sp1 - 1);
	if (!sp2 || line_end - sp2 < 9 || memcmp(sp2 + 1, "HTTP/1.", 7))
		return 400;
	mlen = sp1 - req;
	plen = sp2 - sp1 - 1;
	for (const char *c = req; c < line_end; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			return 400;
	if (!(mlen == 3 && !memcmp(req, "GET", 3)) && !(mlen == 4 && !memcmp(req, "HEAD", 4)))
		return 405;
	*head = mlen == 4;
	if (!((plen == 8 && !memcmp(sp1 + 1, "/metrics", 8)) ||
	      (plen > 8 && !memcmp(sp1 + 1, "/metrics?", 9))))
		return 404;
	return 200;
}
