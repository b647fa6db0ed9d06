// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * priv: one record per privileged operation, at its return: ptrace attach, seize and traceme;
 * mount and umount; the bpf(2) commands that make or attach something (not the lookups a
 * consumer makes by the thousand); a module loaded or removed; unshare and setns (the
 * syscall-set hooks of lt_sysset.bpf.h); and a fileless exec: of a memfd or of a deleted file
 * (sched_process_exec).
 */
#include "lt_common.bpf.h"
#include "lt_record.bpf.h"
#include "lt_sysset.bpf.h"

#define PTRACE_TRACEME_ 0
#define PTRACE_ATTACH_ 16
#define PTRACE_SEIZE_ 0x4206

static __always_inline __u32 priv_op(long nr)
{
	switch (nr) {
	case LT_NR_ptrace:
		return LT_PRIV_PTRACE;
	case LT_NR_mount:
		return LT_PRIV_MOUNT;
	case LT_NR_umount2:
		return LT_PRIV_UMOUNT;
	case LT_NR_bpf:
		return LT_PRIV_BPF;
	case LT_NR_init_module:
	case LT_NR_finit_module:
		return LT_PRIV_MODULE_LOAD;
	case LT_NR_delete_module:
		return LT_PRIV_MODULE_UNLOAD;
	case LT_NR_unshare:
		return LT_PRIV_UNSHARE;
	case LT_NR_setns:
		return LT_PRIV_SETNS;
	}
	return 0;
}

static __always_inline void priv_enter(long nr, __u32 op, __u64 a0, __u64 a1, __u64 a2, __u64 a3,
				       __u64 a4)
{
	struct lt_sysset_args *s;

	/* of ptrace, the calls that start tracing; of bpf, those that make or attach */
	if (op == LT_PRIV_PTRACE && a0 != PTRACE_ATTACH_ && a0 != PTRACE_SEIZE_ &&
	    a0 != PTRACE_TRACEME_)
		return;
	if (op == LT_PRIV_BPF && (a0 >= 64 || !((LT_PRIV_BPF_CMDS >> a0) & 1)))
		return;
	s = lt_sysset_keep(LT_PROBE_PRIV, nr, op, a0, a1, a2, a3, a4);
	if (s)
		s->name[0] = 0;
}

/* a user string into dst (LT_PRIV_* cut flag `trunc`): its length */
static __always_inline __u16 priv_str(char *dst, __u32 size, __u64 src, __u8 *rflags, __u8 trunc)
{
	long n;

	dst[0] = 0;
	if (!src)
		return 0;
	n = bpf_probe_read_user_str(dst, size, (const void *)src);
	if (n <= 0) {
		dst[0] = 0;
		return 0;
	}
	if (n == size)
		*rflags |= trunc;
	return n - 1;
}

/* a kernel string alike */
static __always_inline __u16 priv_str_k(char *dst, __u32 size, const char *src, __u8 *rflags,
					__u8 trunc)
{
	long n = bpf_probe_read_kernel_str(dst, size, src);

	if (n <= 0) {
		dst[0] = 0;
		return 0;
	}
	if (n == size)
		*rflags |= trunc;
	return n - 1;
}

/* a u32 of the caller's union bpf_attr at `off`, if its size covers it */
static __always_inline __u32 attr_u32(__u64 attr, __u64 size, __u32 off)
{
	__u32 v = 0;

	if (off + 4 <= size)
		bpf_probe_read_user(&v, 4, (const void *)(attr + off));
	return v;
}

#define ATTR_OFF(m) __builtin_offsetof(union bpf_attr, m)

static __always_inline void priv_bpf(struct lt_priv *r, const __u64 *a)
{
	__u64 attr = a[1], size = a[2], p = 0;

	r->bpf_cmd = a[0];
	switch (a[0]) {
	case BPF_MAP_CREATE:
		r->bpf_type = attr_u32(attr, size, ATTR_OFF(map_type));
		if (ATTR_OFF(map_name) + 16 <= size)
			bpf_probe_read_user(r->name, 16, (const void *)(attr + ATTR_OFF(map_name)));
		break;
	case BPF_PROG_LOAD:
		r->bpf_type = attr_u32(attr, size, ATTR_OFF(prog_type));
		if (ATTR_OFF(prog_name) + 16 <= size)
			bpf_probe_read_user(r->name, 16,
					    (const void *)(attr + ATTR_OFF(prog_name)));
		break;
	case BPF_PROG_ATTACH:
	case BPF_PROG_DETACH:
		r->bpf_type = attr_u32(attr, size, ATTR_OFF(attach_type));
		break;
	case BPF_LINK_CREATE:
		r->bpf_type = attr_u32(attr, size, ATTR_OFF(link_create.attach_type));
		break;
	case BPF_RAW_TRACEPOINT_OPEN:
		/* the tracepoint's name */
		if (ATTR_OFF(raw_tracepoint.name) + 8 <= size)
			bpf_probe_read_user(&p, 8,
					    (const void *)(attr + ATTR_OFF(raw_tracepoint.name)));
		priv_str(r->name, sizeof(r->name), p, &r->rflags, 0);
		break;
	case BPF_OBJ_PIN:
		/* where it is pinned */
		if (ATTR_OFF(pathname) + 8 <= size)
			bpf_probe_read_user(&p, 8, (const void *)(attr + ATTR_OFF(pathname)));
		r->target_len =
			priv_str(r->target, sizeof(r->target), p, &r->rflags, LT_PRIV_TARGET_TRUNC);
		break;
	}
	r->name[sizeof(r->name) - 1] = 0;
}

