// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * open: one record per open, openat and openat2, written at the syscall's
 * return with the fd or -errno.
 *
 * tp_btf on the raw sys_enter/sys_exit tracepoints, not the classic
 * syscalls:sys_enter_open* ones: those attach through perf events, and a
 * perf-event link (the only kind that can be pinned) needs 5.15, so on 5.10
 * the probe could not outlive the loader. The price: the program runs for
 * every syscall and leaves at once unless it is one of the three
 * (docs/design.md has the measured cost). The arguments are kept per thread
 * from entry to exit; the path is read at exit, when the kernel has just
 * copied it in, so it is resident.
 */
#include "lt_common.bpf.h"
#include "lt_syscall_nr.h"

struct open_args {
	__u64 live; /* first: 0 when no open is in flight (lt_task_done zeroes it) */
	const char *path;
	__s32 dfd;
	__u32 flags;
	__u32 mode;
	__u32 syscall;
};

/* the arguments of the open a thread is in */
LT_TASK_STATE(lt_open_args, struct open_args);

/* x86-64 syscall arguments: di, si, dx, r10 */
SEC("tp_btf/sys_enter")
int BPF_PROG(lt_open_e, struct pt_regs *regs, long id)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	unsigned long di, si, dx, r10;
	struct open_args a = { .live = 1 };
	struct open_how how = {};

	if (id != LT_NR_open && id != LT_NR_openat && id != LT_NR_openat2)
		return 0;
	/* every read of regs first: the verifier rejects one load insn shared by regs and stack */
	di = regs->di;
	si = regs->si;
	dx = regs->dx;
	r10 = regs->r10;
	if (id == LT_NR_open) {
		a.syscall = LT_OPEN_OPEN;
		a.dfd = -100; /* AT_FDCWD */
		a.path = (const char *)di;
		a.flags = si;
		a.mode = dx;
	} else if (id == LT_NR_openat) {
		a.syscall = LT_OPEN_OPENAT;
		a.dfd = di;
		a.path = (const char *)si;
		a.flags = dx;
		a.mode = r10;
	} else {
		a.syscall = LT_OPEN_OPENAT2;
		a.dfd = di;
		a.path = (const char *)si;
		/* unreadable struct open_how: the call fails with EFAULT, flags and mode stay 0 */
		bpf_probe_read_user(&how, sizeof(how), (void *)dx);
		a.flags = how.flags;
		a.mode = how.mode;
	}
	if (lt_skip_current())
		return 0;
	/* a full map loses this open: counted as a drop, not silent */
	if (!lt_task_put(&lt_open_args, lt_current(), tid, &a, sizeof(a)))
		lt_count(LT_PROBE_OPEN, true);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(lt_open_x, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	long id = regs->orig_ax;
	struct task_struct *task;
	struct open_args *a;
	struct lt_open *r;
	__u32 max;
	bool shed;
	long n;

	if (id != LT_NR_open && id != LT_NR_openat && id != LT_NR_openat2)
		return 0;
	task = lt_current();
	a = lt_task_get(&lt_open_args, task, tid);
	if (!a || !a->live)
		return 0;
	r = lt_reserve_shed(LT_PROBE_OPEN, LT_TYPE_OPEN, sizeof(*r), LT_OPEN_SHED_SIZE, &shed);
	if (!r) {
		lt_task_done(&lt_open_args, a, tid);
		return 0;
	}
	r->ret = ret;
	r->dfd = a->dfd;
	r->flags = a->flags;
	r->mode = a->mode;
	r->syscall = a->syscall;
	r->rflags = 0;
	r->_pad0 = 0;
	max = shed ? LT_SHED_PATH : sizeof(r->path);
	if (shed)
		r->rflags |= LT_OPEN_PATH_SHED;
	n = bpf_probe_read_user_str(r->path, max, a->path);
	if (n < 0) {
		r->path[0] = 0;
		r->path_len = 0;
		r->rflags |= LT_OPEN_PATH_FAULT;
	} else {
		r->path_len = n > 0 ? n - 1 : 0;
		if (r->path_len == max - 1)
			r->rflags |= LT_OPEN_PATH_TRUNC;
	}
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	lt_task_done(&lt_open_args, a, tid);
	lt_submit(LT_PROBE_OPEN, r);
	return 0;
}
