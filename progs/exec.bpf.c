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

/* What the ancestor walk found, for the tail. */
struct anc_walk {
	__u64 parent_exec_id;
	__u64 len;
	__u8 n, more;
};

/* The walk's position, where anc_step finds it: the task reached, where the ancestors go. */
struct anc_state {
	__u64 task; /* a kernel pointer, read through probe reads only */
	__u64 base; /* the packed ancestors' offset in struct exec_buf */
	struct anc_walk w;
};

struct exec_buf {
	struct lt_exec e;
	__u8 spare[16]; /* the packed form's worst case: 8 bytes of padding more */
	struct lt_proc me; /* the exec's lt_procs entry, built here */
	struct anc_state as;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EXEC_LEVELS);
	__type(key, __u32);
	__type(value, struct exec_buf);
} lt_exec_buf SEC(".maps");

/* the namespace and identity fields: the packed record's last bytes (LT_EXEC_ANC) */
struct exec_tail {
	__u32 pid_ns, mnt_ns, net_ns, _pad1;
	__u64 exec_id, parent_exec_id;
	__u32 euid, egid;
	__u8 n_anc, anc_more;
	__u16 anc_len;
	__u32 _pad2;
};
_Static_assert(sizeof(struct exec_tail) == LT_EXEC_TAIL_SIZE, "exec_tail is lt_exec's tail");

#define EXEC_FIXED __builtin_offsetof(struct lt_exec, filename)
/* the packed ancestors at most: each its head and a name of LT_ANC_NAME bytes with its NUL */
#define ANC_PACKED_MAX (LT_ANC_MAX * sizeof(struct lt_anc))
_Static_assert(EXEC_FIXED + LT_FILENAME_MAX + LT_ARGS_MAX + 8 + ANC_PACKED_MAX +
			       LT_EXEC_TAIL_SIZE <=
		       __builtin_offsetof(struct exec_buf, me),
	       "the packed worst case fits the buffer");

/*
 * Ancestry: every process's image in lt_procs, by tgid, so that an exec can name its
 * parent's, grandparent's, ... (progs/exec.bpf.c's record, lt_abi.h's struct lt_proc).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_PROCS_DEFAULT);
	__type(key, __u32);
	__type(value, struct lt_proc);
} lt_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_anc_stat);
} lt_anc_stat SEC(".maps");

/* load --ancestors: how many an exec record names */
const volatile __u32 lt_cfg_ancestors = LT_ANC_DEFAULT;
/*
 * The boot-time clock once exec and fork are attached (the loader sets it after the attach, 0
 * before): an ancestor with no entry that started later was evicted or skipped (missing); one
 * started before it was never seen (unknown: it forked between
 * the seed's walk of /proc and the attach, which a busy host does)
 */
volatile __u64 lt_anc_since = 0;

static __always_inline struct lt_anc_stat *anc_stat(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&lt_anc_stat, &zero);
}

/* where the packed ancestors can start in struct exec_buf at the latest (the record's worst case) */
#define ANC_BASE_MAX (EXEC_FIXED + LT_FILENAME_MAX + LT_ARGS_MAX + 8)

/*
 * Ancestor i of the walk in lt_exec_buf[level]: the next real_parent up, packed at
 * as.base + as.w.len while there are fewer than lt_cfg_ancestors; the parent's exec_id
 * whatever the count. 0: the walk is over. A global function, so the verifier checks it
 * once, on its own, rather than along every path of the exec program: written inline, each
 * step doubled the paths (an entry or none, a name of any length), and a load of exec took
 * three times as long (--ancestors 8: seconds more in a TCG guest). 5.10's global functions
 * take scalars only: the state is in the per-CPU buffer.
 */
