/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Standard output through one reused buffer: encoders append, one write() per flush. */
#ifndef LT_OUT_H
#define LT_OUT_H

#include <stdbool.h>

#include "encode.h"

#define LT_OUT_SIZE (256 * 1024)

struct lt_out {
	struct lt_buf b;
	bool failed; /* a write failed: the stream should end */
};

/* b over the caller's memory (static: nothing is allocated); ignores SIGPIPE */
void lt_out_init(struct lt_out *o, char *mem, size_t size);
/* Write and empty the buffer; a closed reader (EPIPE) ends the output quietly, another
 * error prints one line. Either sets o->failed. */
void lt_out_flush(struct lt_out *o);

#endif
