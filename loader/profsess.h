/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A profile session, what lowtrace profile and lowtrace alloc both run: open (the output, the
 * symbolizer, the suite) → load (with the unwind tables) → the command attaches its programs →
 * start → run until --duration, a signal or the end of -p → the command reads its aggregates
 * into samples → write them in the chosen format (proffmt.h) → close.
 */
#ifndef LT_PROFSESS_H
#define LT_PROFSESS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"
#include "proffmt.h"
#include "profout.h"
#include "profuw.h"
#include "records.h"
#include "sym.h"

/* What the command asks for, set before lt_psess_open. */
struct lt_psess_opts {
	const char *probe; /* its row in the probe table */
	uint32_t pid; /* -p (checked: lt_check_pid), 0: every process */
	const char *cgroup;
	uint32_t ringbuf_size;
	uint64_t duration_s;
	bool no_unwind;
	bool notices; /* read new-process notices from the ring while running (profile) */
	const struct lt_pfmt *fmt;
	const char *out; /* -o, NULL: stdout */
};

struct lt_psess {
	struct lt_psess_opts o;
	char comm[64]; /* of -p, from lt_check_pid */
	struct lt_pout out;
	struct lt_syms *sy;
	struct lt_suite *suite;
	struct lt_prof_uw uw;
	struct lt_ring *ring;
	struct lt_rec rec; /* the notice being read */
	struct lt_decode_stats ds;
	uint64_t snapshots_failed;
	int pidfd;
	uint64_t t0, t0_real, dur; /* monotonic and wall-clock start, duration: ns */
	bool exited; /* -p ended the run */
	struct lt_prof_counts ctr; /* read by lt_psess_write */
	struct lt_pstats st; /* of the samples written */
};

/* --pid exists: its comm into comm[len], else the usage error */
int lt_check_pid(uint32_t pid, char *comm, size_t len);

/*
 * s zeroed (but for comm, of -p): the output, the symbolizer, the suite (lt_stacks sized). An
 * exit code; lt_psess_close in any case.
 */
int lt_psess_open(struct lt_psess *s, const struct lt_psess_opts *o);
/* The unwind tables sized, the suite loaded, the tables pushed: an exit code */
int lt_psess_load(struct lt_psess *s);
/* Once the command attached: the ring, -p's pidfd and snapshot, Ctrl-C, the clock */
int lt_psess_start(struct lt_psess *s);
/* Until the end, then detached and the ring read out: an exit code */
int lt_psess_run(struct lt_psess *s);
/* The counters read, the samples written in the format (kind: what they are); an exit code */
int lt_psess_write(struct lt_psess *s, const struct lt_pkind *kind, const struct lt_psample *smp,
		   size_t n);
/* The summary's end on stderr: the loss counters, `tail`, the unwind line */
void lt_psess_summary(const struct lt_psess *s, const char *tail);
/* The output renamed into place when ret is LT_OK (else removed), everything freed: the exit
 * code, ret unless closing failed */
int lt_psess_close(struct lt_psess *s, int ret);

#endif
