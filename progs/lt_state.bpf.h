/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef LT_STATE_BPF_H
#define LT_STATE_BPF_H

#include "lt_common.bpf.h"

/*
 * Per-object state: what a probe keeps about a thread or a socket between two
 * of its events. Where tracing programs can use local storage (5.11+) it lives
 * in the task or the socket, grows and shrinks with them and is freed with
 * them; elsewhere in a preallocated hash keyed by thread id or socket address,
 * sized by a load option, where a full map is counted as a drop. The loader
 * sets lt_cfg_local from a feature probe and retypes the maps to match; the
 * verifier prunes the branch a kernel does not take (the value is frozen).
 */

/* A task state map: value V, one per thread. */
#define LT_TASK_STATE_MAX 256 /* bytes lt_task_new can create zeroed on the fallback */
#define LT_TASK_STATE(name, V)                                                     \
	_Static_assert(sizeof(V) <= LT_TASK_STATE_MAX, #name ": state too large"); \
	struct {                                                                   \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);                           \
		__uint(map_flags, BPF_F_NO_PREALLOC);                              \
		__type(key, int);                                                  \
		__type(value, V);                                                  \
	} name SEC(".maps")

/* The state of task `t` (thread id `tid`) in `map`, or NULL. */
static __always_inline void *lt_task_get(void *map, struct task_struct *t, __u32 tid)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		return bpf_task_storage_get(map, t, NULL, 0);
	return bpf_map_lookup_elem(map, &tid);
}

/*
 * The state of task `t`, created zeroed if it has none. NULL when it cannot
 * be created (the fallback hash is full; local storage busy on this CPU, or
 * out of memory): the caller counts what that loses.
 */
static __always_inline void *lt_task_new(void *map, struct task_struct *t, __u32 tid)
{
	static const __u8 zero[LT_TASK_STATE_MAX];
	void *v;

	if (lt_cfg_local & LT_LOCAL_TASK) {
		v = bpf_task_storage_get(map, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	} else {
		v = bpf_map_lookup_elem(map, &tid);
		if (!v) {
			bpf_map_update_elem(map, &tid, zero, BPF_NOEXIST);
			v = bpf_map_lookup_elem(map, &tid);
		}
	}
	return v;
}

/*
 * Set task `t`'s state to `size` bytes at `val`: false when it cannot be kept
 * (as lt_task_new; the caller counts it). One update on the fallback hash.
 */
static __always_inline bool lt_task_put(void *map, struct task_struct *t, __u32 tid,
					const void *val, __u32 size)
{
	void *v;

	if (lt_cfg_local & LT_LOCAL_TASK) {
		v = bpf_task_storage_get(map, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!v)
			return false;
		__builtin_memcpy(v, val, size);
		return true;
	}
	return bpf_map_update_elem(map, &tid, val, BPF_ANY) == 0;
}

/*
 * Done with a task's state `v` (its first u64 is zeroed: local storage stays
 * with the task until it exits, cheaper than a delete per event); the
 * fallback frees the hash slot.
 */
static __always_inline void lt_task_done(void *map, void *v, __u32 tid)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		*(__u64 *)v = 0;
	else
		bpf_map_delete_elem(map, &tid);
}

/* The current task for lt_task_*: its BTF pointer only where local storage is used. */
static __always_inline struct task_struct *lt_current(void)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		return bpf_get_current_task_btf();
	return NULL;
}

/* The current thread's id for lt_task_*: only the fallback needs it (a helper call saved). */
static __always_inline __u32 lt_current_tid(void)
{
	if (lt_cfg_local & LT_LOCAL_TASK)
		return 0;
	return (__u32)bpf_get_current_pid_tgid();
}

/* Latency probes: the start time of the current thread; a lost one is counted as a drop. */
static __always_inline void lt_start(__u32 probe, void *map, struct task_struct *t, __u32 tid)
{
	__u64 now = bpf_ktime_get_ns();

	if (!lt_task_put(map, t, tid, &now, sizeof(now)))
		lt_count(probe, true);
}

/* The time since lt_start for this thread, which is forgotten; false if there was none. */
static __always_inline bool lt_elapsed(void *map, struct task_struct *t, __u32 tid, __u64 *delta)
{
	__u64 *start = lt_task_get(map, t, tid);

	if (!start || !*start)
		return false;
	*delta = bpf_ktime_get_ns() - *start;
	lt_task_done(map, start, tid);
	return true;
}

/* Per-object state of objects without local storage (block requests): a hash by `key`. */
static __always_inline void lt_key_start(__u32 probe, void *map, const void *key)
{
	__u64 now = bpf_ktime_get_ns();

	if (bpf_map_update_elem(map, key, &now, BPF_ANY))
		lt_count(probe, true);
}

static __always_inline bool lt_key_elapsed(void *map, const void *key, __u64 *delta)
{
	__u64 *start = bpf_map_lookup_elem(map, key);

	if (!start)
		return false;
	*delta = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(map, key);
	return true;
}

#endif /* LT_STATE_BPF_H */
