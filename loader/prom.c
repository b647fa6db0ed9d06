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

/* where the parser is: in the request line, or in the header lines after it */
enum {
	H_METHOD,
	H_TARGET,
	H_VERSION,
	H_LINE_CR, /* CR after the version or a header value: LF must follow */
	H_LINE, /* at the start of a header line (or of the blank line) */
	H_NAME,
	H_VALUE,
	H_END_CR, /* CR of the blank line */
};

#define METHOD_MAX 16 /* longer than any method: junk, not a long method */

/* RFC 9110 tchar: what a method or a header name is made of */
static bool tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* the request line and headers are complete: what was asked for */
static int http_done(struct lt_http *h, const char *req)
{
	const char *t = req + h->mlen + 1;

	if (h->mlen == 3 && !memcmp(req, "GET", 3))
		h->head = false;
	else if (h->mlen == 4 && !memcmp(req, "HEAD", 4))
		h->head = true;
	else
		return 405;
	if ((h->tlen == 8 && !memcmp(t, "/metrics", 8)) ||
	    (h->tlen > 8 && !memcmp(t, "/metrics?", 9)))
		return 200;
	return 404;
}

/* one byte; 0 to go on, else the status */
static int http_byte(struct lt_http *h, const char *req, unsigned char c)
{
	switch (h->state) {
	case H_METHOD:
		if (c == ' ' && h->mlen) {
			h->state = H_TARGET;
			return 0;
		}
		if (!tchar(c) || h->mlen == METHOD_MAX)
			return 400;
		h->mlen++;
		return 0;
	case H_TARGET:
		if (c == ' ' && h->tlen) {
			h->state = H_VERSION;
			return 0;
		}
		if (c <= ' ' || c >= 0x7f) /* an empty path, a control byte, a line end */
			return 400;
		h->tlen++;
		return 0;
	case H_VERSION:
		if (h->vpos < 7) {
			if (c != (unsigned char)"HTTP/1."[h->vpos++])
				return 400;
			return 0;
		}
		if (h->vpos == 7) {
			h->vpos++;
			return c >= '0' && c <= '9' ? 0 : 400;
		}
		if (c == '\r')
			h->state = H_LINE_CR;
		else if (c == '\n')
			h->state = H_LINE;
		else
			return 400;
		return 0;
	case H_LINE_CR:
		if (c != '\n')
			return 400;
		h->state = H_LINE;
		return 0;
	case H_LINE:
		if (c == '\n')
			return http_done(h, req);
		if (c == '\r')
			h->state = H_END_CR;
		else if (tchar(c))
			h->state = H_NAME;
		else /* a folded line (RFC 9112 says reject), junk */
			return 400;
		return 0;
	case H_NAME:
		if (c == ':')
			h->state = H_VALUE;
		else if (!tchar(c)) /* includes a space before the colon */
			return 400;
		return 0;
	case H_VALUE:
		if (c == '\r')
			h->state = H_LINE_CR;
		else if (c == '\n')
			h->state = H_LINE;
		else if ((c < ' ' && c != '\t') || c == 0x7f)
			return 400;
		return 0;
	case H_END_CR:
		return c == '\n' ? http_done(h, req) : 400;
	}
	return 400;
}

int lt_http_parse(struct lt_http *h, const char *req, size_t n, size_t cap)
{
	while (!h->status && h->pos < n)
		h->status = http_byte(h, req, (unsigned char)req[h->pos++]);
	if (!h->status && n >= cap) /* full: which part did not fit */
		h->status = h->state <= H_VERSION ? (h->state == H_METHOD ? 400 : 414) : 431;
	return h->status;
}

int lt_http_status(const char *req, size_t n, size_t cap, bool *head)
{
	struct lt_http h = { 0 };
	int status = lt_http_parse(&h, req, n, cap);

	*head = h.head;
	return status;
}
