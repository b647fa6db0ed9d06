/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Syscall-set probes (file, cred, priv): a record per call of one of a few syscalls, written
 * at its return. Each probe has two pairs of programs, one chosen by the loader as for open:
 * on 5.15+ one program on the classic syscalls:sys_enter_X tracepoint and one on sys_exit_X,
 * each attached to every syscall X of the probe's row (the event carries the number), so
 * other syscalls pay nothing; before, tp_btf on the raw sys_enter and sys_exit, leaving at
 * once for other numbers. The entry keeps the call's number, op and arguments per thread
 * (one map for all three probes: a thread is in one syscall at a time); the exit finds them,
 * reads what the call named (its memory is resident then: the kernel has just read it) and
 * writes the record.
 *
 * A probe defines PROBE_op(nr) (0: not its syscall) and its enter and exit bodies, then
 * LT_SYSSET_PROGS(probe, enter, exit) makes the four programs.
 */
#ifndef LT_SYSSET_BPF_H
#define LT_SYSSET_BPF_H

#include "lt_common.bpf.h"
#include "lt_arch.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_state.bpf.h"
#include "lt_syscall_nr.h"

struct lt_sysset_args {
	__u64 live; /* first: 0 when no call is in flight (lt_task_done zeroes it) */
	__u32 nr;
	__u32 op;
	__u64 a[5];
	struct lt_creds old; /* cred: the credentials at entry */
	char name[LT_PRIV_NAME]; /* priv: a module's name, from module_load inside the call */
};

/* the call a thread is in, shared by the syscall-set probes (__weak: one map when merged) */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_sysset_args);
} lt_sys_args __weak SEC(".maps");
_Static_assert(sizeof(struct lt_sysset_args) <= LT_TASK_STATE_MAX, "sysset state fits");

/* the records of each probe per op (__weak: one map when merged) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_op_counts);
} lt_op_counts __weak SEC(".maps");

/* A record of `probe` (LT_PROBE_FILE ..) with op `op` written: counted for the metrics. */
static __always_inline void lt_sysset_count(__u32 probe, __u32 op)
{
	__u32 zero = 0, i = probe - LT_PROBE_FILE;
	struct lt_op_counts *c = bpf_map_lookup_elem(&lt_op_counts, &zero);

	if (c && i < LT_OP_PROBES && op < LT_OP_SLOTS)
		c->n[i][op]++;
}

/*
 * Keep a call's entry for its exit; the state, or NULL (filtered out, or a full map: then
 * counted as a drop of `probe`, not silent).
 */
static __always_inline struct lt_sysset_args *
lt_sysset_keep(__u32 probe, __u32 nr, __u32 op, __u64 a0, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	struct lt_sysset_args *s;

	if (lt_skip_current())
		return NULL;
	s = lt_task_new(&lt_sys_args, lt_current(), lt_current_tid());
	if (!s) {
		lt_count(probe, true);
		return NULL;
	}
	s->live = 1;
	s->nr = nr;
	s->op = op;
	s->a[0] = a0;
	s->a[1] = a1;
	s->a[2] = a2;
	s->a[3] = a3;
	s->a[4] = a4;
	return s;
}

/* The entry kept for call `nr` of this thread, or NULL. */
static __always_inline struct lt_sysset_args *lt_sysset_get(__u32 nr)
{
	struct lt_sysset_args *s = lt_task_get(&lt_sys_args, lt_current(), lt_current_tid());

	if (!s || !s->live)
		return NULL;
	if (s->nr != nr) {
		/* a call whose exit was not seen (an exec's old image); forget it */
		lt_task_done(&lt_sys_args, s, lt_current_tid());
		return NULL;
	}
	return s;
}

static __always_inline void lt_sysset_done(struct lt_sysset_args *s)
{
	lt_task_done(&lt_sys_args, s, lt_current_tid());
}

/* The open file `fd` of the current task, or NULL. */
static __always_inline struct file *lt_fd_file(long fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds, *f = NULL;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), fds + fd);
	return f;
}

/* The last component of the name of file `f` into buf (NUL-terminated): its length, < 0 if none. */
static __always_inline long lt_file_name(struct file *f, char *buf, __u32 size)
{
	const unsigned char *name;

	if (!f)
		return -1;
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	return bpf_probe_read_kernel_str(buf, size, name);
}

/*
 * The four programs of probe `pr` (15 characters at most: lt_<pr>_se etc.): enter(nr, op,
 * a0..a4) and exit(nr, ret) are the probe's. The classic ones' sections name one syscall of
 * the set (`sys`); the loader attaches them to all of them.
 */
#define LT_SYSSET_PROGS(pr, sys, op_of, enter, exit)                                         \
	SEC("tp_btf/sys_enter")                                                              \
	int BPF_PROG(lt_##pr##_e, struct pt_regs *regs, long id)                             \
	{                                                                                    \
		__u64 a0, a1, a2, a3, a4;                                                    \
		__u32 op = op_of(id);                                                        \
                                                                                             \
		if (!op)                                                                     \
			return 0;                                                            \
		a0 = LT_SYS_ARG0(regs);                                                      \
		a1 = LT_SYS_ARG1(regs);                                                      \
		a2 = LT_SYS_ARG2(regs);                                                      \
		a3 = LT_SYS_ARG3(regs);                                                      \
		a4 = LT_SYS_ARG4(regs);                                                      \
		enter(id, op, a0, a1, a2, a3, a4);                                           \
		return 0;                                                                    \
	}                                                                                    \
	SEC("tp_btf/sys_exit")                                                               \
	int BPF_PROG(lt_##pr##_x, struct pt_regs *regs, long ret)                            \
	{                                                                                    \
		long id = LT_SYS_NR(regs);                                                   \
                                                                                             \
		if (!op_of(id))                                                              \
			return 0;                                                            \
		exit(id, ret);                                                               \
		return 0;                                                                    \
	}                                                                                    \
	SEC("tracepoint/syscalls/sys_enter_" #sys)                                           \
	int lt_##pr##_se(struct syscall_trace_enter *e)                                      \
	{                                                                                    \
		__u32 op = op_of(e->nr);                                                     \
		__u64 a[5] = {};                                                             \
                                                                                             \
		if (!op)                                                                     \
			return 0;                                                            \
		/* read, not loaded: the event holds only the syscall's own arguments, and \
		 * the kernel refuses a program whose loads reach past an event's end */ \
		bpf_probe_read_kernel(a, sizeof(a), e->args);                                \
		enter(e->nr, op, a[0], a[1], a[2], a[3], a[4]);                              \
		return 0;                                                                    \
	}                                                                                    \
	SEC("tracepoint/syscalls/sys_exit_" #sys)                                            \
	int lt_##pr##_sx(struct syscall_trace_exit *e)                                       \
	{                                                                                    \
		exit(e->nr, e->ret);                                                         \
		return 0;                                                                    \
	}

#endif /* LT_SYSSET_BPF_H */
