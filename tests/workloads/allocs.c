// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Allocation test workload, built with frame pointers.
 * `allocs MIB_ALPHA MIB_BETA LEAKS` waits for a line on stdin (the tracer is
 * attached by then), then: lt_alloc_alpha mallocs and frees MIB_ALPHA MiB in
 * 256 KiB blocks, lt_alloc_beta callocs and frees MIB_BETA MiB in 256 KiB
 * blocks, lt_leak_gamma mallocs LEAKS blocks of 1000 bytes and never frees
 * them. Then it exits.
 */
#include <stdio.h>
#include <stdlib.h>

#define BLOCK (256 * 1024)

static void *volatile keep;

__attribute__((noinline)) void lt_alloc_alpha(long mib)
{
	for (long i = 0; i < mib * (1024 * 1024 / BLOCK); i++) {
		keep = malloc(BLOCK);
		free(keep);
	}
}

__attribute__((noinline)) void lt_alloc_beta(long mib)
{
	for (long i = 0; i < mib * (1024 * 1024 / BLOCK); i++) {
		keep = calloc(BLOCK / 8, 8);
		free(keep);
	}
}

__attribute__((noinline)) void lt_leak_gamma(long n)
{
	for (long i = 0; i < n; i++)
		keep = malloc(1000);
}

int main(int argc, char **argv)
{
	char line[16];

	if (argc != 4) {
		fprintf(stderr, "usage: allocs MIB_ALPHA MIB_BETA LEAKS\n");
		return 2;
	}
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	lt_alloc_alpha(atol(argv[1]));
	lt_alloc_beta(atol(argv[2]));
	lt_leak_gamma(atol(argv[3]));
	return 0;
}
