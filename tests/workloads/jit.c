// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `jit SECS`: code generated at run time, as a JIT makes it. A trampoline is copied into an
 * anonymous executable mapping and named in /tmp/perf-PID.map (the perf map format JITs write:
 * "START SIZE NAME", hex); main calls it and it calls back jit_spin, which spins. The trampoline
 * keeps a frame pointer (arm64: a frame record), as JIT code does, and has no CFI: a walk steps
 * through it by its frame pointer. The map file is removed at exit.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef __aarch64__
/* stp x29,x30,[sp,#-16]!; mov x29,sp; mov x16,x0; mov x0,x1; blr x16; ldp x29,x30,[sp],#16;
 * ret (little-endian words): the frame record {x29, x30} the walker follows */
static const uint32_t tramp[] = { 0xa9bf7bfd, 0x910003fd, 0xaa0003f0, 0xaa0103e0,
				  0xd63f0200, 0xa8c17bfd, 0xd65f03c0 };
#else
/* push rbp; mov rbp,rsp; mov rax,rdi; mov rdi,rsi; call *rax; pop rbp; ret */
static const unsigned char tramp[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48,
				       0x89, 0xf7, 0xff, 0xd0, 0x5d, 0xc3 };
#endif

static volatile uint64_t sink;
static char map_path[64];

__attribute__((noinline)) void jit_spin(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i * 2654435761u;
}

static void cleanup(int sig)
{
	unlink(map_path);
	if (sig)
		_exit(0);
}

int main(int argc, char **argv)
{
	void (*fn)(void (*)(uint64_t), uint64_t);
	struct timespec ts;
	double end;
	FILE *f;
	void *p;

	if (argc != 2) {
		fprintf(stderr, "usage: jit SECS\n");
		return 2;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, tramp, sizeof(tramp));
#ifdef __aarch64__
	/* the instruction cache does not see the data cache's writes by itself */
	__builtin___clear_cache((char *)p, (char *)p + sizeof(tramp));
#endif
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", getpid());
	signal(SIGTERM, cleanup);
	signal(SIGINT, cleanup);
	f = fopen(map_path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_trampoline\n", (unsigned long)p, sizeof(tramp));
	fclose(f);
	fn = (void (*)(void (*)(uint64_t), uint64_t))p;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + atof(argv[1]);
	do {
		fn(jit_spin, 1000000);
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
	cleanup(0);
	return 0;
}
