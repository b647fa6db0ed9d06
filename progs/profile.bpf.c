// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profile: on-CPU stack sampling. A perf_event program on a per-CPU clock
 * event (cycles where the kernel has them, else the software cpu-clock)
 * counts (process, comm, kernel stack, user stack) in lt_prof: userspace
 * reads aggregates at the end, not every sample. The idle task is skipped.
 */
#include "lt_arch.bpf.h"
#include "lt_prof.bpf.h"
#include "lt_filter.bpf.h"

SEC("perf_event")
int lt_prof_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct lt_prof_key k = {};

	if (!(__u32)id || lt_skip_current())
		return 0;
	k.tgid = id >> 32;
	bpf_get_current_comm(k.comm, sizeof(k.comm));
	/* interrupted in user mode: no kernel frames (the helper would find none, at a cost) */
	k.kstack = LT_PE_USER(ctx) ? -EFAULT : lt_stack_id(ctx, false, false);
	k.ustack = lt_stack_id(ctx, true, true);
	lt_prof_inc(LT_PC_SAMPLES);
	/* a key seen before: its process was announced then */
	if (lt_prof_add(&k, 0))
		lt_task_seen(k.tgid, k.comm);
	return 0;
}
