/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counting malloc, calloc, realloc and free: a test links with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free and includes
 * this once; `allocs` and `frees` count the calls.
 */
#ifndef LT_ALLOC_COUNT_H
#define LT_ALLOC_COUNT_H

#include <stdlib.h>

static unsigned long allocs, frees;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

void *__wrap_malloc(size_t n)
{
	allocs++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	allocs++;
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	allocs++;
	return __real_realloc(p, n);
}

void __wrap_free(void *p)
{
	frees++;
	__real_free(p);
}

#endif
