// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Files of a traced process, opened inside its root (/proc/PID/root). A path through
 * /proc/PID/root is resolved by the kernel with OUR root for absolute links: a process whose
 * /tmp is a link to "/root/secret" would make us read the host's /root/secret. Here every
 * lookup stays under the process's root: openat2(RESOLVE_IN_ROOT) on 5.6+, else a walk that
 * does what it does, one component at a time with O_PATH | O_NOFOLLOW.
 */
#define _GNU_SOURCE /* strchrnul, O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rootfile.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* a rename racing a lookup makes RESOLVE_IN_ROOT answer EAGAIN: try again, a few times */
#define OPENAT2_TRIES 8

int lt_root_openat2(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = -1;

	for (int i = 0; i < OPENAT2_TRIES; i++) {
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd < 0 ? -errno : (int)fd;
}

static void pop_to(int *dirs, int *depth, int to)
{
	while (*depth > to)
		close(dirs[(*depth)--]);
}

/*
 * The kernel's RESOLVE_IN_ROOT by hand: dirs[] holds the directories walked from the root
 * (dirs[0]), so ".." pops one (never past the root) instead of asking the file system, which
 * could lead out of the root; a link's target replaces it in the path left to walk, from the
 * root when absolute. Links on procfs (the magic ones among them) are refused.
 */
int lt_root_walk(int rootfd, const char *path)
{
	int dirs[LT_ROOT_MAX_DEPTH + 1], depth = 0, links = 0, ret, fd;
	char rest[2 * PATH_MAX], link[PATH_MAX], comp[NAME_MAX + 1];
	char *p = rest;
	size_t plen = strnlen(path, PATH_MAX);

	if (plen >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(rest, path, plen + 1);
	dirs[0] = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirs[0] < 0)
		return -errno;
	for (;;) {
		struct statfs sfs;
		struct stat st;
		char *e;
		bool slash;
		ssize_t n;
		size_t len, rl;

		while (*p == '/')
			p++;
		if (!*p) {
			ret = fcntl(dirs[depth], F_DUPFD_CLOEXEC, 0);
			ret = ret < 0 ? -errno : ret;
			break;
		}
		e = strchrnul(p, '/');
		len = (size_t)(e - p);
		if (len > NAME_MAX) {
			ret = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, len);
		comp[len] = 0;
		slash = *e == '/';
		p = e;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			pop_to(dirs, &depth, depth ? depth - 1 : 0);
			continue;
		}
		fd = openat(dirs[depth], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		if (fstat(fd, &st)) {
			ret = -errno;
			close(fd);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth == LT_ROOT_MAX_DEPTH) {
				close(fd);
				ret = -ENAMETOOLONG;
				break;
			}
			dirs[++depth] = fd;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			if (slash) { /* "file/..." */
				close(fd);
				ret = -ENOTDIR;
				break;
			}
			ret = fd;
			break;
		}
		if (++links > LT_ROOT_MAX_LINKS || fstatfs(fd, &sfs) ||
		    sfs.f_type == PROC_SUPER_MAGIC) {
			close(fd);
			ret = -ELOOP;
			break;
		}
		n = readlinkat(fd, "", link, sizeof(link));
		close(fd);
		if (n <= 0 || (size_t)n >= sizeof(link)) {
			ret = n < 0 ? -errno : n ? -ENAMETOOLONG : -ENOENT;
			break;
		}
		/* the target, then what was left: "target/rest" ("target" at the end) */
		rl = strlen(p);
		if ((size_t)n + 1 + rl + 1 > sizeof(rest)) {
			ret = -ENAMETOOLONG;
			break;
		}
		memmove(rest + n + !!rl, p, rl + 1);
		memcpy(rest, link, (size_t)n);
		if (rl)
			rest[n] = '/';
		p = rest;
		if (link[0] == '/')
			pop_to(dirs, &depth, 0);
	}
	pop_to(dirs, &depth, 0);
	close(dirs[0]);
	return ret;
}

int lt_root_open(int rootfd, const char *path, struct stat *st)
{
	char self[40];
	struct stat st2;
	int pfd, fd;

	pfd = lt_root_openat2(rootfd, path);
	/* before 5.6; or a seccomp filter that does not know it (older ones answer EPERM) */
	if (pfd == -ENOSYS || pfd == -EPERM)
		pfd = lt_root_walk(rootfd, path);
	if (pfd < 0)
		return pfd;
	/* only a regular file: opening a FIFO or a device may block or have effects */
	if (fstat(pfd, st) || !S_ISREG(st->st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	/* the very inode found, reopened for reading */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	close(pfd);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st2) || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino) {
		close(fd);
		return -ESTALE;
	}
	*st = st2;
	return fd;
}

int lt_proc_root(uint32_t pid)
{
	char p[40];
	int fd;

	snprintf(p, sizeof(p), "/proc/%u/root", pid);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