__noinline int lt_anc_step(__u32 level, __u32 i)
{
	struct exec_buf *b = bpf_map_lookup_elem(&lt_exec_buf, &level);
	struct lt_anc_stat *st;
	struct task_struct *t;
	struct anc_state *s;
	struct lt_proc *v;
	struct lt_anc *a;
	__u64 pos, base;
	__u32 tgid, nl;

	if (!b)
		return 0;
	s = &b->as;
	t = (struct task_struct *)s->task;
	t = BPF_CORE_READ(t, real_parent);
	s->task = (__u64)t;
	tgid = BPF_CORE_READ(t, tgid);
	if (!tgid)
		return 0; /* past init: the idle task */
	v = bpf_map_lookup_elem(&lt_procs, &tgid);
	if (i == 0 && v)
		s->w.parent_exec_id = v->exec_id;
	if (i >= lt_cfg_ancestors || i >= LT_ANC_MAX) {
		s->w.more = 1;
		return 0;
	}
	pos = s->w.len;
	base = s->base;
	if (pos > ANC_PACKED_MAX - sizeof(struct lt_anc) || base > ANC_BASE_MAX)
		return 0;
	a = (struct lt_anc *)((char *)b + base + pos);
	a->pid = tgid;
	a->_pad0 = 0;
	if (v) {
		nl = v->name_len;
		if (nl > LT_ANC_NAME - 1)
			nl = LT_ANC_NAME - 1;
		a->exec_id = v->exec_id;
		a->flags = v->flags;
		a->name_len = nl;
		/* the entry's name is zeros after its NUL */
		__builtin_memcpy(a->name, v->name, LT_ANC_NAME);
	} else {
		nl = 0;
		a->exec_id = 0;
		a->flags = LT_ANC_UNKNOWN;
		a->name_len = 0;
		*(__u64 *)(void *)a->name = 0;
		/* evicted, if it started after the load; else never seen */
		st = anc_stat();
		if (st && lt_anc_since && BPF_CORE_READ(t, start_boottime) > lt_anc_since)
			__sync_fetch_and_add(&st->missing, 1);
		else if (st)
			__sync_fetch_and_add(&st->unknown, 1);
	}
	s->w.len = pos + LT_ANC_HEAD + ((nl + 8) & ~7u);
	s->w.n++;
	return 1;
}

/*
 * The ancestors of `p` (real_parent up, nearest first: a reparented process's new parent)
 * packed at `base` in b, at most lt_cfg_ancestors; the parent's exec_id even with none. Step
 * by step: 5.10's verifier refuses the back-edge of the loop clang makes of a loop.
 */
static __always_inline void exec_ancestors(struct task_struct *p, struct exec_buf *b, __u32 level,
					   __u64 base, struct anc_walk *w)
{
	b->as.task = (__u64)p;
	b->as.base = base;
	__builtin_memset(&b->as.w, 0, sizeof(b->as.w));
	_Static_assert(LT_ANC_MAX == 8, "one step per ancestor, and one to see if there are more");
	lt_anc_step(level, 0) && lt_anc_step(level, 1) && lt_anc_step(level, 2) &&
		lt_anc_step(level, 3) && lt_anc_step(level, 4) && lt_anc_step(level, 5) &&
		lt_anc_step(level, 6) && lt_anc_step(level, 7) && lt_anc_step(level, 8);
	*w = b->as.w;
}

/* This exec's entry: the parent's children find it; the filename is d's first bytes. */
static __always_inline void exec_remember(struct exec_buf *b, __u32 tgid, __u64 id, __u64 parent_id,
					  const char *d, __u64 n)
{
	struct lt_proc *me = &b->me;
	struct lt_anc_stat *st;

	me->exec_id = id;
	me->parent_exec_id = parent_id;
	me->flags = 0;
	__builtin_memset(me->_pad0, 0, sizeof(me->_pad0));
	__builtin_memset(me->name, 0, sizeof(me->name));
	if (n > LT_ANC_NAME - 1) {
		n = LT_ANC_NAME - 1;
		me->flags = LT_ANC_NAME_TRUNC;
	}
	me->name_len = n;
	bpf_probe_read_kernel(me->name, n & (LT_ANC_NAME - 1), d);
	bpf_map_update_elem(&lt_procs, &tgid, me, BPF_ANY);
	st = anc_stat();
	if (st)
		__sync_fetch_and_add(&st->execs, 1);
}

/*
 * The exec's record, and its entry in the ancestry table. `quiet`: the suite is
 * not live (lt_off): the entry only, so the table is right when it goes live.
 */
static __always_inline void exec_event(struct task_struct *p, const char *filename, __u32 argc,
				       struct file *file, __u32 level, bool quiet)
{
	unsigned long arg_start, arg_end;
	struct anc_walk w = {};
	struct exec_buf *b;
	struct exec_tail *tl;
	struct mm_struct *mm;
	struct lt_exec *r;
	__u64 off, len, end, size, used;
	bool shed = false;
	__u64 ugid, cg;
	char *d;
	long n;

