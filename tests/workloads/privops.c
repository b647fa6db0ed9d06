// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `privops OP [ARG...]`: one privileged operation through its own syscall, then a line
 * "OP RET" (RET: the syscall's result or -errno) for the tests of the cred and priv probes
 * to compare with their records:
 *   ids                      prints "ids RUID EUID SUID" (run as a setuid copy: the exec's change)
 *   setresuid R E S          setresuid(R, E, S)
 *   capset                   drops CAP_NET_RAW from the effective and permitted sets
 *   ptrace                   forks a child that sleeps, PTRACE_ATTACH to it, detaches, kills it;
 *                            prints "child PID" first
 *   traceme                  PTRACE_TRACEME (the parent, this process's, becomes the tracer)
 *   memfd-exec FILE [ARG...] copies FILE into a memfd named "lt-memfd" and execs it (fexecve)
 *   delete-module NAME       delete_module(NAME, O_NONBLOCK)
 *   finit-module FILE        finit_module on FILE (not a module: an error)
 *   setns FILE               setns(open(FILE), 0): FILE a /proc/PID/ns/... link
 *   unlink-fault             unlinkat(AT_FDCWD, an unreadable address, 0): -EFAULT
 *   gone-exec FILE [ARG...]  opens FILE, unlinks it, execs the open file (fexecve)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long ret(long r)
{
	return r < 0 ? -errno : r;
}

static int show(const char *op, long r)
{
	printf("%s %ld\n", op, r);
	fflush(stdout);
	return r < 0;
}

static int do_capset(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return show("capset", -errno);
	d[0].effective &= ~(1u << CAP_NET_RAW);
	d[0].permitted &= ~(1u << CAP_NET_RAW);
	return show("capset", ret(syscall(SYS_capset, &h, d)));
}

static int do_ptrace(void)
{
	pid_t child = fork();
	long r;
	int st;

	if (child < 0)
		return show("ptrace", -errno);
	if (!child) {
		pause();
		_exit(0);
	}
	printf("child %d\n", child);
	r = ret(syscall(SYS_ptrace, PTRACE_ATTACH, child, 0, 0));
	if (r == 0) {
		waitpid(child, &st, __WALL);
		syscall(SYS_ptrace, PTRACE_DETACH, child, 0, 0);
	}
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	return show("ptrace", r);
}

static int do_memfd_exec(char **argv)
{
	int in = open(argv[0], O_RDONLY | O_CLOEXEC);
	int fd = (int)syscall(SYS_memfd_create, "lt-memfd", 0);
	struct stat st;
	extern char **environ;

	if (in < 0 || fd < 0 || fstat(in, &st) ||
	    sendfile(fd, in, NULL, (size_t)st.st_size) != st.st_size)
		return show("memfd-exec", -errno);
	close(in);
	syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
	return show("memfd-exec", -errno);
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	uid_t r, e, s;

	if (!strcmp(op, "ids") && !getresuid(&r, &e, &s)) {
		printf("ids %u %u %u\n", r, e, s);
		return 0;
	}
	if (!strcmp(op, "setresuid") && argc == 5)
		return show(op, ret(syscall(SYS_setresuid, atoi(argv[2]), atoi(argv[3]),
					    atoi(argv[4]))));
	if (!strcmp(op, "capset"))
		return do_capset();
	if (!strcmp(op, "ptrace"))
		return do_ptrace();
	if (!strcmp(op, "traceme"))
		return show(op, ret(syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0)));
	if (!strcmp(op, "memfd-exec") && argc > 2)
		return do_memfd_exec(argv + 2);
	if (!strcmp(op, "delete-module") && argc == 3)
		return show(op, ret(syscall(SYS_delete_module, argv[2], O_NONBLOCK)));
	if (!strcmp(op, "finit-module") && argc == 3) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		printf("fd %d\n", fd);
		return show(op, ret(syscall(SYS_finit_module, fd, "", 0)));
	}
	if (!strcmp(op, "setns") && argc == 3) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		printf("fd %d\n", fd);
		return show(op, ret(syscall(SYS_setns, fd, 0)));
	}
	if (!strcmp(op, "gone-exec") && argc > 2) {
		extern char **environ;
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || unlink(argv[2]))
			return show(op, -errno);
		syscall(SYS_execveat, fd, "", argv + 2, environ, AT_EMPTY_PATH);
		return show(op, -errno);
	}
	if (!strcmp(op, "unlink-fault"))
		return show(op, ret(syscall(SYS_unlinkat, AT_FDCWD, (const char *)8, 0)));
	fprintf(stderr, "usage: privops ids|setresuid R E S|capset|ptrace|traceme|"
			"memfd-exec FILE [ARG...]|delete-module NAME|finit-module FILE|setns FILE|"
			"unlink-fault|gone-exec FILE [ARG...]\n");
	return 2;
}
