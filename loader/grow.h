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

#endif
