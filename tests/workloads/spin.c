// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Profile test workload, built with frame pointers: `spin SECS` burns CPU
 * in lt_spin_alpha twice as long as in lt_spin_beta; `sleep SECS` blocks in
 * lt_block_sleep (nanosleep, 10 ms at a time); `tree SECS` walks the 4096
 * paths of a binary call tree 12 levels deep (lt_tree calls itself, or
 * through lt_tree_hop), so it has 4096 distinct stacks. Each runs for SECS seconds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void lt_spin_work(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline)) void lt_spin_alpha(void)
{
	lt_spin_work(2000000);
}

__attribute__((noinline)) void lt_spin_beta(void)
{
	lt_spin_work(1000000);
}

#define TREE_LEVELS 12

__attribute__((noinline)) void lt_tree(int level, unsigned int path);

/* a frame of its own: a 1 bit adds it to the stack */
__attribute__((noinline)) void lt_tree_hop(int level, unsigned int path)
{
	lt_tree(level, path);
}

/* one bit of path per level: 2^level distinct stacks */
__attribute__((noinline)) void lt_tree(int level, unsigned int path)
{
	if (!level)
		lt_spin_work(20000);
	else if (path & 1)
		lt_tree_hop(level - 1, path >> 1);
	else
		lt_tree(level - 1, path >> 1);
}

/* the syscall is made here, not in libc: libc has no frame pointers, and a
 * walk from inside it would skip this function */
__attribute__((noinline)) void lt_block_sleep(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	long ret;

#ifdef __aarch64__
	register long nr asm("x8") = SYS_nanosleep;
	register long x0 asm("x0") = (long)&ts;
	register long x1 asm("x1") = 0;

	asm volatile("svc #0" : "+r"(x0) : "r"(nr), "r"(x1) : "memory");
	ret = x0;
#else
	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
		     : "rcx", "r11", "memory");
#endif
	(void)ret;
}

int main(int argc, char **argv)
{
	unsigned int path = 0;
	double end;

	if (argc != 3) {
		fprintf(stderr, "usage: spin spin|sleep|tree SECS\n");
		return 2;
	}
	end = now() + atof(argv[2]);
	while (now() < end) {
		if (!strcmp(argv[1], "sleep")) {
			lt_block_sleep();
		} else if (!strcmp(argv[1], "tree")) {
			lt_tree(TREE_LEVELS, path++ % (1u << TREE_LEVELS));
		} else {
			lt_spin_alpha();
			lt_spin_beta();
		}
	}
	return 0;
}
