/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Prometheus text exposition (0.0.4): what every family of lowtrace metrics is written with. */
#ifndef LT_PROM_H
#define LT_PROM_H

#include "encode.h"
#include "lt_hist.h"

/* A family's "# HELP NAME HELP" and "# TYPE NAME TYPE" lines. */
void lt_prom_help(struct lt_buf *b, const char *name, const char *type, const char *help);
/* A label value: backslash, double quote and newline escaped. */
void lt_prom_label_value(struct lt_buf *b, const char *v);

/* A histogram in exposition format: NAME_bucket{LABELS,le=...} (cumulative),
 * NAME_sum (seconds), NAME_count. `labels` is "" or `k="v",...` (trusted). */
void lt_prom_hist(struct lt_buf *b, const char *name, const char *labels, const struct lt_hist *h);

#endif
