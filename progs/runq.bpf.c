// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * runq: run-queue latency, the time from a task becoming runnable (woken,
 * new, or preempted while running) to running, as one log2 histogram in a
 * per-CPU array. tp_btf on sched_wakeup, sched_wakeup_new, sched_switch.
 * --pid keeps tasks of that thread group; --cgroup does not apply (the
 * measured task is not the current one).
 */
#include "lt_common.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_hist.bpf.h"
#include "lt_state.bpf.h"
#include "lt_core.bpf.h"

/* since when a thread is runnable (lt_start) */
LT_TASK_STATE(lt_runq_start, __u64);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_hist);
} lt_runq_hist SEC(".maps");

static __always_inline void runnable(struct task_struct *p)
{
	__u32 tid = p->pid; /* a BTF pointer: a direct load */

	if (!tid || lt_skip(p, 0, 0))
		return;
	lt_start(LT_PROBE_RUNQ, &lt_runq_start, p, tid);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(lt_runq_wake, struct task_struct *p)
{
	runnable(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(lt_runq_new, struct task_struct *p)
{
	runnable(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(lt_runq_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0, tid = next->pid;
	struct lt_hist *h;
	__u64 delta;

	if (lt_task_state(prev) == 0) /* TASK_RUNNING: preempted, back on the run queue */
		runnable(prev);
	if (!lt_elapsed(&lt_runq_start, next, tid, &delta) || lt_off())
		return 0;
	h = bpf_map_lookup_elem(&lt_runq_hist, &zero);
	if (!h)
		return 0;
	lt_hist_add(h, delta);
	lt_count(LT_PROBE_RUNQ, false);
	return 0;
}
