// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One step of the user-stack walker (lt_uw_walk in lt_prof.bpf.h): the caller's frame from the
 * unwind rows of the mapping that holds the pc (headers/lt_unwind.h), else by frame pointer.
 * x86_64 and arm64 share the search; the step's end is each one's (the return address rule).
 */
#include "lt_stack.bpf.h"

/* Word k of the block index that starts at row idx (lt_unwind.h), or -1. */
static __always_inline __s64 uw_word(__u32 idx, __u32 k)
{
	const __u32 per = sizeof(struct lt_uw_row) / sizeof(__u32);
	__u32 at = idx + k / per;
	const __u32 *w = bpf_map_lookup_elem(&lt_uw_rows, &at);

	return w ? w[k & (per - 1)] : -1;
}

/*
 * The last row of lt_uw_rows[first + lo, first + hi) whose pc is at most vaddr (the first's is),
 * as an index from first, or -1. A global function: the verifier walks its loop once, not once
 * for each way uw_row comes to it (inline, the index's branches made loading alloc's five
 * programs 5x slower).
 */
__noinline int lt_uw_search(__u32 first, __u32 lo, __u32 hi, __u64 vaddr)
{
	const struct lt_uw_row *r;
	__u32 mid, abs;

	/* invariant: rows[lo].pc <= vaddr < rows[hi].pc; 2^26 rows at most */
	for (int i = 0; i < 26 && hi - lo > 1; i++) {
		mid = lo + (hi - lo) / 2;
		abs = first + mid;
		r = bpf_map_lookup_elem(&lt_uw_rows, &abs);
		if (!r)
			return -1;
		if (r->pc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The row of m's file that covers vaddr, or NULL: among the rows of vaddr's block only when the
 * file has an index (loader/cfi.c's lt_cfi_index_range is this search's twin, unit-tested).
 */
static __always_inline const struct lt_uw_row *uw_row(const struct lt_uw_map *m, __u64 vaddr)
{
	__u32 lo = 0, hi = m->count, abs;
	__u64 k = vaddr >> LT_UW_BLK_SHIFT;
	const struct lt_uw_row *r;
	__s64 w;
	int at;

	if (m->nblk) {
		if (k < m->blk0)
			return NULL;
		k -= m->blk0;
		if (k >= m->nblk) {
			lo = hi - 1;
		} else {
			w = uw_word(m->idx, k);
			if (w < 0)
				return NULL;
			lo = w;
			if (k + 1 < m->nblk) {
				w = uw_word(m->idx, k + 1);
				if (w < 0)
					return NULL;
				hi = w + 1;
			}
		}
	}
	abs = m->first + lo;
	r = bpf_map_lookup_elem(&lt_uw_rows, &abs);
	if (!r || r->pc > vaddr)
		return NULL;
	at = lt_uw_search(m->first, lo, hi, vaddr);
	if (at < 0)
		return NULL;
	abs = m->first + at;
	return bpf_map_lookup_elem(&lt_uw_rows, &abs);
}

/* The mapping of p that holds pc, or NULL. */
static __always_inline const struct lt_uw_map *uw_map(const struct lt_uw_proc *p, __u64 pc)
{
	__u32 lo = 0, hi = p->n, mid;

	if (hi > LT_UW_MAPS)
		hi = LT_UW_MAPS;
	/* lo: the mappings that start at or below pc */
	for (int i = 0; i < 7 && lo < hi; i++) {
		mid = (lo + hi) / 2;
		if (p->m[mid & (LT_UW_MAPS - 1)].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= p->m[(lo - 1) & (LT_UW_MAPS - 1)].end)
		return NULL;
	return &p->m[(lo - 1) & (LT_UW_MAPS - 1)];
}

#ifdef LT_UW_ARM64
/* The return address of the frame whose CFA is cfa (r: its row, NULL after a frame-pointer
 * step); non-zero: none to trust. */
static __always_inline int uw_ra(const struct lt_uw_state *s, const struct lt_uw_row *r, __u64 cfa,
				 __u32 depth, __u64 *ra)
{
	if (r && !(r->kind & LT_UW_RA_SAVED)) {
		/* still in x30 (a leaf, a prologue): known for the interrupted frame only; its CFA
		 * may be sp itself */
		if (depth || cfa < s->sp)
			return 1;
		*ra = s->lr;
	} else if (cfa <= s->sp ||
		   bpf_probe_read_user(ra, sizeof(*ra), (void *)(r ? cfa + r->ra_off : cfa - 8))) {
		return 1;
	}
	/* a PAC (and a tag) above the user VA bits: stripped where the row says the address is
	 * signed, and in frame records, which do not say */
	if (!r || (r->kind & LT_UW_RA_SIGNED))
		*ra &= LT_UW_USER_END - 1;
	return *ra >= LT_UW_USER_END;
}
#else
static __always_inline int uw_ra(const struct lt_uw_state *s, const struct lt_uw_row *r, __u64 cfa,
				 __u32 depth, __u64 *ra)
{
	/* a caller's frame lies above its callee's: anything else is a corrupt or foreign stack */
	if (cfa <= s->sp || bpf_probe_read_user(ra, sizeof(*ra), (void *)(cfa - 8)))
		return 1;
	/* past the user half of the address space: not a return address (a frame pointer that was
	 * no frame pointer read garbage) */
	return *ra >= LT_UW_USER_END;
}
#endif

/* See lt_prof.bpf.h (lt_uw_walk). depth: frames done; from the second on, pc is the return address - 1. */
__noinline int lt_uw_step(__u32 depth)
{
	static const __u32 zero;
	struct lt_uw_state *s = bpf_map_lookup_elem(&lt_uw_st, &zero);
	struct lt_stack *out = bpf_map_lookup_elem(&lt_stack_buf, &zero);
	const struct lt_uw_proc *p;
	const struct lt_uw_map *m;
	const struct lt_uw_row *r = NULL;
	__u64 pc, cfa, ra, bp, vaddr;
	__u32 kind = LT_UW_NONE, n;

	if (!s || !out)
		return LT_UW_STOP_READ;
	n = s->n;
	if (n >= LT_STACK_DEPTH)
		return LT_UW_STOP_DEPTH;
	if (!s->ip)
		return LT_UW_DONE;
	out->ip[n] = s->ip;
	s->n = n + 1;
	p = bpf_map_lookup_elem(&lt_uw_procs, &s->tgid);
	if (!p)
		return LT_UW_STOP_NOPROC;
	pc = depth ? s->ip - 1 : s->ip;
	m = uw_map(p, pc);
	if (!m)
		s->miss = 1;
	if (m && m->count) {
		vaddr = pc - m->bias;
		if (vaddr <= 0xffffffffull)
			r = uw_row(m, vaddr);
		if (r)
			kind = r->kind & LT_UW_CFA_MASK;
	}
	bp = s->bp;
	switch (kind) {
	case LT_UW_CFA_SP:
		cfa = s->sp + r->cfa_off;
		break;
	case LT_UW_CFA_FP:
		cfa = s->bp + r->cfa_off;
		break;
#ifndef LT_UW_ARM64
	case LT_UW_CFA_PLT:
		cfa = s->sp + 8 + ((s->ip & 15) >= 11 ? 8 : 0);
		break;
#endif
	case LT_UW_END:
		return LT_UW_DONE;
	case LT_UW_EXPR:
		return LT_UW_STOP_EXPR;
	case LT_UW_SIGNAL:
		return LT_UW_STOP_SIGNAL;
	default:
		/* no rows here (JIT code, a gap, a file without CFI): the frame pointer chain (x86's
		 * rbp and arm64's x29 both point at {caller's fp, return address}) */
		lt_prof_inc(LT_PC_UW_FP);
		if (!bp || bp < s->sp || bpf_probe_read_user(&bp, sizeof(bp), (void *)bp))
			return LT_UW_STOP_READ;
		cfa = s->bp + 16;
		r = NULL;
		break;
	}
	if (uw_ra(s, r, cfa, depth, &ra))
		return LT_UW_STOP_READ;
	if (r && (r->kind & LT_UW_FP_SAVED) &&
	    bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + 8 * (__s64)r->fp_off)))
		return LT_UW_STOP_READ;
	s->ip = ra;
	s->sp = cfa;
	s->bp = bp;
	return ra ? LT_UW_GO : LT_UW_DONE;
}
