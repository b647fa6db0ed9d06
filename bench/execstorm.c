// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * execstorm: fork + exec + wait a program N times, one child at a time, and
 * print the mean cost of one round in nanoseconds (CLOCK_MONOTONIC).
 *
 *   execstorm [-n N] [-w WARMUP] PROGRAM
 *
 * Output, one line:  n=N total_ns=T ns_per_exec=X failed=F
 * The child gets no arguments beyond argv[0] and an empty environment, so
 * every exec record a tracer writes is the same size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* One fork + execve + waitpid; returns 0 when the child exited 0. */
static int one(const char *prog)
{
	char *const argv[] = { (char *)prog, NULL };
	char *const envp[] = { NULL };
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execve(prog, argv, envp);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned long n = 3000, warmup = 50, failed = 0;
	unsigned long long t0, t1;
	int o;

	while ((o = getopt(argc, argv, "n:w:")) != -1) {
		switch (o) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 'w':
			warmup = strtoul(optarg, NULL, 10);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || n == 0)
		goto usage;
	/* warm the page cache and the dynamic loader's files; not timed */
	for (unsigned long i = 0; i < warmup; i++)
		if (one(argv[optind]))
			failed++;
	if (failed) {
		fprintf(stderr, "execstorm: %s does not run (exit status != 0)\n", argv[optind]);
		return 1;
	}
	t0 = now_ns();
	for (unsigned long i = 0; i < n; i++)
		if (one(argv[optind]))
			failed++;
	t1 = now_ns();
	printf("n=%lu total_ns=%llu ns_per_exec=%llu failed=%lu\n", n, t1 - t0, (t1 - t0) / n,
	       failed);
	return failed ? 1 : 0;
usage:
	fprintf(stderr, "usage: execstorm [-n N] [-w WARMUP] PROGRAM\n");
	return 2;
}
