/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ring's consumer (kernel_ring.c), read from its mappings. lt_ring_open returns NULL
 * with the error printed; lt_ring_poll and lt_lost_flush are readers: they print nothing
 * and return -errno on failure.
 */
#ifndef LT_KERNEL_RING_H
#define LT_KERNEL_RING_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel_handles.h"

/* Ring consumer: `cb` returns 0 to go on, < 0 to stop after this record, LT_RING_AGAIN to
 * stop before it (not taken: handed out again by the next poll). */
#define LT_RING_AGAIN (-EAGAIN)
typedef int (*lt_sample_fn)(void *ctx, void *data, size_t size);
struct lt_ring;
struct lt_ring *lt_ring_open(int fd, lt_sample_fn cb, void *ctx);
/* Wait up to timeout_ms, then drain: records handled, or -errno (-EINTR: signal) */
int lt_ring_poll(struct lt_ring *r, int timeout_ms);
/*
 * Hold mode: records handed out stay in the ring (the kernel cannot reuse their room) until
 * lt_ring_release(r, pos) lets go of those before `pos`, a position lt_ring_pos gave: the
 * end of the records handed out so far (in a callback: of this one). What was never
 * released is read again by the ring's next consumer.
 */
void lt_ring_hold(struct lt_ring *r);
uint64_t lt_ring_pos(const struct lt_ring *r);
void lt_ring_release(struct lt_ring *r, uint64_t pos);
void lt_ring_free(struct lt_ring *r);
/*
 * For a caller that waits on more than the ring (the subscribers' sockets): the fd that is
 * readable when producers wake the ring, or -1 when only a timeout can tell; *timeout_ms is
 * set to 0 when records wait to be handed out. Then lt_ring_poll(r, 0).
 */
int lt_ring_wait_fd(const struct lt_ring *r, int *timeout_ms);
/*
 * Announce every CPU's pending loss windows now: lost records into the ring (lt_lost_flush
 * run on each CPU). Returns how many CPUs' windows must wait (a program on it was changing
 * one, or the ring was full: try again later), or -errno when it cannot run at all.
 */
int lt_lost_flush(const struct lt_handles *h);

#endif
