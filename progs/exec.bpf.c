// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exec: one record per successful execve, after the new image is in place. */
#include "lt_common.bpf.h"
#include "lt_core.bpf.h"

static __always_inline void exec_event(struct task_struct *p, struct linux_binprm *bprm)
{
	struct lt_exec *r;
	struct mm_struct *mm;
	unsigned long arg_start, arg_end, len;
	long n;
	__u64 ugid;

	if (lt_skip_current())
		return;
	lt_cg_count(LT_PROBE_EXEC, LT_CG_EXEC);
	r = lt_reserve(LT_PROBE_EXEC, LT_TYPE_EXEC, sizeof(*r));
	if (!r)
		return;
	ugid = bpf_get_current_uid_gid();
	r->uid = (__u32)ugid;
	r->gid = ugid >> 32;
	r->ppid = BPF_CORE_READ(p, real_parent, tgid);
	r->argc = BPF_CORE_READ(bprm, argc);
	r->cgroup_id = r->hdr.cgroup_id;
	r->flags = 0;
	r->_pad0[0] = r->_pad0[1] = r->_pad0[2] = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));

	n = bpf_probe_read_kernel_str(r->filename, sizeof(r->filename),
				      BPF_CORE_READ(bprm, filename));
	if (n <= 0) {
		r->filename[0] = 0;
		n = 1;
	}
	r->filename_len = n - 1;
	if (n == sizeof(r->filename))
		r->flags |= LT_EXEC_FILENAME_TRUNC; /* full buffer: cannot tell, say so */

	/* argv is the NUL-separated block [arg_start, arg_end) of the new mm */
	mm = BPF_CORE_READ(p, mm);
	arg_start = BPF_CORE_READ(mm, arg_start);
	arg_end = BPF_CORE_READ(mm, arg_end);
	len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > LT_ARGS_MAX) {
		len = LT_ARGS_MAX;
		r->flags |= LT_EXEC_ARGS_TRUNC;
	}
	barrier_var(len); /* keep the bound check on the register the helper gets */
	if (bpf_probe_read_user(r->args, len, (void *)arg_start))
		len = 0;
	r->args_len = len;
	lt_task_ns(p, &r->pid_ns, &r->mnt_ns, &r->net_ns);
	r->_pad1 = 0;
	lt_submit(LT_PROBE_EXEC, r);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	exec_event(p, bprm);
	lt_mark(LT_MARK_EXEC);
	return 0;
}

/* The execs the kernel skipped lt_exec for (lt_mark in lt_common.bpf.h). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_exec_nest, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (lt_marked(LT_MARK_EXEC))
		return 0;
	exec_event(p, bprm);
	lt_count_recovered(LT_PROBE_EXEC);
	return 0;
}
