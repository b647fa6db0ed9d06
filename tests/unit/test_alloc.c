// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Steady state allocates nothing per record: malloc, calloc, realloc and
 * free are wrapped (-Wl,--wrap) and counted across 100 000 decode+encode
 * rounds after a warm-up.
 */
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "tap.h"

static unsigned long allocs, frees;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

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

static char mem[256 * 1024];
static struct lt_exec ex;
static struct lt_exit xt;
static struct lt_fork fk;

static void fill(void)
{
	static const char args[] = "/usr/bin/env\0-i\0\x1b[0m\0\xff\xfe tail";

	ex.hdr = (struct lt_hdr){ LT_TYPE_EXEC, sizeof(ex), 1, 1, 2, 2 };
	memcpy(ex.comm, "env\x01", 5);
	memcpy(ex.filename, "/usr/bin/env", 13);
	ex.filename_len = 12;
	memcpy(ex.args, args, sizeof(args));
	ex.args_len = sizeof(args);
	xt.hdr = (struct lt_hdr){ LT_TYPE_EXIT, sizeof(xt), 0, 3, 2, 2 };
	fk.hdr = (struct lt_hdr){ LT_TYPE_FORK, sizeof(fk) - 16, 0, 4, 1, 1 }; /* older */
}

static void rounds(int n, struct lt_buf *b, struct lt_decode_stats *st)
{
	static struct lt_rec r;
	const void *recs[] = { &ex, &xt, &fk };
	size_t sizes[] = { sizeof(ex), sizeof(xt), sizeof(fk) };

	for (int i = 0; i < n; i++) {
		for (int k = 0; k < 3; k++) {
			const struct lt_probe *p = lt_decode(recs[k], sizes[k], &r, st);

			if (!p)
				continue;
			if (b->cap - b->len < LT_ENC_MAX)
				b->len = 0; /* what a flush does */
			if (i & 1)
				lt_encode_text(b, p, &r);
			else
				lt_encode_json(b, p, &r);
		}
	}
}

int main(void)
{
	struct lt_buf b = { mem, 0, sizeof(mem) };
	struct lt_decode_stats st = {};
	void *volatile probe; /* volatile: -O2 would elide a malloc+free pair */

	/* the counter itself works: an explicit malloc is seen */
	probe = malloc(16);
	ok(allocs == 1, "wrapped malloc is counted");
	free(probe);

	fill();
	rounds(1000, &b, &st); /* warm-up */
	allocs = frees = 0;
	memset(&st, 0, sizeof(st));
	rounds(100000, &b, &st);
	ok(st.fast + st.older == 300000, "300000 records decoded (%lu fast, %lu older)",
	   (unsigned long)st.fast, (unsigned long)st.older);
	ok(allocs == 0, "zero allocations in 100000 decode+encode rounds (saw %lu)", allocs);
	ok(frees == 0, "zero frees in 100000 decode+encode rounds (saw %lu)", frees);
	return tap_done();
}
