// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "encode.h"

static const char hex[] = "0123456789abcdef";

void lt_put_mem(struct lt_buf *b, const char *s, size_t n)
{
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void lt_put_s(struct lt_buf *b, const char *s)
{
	lt_put_mem(b, s, strlen(s));
}

void lt_put_u64(struct lt_buf *b, uint64_t v)
{
	/* two digits per division: the counters and timestamps of every record go through here */
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
				    "31323334353637383940414243444546474849505152535455565758596061"
				    "62636465666768697071727374757677787980818283848586878889909192"
				    "939495969798"
				    "99";
	char tmp[20];
	int i = sizeof(tmp);

	while (v >= 100) {
		unsigned int d = (v % 100) * 2;

		v /= 100;
		tmp[--i] = pairs[d + 1];
		tmp[--i] = pairs[d];
	}
	if (v >= 10) {
		tmp[--i] = pairs[v * 2 + 1];
		tmp[--i] = pairs[v * 2];
	} else {
		tmp[--i] = '0' + v;
	}
	lt_put_mem(b, tmp + i, sizeof(tmp) - i);
}

void lt_put_s64(struct lt_buf *b, int64_t v)
{
	if (v < 0) {
		lt_put_c(b, '-');
		lt_put_u64(b, -(uint64_t)v);
	} else {
		lt_put_u64(b, v);
	}
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

static void put_u00(struct lt_buf *b, unsigned char c)
{
	char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

	lt_put_mem(b, e, sizeof(e));
}

void lt_put_json_str(struct lt_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	lt_put_c(b, '"');
	while (i < n) {
		unsigned char c = s[i];
		size_t k;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			i++;
			run++;
			continue;
		}
		/* copy the plain run in one go, then the special byte(s) */
		lt_put_mem(b, (const char *)s + i - run, run);
		run = 0;
		if (c == '"' || c == '\\') {
			lt_put_c(b, '\\');
			lt_put_c(b, c);
			i++;
		} else if (c >= 0x80 && (k = utf8_len(s + i, n - i))) {
			lt_put_mem(b, (const char *)s + i, k);
			i += k;
		} else {
			put_u00(b, c); /* control byte, DEL or invalid UTF-8 */
			i++;
		}
	}
	lt_put_mem(b, (const char *)s + i - run, run);
	lt_put_c(b, '"');
}

void lt_put_text_str(struct lt_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	/* a local cursor: stores through char * may alias b->len, which would be reloaded and
	 * stored again for every byte */
	char *o = b->p + b->len;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

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
	b->len = o - b->p;
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
