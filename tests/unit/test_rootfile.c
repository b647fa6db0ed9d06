// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Files of a traced process opened inside its root (rootfile.c): a tree made here with hostile
 * links (absolute links to / and to a directory outside, ../.. escapes, loops, chains at and past
 * the hop limit, a FIFO, procfs links). The walk (kernels before 5.6) is run directly and must
 * find what openat2(RESOLVE_IN_ROOT) finds on this kernel, file for file and error for error,
 * and never anything outside the root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootfile.h"
#include "tap.h"

static char top[256], rootdir[300], outside[300];

static void put(const char *dir, const char *rel, const char *text)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void lnk(const char *target, const char *rel)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", rootdir, rel);
	if (symlink(target, p))
		perror(p);
}

static void mkd(const char *dir, const char *rel)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	mkdir(p, 0755);
}

/* the contents of an fd (O_PATH ones through /proc/self/fd), "" when unreadable */
static void contents(int fd, char *buf, size_t len)
{
	char self[40];
	ssize_t n;
	int r;

	buf[0] = 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	r = open(self, O_RDONLY | O_NONBLOCK);
	if (r < 0)
		return;
	n = read(r, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	close(r);
}

struct tcase {
	const char *path;
	const char *want; /* contents of the file found; NULL: an error */
	int err; /* the error wanted when want is NULL */
};

static void build(void)
{
	char p[1024], q[1100];

	mkd(rootdir, "");
	mkd(rootdir, "etc");
	mkd(rootdir, "dir");
	mkd(rootdir, "dir/deep");
	put(rootdir, "etc/file", "inside");
	mkd(outside, "");
	put(outside, "secret", "OUTSIDE");
	/* the outside directory's path also exists inside, with a decoy */
	mkd(rootdir, "tmp");
	snprintf(p, sizeof(p), "%s%s", rootdir, top);
	mkd(p, "");
	snprintf(q, sizeof(q), "%s/outside", p);
	mkd(q, "");
	put(q, "secret", "decoy");
	lnk("/", "abs_root");
	lnk("/", "dir/deep/abs_root");
	lnk("../../..", "up3");
	lnk("../../../../../../../../..", "dir/deep/up9");
	lnk(outside, "abs_out");
	lnk("../outside", "rel_out");
	lnk("../etc", "dir/sub");
	lnk("loop2", "loop1");
	lnk("loop1", "loop2");
	lnk("self", "self");
	lnk("/etc/file", "to_file");
	lnk("to_file", "to_to_file");
	lnk("/proc/self/root/etc/file", "via_proc");
	lnk("nowhere", "dangling");
	/* c0 -> c1 -> ... -> c40 -> /etc/file: 41 hops from c0, 40 from c1 */
	for (int i = 0; i <= 40; i++) {
		char t[32], n[32];

		snprintf(n, sizeof(n), "c%d", i);
		if (i == 40)
			snprintf(t, sizeof(t), "/etc/file");
		else
			snprintf(t, sizeof(t), "c%d", i + 1);
		lnk(t, n);
	}
	snprintf(p, sizeof(p), "%s/fifo", rootdir);
	mkfifo(p, 0600);
}

/* the same file, or the same error, from both lookups; and the one wanted */
static void check(int rootfd, const struct tcase *c, bool have_openat2)
{
	char got[64], got2[64];
	int w = lt_root_walk(rootfd, c->path);

	if (c->want) {
		if (w >= 0)
			contents(w, got, sizeof(got));
		ok(w >= 0 && !strcmp(got, c->want), "walk %s: %s (got %s)", c->path, c->want,
		   w >= 0 ? got : strerror(-w));
	} else {
		ok(w == -c->err, "walk %s: %s (got %s)", c->path, strerror(c->err),
		   w >= 0 ? "a file" : strerror(-w));
	}
	if (have_openat2) {
		int o = lt_root_openat2(rootfd, c->path);
		struct stat a, b;

		if (o >= 0 && w >= 0) {
			contents(o, got2, sizeof(got2));
			ok(!fstat(o, &a) && !fstat(w, &b) && a.st_dev == b.st_dev &&
				   a.st_ino == b.st_ino,
			   "openat2 %s: the same inode as the walk (%s)", c->path, got2);
		} else {
			ok(o == w, "openat2 %s: the same result as the walk (%s, %s)", c->path,
			   o >= 0 ? "a file" : strerror(-o), w >= 0 ? "a file" : strerror(-w));
		}
		if (o >= 0)
			close(o);
	}
	if (w >= 0)
		close(w);
}

/* openat2 answers ENOSYS from now on, as before 5.6 (a seccomp filter) */
static int no_openat2(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * lt_root_open where openat2 is missing: in a child whose openat2 answers ENOSYS, the file found
 * (its inode, or the error) for each path must be what it is here. A bit per path in the exit
 * status: the paths that differ.
 */
static void check_fallback(int rootfd, const char *const *paths, int n)
{
	struct stat want[32], st;
	int err[32], status = 255 << 8, bad = 0; /* no child: as if it could not start */
	pid_t pid;

	for (int i = 0; i < n; i++) {
		int fd = lt_root_open(rootfd, paths[i], &want[i]);

		err[i] = fd < 0 ? fd : 0;
		if (fd >= 0)
			close(fd);
	}
	pid = fork();
	if (!pid) {
		if (no_openat2() || lt_root_openat2(rootfd, "/etc/file") != -ENOSYS)
			_exit(255);
		for (int i = 0; i < n; i++) {
			int fd = lt_root_open(rootfd, paths[i], &st);

			if (fd < 0 ? fd != err[i]
				   : err[i] || st.st_ino != want[i].st_ino ||
					     st.st_dev != want[i].st_dev)
				bad |= 1 << i;
			if (fd >= 0)
				close(fd);
		}
		_exit(bad);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		   WEXITSTATUS(status) != 255,
	   "open without openat2: the child's openat2 answers ENOSYS");
	bad = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
	for (int i = 0; i < n && bad != 255; i++)
		ok(!(bad & (1 << i)), "open without openat2 %s: what openat2 finds (%s)", paths[i],
		   err[i] ? strerror(-err[i]) : "a file");
}

int main(void)
{
	char outsecret[PATH_MAX + 64], path[PATH_MAX + 64];
	const struct tcase cases[] = {
		{ "/etc/file", "inside", 0 },
		{ "etc/file", "inside", 0 },
		{ "/abs_root/etc/file", "inside", 0 },
		{ "/abs_root/abs_root/../../etc/file", "inside", 0 },
		{ "/up3/etc/file", "inside", 0 },
		{ "/dir/deep/up9/etc/file", "inside", 0 },
		{ "/../../../../etc/file", "inside", 0 },
		{ "/dir/sub/file", "inside", 0 },
		{ "/dir/sub/../etc/file", "inside", 0 },
		{ "/to_file", "inside", 0 },
		{ "/to_to_file", "inside", 0 },
		{ "/c1", "inside", 0 },
		{ "/c0", NULL, ELOOP },
		{ "/loop1", NULL, ELOOP },
		{ "/self/x", NULL, ELOOP },
		{ "/dangling", NULL, ENOENT },
		{ "/etc/file/x", NULL, ENOTDIR },
		{ "/via_proc", NULL, ENOENT },
		{ "/proc/self/root/etc/file", NULL, ENOENT },
		{ "/rel_out/secret", NULL, ENOENT },
		{ NULL, NULL, 0 }, /* abs_out/secret, set below */
		{ NULL, NULL, 0 }, /* the outside path written plainly */
	};
	struct tcase c[sizeof(cases) / sizeof(cases[0])];
	bool have_openat2;
	struct stat st;
	int rootfd, fd;

	snprintf(top, sizeof(top), "/tmp/lt-rootfile-XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(rootdir, sizeof(rootdir), "%s/root", top);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	build();
	memcpy(c, cases, sizeof(c));
	c[20] = (struct tcase){ "/abs_out/secret", "decoy", 0 };
	snprintf(outsecret, sizeof(outsecret), "%s/secret", outside);
	c[21] = (struct tcase){ outsecret, "decoy", 0 };
	rootfd = open(rootdir, O_PATH | O_DIRECTORY);
	fd = lt_root_openat2(rootfd, "/etc/file");
	have_openat2 = fd != -ENOSYS;
	printf("# openat2: %s\n", have_openat2 ? "yes, compared with the walk" : "no (ENOSYS)");
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		check(rootfd, &c[i], have_openat2);

	/* lt_root_open: regular files only, read through the fd it returns */
	fd = lt_root_open(rootfd, "/abs_root/up3/etc/file", &st);
	ok(fd >= 0 && S_ISREG(st.st_mode), "open: a regular file through links");
	if (fd >= 0) {
		char b[16] = "";

		ok(read(fd, b, sizeof(b) - 1) == 6 && !strcmp(b, "inside"), "open: readable");
		close(fd);
	}
	ok(lt_root_open(rootfd, "/fifo", &st) == -EINVAL, "open: a FIFO is refused, at once");
	ok(lt_root_open(rootfd, "/etc", &st) == -EINVAL, "open: a directory is refused");
	ok(lt_root_open(rootfd, "/abs_out/secret", &st) >= 0 && st.st_size == 5,
	   "open: the decoy inside, not the file outside");

	{
		static const char *const paths[] = {
			"/abs_root/up3/etc/file",
			"/dir/deep/up9/etc/file",
			"/abs_out/secret",
			"/rel_out/secret",
			"/loop1",
			"/c0",
			"/fifo",
			"/etc",
		};

		check_fallback(rootfd, paths, 8);
	}

	/* too long, too deep */
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = 0;
	ok(lt_root_walk(rootfd, path) == -ENAMETOOLONG, "walk: a path past PATH_MAX");
	path[0] = 0;
	for (int i = 0; i < LT_ROOT_MAX_DEPTH + 2; i++)
		strcat(path, "/dir/..");
	strcat(path, "/etc/file");
	fd = lt_root_walk(rootfd, path);
	ok(fd >= 0, "walk: down and up again %d times", LT_ROOT_MAX_DEPTH + 2);
	if (fd >= 0)
		close(fd);
	path[0] = 0;
	for (int i = 0; i < LT_ROOT_MAX_LINKS; i++)
		strcat(path, "/dir/deep/abs_root/etc/..");
	snprintf(outsecret, sizeof(outsecret), "%s/etc/file", path);
	fd = lt_root_walk(rootfd, outsecret);
	ok(fd >= 0, "walk: %d absolute links, each back at the root", LT_ROOT_MAX_LINKS);
	if (fd >= 0)
		close(fd);
	snprintf(outsecret, sizeof(outsecret), "%s/abs_root/etc/file", path);
	ok(lt_root_walk(rootfd, outsecret) == -ELOOP, "walk: one link more is too many");

	/* procfs links (the magic ones among them), seen from the real root */
	{
		int slash = open("/", O_PATH | O_DIRECTORY);
		int w, o;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", rootfd);
		w = lt_root_walk(slash, path);
		ok(w == -ELOOP, "walk %s: a magic link is refused (got %d)", path, w);
		if (have_openat2) {
			o = lt_root_openat2(slash, path);
			ok(o == -ELOOP, "openat2 %s: refused as well (got %d)", path, o);
		}
		close(slash);
	}

	close(rootfd);
	snprintf(path, sizeof(path), "rm -rf '%s'", top);
	if (system(path))
		printf("# could not remove %s\n", top);
	return tap_done();
}
