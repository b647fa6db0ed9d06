// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * offcpu: time blocked, with the blocking stacks. At sched_switch the task
 * going off CPU in a sleeping state (not preempted) has its stacks and the
 * time stored; when it next runs, the time off CPU is added to lt_prof under
 * those stacks (tp_btf; bpf_get_stack works there since current is prev).
 */
#include "lt_prof.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_state.bpf.h"
#include "lt_core.bpf.h"

struct lt_off_start {
	__u64 ts; /* first: 0 when the thread is not blocked (lt_task_done) */
	struct lt_prof_key key;
};

/* per thread: since when and where it blocked (per-object state, lt_state.bpf.h) */
LT_TASK_STATE(lt_off_start, struct lt_off_start);

SEC("tp_btf/sched_switch")
int BPF_PROG(lt_prof_off, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 tid = BPF_CORE_READ(prev, pid);
	__u64 now = bpf_ktime_get_ns();
	struct lt_off_start *st;

	/* blocked: asleep by choice, not preempted; idle and filtered tasks skipped */
	if (tid && !preempt && lt_task_state(prev) != 0 && !lt_skip_current()) {
		struct lt_off_start s = { .ts = now };

		s.key.tgid = BPF_CORE_READ(prev, tgid);
		bpf_get_current_comm(s.key.comm, sizeof(s.key.comm));
		s.key.kstack = lt_stack_id(ctx, false, false);
		s.key.ustack = lt_stack_id(ctx, true, true);
		if (lt_task_put(&lt_off_start, prev, tid, &s, sizeof(s)))
			lt_task_seen(s.key.tgid, s.key.comm);
		else
			lt_prof_inc(LT_PC_START_FULL);
	}
	tid = BPF_CORE_READ(next, pid);
	st = lt_task_get(&lt_off_start, next, tid);
	if (!st || !st->ts)
		return 0;
	lt_prof_inc(LT_PC_SAMPLES);
	lt_prof_add(&st->key, now - st->ts);
	lt_task_done(&lt_off_start, st, tid);
	return 0;
}
