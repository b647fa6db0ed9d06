// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unwinding test workload, built -O2 -fomit-frame-pointer (see the Makefile): no function here
 * keeps a frame pointer, so only the .eh_frame CFI leads from a sample back to main. (gcc uses
 * rbp as an ordinary register where it needs one: main and nofp_alloc_outer do, so a
 * frame-pointer walk through them reads whatever it holds.)
 * `nofp MODE SECS` runs MODE for SECS seconds:
 *   split   main -> nofp_outer -> nofp_heavy (3 slices of 1 ms) and nofp_light (1 slice) ->
 *           nofp_leaf: a 3:1 split of the time, within every 4 ms
 *   deep    main -> nofp_recurse 50 frames deep; the innermost spins
 *   lib     main -> nofp_lib_outer -> nofp_lib_spin, both in libnofp.so
 *   alloc   main -> nofp_alloc_outer -> nofp_alloc_inner -> malloc and free of 4 KiB blocks
 *   dlopen  dlopen libnofpdl.so (the same code as libnofp.so, but not linked in, so each
 *           dlclose unmaps it), a ~20 ms call into it, dlclose; again
 * Every function of a chain is noinline and noclone (its own symbol, no .constprop copy) and
 * has an empty asm after each call, so a call stays a call: no tail jump, no recursion turned
 * into a loop.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __aarch64__
/* the virtual counter: arm64's TSC (a fixed frequency, readable from user space) */
static inline uint64_t cycles(void)
{
	uint64_t v;

	asm volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#else
#include <x86intrin.h>
#define cycles() __rdtsc()
#endif

#define NOFP_FN __attribute__((noinline, noclone))
/* after a call: the caller still has work to do, so the call is not a tail jump */
#define KEEP_CALL() asm volatile("" ::: "memory")

/* one unit of work: about 0.1 ms here */
#define UNIT 100000
#define SLICE_NS 1000000
#define DEPTH 50
#define BLOCK 4096

void nofp_lib_outer(uint64_t n);

static volatile uint64_t sink;
static void *volatile keep;
/* counter ticks (TSC, cntvct_el0) in a slice of split */
static uint64_t slice;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The slices follow the clock, not an amount of work: on a timer that samples at a fixed
 * period the phases of the samples then sweep the 4 ms cycle evenly, and 600 samples give
 * 3:1 within a few samples (random phases would leave about 9 % of noise on the ratio).
 */
static void calibrate(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	double t0, t1;
	uint64_t c0, c1;

	t0 = now();
	c0 = cycles();
	nanosleep(&ts, NULL);
	t1 = now();
	c1 = cycles();
	slice = (uint64_t)((c1 - c0) / ((t1 - t0) * 1e9) * SLICE_NS);
	if (!slice)
		slice = 1;
}

/* spins until the counter reaches end; read inline: no call that a sample could land in */
NOFP_FN void nofp_leaf(uint64_t end)
{
	while (cycles() < end) {
		for (int i = 0; i < 64; i++)
			sink += i * 2654435761u;
	}
}

NOFP_FN void nofp_heavy(uint64_t cycle)
{
	nofp_leaf(cycle + 3 * slice);
	KEEP_CALL();
}

NOFP_FN void nofp_light(uint64_t cycle)
{
	nofp_leaf(cycle + 4 * slice);
	KEEP_CALL();
}

/* one cycle, from the start of the current one; a frame with locals of its own: a CFA offset
 * unlike its callees' */
NOFP_FN void nofp_outer(void)
{
	volatile uint64_t pad[8];

	pad[0] = cycles();
	pad[0] -= pad[0] % (4 * slice);
	nofp_heavy(pad[0]);
	KEEP_CALL();
	nofp_light(pad[0]);
	KEEP_CALL();
}

/* n frames of nofp_recurse; the innermost spins */
NOFP_FN void nofp_recurse(int n, uint64_t work)
{
	if (n > 1) {
		nofp_recurse(n - 1, work);
		KEEP_CALL();
		return;
	}
	for (uint64_t i = 0; i < work; i++)
		sink += i * 2654435761u;
}

NOFP_FN void nofp_alloc_inner(size_t size)
{
	keep = malloc(size);
	KEEP_CALL();
	free(keep);
	KEEP_CALL();
}

NOFP_FN void nofp_alloc_outer(int n)
{
	for (int i = 0; i < n; i++) {
		nofp_alloc_inner(BLOCK);
		KEEP_CALL();
	}
}

/* the library opened and closed each time: its mappings come and go under the profiler */
NOFP_FN int nofp_dlopen_once(void)
{
	void (*fn)(uint64_t);
	void *h;

	/* found through the RUNPATH ($ORIGIN): next to this program */
	h = dlopen("libnofpdl.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "nofp: %s\n", dlerror());
		return -1;
	}
	fn = (void (*)(uint64_t))dlsym(h, "nofp_lib_outer");
	if (fn)
		fn(200 * UNIT); /* ~20 ms: most samples land in the library, which comes and goes */
	dlclose(h);
	return fn ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *mode;
	double end;
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: nofp split|deep|lib|alloc|dlopen SECS\n");
		return 2;
	}
	mode = argv[1];
	end = now() + atof(argv[2]);
	/* the clock read every few milliseconds only: a sample rarely lands outside the chains */
	if (!strcmp(mode, "split")) {
		calibrate();
		do {
			nofp_outer();
		} while (now() < end);
	} else if (!strcmp(mode, "deep")) {
		do {
			for (i = 0; i < 8; i++)
				nofp_recurse(DEPTH, 4 * UNIT);
		} while (now() < end);
	} else if (!strcmp(mode, "lib")) {
		do {
			for (i = 0; i < 8; i++)
				nofp_lib_outer(4 * UNIT);
		} while (now() < end);
	} else if (!strcmp(mode, "alloc")) {
		do {
			nofp_alloc_outer(64);
		} while (now() < end);
	} else if (!strcmp(mode, "dlopen")) {
		do {
			if (nofp_dlopen_once())
				return 1;
		} while (now() < end);
	} else {
		fprintf(stderr, "nofp: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