	if (lt_skip_current())
		return;
	cg = quiet ? 0 : lt_cg_count(LT_PROBE_EXEC, LT_CG_EXEC);
	if (!quiet && lt_throttled(lt_stat_slot(LT_PROBE_EXEC), LT_PROBE_EXEC))
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
	r->flags = LT_EXEC_PACKED | LT_EXEC_ANC;
	/* a memfd's inode or a deleted file's has no link left */
	if (!BPF_CORE_READ(file, f_inode, i_nlink))
		r->flags |= LT_EXEC_FILELESS;
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
	if (lt_ring_tight(used, EXEC_FIXED + off + len + 8 + LT_EXEC_TAIL_SIZE)) {
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

	/* the ancestors, then the tail */
	exec_ancestors(p, b, level, EXEC_FIXED + end, &w);
	end += w.len;
	barrier_var(end);
	if (end > LT_FILENAME_MAX + LT_ARGS_MAX + 8 + ANC_PACKED_MAX)
		return;
	tl = (struct exec_tail *)(d + end);
	lt_task_ns(p, &tl->pid_ns, &tl->mnt_ns, &tl->net_ns);
	tl->_pad1 = 0;
	tl->exec_id = (bpf_ktime_get_boot_ns() & ~LT_EXEC_ID_CPU) |
		      (bpf_get_smp_processor_id() & (LT_EXEC_ID_CPU - 1));
	tl->parent_exec_id = w.parent_exec_id;
	tl->euid = BPF_CORE_READ(p, cred, euid.val);
	tl->egid = BPF_CORE_READ(p, cred, egid.val);
	tl->n_anc = w.n;
	tl->anc_more = w.more;
	tl->anc_len = w.len;
	tl->_pad2 = 0;
	exec_remember(b, BPF_CORE_READ(p, tgid), tl->exec_id, w.parent_exec_id, d, r->filename_len);
	size = EXEC_FIXED + end + LT_EXEC_TAIL_SIZE;
	if (!quiet)
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
	bool off = lt_off();

	if (off || lt_main_takes(LT_PROBE_EXEC, LT_MARK_EXEC, exec_id(p)))
		exec_event(p, BPF_CORE_READ(bprm, filename), BPF_CORE_READ(bprm, argc),
			   BPF_CORE_READ(bprm, file), EXEC_MAIN, off);
	lt_main_done(LT_MARK_EXEC);
	return 0;
}

/* The execs the kernel skipped lt_exec for (lt_mark in lt_takeover.bpf.h). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_exec_nest, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!lt_nest_takes(LT_MARK_EXEC, exec_id(p)))
		return 0;
	exec_event(p, BPF_CORE_READ(bprm, filename), BPF_CORE_READ(bprm, argc),
		   BPF_CORE_READ(bprm, file), EXEC_NEST, false);
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

	if (!lt_tp_takes(LT_MARK_EXEC, exec_id(p)))
		return 0;
	sp = BPF_CORE_READ(p, mm, start_stack);
	if (bpf_probe_read_user(&argc, sizeof(argc), (void *)sp) || argc > 0x7fffffff)
		argc = 0;
	exec_event(p, (const char *)e + (BPF_CORE_READ(e, __data_loc_filename) & 0xffff), argc,
		   BPF_CORE_READ(p, mm, exe_file), EXEC_TP, false);
	lt_count_recovered(LT_PROBE_EXEC);
	return 0;
}

/* A new process runs its parent's image until it execs: the parent's entry, copied. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lt_exec_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct lt_anc_stat *st;
	struct lt_proc *v;

	if (child->pid != ctgid)
		return 0; /* a thread */
	v = bpf_map_lookup_elem(&lt_procs, &ptgid);
	if (!v || bpf_map_update_elem(&lt_procs, &ctgid, v, BPF_ANY))
		return 0;
	st = anc_stat();
	if (st)
		__sync_fetch_and_add(&st->forks, 1);
	return 0;
}

/* A process's pid is free again when its leader is freed: its entry goes. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(lt_exec_free, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	struct lt_anc_stat *st;

	if (p->pid != tgid || bpf_map_delete_elem(&lt_procs, &tgid))
		return 0;
	st = anc_stat();
	if (st)
		__sync_fetch_and_add(&st->freed, 1);
	return 0;
}
