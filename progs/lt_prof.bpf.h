/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the profiles (profile, offcpu, alloc) share: stacks, counters, new-process notices. */
#ifndef LT_PROF_BPF_H
#define LT_PROF_BPF_H

#include "lt_stack.bpf.h"
#include "lt_record.bpf.h"

#define EFAULT 14
#define EEXIST 17
#define ENOSPC 28

/*
 * Weak like the maps of lt_common.bpf.h. Created only when a profile is
 * loaded (the loader turns their creation off otherwise) and sized by the
 * loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct lt_stack);
} lt_stacks __weak SEC(".maps");

/* processes already announced; full: counted, never evicted (an LRU would re-announce) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lt_task_key);
	__type(value, __u8);
} lt_prof_seen __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lt_prof_key);
	__type(value, struct lt_prof_val);
} lt_prof __weak SEC(".maps");

/*
 * The same frames. Both stacks end at their first 0 frame: the loops stop at a 0 read from
 * memory, never at a count, so the verifier does not walk one path per stack length.
 */
static __always_inline bool lt_stack_eq(const struct lt_stack *a, const struct lt_stack *b)
{
	for (__u32 i = 0; i < LT_STACK_DEPTH; i++) {
		if (a->ip[i] != b->ip[i])
			return false;
		if (!a->ip[i])
			break;
	}
	return true;
}

/*
 * One frame (unwind.bpf.c): records the frame's ip in lt_stack_buf and moves lt_uw_st to its
 * caller. A global function, so the verifier checks it once, not once per frame of the loop.
 */
extern int lt_uw_step(__u32 depth);

/*
 * Where the kernel saved the user registers on entry, whatever interrupted the task (a sample in
 * user or kernel mode, a uprobe, sched_switch). bpf_task_pt_regs (5.15+) knows the layout (7.x
 * with FRED pads the stack top); before it, x86_64 keeps them at the top of the 16 KiB stack.
 */
static __always_inline struct pt_regs *lt_user_regs(void)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return (struct pt_regs *)(BPF_CORE_READ((struct task_struct *)bpf_get_current_task(),
						stack) +
				  (4096 << 2)) -
	       1;
}

static __always_inline void lt_uw_stale(__u32 tgid);

/*
 * Walk the current task's user stack into b; false: no tables for it (use frame pointers).
 * notify: a pc outside the process's view asks the loader to re-read its maps (profile and
 * offcpu, which read the ring while they run).
 */
static __always_inline bool lt_uw_walk(struct lt_stack *b, bool notify)
{
	static const __u32 zero;
	struct lt_uw_state *s = bpf_map_lookup_elem(&lt_uw_st, &zero);
	struct pt_regs *regs;
	int r = LT_UW_DONE;
	__u32 i;

	if (!s)
		return false;
	s->tgid = bpf_get_current_pid_tgid() >> 32;
	if (!bpf_map_lookup_elem(&lt_uw_procs, &s->tgid)) {
		lt_prof_inc(LT_PC_UW_NOPROC);
		return false;
	}
	regs = lt_user_regs();
#ifdef LT_UW_ARM64
	s->ip = PT_REGS_IP_CORE(regs);
	s->sp = PT_REGS_SP_CORE(regs);
	s->bp = PT_REGS_FP_CORE(regs);
	s->lr = PT_REGS_RET_CORE(regs);
#else
	s->ip = BPF_CORE_READ(regs, ip);
	s->sp = BPF_CORE_READ(regs, sp);
	s->bp = BPF_CORE_READ(regs, bp);
#endif
	s->n = 0;
	s->miss = 0;
	for (i = 0; i <= LT_STACK_DEPTH; i++) {
		r = lt_uw_step(i);
		if (r != LT_UW_GO)
			break;
	}
	s = bpf_map_lookup_elem(&lt_uw_st, &zero);
	if (!s)
		return false;
	if (s->n < LT_STACK_DEPTH)
		b->ip[s->n] = 0;
	/* user addresses never have the top bit: the mark cannot be a frame */
	if (r == LT_UW_DONE && s->n - 1 < LT_STACK_DEPTH)
		b->ip[s->n - 1] |= LT_UW_COMPLETE;
	lt_prof_inc(LT_PC_UW_WALKS);
	if (notify && s->miss)
		lt_uw_stale(s->tgid);
	if (r == LT_UW_STOP_EXPR)
		lt_prof_inc(LT_PC_UW_EXPR);
	else if (r == LT_UW_STOP_SIGNAL)
		lt_prof_inc(LT_PC_UW_SIGNAL);
	else if (r == LT_UW_STOP_READ)
		lt_prof_inc(LT_PC_UW_READ);
	else if (r == LT_UW_STOP_DEPTH)
		lt_prof_inc(LT_PC_UW_DEPTH);
	return true;
}

/*
 * A stack id of the current task, or < 0 with the reason counted. -EFAULT
 * with no user memory (kernel threads) or no kernel frames (interrupted in
 * user mode) is not a loss: there is no such stack.
 *
 * Not bpf_get_stackid: a stack-trace map loses every stack whose bucket
 * another stack took first (-EEXIST), which on a busy machine was a quarter
 * of the samples. Here the frames are hashed into an id of a hash map, and
 * the next ids are tried when a slot holds another stack.
 */
