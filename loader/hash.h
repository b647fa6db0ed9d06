/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The hashes of the loader's tables: they only pick slots, never reach any output. */
#ifndef LT_HASH_H
#define LT_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* splitmix64's finalizer: every input bit moves every output bit */
static inline uint64_t lt_hash_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#define LT_HASH_BASIS 0xcbf29ce484222325ull

/* FNV-1a, continued from h (LT_HASH_BASIS to start): bytes read in pieces hash as one */
static inline uint64_t lt_hash_more(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static inline uint64_t lt_hash_bytes(const void *p, size_t n)
{
	return lt_hash_more(LT_HASH_BASIS, p, n);
}

static inline uint64_t lt_hash_str(const char *s)
{
	return lt_hash_bytes(s, strlen(s));
}

#endif
