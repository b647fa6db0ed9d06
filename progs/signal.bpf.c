// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* signal: one record per signal generated (kill, tgkill, the kernel's own), with its result. */
#include "lt_common.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_record.bpf.h"
#include "lt_takeover.bpf.h"

static __always_inline void signal_event(int sig, struct task_struct *task, int group, int result)
{
	struct lt_signal *r;
	__u32 target = BPF_CORE_READ(task, tgid);

	/* --pid: signals sent by the process or to it */
	if (lt_skip(NULL, target, LT_SKIP_CURRENT | LT_SKIP_CGROUP))
		return;
	r = lt_reserve(LT_PROBE_SIGNAL, LT_TYPE_SIGNAL, sizeof(*r));
	if (!r)
		return;
	r->target_pid = target;
	r->target_tid = BPF_CORE_READ(task, pid);
	r->sig = sig;
	r->result = result;
	r->group = !!group;
	__builtin_memset(r->_pad0, 0, sizeof(r->_pad0));
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	BPF_CORE_READ_STR_INTO(&r->target_comm, task, comm);
	lt_submit(LT_PROBE_SIGNAL, r);
}

SEC("tp_btf/signal_generate")
int BPF_PROG(lt_signal, int sig, struct kernel_siginfo *info, struct task_struct *task, int group,
	     int result)
{
	signal_event(sig, task, group, result);
	lt_mark(LT_MARK_SIGNAL);
	return 0;
}

/* The signals the kernel skipped lt_signal for (lt_mark in lt_takeover.bpf.h). */
SEC("tp_btf/signal_generate")
int BPF_PROG(lt_signal_nest, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	if (lt_marked(LT_MARK_SIGNAL))
		return 0;
	signal_event(sig, task, group, result);
	lt_count_recovered(LT_PROBE_SIGNAL);
	return 0;
}
