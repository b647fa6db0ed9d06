/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef LT_GROW_H
#define LT_GROW_H

#include <stddef.h>

/*
 * Makes *arr hold at least `need` elements of `size` bytes: capacity doubles from 16, so n
 * appends cost O(n) copies. 0, or -ENOMEM with *arr and *cap untouched.
 */
int lt_grow(void **arr, size_t *cap, size_t need, size_t size);

#define LT_GROW(arr, cap, need) lt_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* A growable array of elements of `elem` bytes: set elem, then push; free(p) at the end. */
struct lt_vec {
	void *p;
	size_t n, cap, elem;
};

/* room for one more element at the end: a pointer to it, NULL when out of memory */
void *lt_vec_push(struct lt_vec *v);

#endif
