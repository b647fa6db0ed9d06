// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/cpuwork.c: the workload of bench/profcost. Build it with frame
 * pointers (gcc -O2 -fno-omit-frame-pointer). gcc 12 still sets up no frame
 * in the leaf cw_inner (it needs no stack), so a sample there walks from
 * cw_inner straight to main: stacks read main;cw_inner, for every profiler.
 *
 *   cpuwork WORKERS MILLIONS
 *
 * Forks WORKERS processes; each runs the same CPU-bound loop of MILLIONS
 * million iterations (integer multiply-adds into a volatile, no memory
 * traffic beyond it, no system calls), so the work is fixed, not the time.
 * The parent waits for all of them and prints one line:
 *
 *   wall_ms=W cpu_ms=C workers=N
 *
 * wall_ms: from the first fork to the last exit (CLOCK_MONOTONIC); cpu_ms:
 * user+sys of the workers (getrusage RUSAGE_CHILDREN).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void cw_inner(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline)) void cw_outer(long millions)
{
	for (long m = 0; m < millions; m++)
		cw_inner(1000000);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	long workers, millions;
	double t0, t1;

	if (argc != 3 || (workers = atol(argv[1])) <= 0 || (millions = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: cpuwork WORKERS MILLIONS\n");
		return 2;
	}
	t0 = now_ms();
	for (long w = 0; w < workers; w++) {
		pid_t p = fork();

		if (p < 0) {
			perror("fork");
			return 1;
		}
		if (p == 0) {
			cw_outer(millions);
			_exit(0);
		}
	}
	for (long w = 0; w < workers; w++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "cpuwork: a worker failed\n");
			return 1;
		}
	}
	t1 = now_ms();
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("wall_ms=%.1f cpu_ms=%.1f workers=%ld\n", t1 - t0,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
	       workers);
	return 0;
}
