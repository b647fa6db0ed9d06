/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Prometheus text exposition (0.0.4) and the HTTP request check of lowtrace metrics. */
#ifndef LT_PROM_H
#define LT_PROM_H

#include <stdbool.h>

#include "encode.h"
#include "lt_hist.h"

/* A histogram in exposition format: NAME_bucket{LABELS,le=...} (cumulative),
 * NAME_sum (seconds), NAME_count. `labels` is "" or `k="v",...` (trusted). */
void lt_prom_hist(struct lt_buf *b, const char *name, const char *labels, const struct lt_hist *h);

/*
 * The HTTP request parser: a byte-wise state machine that resumes where the
 * last call stopped, so a request that arrives in pieces is checked once per
 * byte. Zero the state for each connection; call lt_http_parse with the whole
 * request so far (n bytes of a cap-byte buffer) after each read.
 *
 * Returns 0 while more bytes are needed (never once n >= cap), else the status
 * to answer, and the same status on every later call:
 *   200 GET or HEAD /metrics[?query]      404 another path
 *   405 another method                    400 malformed: junk, a control byte,
 *   414 the request line fills the buffer     an empty path, no HTTP/1.x version
 *   431 the headers fill the buffer
 * Bytes are checked as they come, so junk gets 400 without waiting for a line end.
 * Lines may end in CRLF or a bare LF; nothing after the blank line is read.
 */
struct lt_http {
	size_t pos; /* bytes of the request checked */
	size_t tlen; /* length of the target (it starts at mlen + 1) */
	int status; /* the answer, once known */
	unsigned char state; /* where pos is (prom.c) */
	unsigned char mlen; /* length of the method */
	unsigned char vpos; /* bytes of "HTTP/1.x" matched */
	bool head; /* HEAD: answer without the body */
};

int lt_http_parse(struct lt_http *h, const char *req, size_t n, size_t cap);

/* One-shot form of lt_http_parse: the status, and whether it asks for no body (HEAD). */
int lt_http_status(const char *req, size_t n, size_t cap, bool *head);

#endif
