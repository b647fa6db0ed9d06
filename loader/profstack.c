// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stacks of lt_stacks symbolized for profile and alloc: kernel frames without the tracing
 * machinery's own, user frames with alloc's caller put back, and where a user stack ends.
 */
#include <string.h>

#include "kernel.h"
#include "lt_unwind.h"
#include "profstack.h"

struct stk {
	uint64_t ip[LT_STACK_DEPTH + 1];
	int n;
	bool complete; /* LT_UW_COMPLETE was on the last frame */
};

/* Read stack `id` of lt_stacks (leaf first); an id < 0 or a missing stack is empty. */
static void read_stack(int fd, int32_t id, struct stk *s)
{
	s->n = 0;
	s->complete = false;
	if (id < 0 || lt_map_lookup(fd, &id, s->ip))
		return;
	while (s->n < LT_STACK_DEPTH && s->ip[s->n])
		s->n++;
	if (s->n && (s->ip[s->n - 1] & LT_UW_COMPLETE)) {
		s->ip[s->n - 1] &= ~LT_UW_COMPLETE;
		s->complete = true;
	}
}

/* a return address points after the call: look up the call itself */
static void sym_frame(struct lt_syms *sy, bool kernel, uint32_t tgid, const char *comm, uint64_t ip,
		      bool leaf, struct lt_frame *f)
{
	uint64_t a = leaf ? ip : ip - 1;

	if (kernel)
		lt_syms_kernel(sy, a, f);
	else
		lt_syms_user(sy, tgid, comm, a, f);
	f->addr = ip;
}

/* Frames of the tracing machinery itself, on top of a stack taken in a tracepoint. */
static bool is_bpf_frame(const struct lt_frame *f)
{
	static const char *const pfx[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
					   "__traceiter_", "bpf_get_stack" };

	for (size_t i = 0; f->func && i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(f->func, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

void lt_symbolize(struct lt_syms *sy, int stacks_fd, uint32_t tgid, const char *comm, int32_t kid,
		  int32_t uid, uint64_t caller, struct lt_sstack *ss)
{
	static struct stk st;
	int skip = 0;

	read_stack(stacks_fd, kid, &st);
	ss->nk = 0;
	for (int i = 0; i < st.n; i++) {
		struct lt_frame *f = &ss->k[ss->nk];

		sym_frame(sy, true, 0, NULL, st.ip[i], i == skip, f);
		if (i == skip && is_bpf_frame(f))
			skip++;
		else
			ss->nk++;
	}
	read_stack(stacks_fd, uid, &st);
	/* alloc: a walk from the allocator's first instruction misses its caller on
	 * kernels before 6.12; the return address read at entry puts it back */
	if (caller && st.n >= 1 && (st.n < 2 || st.ip[1] != caller)) {
		memmove(&st.ip[2], &st.ip[1], (st.n - 1) * sizeof(st.ip[0]));
		st.ip[1] = caller;
		st.n++;
	}
	ss->nu = st.n;
	ss->u_complete = st.complete;
	for (int i = 0; i < st.n; i++)
		sym_frame(sy, false, tgid, comm, st.ip[i], i == 0, &ss->u[i]);
}

void lt_comm_str(char *dst, const char *comm)
{
	memcpy(dst, comm, LT_COMM_LEN);
	dst[LT_COMM_LEN] = 0;
}

/* Where a complete user stack ends: a walk that stops elsewhere was cut short. */
static bool is_entry_frame(const struct lt_frame *f)
{
	static const char *const entries[] = { "_start",
					       "__libc_start_main",
					       "__libc_start_call_main",
					       "start_thread",
					       "clone",
					       "clone3",
					       "__clone",
					       "__clone3",
					       "thread_start" };

	if (!f->func)
		return false;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(f->func, entries[i]))
			return true;
	return false;
}

bool lt_sstack_cut(const struct lt_sstack *ss)
{
	return ss->nu && !ss->u_complete && !is_entry_frame(&ss->u[ss->nu - 1]);
}
