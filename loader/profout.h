/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What lowtrace profile (profile.c) and lowtrace alloc (alloc.c) share: the output file,
 * folded-frame escaping, symbolized stacks, the run loop and the loss counters.
 */
#ifndef LT_PROFOUT_H
#define LT_PROFOUT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "encode.h"
#include "kernel.h"
#include "lt_prof.h"
#include "sym.h"

#define NAME_MAX_OUT 512 /* bytes of one frame name written; longer ones are cut */
#define STACK_ENTRIES 16384 /* lt_stacks for profile and alloc */

enum fmt { FMT_FOLDED, FMT_PPROF, FMT_JSON, FMT_TEXT };

/* ---- output: written to FILE.tmp-PID, renamed into place only when complete ---- */

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
/* A frame name in folded stacks: ';' and spaces would split it, bytes outside printable
 * ASCII never reach a terminal (\xNN) */
void lt_put_folded(struct lt_buf *b, const char *s);

/* ---- stacks and symbols ---- */

/* A whole symbolized stack: user frames then kernel frames, each leaf first. */
struct lt_sstack {
	struct lt_frame u[LT_STACK_DEPTH + 1];
	struct lt_frame k[LT_STACK_DEPTH];
	int nu, nk;
	bool u_complete; /* the unwinder reached the outermost user frame */
};

/*
 * Kernel stack kid and user stack uid of lt_stacks (stacks_fd), symbolized for process
 * (tgid, comm); caller: alloc's return address at entry, 0 for none.
 */
void lt_symbolize(struct lt_syms *sy, int stacks_fd, uint32_t tgid, const char *comm, int32_t kid,
		  int32_t uid, uint64_t caller, struct lt_sstack *ss);
const char *lt_frame_str(const struct lt_frame *f, char *buf, size_t len);
/* comm of a key (LT_COMM_LEN bytes, maybe without NUL) into dst[LT_COMM_LEN + 1] */
void lt_comm_str(char *dst, const char *comm);

struct lt_prof_counts {
	uint64_t c[LT_PC_SLOTS];
};

/* ---- user stacks by unwind tables (lt_unwind.h) ---- */

/* the processes whose unwind views are in the kernel, re-read when their mappings change */
struct lt_uw_track {
	uint32_t tgid;
	uint64_t maps_hash; /* of /proc/TGID/maps as last pushed */
	struct lt_uw_proc *view; /* as last pushed */
};

struct lt_prof_uw {
	struct lt_suite *suite;
	struct lt_syms *sy;
	struct lt_uw_table t;
	struct lt_uw_track *v;
	size_t n, cap, procs; /* procs: room in lt_uw_procs */
	uint64_t next_ns; /* next refresh */
	uint64_t pushes, proc_full, gone;
	uint32_t pid; /* -p, pushed at the start */
	bool on;
};

/*
 * Before load: size the tables for process pid (0: the whole machine, every live process) and
 * turn the walker on, unless off (--no-unwind). The files' rows are built now.
 */
void lt_prof_uw_size(struct lt_prof_uw *u, struct lt_suite *s, struct lt_syms *sy, uint32_t pid,
		     bool off);
/* After load: map the rows, push the views sized for; an exit code */
int lt_prof_uw_start(struct lt_prof_uw *u);
/* A process to unwind (a new-process notice): its view now */
void lt_prof_uw_add(struct lt_prof_uw *u, uint32_t tgid);
/* Re-read the mappings of the tracked processes that changed (dlopen), drop the gone ones */
void lt_prof_uw_tick(struct lt_prof_uw *u);
/* "unwind: ..." for the summary on stderr; nothing when off */
void lt_prof_uw_print(FILE *f, const struct lt_prof_uw *u, const struct lt_prof_counts *c);
/* ,"unwind":{...} for the JSON output: the same figures */
void lt_prof_uw_json(struct lt_buf *b, const struct lt_prof_uw *u, const struct lt_prof_counts *c);
extern const char *const lt_prof_uw_names[LT_PC_SLOTS];
void lt_prof_uw_free(struct lt_prof_uw *u);

/* ---- the run ---- */

/* A pidfd of the process, -1 without --pid; -2 when it is already gone. */
int lt_pidfd_of(uint32_t pid);
/* Runs until --duration, a signal or the end of process --pid. *exited: the latter. */
int lt_prof_run(struct lt_ring *ring, struct lt_syms *sy, struct lt_prof_uw *uw,
		uint64_t duration_s, int pidfd, bool *exited);
/* --pid exists: its comm into comm[len], else the usage error */
int lt_check_pid(uint32_t pid, char *comm, size_t len);

/* ---- what is read at the end ---- */

struct lt_vec {
	void *p;
	size_t n, cap, elem;
};

void *lt_vec_push(struct lt_vec *v);

extern const char *const lt_prof_ctr_names[LT_PC_SLOTS];
void lt_prof_read_counts(struct lt_suite *s, struct lt_prof_counts *c);
/* name=value of each loss counter, space-separated */
void lt_prof_print_losses(FILE *f, const struct lt_prof_counts *c);

#endif
