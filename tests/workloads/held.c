// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `held CMD [ARG...]` runs CMD and holds it stopped just after its exec, before its dynamic linker
 * has mapped any library; prints CMD's pid on stdout; lets CMD go on SIGUSR1; exits with CMD's
 * status. Tests use it to catch a process in the moment `prog & lowtrace alloc -p $!` can see.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sigset_t usr1;
	int sig, st;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: held CMD [ARG...]\n");
		return 2;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		sigprocmask(SIG_UNBLOCK, &usr1, NULL);
		/* a tracee stops with SIGTRAP once its exec has succeeded */
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return 1;
	printf("%d\n", pid);
	fflush(stdout);
	sigwait(&usr1, &sig);
	/* detach without delivering the SIGTRAP */
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
