// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/mallocloop.c: the target of bench/alloccost. Build it with frame
 * pointers (gcc -O2 -fno-omit-frame-pointer) so that tracers get whole stacks.
 *
 *   mallocloop PAIRS LEAKS
 *
 * Waits for a line on stdin (the tracer is attached by then), runs 10000
 * untimed malloc+free pairs, then PAIRS timed pairs: malloc(n) with n between
 * 64 and 4096 bytes (a fixed pseudo-random sequence, the same every run), one
 * byte written, free. Then it mallocs LEAKS blocks of 4 MiB and never frees
 * them (untimed; a leak tracer should report them), and prints one line:
 *
 *   ns_per_pair=N cpu_ns_per_pair=C pairs=P bytes=B warm_bytes=W leaked=L leaked_bytes=LB
 *
 * ns_per_pair is wall time (CLOCK_MONOTONIC); cpu_ns_per_pair is the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID: user + kernel, so it includes
 * the uprobe traps and BPF programs run on its behalf, but not the time it
 * waited for a CPU while other work ran). bytes is the sum of the timed
 * sizes, warm_bytes that of the warm-up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NSIZES 4096
#define WARM 10000
#define LEAK_SIZE (4L << 20)

static size_t sizes[NSIZES];
static void *volatile keep;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* noinline: each call site is a distinct frame in the tracers' stacks */
__attribute__((noinline)) void ml_pair(size_t n)
{
	char *p = malloc(n);

	if (p)
		p[0] = 1;
	keep = p;
	free(p);
}

__attribute__((noinline)) uint64_t ml_pairs(long count)
{
	uint64_t bytes = 0;

	for (long i = 0; i < count; i++) {
		size_t n = sizes[i & (NSIZES - 1)];

		ml_pair(n);
		bytes += n;
	}
	return bytes;
}

__attribute__((noinline)) void ml_leak(long count)
{
	for (long i = 0; i < count; i++)
		keep = malloc(LEAK_SIZE);
}

int main(int argc, char **argv)
{
	uint32_t x = 2463534242u;
	uint64_t t0, t1, c0, c1, bytes, warm;
	long pairs, leaks;
	char line[16];

	if (argc != 3 || (pairs = atol(argv[1])) <= 0 || (leaks = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: mallocloop PAIRS LEAKS\n");
		return 2;
	}
	for (int i = 0; i < NSIZES; i++) { /* xorshift32: sizes 64..4096 */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		sizes[i] = 64 + x % (4096 - 64 + 1);
	}
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	warm = ml_pairs(WARM);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	bytes = ml_pairs(pairs);
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	ml_leak(leaks);
	printf("ns_per_pair=%.1f cpu_ns_per_pair=%.1f pairs=%ld bytes=%llu warm_bytes=%llu leaked=%ld "
	       "leaked_bytes=%ld\n",
	       (double)(t1 - t0) / pairs, (double)(c1 - c0) / pairs, pairs, (unsigned long long)bytes, (unsigned long long)warm,
	       leaks, leaks * LEAK_SIZE);
	return 0;
}
