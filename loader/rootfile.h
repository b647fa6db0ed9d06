/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Files of a traced process, opened inside its root: a path as the process sees it never
 * leaves that root, whatever links it meets (absolute targets restart at the root, ".." stops
 * there). openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) where the kernel has it (5.6+),
 * else a walk of one component at a time that resolves links itself. Pure layer: no libbpf.
 */
#ifndef LT_ROOTFILE_H
#define LT_ROOTFILE_H

#include <stdint.h>
#include <sys/stat.h>

/* link hops one lookup may take, as the kernel's MAXSYMLINKS */
#define LT_ROOT_MAX_LINKS 40
/* directories deep the walk goes (it keeps one descriptor per level for "..") */
#define LT_ROOT_MAX_DEPTH 128

/*
 * Regular file `path` under directory rootfd (which acts as "/"), opened O_RDONLY, O_CLOEXEC,
 * O_NONBLOCK; its status in *st. The fd, or -errno: -ELOOP (too many links, or a magic link),
 * -EINVAL (not a regular file), -ENOENT, ...
 */
int lt_root_open(int rootfd, const char *path, struct stat *st);

/*
 * The same lookup by the walk alone (what kernels before 5.6 get): an O_PATH descriptor of
 * whatever path names inside rootfd, or -errno. For tests, which compare it with openat2.
 */
int lt_root_walk(int rootfd, const char *path);

/* lt_root_open's lookup by openat2 alone: an O_PATH descriptor, or -errno (-ENOSYS: no openat2) */
int lt_root_openat2(int rootfd, const char *path);

/* The root of process pid (/proc/PID/root) as a directory descriptor, or -errno. */
int lt_proc_root(uint32_t pid);

#endif
