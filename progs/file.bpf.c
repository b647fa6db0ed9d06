// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * file: one record per call that changes a file by name: unlink, rename, chmod, chown, link,
 * symlink, truncate, mkdir, rmdir, in each of their syscalls (lt_sysset.bpf.h has the hooks).
 * Paths are the caller's, read at the return; a call on an open file (fchmod, fchown,
 * ftruncate, AT_EMPTY_PATH) names the file by its last component, from the kernel.
 */
#include "lt_common.bpf.h"
#include "lt_record.bpf.h"
#include "lt_sysset.bpf.h"

#define AT_FDCWD_ (-100)
#define AT_REMOVEDIR_ 0x200
#define AT_EMPTY_PATH_ 0x1000
#define AT_SYMLINK_NOFOLLOW_ 0x100
/* in every architecture's table since 6.6; the build's headers may predate it */
#ifndef LT_NR_fchmodat2
#define LT_NR_fchmodat2 452
#endif

/* the op of syscall `nr`, 0: none of file's (unlinkat's op depends on its flags: unlink here) */
static __always_inline __u32 file_op(long nr)
{
	switch (nr) {
#ifdef LT_NR_unlink
	case LT_NR_unlink:
#endif
	case LT_NR_unlinkat:
		return LT_FILE_UNLINK;
#ifdef LT_NR_rename
	case LT_NR_rename:
#endif
#ifdef LT_NR_renameat
	case LT_NR_renameat:
#endif
	case LT_NR_renameat2:
		return LT_FILE_RENAME;
#ifdef LT_NR_chmod
	case LT_NR_chmod:
#endif
	case LT_NR_fchmod:
	case LT_NR_fchmodat:
	case LT_NR_fchmodat2:
		return LT_FILE_CHMOD;
#ifdef LT_NR_chown
	case LT_NR_chown:
#endif
#ifdef LT_NR_lchown
	case LT_NR_lchown:
#endif
	case LT_NR_fchown:
	case LT_NR_fchownat:
		return LT_FILE_CHOWN;
#ifdef LT_NR_link
	case LT_NR_link:
#endif
	case LT_NR_linkat:
		return LT_FILE_LINK;
#ifdef LT_NR_symlink
	case LT_NR_symlink:
#endif
	case LT_NR_symlinkat:
		return LT_FILE_SYMLINK;
	case LT_NR_truncate:
	case LT_NR_ftruncate:
		return LT_FILE_TRUNCATE;
#ifdef LT_NR_mkdir
	case LT_NR_mkdir:
#endif
	case LT_NR_mkdirat:
		return LT_FILE_MKDIR;
#ifdef LT_NR_rmdir
	case LT_NR_rmdir:
		return LT_FILE_RMDIR;
#endif
	}
	return 0;
}

static __always_inline void file_enter(long nr, __u32 op, __u64 a0, __u64 a1, __u64 a2, __u64 a3,
				       __u64 a4)
{
	lt_sysset_keep(LT_PROBE_FILE, nr, op, a0, a1, a2, a3, a4);
}

/* The arguments, as the call's syscall has them: dfd, path, new_dfd, new_path, the rest. */
struct file_call {
	__s64 dfd, new_dfd;
	__u64 path, new_path;
	__u32 mode, uid, gid, flags;
	__u64 length;
	bool by_fd; /* dfd is the file itself */
};

