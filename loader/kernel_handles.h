/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fds a consumer needs, from an in-process suite or from the pins (kernel_handles.c).
 * lt_open_pinned returns an enum lt_exit_code with the error printed; lt_seen_read and
 * lt_seen_write are readers: they print nothing and return 0 or -errno.
 */
#ifndef LT_KERNEL_HANDLES_H
#define LT_KERNEL_HANDLES_H

#include <stdbool.h>
#include <stdint.h>

#include "lt_abi.h"

struct lt_suite;

struct lt_handles {
	int ring_fd;
	int stats_fd;
	int seen_fd; /* lt_seen, -1: a suite loaded by a lowtrace without it */
	int flush_fd; /* lt_lost_flush, -1: a suite loaded by a lowtrace without it */
	int flush_err; /* why flush_fd is -1 when the suite has it (EACCES: not the pins' group) */
	int dir_fd; /* pin directory (locked by the consumer), -1 in-process */
	struct lt_suite *suite; /* in-process; NULL for the pins */
};
void lt_suite_handles(struct lt_suite *s, struct lt_handles *h);
int lt_open_pinned(struct lt_handles *h, bool lock_consumer);
/* lt_open_pinned(h, true), but -EBUSY with nothing printed when another consumer has the ring */
int lt_open_pinned_try(struct lt_handles *h);
void lt_close_handles(struct lt_handles *h);
/* The pinned suite of `h` was unloaded or replaced (the pin path names another one, or none). */
bool lt_pinned_gone(const struct lt_handles *h);
/* ... and its links are gone too: nothing writes to its ring any more */
bool lt_pinned_removed(const struct lt_handles *h);
/*
 * The consumer's position in the loss counters (struct lt_seen per probe id): 0 or -errno
 * (-ENOENT: a suite without lt_seen; read then gives zeros).
 */
int lt_seen_read(const struct lt_handles *h, uint32_t probe, struct lt_seen *v);
int lt_seen_write(const struct lt_handles *h, uint32_t probe, const struct lt_seen *v);

#endif