static __always_inline __s32 lt_stack_id(void *ctx, bool user, bool notify)
{
	static const __u32 zero;
	struct lt_stack *b = bpf_map_lookup_elem(&lt_stack_buf, &zero), *v;
	__u64 h = 0x9e3779b97f4a7c15ull;
	long len;
	__u32 id;

	if (!b)
		return -EFAULT;
	if (user && lt_cfg_unwind && BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm) &&
	    lt_uw_walk(b, notify))
		len = b->ip[0] ? 8 : 0;
	else /* the kernel zeroes the buffer after the last frame */
		len = bpf_get_stack(ctx, b->ip, sizeof(b->ip), user ? BPF_F_USER_STACK : 0);
	if (len <= 0) {
		if (len < 0 && len != -EFAULT)
			lt_prof_inc(user ? LT_PC_USTACK_ERR : LT_PC_KSTACK_ERR);
		else if (user && BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm))
			lt_prof_inc(LT_PC_USTACK_ERR);
		return -EFAULT;
	}
	for (__u32 i = 0; i < LT_STACK_DEPTH; i++) {
		if (!b->ip[i])
			break;
		h = (h ^ b->ip[i]) * 0xff51afd7ed558ccdull;
	}
	for (int p = 0; p < LT_STACK_PROBES; p++) {
		h ^= h >> 29;
		id = (__u32)(h >> 33);
		v = bpf_map_lookup_elem(&lt_stacks, &id);
		if (!v) {
			long err = bpf_map_update_elem(&lt_stacks, &id, b, BPF_NOEXIST);

			if (!err)
				return (__s32)id;
			if (err != -EEXIST) {
				lt_prof_inc(LT_PC_STACKS_FULL);
				return -ENOSPC;
			}
			/* another CPU took the slot just now: maybe with this stack */
			v = bpf_map_lookup_elem(&lt_stacks, &id);
			if (!v)
				continue;
		}
		if (lt_stack_eq(b, v))
			return (__s32)id;
		h *= 0xc4ceb9fe1a85ec53ull;
	}
	lt_prof_inc(user ? LT_PC_USTACK_COLL : LT_PC_KSTACK_COLL);
	return -EEXIST;
}

/* Tell the loader about a process the first time it shows up under a comm. */
static __always_inline void lt_task_seen(__u32 tgid, const char *comm)
{
	static const __u8 one = 1;
	struct lt_task_key k = { .tgid = tgid };
	struct lt_task *t;
	long err;

	__builtin_memcpy(k.comm, comm, LT_COMM_LEN);
	if (bpf_map_lookup_elem(&lt_prof_seen, &k))
		return;
	err = bpf_map_update_elem(&lt_prof_seen, &k, &one, BPF_NOEXIST);
	if (err) {
		if (err != -EEXIST)
			lt_prof_inc(LT_PC_SEEN_FULL);
		return;
	}
	t = bpf_ringbuf_reserve(&lt_events, sizeof(*t), 0);
	if (!t) {
		lt_prof_inc(LT_PC_TASK_DROP);
		return;
	}
	lt_hdr_fill(&t->hdr, LT_TYPE_TASK, sizeof(*t));
	__builtin_memcpy(t->comm, k.comm, LT_COMM_LEN);
	/* wake now: the process may exit soon, its mappings must be read before */
	bpf_ringbuf_submit(t, BPF_RB_FORCE_WAKEUP);
}

/*
 * A pc in none of the mappings the loader pushed for tgid: a library mapped since at another
 * address, of the same size (the loader's periodic check compares sizes). The same notice as a
 * new process's, at most every 2^28 ns (~270 ms) a process: the loader hashes its maps and
 * pushes them when they changed.
 */
static __always_inline void lt_uw_stale(__u32 tgid)
{
	struct lt_uw_proc *p = bpf_map_lookup_elem(&lt_uw_procs, &tgid);
	__u32 now = bpf_ktime_get_ns() >> 20;
	struct lt_task *t;

	if (!p || now - p->stale_at < 256)
		return;
	p->stale_at = now;
	t = bpf_ringbuf_reserve(&lt_events, sizeof(*t), 0);
	if (!t) {
		lt_prof_inc(LT_PC_TASK_DROP);
		return;
	}
	lt_hdr_fill(&t->hdr, LT_TYPE_TASK, sizeof(*t));
	bpf_get_current_comm(t->comm, sizeof(t->comm));
	bpf_ringbuf_submit(t, 0);
}

/* Add one sample of `ns` to lt_prof[k]; a full map is counted. True: k was not there. */
static __always_inline bool lt_prof_add(const struct lt_prof_key *k, __u64 ns)
{
	static const struct lt_prof_val zero;
	struct lt_prof_val *v = bpf_map_lookup_elem(&lt_prof, k);
	bool fresh = !v;

	if (!v) {
		bpf_map_update_elem(&lt_prof, k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&lt_prof, k);
		if (!v) {
			lt_prof_inc(LT_PC_MAP_FULL);
			return true;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	if (ns)
		__sync_fetch_and_add(&v->ns, ns);
	return fresh;
}

#endif /* LT_PROF_BPF_H */
