/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CO-RE shims: kernel fields that were renamed or changed type, read the same
 * way on every kernel lowtrace supports. Shims used by one probe only stay in
 * that probe.
 */
#ifndef LT_CORE_BPF_H
#define LT_CORE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/* before 5.14 the task state was "long state" */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/* The task's state: 0 is TASK_RUNNING. */
static __always_inline long lt_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

#endif /* LT_CORE_BPF_H */
