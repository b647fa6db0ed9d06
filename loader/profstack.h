/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Stacks of lt_stacks, symbolized for lowtrace profile and lowtrace alloc. */
#ifndef LT_PROFSTACK_H
#define LT_PROFSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "lt_prof.h"
#include "sym.h"

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
/* The user stack stops short of _start or a thread start: the walk was cut. */
bool lt_sstack_cut(const struct lt_sstack *ss);
/* comm of a key (LT_COMM_LEN bytes, maybe without NUL) into dst[LT_COMM_LEN + 1] */
void lt_comm_str(char *dst, const char *comm);

#endif
