/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* User stacks by unwind tables (lt_unwind.h) for lowtrace profile and lowtrace alloc. */
#ifndef LT_PROFUW_H
#define LT_PROFUW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "encode.h"
#include "kernel.h"
#include "lt_prof.h"
#include "sym.h"

/* the processes whose unwind views are in the kernel, re-read when their mappings change */
struct lt_uw_track {
	uint32_t tgid;
	uint64_t maps_hash; /* of /proc/TGID/maps as last pushed */
	uint64_t vm_pages; /* its size as last seen (a change: hash the maps again) */
	struct lt_uw_proc *view; /* as last pushed */
};

struct lt_prof_uw {
	struct lt_suite *suite;
	struct lt_syms *sy;
	struct lt_uw_table t;
	struct lt_uw_track *v;
	size_t n, cap, procs; /* procs: room in lt_uw_procs */
	uint64_t next_ns; /* next refresh */
	uint64_t full_ns; /* next refresh that hashes every process's maps */
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
/* "unwind: ..." for the summary on stderr (c: the lt_prof_err counters); nothing when off */
void lt_prof_uw_print(FILE *f, const struct lt_prof_uw *u, const uint64_t *c);
/* ,"unwind":{...} for the JSON output: the same figures */
void lt_prof_uw_json(struct lt_buf *b, const struct lt_prof_uw *u, const uint64_t *c);
extern const char *const lt_prof_uw_names[LT_PC_SLOTS];
void lt_prof_uw_free(struct lt_prof_uw *u);

#endif
