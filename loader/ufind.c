// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where to put a uprobe on a function of a running process (alloc): the file that defines it,
 * searched in the order the dynamic linker binds, and a path the loader can attach through.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "grow.h"
#include "sym_int.h"

enum { CLASS_EXE, CLASS_LIB, CLASS_LIBC, CLASS_LDSO, NCLASS };

/* libc last (an LD_PRELOADed or linked allocator wins), the dynamic linker after it */
static int lib_class(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc.musl-", 10) ||
	    !strncmp(b, "ld-musl-", 8) || (!strncmp(b, "libc-", 5) && strstr(b, ".so")))
		return CLASS_LIBC;
	if (!strncmp(b, "ld-linux", 8) || !strncmp(b, "ld.so", 5) || !strncmp(b, "ld64.so", 7) ||
	    (!strncmp(b, "ld-", 3) && isdigit((unsigned char)b[3])))
		return CLASS_LDSO;
	return CLASS_LIB;
}

struct cand {
	struct maps_line m;
	char open_path[PATH_BUF]; /* /proc/PID/map_files/RANGE, "" when opened inside the root */
	struct ident id;
	bool can_open;
	int cls;
};

static bool same_file(const char *path, const struct ident *id)
{
	struct stat st;

	return !stat(path, &st) && st.st_dev == id->dev && st.st_ino == id->ino;
}

/* the path the loader should name: the plain path if it is the same file, else a /proc one */
static int loader_path(uint32_t pid, const struct cand *c, char *out, size_t len)
{
	char root[PATH_BUF];
	const char *p = c->m.path;
	int n;

	/* the kernel attaches to the inode: any path to the very inode found will do */
	if (c->can_open && !same_file(c->m.path, &c->id)) {
		n = snprintf(root, sizeof(root), "/proc/%u/root%s", pid, c->m.path);
		p = n > 0 && (size_t)n < sizeof(root) && same_file(root, &c->id) ? root
										 : c->open_path;
		if (!*p)
			return -ENOENT;
	}
	n = snprintf(out, len, "%s", p);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * Look for `name` in a candidate: 0 and *off, or not found. A map_files entry that cannot be
 * opened sets *vanished: the mapping went away since the maps were read (the process exec'd
 * or unmapped it). The file is searched through the fd opened here, so an exec after the open
 * cannot swap it (without address randomization the new image may map a file at the same range).
 */
static int find_in(uint32_t pid, const struct cand *c, const char *name, uint64_t *off,
		   bool *vanished)
{
	char fdpath[32], mf[PATH_BUF];
	struct ident id;
	int fd, err;

	/* never by the path as we see it: that may be another file, outside the process's root */
	if (!c->can_open)
		return -ENOENT;
	fd = map_file_open(pid, &c->m, &id, mf, sizeof(mf));
	/* found by map_files before and not now: the mapping is gone, whatever the path holds */
	if (fd < 0 || id.dev != c->id.dev || id.ino != c->id.ino || (*c->open_path && !*mf)) {
		if (fd >= 0)
			close(fd);
		*vanished = true;
		return -ENOENT;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	err = lt_elf_find_func(fdpath, name, off);
	close(fd);
	return err;
}

int lt_proc_find_func(uint32_t pid, const char *name, char *path, size_t path_len, uint64_t *off)
{
	char p[64], *buf, *cur, *line;
	struct cand *cands = NULL;
	size_t n = 0, cap = 0;
	struct stat exe;
	bool have_exe, starting = true, vanished = false;
	int err = -ENOENT, fallback = -1, fd;

	lib_init();
	if (path && path_len)
		path[0] = 0;
	if (!name || !*name || !path || !path_len || !off)
		return -EINVAL;
	if (!pid)
		return -ESRCH;
	snprintf(p, sizeof(p), "/proc/%u/maps", pid);
	buf = read_all(p);
	if (!buf)
		return proc_err(errno);
	snprintf(p, sizeof(p), "/proc/%u/exe", pid);
	have_exe = !stat(p, &exe);
	cur = buf;
	/* distinct files with an executable mapping, in maps order */
	while ((line = next_line(&cur))) {
		struct maps_line m;
		struct cand *c;
		bool dup = false;

		if (!parse_maps_line(line, &m) || m.perms[2] != 'x' || m.path[0] != '/')
			continue;
		for (size_t i = 0; i < n && !dup; i++)
			dup = cands[i].m.ino == m.ino && cands[i].m.maj == m.maj &&
			      cands[i].m.min == m.min && !strcmp(cands[i].m.path, m.path);
		if (dup)
			continue;
		if (LT_GROW(cands, cap, n + 1)) {
			err = -ENOMEM;
			goto out;
		}
		c = &cands[n++];
		c->m = m;
		fd = map_file_open(pid, &m, &c->id, c->open_path, sizeof(c->open_path));
		c->can_open = fd >= 0;
		if (fd >= 0)
			close(fd);
		if (have_exe && (c->can_open ? c->id.dev == exe.st_dev && c->id.ino == exe.st_ino
					     : m.ino == exe.st_ino))
			c->cls = CLASS_EXE;
		else
			c->cls = lib_class(m.path);
	}
	for (int cls = 0; cls < NCLASS; cls++) {
		for (size_t i = 0; i < n; i++) {
			struct cand *c = &cands[i];

			if (c->cls != cls)
				continue;
			if ((cls == CLASS_LIBC && (fallback < 0 || cands[fallback].cls != cls)) ||
			    (cls == CLASS_EXE && fallback < 0))
				fallback = (int)i;
			if (find_in(pid, c, name, off, &vanished))
				continue;
			err = loader_path(pid, c, path, path_len);
			goto out;
		}
	}
	/* not found: name the library the caller expected it in */
	if (fallback >= 0 && loader_path(pid, &cands[fallback], path, path_len))
		path[0] = 0;
	/*
	 * a dynamic executable with no libc mapped: exec or ld.so has not finished. ld.so maps an
	 * LD_PRELOAD before the program's own libraries, so a library alone proves nothing
	 */
	for (size_t i = 0; i < n && starting; i++)
		starting = cands[i].cls != CLASS_LIBC;
	/* p still names /proc/PID/exe */
	if (starting && have_exe && elf_has_interp(p))
		err = -EAGAIN;
	/* a mapping vanished before it was read: the process exec'd (e.g. a shell's child
	 * between its redirections and the exec of its program) or unmapped it; "not found"
	 * says nothing yet */
	if (vanished)
		err = -EAGAIN;
out:
	/* the strings of m point into buf */
	free(cands);
	free(buf);
	return err;
}
