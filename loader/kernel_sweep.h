/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tcp sweep (kernel_sweep.c): finds the connections whose close (or, with socket
 * storage, open) the kernel ran no
 * program for (lt_counts.unseen) and frees their hash slots. lt_sweeper_open returns an
 * enum lt_exit_code with the error printed; the others are readers: they print nothing and
 * return -errno on failure.
 */
#ifndef LT_KERNEL_SWEEP_H
#define LT_KERNEL_SWEEP_H

#include "kernel_handles.h"
#include "lt_abi.h"

/*
 * Open: NULL (and 0) when there is nothing to sweep (no tcp probe, or a suite without the
 * sweep). Run returns 0 when it swept, 1 when it did not have to (LT_SWEEP_MS not over;
 * another consumer sweeping).
 */
struct lt_sweeper;
int lt_sweeper_open(struct lt_sweeper **out, const struct lt_handles *h);
int lt_sweep_run(struct lt_sweeper *w);
void lt_sweeper_close(struct lt_sweeper *w);
/* the load's walk after the attach (socket storage's unseen opens): an enum lt_exit_code */
struct lt_suite;
int lt_sweep_base(struct lt_suite *s, int stats_fd);
/* lt_sweep's value (-EPROTO: another lowtrace's layout) */
int lt_sweep_state(int fd, struct lt_sweep *st);

#endif
