// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdbool.h>
#include <string.h>

#include "encode.h"

static const char hex[] = "0123456789abcdef";

void lt_put_s(struct lt_buf *b, const char *s)
{
	lt_put_mem(b, s, strlen(s));
}

char *lt_w_u64(char *o, uint64_t v)
{
	/* two digits per division: the counters and timestamps of every record go through here */
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
				    "31323334353637383940414243444546474849505152535455565758596061"
				    "62636465666768697071727374757677787980818283848586878889909192"
				    "939495969798"
				    "99";
	static const uint64_t p10[20] = { 1ull,
					  10ull,
					  100ull,
					  1000ull,
					  10000ull,
					  100000ull,
					  1000000ull,
					  10000000ull,
					  100000000ull,
					  1000000000ull,
					  10000000000ull,
					  100000000000ull,
					  1000000000000ull,
					  10000000000000ull,
					  100000000000000ull,
					  1000000000000000ull,
					  10000000000000000ull,
					  100000000000000000ull,
					  1000000000000000000ull,
					  10000000000000000000ull };
	/* digits: log10 from the bit length (1233/4096 ~ log10(2)), corrected by one compare */
	unsigned int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
	unsigned int n = t + (v >= p10[t]);
	char *end;

	if (!n)
		n = 1;
	/* the digits straight into the buffer, from the last one back */
	o += n;
	end = o;
	while (v >= 100) {
		unsigned int d = (v % 100) * 2;

		v /= 100;
		*--o = pairs[d + 1];
		*--o = pairs[d];
	}
	if (v >= 10) {
		*--o = pairs[v * 2 + 1];
		*--o = pairs[v * 2];
	} else {
		*--o = '0' + v;
	}
	return end;
}

char *lt_w_s64(char *o, int64_t v)
{
	if (v < 0) {
		*o++ = '-';
		return lt_w_u64(o, -(uint64_t)v);
	}
	return lt_w_u64(o, v);
}

void lt_put_u64(struct lt_buf *b, uint64_t v)
{
	b->len = lt_w_u64(b->p + b->len, v) - b->p;
}

void lt_put_s64(struct lt_buf *b, int64_t v)
{
	b->len = lt_w_s64(b->p + b->len, v) - b->p;
}

void lt_put_octal(struct lt_buf *b, uint64_t v)
{
	char d[22];
	int n = 0;

	while (v && n < (int)sizeof(d)) {
		d[n++] = '0' + (v & 7);
		v >>= 3;
	}
	while (n)
		lt_put_c(b, d[--n]);
}

size_t lt_strnlen(const char *s, size_t max)
{
	const char *z = memchr(s, 0, max);

	return z ? (size_t)(z - s) : max;
}

/* Length of a valid UTF-8 sequence at s (RFC 3629: no overlongs, surrogates), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0; /* overlong */
		if (c == 0xf4 && s[1] >= 0x90)
			return 0; /* above U+10FFFF */
		return 4;
	}
	return 0;
}

static char *w_u00(char *o, unsigned char c)
{
	o[0] = '\\';
	o[1] = 'u';
	o[2] = '0';
	o[3] = '0';
	o[4] = hex[c >> 4];
	o[5] = hex[c & 15];
	return o + 6;
}

/*
 * Word at a time: eight bytes that need no escape are copied as one word. A byte
 * needs one when it is below `lo`, 0x7f or above, or `q` or `r` (JSON: lo 0x20,
 * '"' and '\\'; text: lo 0x21, so spaces too, and '\\'). The test is nonzero
 * exactly when some byte of the word needs one: bytes with the top bit set are
 * caught by it alone, and for the others the has-zero-byte test on w ^ (c * ONES)
 * finds c, and (w - lo * ONES) & ~w finds a byte below lo. Which byte it was is
 * left to the byte loop (tests/unit/test_encode.c compares the two).
 */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

static inline uint64_t has_zero(uint64_t w)
{
	return (w - ONES) & ~w & HIGHS;
}

static inline bool word_plain(uint64_t w, unsigned char lo, unsigned char q, unsigned char r)
{
	uint64_t special = (w & HIGHS) | ((w - ONES * lo) & ~w & HIGHS) |
			   has_zero(w ^ (ONES * 0x7f)) | has_zero(w ^ (ONES * q)) |
			   has_zero(w ^ (ONES * r));

	return !special;
}

char *lt_w_json_str(char *o, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	*o++ = '"';
	while (i < n) {
		unsigned char c;
		size_t k;

		if (i + 8 <= n) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if (word_plain(w, 0x20, '"', '\\')) {
				memcpy(o, &w, 8);
				o += 8;
				i += 8;
				continue;
			}
		}
		c = s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*o++ = c;
			i++;
		} else if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = c;
			i++;
		} else if (c >= 0x80 && (k = utf8_len(s + i, n - i))) {
			memcpy(o, s + i, k);
			o += k;
			i += k;
		} else {
			o = w_u00(o, c); /* control byte, DEL or invalid UTF-8 */
			i++;
		}
	}
	*o++ = '"';
	return o;
}

void lt_put_json_str(struct lt_buf *b, const char *str, size_t n)
{
	b->len = lt_w_json_str(b->p + b->len, str, n) - b->p;
}

char *lt_w_text_str(char *o, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n; i++) {
		unsigned char c;

		if (i + 8 <= n) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if (word_plain(w, 0x21, '\\', '\\')) {
				memcpy(o, &w, 8);
				o += 8;
				i += 7;
				continue;
			}
		}
		c = s[i];
		if (c > 0x20 && c < 0x7f && c != '\\') {
			*o++ = c;
		} else {
			/* spaces too, so a field never splits in two */
			o[0] = '\\';
			o[1] = 'x';
			o[2] = hex[c >> 4];
			o[3] = hex[c & 15];
			o += 4;
		}
	}
	return o;
}

void lt_put_text_str(struct lt_buf *b, const char *str, size_t n)
{
	b->len = lt_w_text_str(b->p + b->len, str, n) - b->p;
}

void lt_json_key(struct lt_buf *b, const char *key)
{
	lt_put_c(b, ',');
	lt_put_c(b, '"');
	lt_put_s(b, key);
	lt_put_c(b, '"');
	lt_put_c(b, ':');
}

void lt_json_u64(struct lt_buf *b, const char *key, uint64_t v)
{
	lt_json_key(b, key);
	lt_put_u64(b, v);
}

void lt_json_str(struct lt_buf *b, const char *key, const char *s, size_t n)
{
	lt_json_key(b, key);
	lt_put_json_str(b, s, n);
}

void lt_json_bool(struct lt_buf *b, const char *key, int v)
{
	lt_json_key(b, key);
	lt_put_s(b, v ? "true" : "false");
}

void lt_text_u64(struct lt_buf *b, const char *key, uint64_t v)
{
	lt_put_c(b, ' ');
	lt_put_s(b, key);
	lt_put_c(b, '=');
	lt_put_u64(b, v);
}

void lt_text_str(struct lt_buf *b, const char *key, const char *s, size_t n)
{
	lt_put_c(b, ' ');
	lt_put_s(b, key);
	lt_put_c(b, '=');
	lt_put_text_str(b, s, n);
}