static __always_inline void file_args(long nr, const __u64 *a, struct file_call *c)
{
	c->dfd = c->new_dfd = AT_FDCWD_;
	switch (nr) {
#ifdef LT_NR_unlink
	case LT_NR_unlink:
#endif
#ifdef LT_NR_rmdir
	case LT_NR_rmdir:
#endif
#if defined(LT_NR_unlink) || defined(LT_NR_rmdir)
		c->path = a[0];
		break;
#endif
	case LT_NR_unlinkat:
		c->dfd = a[0], c->path = a[1], c->flags = a[2];
		break;
#ifdef LT_NR_rename
	case LT_NR_rename:
#endif
#ifdef LT_NR_link
	case LT_NR_link:
#endif
#ifdef LT_NR_symlink
	case LT_NR_symlink:
#endif
#if defined(LT_NR_rename) || defined(LT_NR_link) || defined(LT_NR_symlink)
		c->path = a[0], c->new_path = a[1];
		break;
#endif
#ifdef LT_NR_renameat
	case LT_NR_renameat:
#endif
	case LT_NR_renameat2:
	case LT_NR_linkat:
		c->dfd = a[0], c->path = a[1], c->new_dfd = a[2], c->new_path = a[3];
		c->flags = nr == LT_NR_renameat2 || nr == LT_NR_linkat ? a[4] : 0;
		break;
	case LT_NR_symlinkat:
		c->path = a[0], c->new_dfd = a[1], c->new_path = a[2];
		break;
#ifdef LT_NR_chmod
	case LT_NR_chmod:
#endif
#ifdef LT_NR_mkdir
	case LT_NR_mkdir:
#endif
#if defined(LT_NR_chmod) || defined(LT_NR_mkdir)
		c->path = a[0], c->mode = a[1];
		break;
#endif
	case LT_NR_fchmod:
		c->dfd = a[0], c->mode = a[1], c->by_fd = true;
		break;
	case LT_NR_fchmodat:
	case LT_NR_fchmodat2:
	case LT_NR_mkdirat:
		c->dfd = a[0], c->path = a[1], c->mode = a[2];
		c->flags = nr == LT_NR_fchmodat2 ? a[3] : 0;
		break;
#ifdef LT_NR_chown
	case LT_NR_chown:
#endif
#ifdef LT_NR_lchown
	case LT_NR_lchown:
#endif
#if defined(LT_NR_chown) || defined(LT_NR_lchown)
		c->path = a[0], c->uid = a[1], c->gid = a[2];
		break;
#endif
	case LT_NR_fchown:
		c->dfd = a[0], c->uid = a[1], c->gid = a[2], c->by_fd = true;
		break;
	case LT_NR_fchownat:
		c->dfd = a[0], c->path = a[1], c->uid = a[2], c->gid = a[3], c->flags = a[4];
		break;
	case LT_NR_truncate:
		c->path = a[0], c->length = a[1];
		break;
	case LT_NR_ftruncate:
		c->dfd = a[0], c->length = a[1], c->by_fd = true;
		break;
	}
#ifdef LT_NR_lchown
	if (nr == LT_NR_lchown)
		c->flags = AT_SYMLINK_NOFOLLOW_;
#endif
}

/* a path argument into dst: its length; the flags say cut or unreadable */
static __always_inline __u16 file_path(char *dst, __u64 src, __u8 *rflags, __u8 trunc, __u8 fault)
{
	long n = bpf_probe_read_user_str(dst, LT_PATH_MAX, (const void *)src);

	if (n <= 0) {
		dst[0] = 0;
		*rflags |= fault;
		return 0;
	}
	if (n == LT_PATH_MAX)
		*rflags |= trunc;
	return n - 1;
}

static __always_inline void file_exit(long nr, long ret)
{
	struct lt_sysset_args *s = lt_sysset_get(nr);
	struct file_call c = {};
	struct lt_file *r;
	long n;

	if (!s)
		return;
	file_args(nr, s->a, &c);
	r = lt_reserve(LT_PROBE_FILE, LT_TYPE_FILE, sizeof(*r));
	if (!r) {
		lt_sysset_done(s);
		return;
	}
	r->ret = ret;
	r->op = s->op;
	if (r->op == LT_FILE_UNLINK && (c.flags & AT_REMOVEDIR_))
		r->op = LT_FILE_RMDIR;
	r->syscall = nr;
	r->dfd = c.dfd;
	r->new_dfd = c.new_dfd;
	r->mode = c.mode;
	r->owner_uid = c.uid;
	r->owner_gid = c.gid;
	r->flags = c.flags;
	r->length = c.length;
	r->rflags = 0;
	r->_pad0 = 0;
	lt_sysset_done(s);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->path_len = 0;
	r->path[0] = 0;
	if (!c.by_fd && c.path)
		r->path_len = file_path(r->path, c.path, &r->rflags, LT_FILE_PATH_TRUNC,
					LT_FILE_PATH_FAULT);
	/* the file itself: fchmod and the like, or an empty path with AT_EMPTY_PATH */
	if (c.by_fd || (!r->path_len && (c.flags & AT_EMPTY_PATH_))) {
		n = lt_file_name(lt_fd_file(c.dfd), r->path, sizeof(r->path));
		r->path_len = n > 0 ? n - 1 : 0;
		r->rflags = (r->rflags & ~LT_FILE_PATH_FAULT) | LT_FILE_PATH_FD;
		if (n <= 0)
			r->path[0] = 0;
	}
	r->new_path_len = 0;
	r->new_path[0] = 0;
	if (c.new_path)
		r->new_path_len = file_path(r->new_path, c.new_path, &r->rflags, LT_FILE_NEW_TRUNC,
					    LT_FILE_NEW_FAULT);
	lt_sysset_count(LT_PROBE_FILE, r->op);
	lt_submit(LT_PROBE_FILE, r);
}

LT_SYSSET_PROGS(file, unlinkat, file_op, file_enter, file_exit)
