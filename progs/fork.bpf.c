// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fork: one record per new process; clone(CLONE_THREAD) is not a new process. */
#include "lt_common.bpf.h"

static __always_inline void fork_event(struct task_struct *child)
{
	struct lt_fork *r;
	__u32 child_pid = BPF_CORE_READ(child, tgid);

	if (child_pid != BPF_CORE_READ(child, pid))
		return;
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

SEC("tp_btf/sched_process_fork")
int BPF_PROG(lt_fork, struct task_struct *parent, struct task_struct *child)
{
	fork_event(child);
	lt_mark(LT_MARK_FORK);
	return 0;
}

/* The forks the kernel skipped lt_fork for (lt_mark in lt_common.bpf.h). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lt_fork_nest, struct task_struct *parent, struct task_struct *child)
{
	if (lt_marked(LT_MARK_FORK))
		return 0;
	fork_event(child);
	lt_count_recovered(LT_PROBE_FORK);
	return 0;
}