static __always_inline struct lt_priv *priv_new(long nr, __u32 op, long ret)
{
	struct lt_priv *r = lt_reserve(LT_PROBE_PRIV, LT_TYPE_PRIV, sizeof(*r));

	if (!r)
		return NULL;
	r->ret = ret;
	r->flags = 0;
	r->request = 0;
	r->target_pid = 0;
	r->fd = -1;
	r->bpf_cmd = 0;
	r->bpf_type = 0;
	r->syscall = nr;
	r->source_len = r->target_len = 0;
	r->op = op;
	r->rflags = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->name[0] = r->fstype[0] = r->source[0] = r->target[0] = 0;
	return r;
}

static __always_inline void priv_exit(long nr, long ret)
{
	struct lt_sysset_args *s = lt_sysset_get(nr);
	struct task_struct *t;
	struct lt_priv *r;
	long n;

	if (!s)
		return;
	r = priv_new(nr, s->op, ret);
	if (!r) {
		lt_sysset_done(s);
		return;
	}
	switch (s->op) {
	case LT_PRIV_PTRACE:
		r->request = s->a[0];
		r->target_pid = s->a[1];
		if (s->a[0] == PTRACE_TRACEME_) {
			/* the tracer: the parent */
			t = (struct task_struct *)bpf_get_current_task();
			r->target_pid = BPF_CORE_READ(t, real_parent, tgid);
		}
		break;
	case LT_PRIV_MOUNT:
		r->source_len = priv_str(r->source, sizeof(r->source), s->a[0], &r->rflags,
					 LT_PRIV_SOURCE_TRUNC);
		r->target_len = priv_str(r->target, sizeof(r->target), s->a[1], &r->rflags,
					 LT_PRIV_TARGET_TRUNC);
		priv_str(r->fstype, sizeof(r->fstype), s->a[2], &r->rflags, LT_PRIV_FSTYPE_TRUNC);
		r->flags = s->a[3];
		break;
	case LT_PRIV_UMOUNT:
		r->target_len = priv_str(r->target, sizeof(r->target), s->a[0], &r->rflags,
					 LT_PRIV_TARGET_TRUNC);
		r->flags = s->a[1];
		break;
	case LT_PRIV_BPF:
		priv_bpf(r, s->a);
		break;
	case LT_PRIV_MODULE_LOAD:
		/* the module's own name, if the load got as far as module_load */
		bpf_probe_read_kernel_str(r->name, sizeof(r->name), s->name);
		if (nr == LT_NR_finit_module) {
			r->fd = s->a[0];
			r->flags = s->a[2];
			if (!r->name[0]) {
				/* else the file's */
				n = lt_file_name(lt_fd_file(r->fd), r->name, sizeof(r->name));
				if (n > 0)
					r->rflags |= LT_PRIV_NAME_FROM_FD;
				else
					r->name[0] = 0;
			}
		}
		break;
	case LT_PRIV_MODULE_UNLOAD:
		priv_str(r->name, sizeof(r->name), s->a[0], &r->rflags, 0);
		r->flags = s->a[1];
		break;
	case LT_PRIV_UNSHARE:
		r->flags = s->a[0];
		break;
	case LT_PRIV_SETNS:
		r->fd = s->a[0];
		r->flags = s->a[1];
		break;
	}
	lt_sysset_done(s);
	lt_sysset_count(LT_PROBE_PRIV, r->op);
	lt_submit(LT_PROBE_PRIV, r);
}

LT_SYSSET_PROGS(priv, ptrace, priv_op, priv_enter, priv_exit)

/* A module's name, for the init_module or finit_module call it is loaded by. */
SEC("tp_btf/module_load")
int BPF_PROG(lt_priv_mod, struct module *mod)
{
	struct lt_sysset_args *s = lt_task_get(&lt_sys_args, lt_current(), lt_current_tid());

	if (s && s->live && s->op == LT_PRIV_MODULE_LOAD)
		bpf_probe_read_kernel_str(s->name, sizeof(s->name), mod->name);
	return 0;
}

/* An exec of a file with no name left: a memfd (memfd_create), or a file deleted since. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_priv_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct file *f = bprm->file;
	struct lt_priv *r;
	long n;

	if (BPF_CORE_READ(f, f_inode, i_nlink) || lt_skip_current())
		return 0;
	r = priv_new(0, LT_PRIV_FILELESS_EXEC, 0);
	if (!r)
		return 0;
	n = lt_file_name(f, r->name, sizeof(r->name));
	if (n <= 0)
		r->name[0] = 0;
	/* memfd_create names its files "memfd:NAME" */
	if (n > 6 && r->name[0] == 'm' && r->name[1] == 'e' && r->name[2] == 'm' &&
	    r->name[3] == 'f' && r->name[4] == 'd' && r->name[5] == ':')
		r->rflags |= LT_PRIV_MEMFD;
	r->source_len = priv_str_k(r->source, sizeof(r->source), BPF_CORE_READ(bprm, filename),
				   &r->rflags, LT_PRIV_SOURCE_TRUNC);
	lt_sysset_count(LT_PROBE_PRIV, r->op);
	lt_submit(LT_PROBE_PRIV, r);
	return 0;
}
