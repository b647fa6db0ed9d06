// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fork: one record per new process; clone(CLONE_THREAD) is not a new process. */
#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_record.bpf.h"
#include "lt_takeover.bpf.h"

static __always_inline void fork_event(__u32 child_pid)
{
	struct lt_fork *r;

	if (lt_skip_current())
		return;
	lt_cg_count(LT_PROBE_FORK, LT_CG_FORK);
	r = lt_reserve(LT_PROBE_FORK, LT_TYPE_FORK, sizeof(*r));
	if (!r)
		return;
	r->child_pid = child_pid;
	r->_pad0 = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	lt_submit(LT_PROBE_FORK, r);
}

/* A new process, not a thread; its identity for lt_claim is its pid. */
static __always_inline bool new_process(struct task_struct *child)
{
	return BPF_CORE_READ(child, tgid) == BPF_CORE_READ(child, pid);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(lt_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 pid = BPF_CORE_READ(child, pid);

	if (new_process(child) && lt_main_takes(LT_PROBE_FORK, LT_MARK_FORK, pid))
		fork_event(pid);
	lt_main_done(LT_MARK_FORK);
	return 0;
}

/* The forks the kernel skipped lt_fork for (lt_mark in lt_takeover.bpf.h). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lt_fork_nest, struct task_struct *parent, struct task_struct *child)
{
	__u32 pid = BPF_CORE_READ(child, pid);

	if (!lt_nest_takes(LT_MARK_FORK, pid) || !new_process(child))
		return 0;
	fork_event(pid);
	lt_count_recovered(LT_PROBE_FORK);
	return 0;
}

/*
 * The newest child of `parent` (the tail of its children list), if it has tid
 * `tid`. A new thread is on no children list; a new process is at the tail of
 * its parent's (the forking task, or its parent with CLONE_PARENT), and not
 * yet running, so nothing else of it can have changed the list.
 */
static __always_inline struct task_struct *newest_child(struct task_struct *parent, __u32 tid)
{
	struct list_head *tail = BPF_CORE_READ(parent, children.prev);
	struct task_struct *c;

	c = (void *)tail - bpf_core_field_offset(struct task_struct, sibling);
	return BPF_CORE_READ(c, pid) == tid ? c : NULL;
}

/*
 * The forks the kernel skipped both for (preemptible tracepoints only:
 * lt_claim). The classic event names the child by tid only: the children
 * lists tell a new process from a thread.
 */
SEC("tracepoint/sched/sched_process_fork")
int lt_fork_tp(struct trace_event_raw_sched_process_fork *e)
{
	struct task_struct *me = (struct task_struct *)bpf_get_current_task(), *c;
	__u32 pid = e->child_pid;

	c = newest_child(me, pid);
	if (!c)
		c = newest_child(BPF_CORE_READ(me, real_parent), pid);
	if (!c || !new_process(c) || !lt_tp_takes(LT_MARK_FORK, pid))
		return 0;
	fork_event(pid);
	lt_count_recovered(LT_PROBE_FORK);
	return 0;
}
