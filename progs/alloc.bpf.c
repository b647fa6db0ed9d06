// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * alloc: sampled allocations of one process, from uprobes on its allocator
 * (malloc, calloc, realloc, aligned_alloc/memalign, posix_memalign, free).
 *
 * Sampling in the kernel: each thread counts down bytes to its next sample
 * point; intervals are exponential with mean N (a table the loader fills),
 * so sample points form a Poisson process over the bytes allocated. An
 * allocation that reaches its thread's point is sampled with weight N + the
 * bytes past the point: the expected bytes it stands for, so sums of weights
 * are unbiased estimates. Unsampled calls touch only the countdown.
 * With --leaks the sampled blocks are kept in lt_al_live until freed
 * (uretprobes for the address, an uprobe on free). Its maps are
 * preallocated (5.10 warns about run-time allocation in tracing programs)
 * and shrunk to one entry by the loader without --leaks.
 */
#include "lt_prof.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_state.bpf.h"

/* mean sampling interval in bytes; <= 1: every allocation, weight = size */
const volatile __u64 lt_cfg_al_mean = 0;
const volatile __u64 lt_cfg_al_ival[LT_AL_IVAL_N] = {};
const volatile bool lt_cfg_al_leaks = false;

struct al_cd {
	__u64 live; /* set once the countdown has its first interval */
	__s64 left; /* bytes to the next sample point */
};

/* one countdown per thread (per-object state, lt_state.bpf.h) */
LT_TASK_STATE(lt_al_cd, struct al_cd);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lt_al_key);
	__type(value, struct lt_al_val);
} lt_al_sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct lt_al_pend);
} lt_al_pend SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 131072);
	__type(key, __u64); /* address */
	__type(value, struct lt_al_live);
} lt_al_live SEC(".maps");

static __always_inline __u64 al_interval(void)
{
	__u32 i = bpf_get_prandom_u32() & (LT_AL_IVAL_N - 1);

	return lt_cfg_al_ival[i];
}

/* The weight of this allocation if it is sampled, else 0. */
static __always_inline __u64 al_sample(__u32 tid, __u64 size)
{
	struct al_cd *cd;
	__s64 w;

	if (lt_cfg_al_mean <= 1)
		return size;
	cd = lt_task_new(&lt_al_cd, lt_current(), tid);
	if (!cd) {
		lt_prof_inc(LT_PC_CD_FULL);
		return 0;
	}
	if (!cd->live) {
		cd->live = 1;
		cd->left = al_interval();
	}
	cd->left -= size; /* only this thread writes its countdown */
	if (cd->left > 0)
		return 0;
	w = lt_cfg_al_mean - cd->left;
	cd->left = al_interval();
	return w;
}

static __always_inline int al_enter(struct pt_regs *ctx, __u64 size, __u64 memptr)
{
	static const struct lt_al_val zero;
	__u64 id = bpf_get_current_pid_tgid(), weight;
	struct lt_al_pend p = { .size = size, .memptr = memptr };
	struct lt_al_val *v;

	lt_prof_inc(LT_PC_CALLS);
	if (!size || lt_skip(NULL, 0, LT_SKIP_CURRENT))
		return 0;
	weight = al_sample((__u32)id, size);
	if (!weight)
		return 0;
	lt_prof_inc(LT_PC_SAMPLES);
	p.weight = weight;
	p.site.tgid = id >> 32;
	p.site.ustack = lt_stack_id(ctx, true, false);
#ifdef __TARGET_ARCH_arm64
	/* at the entry the return address is still in lr (x30): no frame holds it yet */
	p.site.caller = PT_REGS_RET(ctx);
#else
	bpf_probe_read_user(&p.site.caller, sizeof(p.site.caller), (void *)PT_REGS_SP(ctx));
#endif
	v = bpf_map_lookup_elem(&lt_al_sites, &p.site);
	if (!v) {
		bpf_map_update_elem(&lt_al_sites, &p.site, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&lt_al_sites, &p.site);
	}
	if (v) {
		__sync_fetch_and_add(&v->bytes, weight);
		__sync_fetch_and_add(&v->count_fp, (weight << LT_AL_FP_SHIFT) / size);
		__sync_fetch_and_add(&v->samples, 1);
	} else {
		lt_prof_inc(LT_PC_MAP_FULL);
	}
	if (lt_cfg_al_leaks) {
		__u32 tid = id;

		bpf_map_update_elem(&lt_al_pend, &tid, &p, BPF_ANY);
	}
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(lt_al_malloc, __u64 size)
{
	return al_enter(ctx, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(lt_al_calloc, __u64 n, __u64 size)
{
	return al_enter(ctx, n * size, 0);
}

SEC("uprobe")
int BPF_KPROBE(lt_al_realloc, __u64 ptr, __u64 size)
{
	if (lt_cfg_al_leaks && ptr)
		bpf_map_delete_elem(&lt_al_live, &ptr);
	return al_enter(ctx, size, 0);
}

/* aligned_alloc and memalign: (alignment, size) */
SEC("uprobe")
int BPF_KPROBE(lt_al_memalign, __u64 align, __u64 size)
{
	return al_enter(ctx, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(lt_al_pmalign, __u64 memptr, __u64 align, __u64 size)
{
	return al_enter(ctx, size, memptr);
}

/* the return of every allocator: remember a sampled block until it is freed */
SEC("uretprobe")
int BPF_KRETPROBE(lt_al_ret, __u64 rc)
{
	__u32 tid = bpf_get_current_pid_tgid();
	struct lt_al_pend *p = bpf_map_lookup_elem(&lt_al_pend, &tid);
	struct lt_al_live l;
	__u64 addr = rc;

	if (!p)
		return 0;
	if (p->memptr) {
		/* posix_memalign returns 0 and stores the block through memptr */
		addr = 0;
		if (!(int)rc)
			bpf_probe_read_user(&addr, sizeof(addr), (void *)p->memptr);
	}
	l.size = p->size;
	l.weight = p->weight;
	l.site = p->site;
	if (addr && bpf_map_update_elem(&lt_al_live, &addr, &l, BPF_ANY))
		lt_prof_inc(LT_PC_LIVE_FULL);
	bpf_map_delete_elem(&lt_al_pend, &tid);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(lt_al_free, __u64 ptr)
{
	if (ptr)
		bpf_map_delete_elem(&lt_al_live, &ptr);
	return 0;
}
