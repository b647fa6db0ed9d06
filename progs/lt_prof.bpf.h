/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the profiles (profile, offcpu, alloc) share: stacks, counters, new-process notices. */
#ifndef LT_PROF_BPF_H
#define LT_PROF_BPF_H

#include "lt_common.bpf.h"
#include "lt_prof.h"

#define EFAULT 14
#define EEXIST 17

extern struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lt_prof_key);
	__type(value, struct lt_prof_val);
} lt_prof SEC(".maps");

extern struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, LT_STACK_DEPTH * sizeof(__u64));
} lt_stacks SEC(".maps");

extern struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_PC_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lt_prof_err SEC(".maps");

extern struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lt_task_key);
	__type(value, __u8);
} lt_prof_seen SEC(".maps");

static __always_inline void lt_prof_inc(__u32 ctr)
{
	__u64 *c = bpf_map_lookup_elem(&lt_prof_err, &ctr);

	if (c)
		(*c)++;
}

/*
 * A stack id of the current task, or < 0 with the reason counted. -EFAULT
 * with no user memory (kernel threads) or no kernel frames (interrupted in
 * user mode) is not a loss: there is no such stack.
 */
static __always_inline __s32 lt_stack_id(void *ctx, bool user)
{
	long id = bpf_get_stackid(ctx, &lt_stacks, user ? BPF_F_USER_STACK : 0);

	if (id >= 0)
		return id;
	if (id == -EEXIST)
		lt_prof_inc(user ? LT_PC_USTACK_COLL : LT_PC_KSTACK_COLL);
	else if (id != -EFAULT)
		lt_prof_inc(user ? LT_PC_USTACK_ERR : LT_PC_KSTACK_ERR);
	else if (user && BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm))
		lt_prof_inc(LT_PC_USTACK_ERR);
	return id;
}

/* Tell the loader about a process the first time it shows up under a comm. */
static __always_inline void lt_task_seen(__u32 tgid, const char *comm)
{
	static const __u8 one = 1;
	struct lt_task_key k = { .tgid = tgid };
	struct lt_task *t;

	__builtin_memcpy(k.comm, comm, LT_COMM_LEN);
	if (bpf_map_lookup_elem(&lt_prof_seen, &k) ||
	    bpf_map_update_elem(&lt_prof_seen, &k, &one, BPF_NOEXIST))
		return;
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

/* Add one sample of `ns` to lt_prof[k]; a full map is counted. */
static __always_inline void lt_prof_add(const struct lt_prof_key *k, __u64 ns)
{
	static const struct lt_prof_val zero;
	struct lt_prof_val *v = bpf_map_lookup_elem(&lt_prof, k);

	if (!v) {
		bpf_map_update_elem(&lt_prof, k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&lt_prof, k);
		if (!v) {
			lt_prof_inc(LT_PC_MAP_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	if (ns)
		__sync_fetch_and_add(&v->ns, ns);
}

#endif /* LT_PROF_BPF_H */
