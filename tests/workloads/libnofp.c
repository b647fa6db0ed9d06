// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The shared library of the nofp workload, built -O2 -fomit-frame-pointer like it: CPU time two
 * frames deep inside a library. Built twice (see the Makefile): libnofp.so, which nofp links,
 * and libnofpdl.so, which nofp's dlopen mode opens and closes.
 */
#include <stdint.h>

#define KEEP_CALL() asm volatile("" ::: "memory")

static volatile uint64_t sink;

/* hidden: the call from nofp_lib_outer stays inside this copy of the library (libnofpdl.so's
 * would otherwise bind to the one libnofp.so exports) */
__attribute__((noinline, noclone, visibility("hidden"))) void nofp_lib_spin(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline, noclone)) void nofp_lib_outer(uint64_t n)
{
	nofp_lib_spin(n);
	KEEP_CALL();
}
