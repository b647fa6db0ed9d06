// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one growable-array helper of the loader (symbolizer, pprof writer, profile reports). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

int lt_grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			return -ENOMEM;
		n *= 2;
	}
	q = realloc(*arr, n * size);
	if (!q)
		return -ENOMEM;
	*arr = q;
	*cap = n;
	return 0;
}

void *lt_vec_push(struct lt_vec *v)
{
	if (lt_grow(&v->p, &v->cap, v->n + 1, v->elem))
		return NULL;
	return (char *)v->p + v->elem * v->n++;
}
