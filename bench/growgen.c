// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/growgen.c: the paced workloads of bench/growth.
 *
 *   growgen signal RATE SECS   kill(self, SIGUSR1) RATE times a second for SECS
 *                              seconds (RATE 0: as fast as it can); SIGUSR1 is
 *                              ignored, but the kernel still reports each one
 *                              at signal_generate, so each is one signal record
 *   growgen getppid N          N getppid() calls in a loop
 *
 * Output, one line: signal: sent=N secs=S rate=R cpu=P% (of one CPU); getppid: n=N ns_per_call=X
 * cpu_ns_per_call=Y (wall and the thread's CPU time).
 * Pacing: every millisecond it sends what is due since the start, so a late
 * wake-up is caught up on the next tick instead of lowering the rate.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int gen_signal(unsigned long long rate, double secs)
{
	unsigned long long t0 = now_ns(), end = t0 + (unsigned long long)(secs * 1e9), sent = 0, t;
	struct timespec tick;
	pid_t me = getpid();

	signal(SIGUSR1, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &tick);
	while ((t = now_ns()) < end) {
		if (!rate) {
			for (int i = 0; i < 1000; i++)
				kill(me, SIGUSR1);
			sent += 1000;
			continue;
		}
		/* what is due at t, not one tick's worth: catches up after a late tick */
		for (unsigned long long due = (t - t0) * rate / 1000000000ull; sent < due; sent++)
			kill(me, SIGUSR1);
		tick.tv_nsec += 1000000;
		if (tick.tv_nsec >= 1000000000) {
			tick.tv_sec++;
			tick.tv_nsec -= 1000000000;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL);
	}
	t = now_ns() - t0;
	/* its CPU share says whether a low rate was the machine's or the generator's */
	printf("sent=%llu secs=%.3f rate=%.0f cpu=%.1f%%\n", sent, t / 1e9, sent / (t / 1e9),
	       100.0 * cpu_ns() / t);
	return 0;
}

static int gen_getppid(unsigned long long n)
{
	unsigned long long t0 = now_ns(), c0 = cpu_ns();

	/* syscall(), not getppid(): no libc may answer it without entering the kernel */
	for (unsigned long long i = 0; i < n; i++)
		syscall(SYS_getppid);
	/* CPU time too: on a busy machine the wall time counts other tasks' turns */
	printf("n=%llu ns_per_call=%.1f cpu_ns_per_call=%.1f\n", n, (double)(now_ns() - t0) / n,
	       (double)(cpu_ns() - c0) / n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "signal"))
		return gen_signal(strtoull(argv[2], NULL, 0), atof(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "getppid"))
		return gen_getppid(strtoull(argv[2], NULL, 0));
	fprintf(stderr, "usage: growgen signal RATE SECS | growgen getppid N\n");
	return 2;
}
