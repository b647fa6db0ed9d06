// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * open: one record per open, openat and openat2, written at the syscall's
 * return with the fd or -errno. open(2) exists only where the target's
 * unistd has it (LT_NR_open: x86-64; arm64 has openat and openat2 only).
 *
 * Two hooks, one chosen by the loader. Where a perf-event link can be pinned
 * (5.15+), the classic syscalls:sys_{enter,exit}_open{,at,at2} tracepoints
 * (lt_open_eo ... lt_open_xat2): the programs run for those three syscalls
 * only, so other syscalls pay nothing. Before 5.15 the probe could not
 * outlive the loader that way, so it takes tp_btf on the raw sys_enter and
 * sys_exit tracepoints (lt_open_e, lt_open_x): those run for every syscall
 * and leave at once unless it is one of the three (docs/performance.md has
 * both costs). The arguments are kept per thread from entry to exit; the path
 * is read at exit, when the kernel has just copied it in, so it is resident.
 */
#include "lt_common.bpf.h"
#include "lt_arch.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_rate.bpf.h"
#include "lt_record.bpf.h"
#include "lt_state.bpf.h"
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

/* An open's entry: its arguments are kept for its exit. */
static __always_inline void open_enter(__u32 syscall, __s32 dfd, const char *path, __u32 flags,
				       __u32 mode)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct open_args a = { .live = 1,
			       .path = path,
			       .dfd = dfd,
			       .flags = flags,
			       .mode = mode,
			       .syscall = syscall };

	if (lt_skip_current())
		return;
	/* a full map loses this open: counted as a drop, not silent */
	if (!lt_task_put(&lt_open_args, lt_current(), tid, &a, sizeof(a)))
		lt_count(LT_PROBE_OPEN, true);
}

/* openat2's flags and mode, from its struct open_how */
static __always_inline void openat2_enter(__s32 dfd, const char *path, const void *uhow)
{
	struct open_how how = {};

	/* unreadable: the call fails with EFAULT, flags and mode stay 0 */
	bpf_probe_read_user(&how, sizeof(how), uhow);
	open_enter(LT_OPEN_OPENAT2, dfd, path, how.flags, how.mode);
}

/* syscall `id` is none of the opens */
#ifdef LT_NR_open
#define NOT_OPEN(id) ((id) != LT_NR_open && (id) != LT_NR_openat && (id) != LT_NR_openat2)
#else
#define NOT_OPEN(id) ((id) != LT_NR_openat && (id) != LT_NR_openat2)
#endif

/* the syscall's arguments: the architecture's registers (lt_arch.bpf.h) */
SEC("tp_btf/sys_enter")
int BPF_PROG(lt_open_e, struct pt_regs *regs, long id)
{
	unsigned long a0, a1, a2, a3;

	if (NOT_OPEN(id))
		return 0;
	/* every read of regs first: the verifier rejects one load insn shared by regs and stack */
	a0 = LT_SYS_ARG0(regs);
	a1 = LT_SYS_ARG1(regs);
	a2 = LT_SYS_ARG2(regs);
	a3 = LT_SYS_ARG3(regs);
#ifdef LT_NR_open
	if (id == LT_NR_open)
		open_enter(LT_OPEN_OPEN, -100 /* AT_FDCWD */, (const char *)a0, a1, a2);
	else if (id == LT_NR_openat)
#else
	if (id == LT_NR_openat)
#endif
		open_enter(LT_OPEN_OPENAT, a0, (const char *)a1, a2, a3);
	else
		openat2_enter(a0, (const char *)a1, (const void *)a2);
	return 0;
}

/*
 * The record is built here and copied into the ring at its length (LT_OPEN_PACKED):
 * open's programs are one per hook and none preempts another on its CPU (the classic
 * syscall tracepoints run with preemption off; tp_btf only on kernels that do not
 * preempt tracing programs), so one buffer per CPU.
 */
struct open_buf {
	struct lt_open r;
	__u8 spare[8]; /* the zeros after a full path's NUL */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct open_buf);
} lt_open_buf SEC(".maps");

#define OPEN_FIXED __builtin_offsetof(struct lt_open, path)
_Static_assert(OPEN_FIXED % 8 == 0 && sizeof(struct lt_open) % 8 == 0, "path at 8, ends at 8");

/* An open's exit: its record, from the arguments its entry kept. */
static __always_inline void open_exit(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct task_struct *task;
	struct open_args *a;
	struct open_buf *b;
	struct lt_open *r;
	__u32 max, zero = 0;
	__u64 size, used;
	bool shed;
	long n;

	task = lt_current();
	a = lt_task_get(&lt_open_args, task, tid);
	if (!a || !a->live)
		return;
	b = bpf_map_lookup_elem(&lt_open_buf, &zero);
	if (!b || lt_off() || lt_throttled(lt_stat_slot(LT_PROBE_OPEN), LT_PROBE_OPEN)) {
		lt_task_done(&lt_open_args, a, tid);
		return;
	}
	r = &b->r;
	/* the full record would leave the ring less than a quarter free: a short path */
	used = lt_ring_used();
	shed = lt_ring_tight(used, sizeof(*r));
	r->ret = ret;
	r->dfd = a->dfd;
	r->flags = a->flags;
	r->mode = a->mode;
	r->syscall = a->syscall;
	r->rflags = LT_OPEN_PACKED;
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
	/* zeros after the NUL to a multiple of 8 (path starts at one): the record ends there */
	size = r->path_len + 1;
	barrier_var(size);
	if (size > LT_PATH_MAX)
		return;
	*(__u64 *)(void *)(r->path + size) = 0;
	size = OPEN_FIXED + ((size + 7) & ~7ull);
	lt_output(LT_PROBE_OPEN, LT_TYPE_OPEN, r, size, shed, used);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(lt_open_x, struct pt_regs *regs, long ret)
{
	long id = LT_SYS_NR(regs);

	if (NOT_OPEN(id))
		return 0;
	open_exit(ret);
	return 0;
}

/* The classic tracepoints: the event holds the syscall's arguments, 8 bytes each. */
#ifdef LT_NR_open
SEC("tracepoint/syscalls/sys_enter_open")
int lt_open_eo(struct syscall_trace_enter *e)
{
	open_enter(LT_OPEN_OPEN, -100 /* AT_FDCWD */, (const char *)e->args[0], e->args[1],
		   e->args[2]);
	return 0;
}
#endif

SEC("tracepoint/syscalls/sys_enter_openat")
int lt_open_eat(struct syscall_trace_enter *e)
{
	open_enter(LT_OPEN_OPENAT, e->args[0], (const char *)e->args[1], e->args[2], e->args[3]);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_openat2")
int lt_open_eat2(struct syscall_trace_enter *e)
{
	openat2_enter(e->args[0], (const char *)e->args[1], (const void *)e->args[2]);
	return 0;
}

#ifdef LT_NR_open
SEC("tracepoint/syscalls/sys_exit_open")
int lt_open_xo(struct syscall_trace_exit *e)
{
	open_exit(e->ret);
	return 0;
}
#endif

SEC("tracepoint/syscalls/sys_exit_openat")
int lt_open_xat(struct syscall_trace_exit *e)
{
	open_exit(e->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int lt_open_xat2(struct syscall_trace_exit *e)
{
	open_exit(e->ret);
	return 0;
}
