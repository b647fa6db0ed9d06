/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The output file of lowtrace profile and lowtrace alloc: written to FILE.tmp-PID, renamed into
 * place only when complete.
 */
#ifndef LT_PROFOUT_H
#define LT_PROFOUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "encode.h"

struct lt_pout {
	const char *path; /* NULL: no file to rename into place */
	char tmp[PATH_MAX];
	int fd;
	bool own_fd; /* a device or fifo opened in place */
	struct lt_buf b;
	int err;
};

/* stdout, or path (binary: refuse a terminal); an exit code, after which lt_pout_close frees */
int lt_pout_open(struct lt_pout *o, const char *path, bool binary);
void lt_pout_flush(struct lt_pout *o);
/* make room for `n` more bytes */
void lt_pout_room(struct lt_pout *o, size_t n);
/* ok: rename the finished file into place; else remove it. Returns an exit code. */
int lt_pout_close(struct lt_pout *o, bool ok);

#endif
