/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A probe's counters (kernel_stats.c): ours summed over CPUs, the kernel's over its
 * programs. lt_stats_open and lt_enable_stats return an enum lt_exit_code with the error
 * printed; lt_stats_read is a reader: it prints nothing and returns 0 or -errno.
 */
#ifndef LT_KERNEL_STATS_H
#define LT_KERNEL_STATS_H

#include <stdint.h>

#include "kernel_handles.h"
#include "lt_abi.h"
#include "records.h"

struct lt_counts {
	uint64_t events; /* records written */
	uint64_t drops; /* records lost: the ring was full */
	uint64_t recovered; /* events a fallback program took over (see progs/tcp.bpf.c) */
	uint64_t cg_full; /* exec, exit, fork: not counted per cgroup, lt_cg_counts full */
	uint64_t throttled; /* events the probe's rate limit held back (load --rate-limit) */
	uint64_t shed; /* records written short: the ring was three quarters full (exec, open) */
	/* events the kernel skipped the probe for (it was already running on that
	 * CPU) and nothing took over: up to this many records may be missing */
	uint64_t missed;
	/* tcp: connections whose close or open no program saw (the sweep): records missing */
	uint64_t unseen;
	/* grow only while kernel.bpf_stats_enabled or an lt_enable_stats() fd is on */
	uint64_t run_cnt;
	uint64_t run_time_ns;
	/* file, cred, priv: records per op (the op field's values) */
	uint64_t ops[LT_OP_SLOTS];
};

/* Reads lt_counts; the per-CPU buffer and the program fds are taken once, at open. */
struct lt_stats_reader {
	int fd;
	int ncpu;
	uint32_t vsize; /* the map's value size: lt_stat of the lowtrace that loaded it */
	int sweep_fd; /* lt_sweep (unseen), -1: none */
	int ops_fd; /* lt_op_counts, -1: none */
	struct lt_op_counts *ops; /* a value per CPU */
	uint32_t stride; /* one CPU's value: vsize rounded up to 8 */
	void *percpu;
	int prog_fd[LT_PROBE_SLOTS][LT_PROBE_PROGS]; /* -1: not attached */
};
int lt_stats_open(struct lt_stats_reader *r, const struct lt_handles *h);
int lt_stats_read(struct lt_stats_reader *r, const struct lt_probe *p, struct lt_counts *sum);
void lt_stats_close(struct lt_stats_reader *r);
/* Turn on the kernel's BPF run-time statistics while the returned fd is open. */
int lt_enable_stats(int *fd);

#endif
