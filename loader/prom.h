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
 * The HTTP request in `req` (n bytes, headers complete or not): the status to
 * answer and whether it asks for the body (GET) or not (HEAD).
 * 200 GET/HEAD /metrics; 400 malformed; 404 other path; 405 other method;
 * 431 headers too large (n == cap without the blank line); 0: need more bytes.
 */
int lt_http_status(const char *req, size_t n, size_t cap, bool *head);

#endif
