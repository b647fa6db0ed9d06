// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exec: one record per successful execve, after the new image is in place. */
#include "lt_common.bpf.h"
#include "lt_core.bpf.h"

/* argv (the NUL-separated block [arg_start, arg_end) of the new mm) into r->args, at most `max` */
static __always_inline void exec_args(struct lt_exec *r, struct task_struct *p, unsigned long max)
{
	struct mm_struct *mm = BPF_CORE_READ(p, mm);
	unsigned long arg_start = BPF_CORE_READ(mm, arg_start);
	unsigned long arg_end = BPF_CORE_READ(mm, arg_end);
	unsigned long len = arg_end > arg_start ? arg_end - arg_start : 0;

	if (len > max) {
		len = max;
		r->flags |= LT_EXEC_ARGS_TRUNC;
	}
	barrier_var(len); /* keep the bound check on the register the helper gets */
	if (bpf_probe_read_user(r->args, len, (void *)arg_start))
		len = 0;
	r->args_len = len;
}

/* the namespace fields, where a full record or a shed one has them */
struct exec_ns {
	__u32 pid_ns, mnt_ns, net_ns, _pad1;
};
_Static_assert(sizeof(struct exec_ns) == LT_EXEC_NS_SIZE, "exec_ns is lt_exec's tail");

static __always_inline void exec_ns(struct exec_ns *ns, struct task_struct *p)
{
	lt_task_ns(p, &ns->pid_ns, &ns->mnt_ns, &ns->net_ns);
	ns->_pad1 = 0;
}

static __always_inline void exec_event(struct task_struct *p, const char *filename, __u32 argc)
{
	struct lt_exec *r;
	bool shed;
	long n;
	__u64 ugid;

	if (lt_skip_current())
		return;
	lt_cg_count(LT_PROBE_EXEC, LT_CG_EXEC);
	r = lt_reserve_shed(LT_PROBE_EXEC, LT_TYPE_EXEC, sizeof(*r), LT_EXEC_SHED_SIZE, &shed);
	if (!r)
		return;
	ugid = bpf_get_current_uid_gid();
	r->uid = (__u32)ugid;
	r->gid = ugid >> 32;
	r->ppid = BPF_CORE_READ(p, real_parent, tgid);
	r->argc = argc;
	r->cgroup_id = r->hdr.cgroup_id;
	r->flags = 0;
	r->_pad0[0] = r->_pad0[1] = r->_pad0[2] = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));

	n = bpf_probe_read_kernel_str(r->filename, sizeof(r->filename), filename);
	if (n <= 0) {
		r->filename[0] = 0;
		n = 1;
	}
	r->filename_len = n - 1;
	if (n == sizeof(r->filename))
		r->flags |= LT_EXEC_FILENAME_TRUNC; /* full buffer: cannot tell, say so */

	if (shed) {
		r->flags |= LT_EXEC_ARGS_SHED;
		exec_args(r, p, LT_SHED_ARGS);
		exec_ns((struct exec_ns *)(r->args + LT_SHED_ARGS), p);
	} else {
		exec_args(r, p, LT_ARGS_MAX);
		exec_ns((struct exec_ns *)&r->pid_ns, p);
	}
	lt_submit(LT_PROBE_EXEC, r);
}

/* An exec's identity for lt_claim: the mm it built (one per exec, still alive). */
static __always_inline __u64 exec_id(struct task_struct *p)
{
	return (__u64)BPF_CORE_READ(p, mm);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (lt_main_takes(LT_PROBE_EXEC, LT_MARK_EXEC, exec_id(p)))
		exec_event(p, BPF_CORE_READ(bprm, filename), BPF_CORE_READ(bprm, argc));
	lt_main_done(LT_MARK_EXEC);
	return 0;
}

/* The execs the kernel skipped lt_exec for (lt_mark in lt_common.bpf.h). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_exec_nest, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!lt_nest_takes(LT_MARK_EXEC, exec_id(p)))
		return 0;
	exec_event(p, BPF_CORE_READ(bprm, filename), BPF_CORE_READ(bprm, argc));
	lt_count_recovered(LT_PROBE_EXEC);
	return 0;
}

/*
 * The execs the kernel skipped both for (preemptible tracepoints only: lt_claim).
 * The classic event has no bprm: the filename is in the event, argc on the new
 * stack (an ELF image starts with it; 0 when it cannot be read).
 */
SEC("tracepoint/sched/sched_process_exec")
int lt_exec_tp(struct trace_event_raw_sched_process_exec *e)
{
	struct task_struct *p = (struct task_struct *)bpf_get_current_task();
	unsigned long sp;
	__u64 argc = 0;

	if (!lt_claim(LT_MARK_EXEC, exec_id(p), false))
		return 0;
	sp = BPF_CORE_READ(p, mm, start_stack);
	if (bpf_probe_read_user(&argc, sizeof(argc), (void *)sp) || argc > 0x7fffffff)
		argc = 0;
	exec_event(p, (const char *)e + (BPF_CORE_READ(e, __data_loc_filename) & 0xffff), argc);
	lt_count_recovered(LT_PROBE_EXEC);
	return 0;
}
