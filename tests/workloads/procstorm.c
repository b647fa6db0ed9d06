// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `procstorm N` starts N short-lived processes one after another; each calls getppid and getuid
 * once and exits, so a per-process syscall histogram sees two new (syscall, pid) keys per child.
 * vfork: no page tables to copy, cheap even under emulation. Exit 0 when every child exited 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, i, ok = 0;
	pid_t pid;
	int st;

	if (argc != 2 || (n = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: procstorm N\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		pid = vfork();
		if (pid < 0) {
			perror("procstorm: vfork");
			break;
		}
		if (!pid) {
			/* raw system calls only: the child borrows the parent's memory */
			syscall(SYS_getppid);
			syscall(SYS_getuid);
			_exit(0);
		}
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st))
			ok++;
	}
	printf("procstorm: %ld children\n", ok);
	return ok == n ? 0 : 1;
}
