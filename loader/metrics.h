/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* lowtrace metrics: Prometheus text exposition (0.0.4) over HTTP GET /metrics. */
#ifndef LT_METRICS_H
#define LT_METRICS_H

#include <stdbool.h>

#include "encode.h"
#include "lt_hist.h"

/* A histogram in exposition format: NAME_bucket{LABELS,le=...} (cumulative),
 * NAME_sum (seconds), NAME_count. `labels` is "" or `k="v",...` (trusted). */
void lt_prom_hist(struct lt_buf *b, const char *name, const char *labels, const struct lt_hist *h);

/*
 * The HTTP request in `req` (n bytes, headers complete or not): the status to
 * answer and whether it asks for the body (GET) or not (HEAD).
 * 200 GET/HEAD /metrics; 400 malformed; 404 other path; 405 other method;
 * 431 headers too large (n == cap without the blank line); 0: need more bytes.
 */
int lt_http_status(const char *req, size_t n, size_t cap, bool *head);

struct metrics_opts {
	const char *listen; /* HOST:PORT or [V6]:PORT */
	bool per_syscall_latency;
	unsigned long max_requests; /* 0: serve until a signal (tests use it) */
};

int lt_metrics_serve(const struct metrics_opts *o);

#endif
