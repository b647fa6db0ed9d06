/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CO-RE shims: kernel fields that were renamed or changed type, read the same
 * way on every kernel lowtrace supports. Shims used by one probe only stay in
 * that probe.
 */
#ifndef LT_CORE_BPF_H
#define LT_CORE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* before 5.14 the task state was "long state" */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/* The task's state: 0 is TASK_RUNNING. */
static __always_inline long lt_task_state(struct task_struct *t)
{
	/* t is a tracepoint's BTF argument: a direct load (the old name's cast is not) */
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

/*
 * The task's namespace inode numbers, as /proc/PID/ns/{pid,mnt,net} show them:
 * the pid namespace is the one the task's pid lives in (not the one its
 * children would get); 0 where the kernel has none (no nsproxy: exiting).
 */
static __always_inline void lt_task_ns(struct task_struct *t, __u32 *pid_ns, __u32 *mnt_ns,
				       __u32 *net_ns)
{
	struct nsproxy *nsp = BPF_CORE_READ(t, nsproxy);
	struct pid *pid = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	/* numbers[] is as long as the pid's level + 1 */
	bpf_core_read(&up, sizeof(up), &pid->numbers[level & 31]);
	*pid_ns = BPF_CORE_READ(up.ns, ns.inum);
	*mnt_ns = nsp ? BPF_CORE_READ(nsp, mnt_ns, ns.inum) : 0;
	*net_ns = nsp ? BPF_CORE_READ(nsp, net_ns, ns.inum) : 0;
}

#endif /* LT_CORE_BPF_H */
