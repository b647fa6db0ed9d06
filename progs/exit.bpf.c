// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exit: one record per process, when its last thread exits. */
#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_record.bpf.h"
#include "lt_takeover.bpf.h"

#define EEXIST 17

/* The tracepoint's newer prototype, which tells the last thread (group_dead). */
typedef void (*btf_trace_sched_process_exit___gd)(void *, struct task_struct *, bool);

/* Older kernels: the process is identified by its signal_struct and start time. */
struct lt_exit_key {
	__u64 signal;
	__u64 start_time;
};

/*
 * A claim lives from the process's last exits to the free of its group leader
 * (lt_exit_free), which comes after every thread's exit: entries are the
 * exiting processes not yet reaped. Not an LRU: an evicted claim would let a
 * second thread write a second record.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags,
	       BPF_F_NO_PREALLOC); /* memory for exiting processes only, and none on kernels with group_dead */
	__uint(max_entries, 16384);
	__type(key, struct lt_exit_key);
	__type(value, __u8);
} lt_exit_seen SEC(".maps");

/*
 * Is `p` the thread whose exit ends its process? With the group_dead
 * argument (newer kernels) the kernel says so. Before it, signal->live == 0
 * only says the count has reached zero: threads exiting at once on several
 * CPUs can all see it, so the first one to claim the process in an LRU map
 * wins. CO-RE picks the branch at load; the other is dead code.
 */
static __always_inline bool last_thread_claim(struct task_struct *p)
{
	struct lt_exit_key key = {};
	__u8 one = 1;
	long err;

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return false;
	key.signal = (__u64)BPF_CORE_READ(p, signal);
	key.start_time = BPF_CORE_READ(p, group_leader, start_time);
	err = bpf_map_update_elem(&lt_exit_seen, &key, &one, BPF_NOEXIST);
	if (!err)
		return true;
	if (err == -EEXIST || bpf_map_lookup_elem(&lt_exit_seen, &key))
		return false; /* another thread claimed it */
	return true; /* a full map cannot tell: a rare duplicate rather than a loss */
}

static __always_inline bool last_thread(unsigned long long *ctx, struct task_struct *p)
{
	if (bpf_core_type_matches(btf_trace_sched_process_exit___gd))
		return (bool)ctx[1];
	return last_thread_claim(p);
}

static __always_inline void exit_event(bool last, struct task_struct *p)
{
	struct lt_exit *r;
	int code;

	if (!last || lt_skip_current())
		return;
	lt_cg_count(LT_PROBE_EXIT, LT_CG_EXIT);
	r = lt_reserve(LT_PROBE_EXIT, LT_TYPE_EXIT, sizeof(*r));
	if (!r)
		return;
	code = BPF_CORE_READ(p, exit_code);
	r->exit_code = (code >> 8) & 0xff;
	r->signal = code & 0x7f;
	r->core_dumped = (code & 0x80) != 0;
	r->_pad0[0] = r->_pad0[1] = r->_pad0[2] = 0;
	r->ppid = BPF_CORE_READ(p, real_parent, tgid);
	r->lifetime_ns = r->hdr.ts_ns - BPF_CORE_READ(p, group_leader, start_time);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	lt_submit(LT_PROBE_EXIT, r);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(lt_exit, struct task_struct *p)
{
	/* an exit's identity for lt_claim: the thread (it exits once) */
	if (lt_main_takes(LT_PROBE_EXIT, LT_MARK_EXIT, 0))
		exit_event(last_thread(ctx, p), p);
	lt_main_done(LT_MARK_EXIT);
	return 0;
}

/* The exits the kernel skipped lt_exit for (lt_mark in lt_takeover.bpf.h). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lt_exit_nest, struct task_struct *p)
{
	if (!lt_nest_takes(LT_MARK_EXIT, 0))
		return 0;
	exit_event(last_thread(ctx, p), p);
	lt_count_recovered(LT_PROBE_EXIT);
	return 0;
}

/*
 * The exits the kernel skipped both for (where tracepoints are preemptible:
 * lt_claim). The classic event says whether the thread is the last one
 * wherever the tp_btf one does.
 */
SEC("tracepoint/sched/sched_process_exit")
int lt_exit_tp(struct trace_event_raw_sched_process_exit *e)
{
	struct task_struct *p = (struct task_struct *)bpf_get_current_task();
	bool last;

	if (!lt_tp_takes(LT_MARK_EXIT, 0))
		return 0;
	if (bpf_core_field_exists(e->group_dead))
		last = e->group_dead;
	else
		last = last_thread_claim(p);
	exit_event(last, p);
	lt_count_recovered(LT_PROBE_EXIT);
	return 0;
}

/* Older kernels: the group leader is freed after every thread's exit; its claim goes. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(lt_exit_free, struct task_struct *p)
{
	struct lt_exit_key key = {};

	if (bpf_core_type_matches(btf_trace_sched_process_exit___gd))
		return 0; /* no claims: the tracepoint says which thread is last */
	if (BPF_CORE_READ(p, group_leader) != p)
		return 0;
	key.signal = (__u64)BPF_CORE_READ(p, signal);
	key.start_time = BPF_CORE_READ(p, start_time);
	bpf_map_delete_elem(&lt_exit_seen, &key);
	return 0;
}
