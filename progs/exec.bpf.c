// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exec: one record per successful execve, after the new image is in place. */
#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_rate.bpf.h"
#include "lt_record.bpf.h"
#include "lt_takeover.bpf.h"
#include "lt_core.bpf.h"

/*
 * The record is built here, packed (LT_EXEC_PACKED), then copied into the ring at
 * its length. One buffer per program level and CPU: where tracepoints are
 * preemptible a preempted lt_exec keeps its buffer while lt_exec_nest or lt_exec_tp
 * run on that CPU (the kernel skips only the same program).
 */
enum { EXEC_MAIN, EXEC_NEST, EXEC_TP, EXEC_LEVELS };

struct exec_buf {
	struct lt_exec e;
	__u8 spare[16]; /* the packed form's worst case: 8 bytes of padding more */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EXEC_LEVELS);
	__type(key, __u32);
	__type(value, struct exec_buf);
} lt_exec_buf SEC(".maps");

/* the namespace fields: the packed record's last bytes */
struct exec_ns {
	__u32 pid_ns, mnt_ns, net_ns, _pad1;
};
_Static_assert(sizeof(struct exec_ns) == LT_EXEC_NS_SIZE, "exec_ns is lt_exec's tail");

#define EXEC_FIXED __builtin_offsetof(struct lt_exec, filename)
_Static_assert(EXEC_FIXED + LT_FILENAME_MAX + LT_ARGS_MAX + 8 + LT_EXEC_NS_SIZE <=
		       sizeof(struct exec_buf),
	       "the packed worst case fits the buffer");

static __always_inline void exec_event(struct task_struct *p, const char *filename, __u32 argc,
				       __u32 level)
{
	unsigned long arg_start, arg_end;
	struct exec_buf *b;
	struct exec_ns *ns;
	struct mm_struct *mm;
	struct lt_exec *r;
	__u64 off, len, end, size, used;
	bool shed = false;
	__u64 ugid, cg;
	char *d;
	long n;

	if (lt_skip_current())
		return;
	cg = lt_cg_count(LT_PROBE_EXEC, LT_CG_EXEC);
	if (lt_throttled(lt_stat_slot(LT_PROBE_EXEC), LT_PROBE_EXEC))
		return;
	b = bpf_map_lookup_elem(&lt_exec_buf, &level);
	if (!b)
		return;
	r = &b->e;
	ugid = bpf_get_current_uid_gid();
	r->uid = (__u32)ugid;
	r->gid = ugid >> 32;
	r->ppid = BPF_CORE_READ(p, real_parent, tgid);
	r->argc = argc;
	r->cgroup_id = cg; /* read once: a v1 id is five loads */
	r->flags = LT_EXEC_PACKED;
	r->_pad0[0] = r->_pad0[1] = r->_pad0[2] = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));

	/* filename and its NUL at the start of the packed part */
	d = r->filename;
	n = bpf_probe_read_kernel_str(d, LT_FILENAME_MAX, filename);
	if (n <= 0) {
		d[0] = 0;
		n = 1;
	}
	if (n >= LT_FILENAME_MAX) {
		n = LT_FILENAME_MAX;
		r->flags |= LT_EXEC_FILENAME_TRUNC; /* full buffer: cannot tell, say so */
	}
	r->filename_len = n - 1;
	off = n;
	barrier_var(off);
	if (off > LT_FILENAME_MAX)
		return;

	/* argv: the NUL-separated block [arg_start, arg_end) of the new mm, right after */
	mm = BPF_CORE_READ(p, mm);
	arg_start = BPF_CORE_READ(mm, arg_start);
	arg_end = BPF_CORE_READ(mm, arg_end);
	len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > LT_ARGS_MAX) {
		len = LT_ARGS_MAX;
		r->flags |= LT_EXEC_ARGS_TRUNC;
	}
	barrier_var(len); /* keep the bound check on the register the helper gets */
	if (len > LT_ARGS_MAX || bpf_probe_read_user(d + off, len, (void *)arg_start))
		len = 0;
	/* a record that would leave the ring less than a quarter free is written short */
	used = lt_ring_used();
	if (lt_ring_tight(used, EXEC_FIXED + off + len + 8 + LT_EXEC_NS_SIZE)) {
		shed = true;
		r->flags |= LT_EXEC_ARGS_SHED;
		if (len > LT_SHED_ARGS)
			len = LT_SHED_ARGS;
	}
	r->args_len = len;

	/* zeros to a multiple of 8, then the namespace fields */
	end = off + len;
	barrier_var(end);
	if (end > LT_FILENAME_MAX + LT_ARGS_MAX)
		return;
	*(__u64 *)(void *)(d + end) = 0; /* spare room covers these 8 bytes */
	end = (end + 7) & ~7ull;
	ns = (struct exec_ns *)(d + end);
	lt_task_ns(p, &ns->pid_ns, &ns->mnt_ns, &ns->net_ns);
	ns->_pad1 = 0;
	size = EXEC_FIXED + end + LT_EXEC_NS_SIZE;
	lt_output(LT_PROBE_EXEC, LT_TYPE_EXEC, r, size, shed, used);
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
		exec_event(p, BPF_CORE_READ(bprm, filename), BPF_CORE_READ(bprm, argc), EXEC_MAIN);
	lt_main_done(LT_MARK_EXEC);
	return 0;
}

/* The execs the kernel skipped lt_exec for (lt_mark in lt_takeover.bpf.h). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_exec_nest, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!lt_nest_takes(LT_MARK_EXEC, exec_id(p)))
		return 0;
	exec_event(p, BPF_CORE_READ(bprm, filename), BPF_CORE_READ(bprm, argc), EXEC_NEST);
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
	exec_event(p, (const char *)e + (BPF_CORE_READ(e, __data_loc_filename) & 0xffff), argc,
		   EXEC_TP);
	lt_count_recovered(LT_PROBE_EXEC);
	return 0;
}
