// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cred: one record per call of the setuid family, setgroups or capset (changed or not, with
 * the result), and one per exec that changed the credentials (a setuid or setgid binary, file
 * capabilities). The credentials are read at the syscall's entry and at its return, both of
 * the calling thread (lt_sysset.bpf.h has the hooks); an execve's return is in the new image.
 */
#include "lt_common.bpf.h"
#include "lt_record.bpf.h"
#include "lt_sysset.bpf.h"

static __always_inline __u32 cred_op(long nr)
{
	switch (nr) {
	case LT_NR_setuid:
		return LT_CRED_SETUID;
	case LT_NR_setgid:
		return LT_CRED_SETGID;
	case LT_NR_setreuid:
		return LT_CRED_SETREUID;
	case LT_NR_setregid:
		return LT_CRED_SETREGID;
	case LT_NR_setresuid:
		return LT_CRED_SETRESUID;
	case LT_NR_setresgid:
		return LT_CRED_SETRESGID;
	case LT_NR_setfsuid:
		return LT_CRED_SETFSUID;
	case LT_NR_setfsgid:
		return LT_CRED_SETFSGID;
	case LT_NR_setgroups:
		return LT_CRED_SETGROUPS;
	case LT_NR_capset:
		return LT_CRED_CAPSET;
	case LT_NR_execve:
	case LT_NR_execveat:
		return LT_CRED_EXEC;
	}
	return 0;
}

/*
 * The current task's credentials. uid .. fsgid are eight consecutive ids in struct cred on
 * every kernel, as in struct lt_creds; a capability set is 8 bytes whether the kernel has it
 * as one u64 (6.3+) or as two u32 (before), little-endian alike.
 */
static __always_inline void cred_read(struct lt_creds *c)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	const struct cred *cr = BPF_CORE_READ(t, cred);

	bpf_probe_read_kernel(c, 32, __builtin_preserve_access_index(&cr->uid));
	bpf_probe_read_kernel(&c->cap_effective, 8,
			      __builtin_preserve_access_index(&cr->cap_effective));
	bpf_probe_read_kernel(&c->cap_permitted, 8,
			      __builtin_preserve_access_index(&cr->cap_permitted));
}

static __always_inline void cred_enter(long nr, __u32 op, __u64 a0, __u64 a1, __u64 a2, __u64 a3,
				       __u64 a4)
{
	struct lt_sysset_args *s = lt_sysset_keep(LT_PROBE_CRED, nr, op, a0, a1, a2, a3, a4);

	if (s)
		cred_read(&s->old);
}

static __always_inline bool cred_same(const struct lt_creds *a, const struct lt_creds *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4] &&
	       x[5] == y[5];
}
_Static_assert(sizeof(struct lt_creds) == 48, "cred_same compares 6 u64");

static __always_inline void cred_exit(long nr, long ret)
{
	struct lt_sysset_args *s = lt_sysset_get(nr);
	struct lt_creds now;
	struct lt_cred *r;

	if (!s)
		return;
	cred_read(&now);
	/* an exec is a record only when it changed them */
	if (s->op == LT_CRED_EXEC && (ret || cred_same(&s->old, &now))) {
		lt_sysset_done(s);
		return;
	}
	r = lt_reserve(LT_PROBE_CRED, LT_TYPE_CRED, sizeof(*r));
	if (!r) {
		lt_sysset_done(s);
		return;
	}
	r->ret = ret;
	r->syscall = nr;
	r->op = s->op;
	r->_pad0 = 0;
	r->old = s->old;
	r->new = now;
	lt_sysset_done(s);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	lt_sysset_count(LT_PROBE_CRED, r->op);
	lt_submit(LT_PROBE_CRED, r);
}

LT_SYSSET_PROGS(cred, setuid, cred_op, cred_enter, cred_exit)
