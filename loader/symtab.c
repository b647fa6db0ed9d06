// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The symbolizer's bottom layer, used by elf.c, kallsyms.c and procmaps.c alike: a string pool,
 * a hash table, sorted symbol tables with their lookup, and build-ids as hex.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "sym_int.h"

/* a symbol whose range misses the address may be nested in a bigger one just before it */
#define NESTED_LOOKBACK 4

/* ---- small containers ---- */

int64_t pool_add(struct pool *pl, const char *s)
{
	size_t n = strlen(s) + 1, at = pl->len;

	if (at + n > UINT32_MAX || LT_GROW(pl->p, pl->cap, at + n))
		return -1;
	memcpy(pl->p + at, s, n);
	pl->len += n;
	return (int64_t)at;
}

int ht_add(struct htab *t, struct hnode *e, uint64_t key)
{
	size_t i;

	if (t->n >= t->nb) {
		size_t nb = t->nb ? t->nb * 2 : 64;
		struct hnode **b = calloc(nb, sizeof(*b));

		if (!b && !t->nb)
			return -ENOMEM;
		/* without memory for a bigger table, chains just get longer */
		if (b) {
			for (i = 0; i < t->nb; i++) {
				for (struct hnode *x = t->b[i], *nx; x; x = nx) {
					nx = x->next;
					x->next = b[lt_hash_mix(x->key) & (nb - 1)];
					b[lt_hash_mix(x->key) & (nb - 1)] = x;
				}
			}
			free(t->b);
			t->b = b;
			t->nb = nb;
		}
	}
	e->key = key;
	i = lt_hash_mix(key) & (t->nb - 1);
	e->next = t->b[i];
	t->b[i] = e;
	t->n++;
	return 0;
}

/* the first entry with key after `after` (NULL: from the start) */
struct hnode *ht_find(const struct htab *t, uint64_t key, struct hnode *after)
{
	struct hnode *e;

	if (after)
		e = after->next;
	else
		e = t->nb ? t->b[lt_hash_mix(key) & (t->nb - 1)] : NULL;
	for (; e; e = e->next)
		if (e->key == key)
			return e;
	return NULL;
}

/* ---- symbol tables ---- */

void symtab_reset(struct symtab *t)
{
	t->n = 0;
	t->names.len = 0;
}

void symtab_free(struct symtab *t)
{
	free(t->v);
	free(t->names.p);
	memset(t, 0, sizeof(*t));
}

/* aliases: a public name over an internal one (leading '_'), then global over weak over local */
uint8_t sym_rank(const char *name, int bind)
{
	return (uint8_t)((name[0] != '_') * 4 + bind);
}

int symtab_add(struct symtab *t, const char *name, uint64_t addr, uint64_t size, uint64_t limit,
	       uint16_t mod, uint8_t rank)
{
	int64_t at;
	struct sym *y;

	if (LT_GROW(t->v, t->cap, t->n + 1))
		return -ENOMEM;
	at = pool_add(&t->names, name);
	if (at < 0)
		return -ENOMEM;
	y = &t->v[t->n++];
	y->addr = addr;
	y->sized = size != 0;
	y->end = size ? (size > UINT64_MAX - addr ? UINT64_MAX : addr + size) : limit;
	y->name = (uint32_t)at;
	y->mod = mod;
	y->rank = rank;
	return 0;
}

static int sym_cmp(const void *a, const void *b, void *names)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->sized != y->sized)
		return x->sized ? -1 : 1;
	return strcmp((char *)names + x->name, (char *)names + y->name);
}

/* sort, one entry per address (the best alias), unsized symbols up to the next one */
void symtab_finish(struct symtab *t)
{
	size_t i, j, n = 0;

	if (!t->n)
		return;
	qsort_r(t->v, t->n, sizeof(*t->v), sym_cmp, t->names.p);
	for (i = 0; i < t->n; i = j) {
		struct sym best = t->v[i];

		for (j = i + 1; j < t->n && t->v[j].addr == best.addr; j++) {
			if (!best.sized && t->v[j].sized) {
				best.end = t->v[j].end;
				best.sized = 1;
			}
		}
		t->v[n++] = best;
	}
	t->n = n;
	for (i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? t->v[i + 1].addr : UINT64_MAX;

		if (!t->v[i].sized && next < t->v[i].end)
			t->v[i].end = next;
	}
	if (n < t->cap) {
		struct sym *v = realloc(t->v, n * sizeof(*v));

		if (v) {
			t->v = v;
			t->cap = n;
		}
	}
}

/* How many elements of a sorted array have their u64 at byte `off` <= key. */
size_t upper_bound(const void *base, size_t n, size_t stride, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;

		memcpy(&v, (const char *)base + mid * stride + off, sizeof(v));
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct sym *sym_find(const struct symtab *t, uint64_t a)
{
	size_t lo = upper_bound(t->v, t->n, sizeof(t->v[0]), offsetof(struct sym, addr), a);

	for (size_t k = 0; k < NESTED_LOOKBACK && k < lo; k++) {
		const struct sym *y = &t->v[lo - 1 - k];

		if (a < y->end)
			return y;
	}
	return NULL;
}

/* ---- build-ids ---- */

char *hex_dup(const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *h;

	if (!n || n > BUILD_ID_MAX)
		return NULL;
	h = malloc(2 * n + 1);
	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		h[2 * i] = digits[p[i] >> 4];
		h[2 * i + 1] = digits[p[i] & 15];
	}
	h[2 * n] = 0;
	return h;
}
