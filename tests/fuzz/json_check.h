/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A strict JSON checker for the fuzz targets (RFC 8259): objects, arrays, strings with their
 * escapes and valid UTF-8 (no raw control byte), numbers, true, false, null; an object's keys
 * must differ. jc_valid() says whether s[0..n) is exactly one value; the targets abort() when
 * output they produced is not.
 */
#ifndef LT_JSON_CHECK_H
#define LT_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define JC_MAX_DEPTH 64
#define JC_MAX_KEYS 256 /* per object: more is an error (no record has that many) */

struct jc {
	const unsigned char *p, *end;
};

static void jc_ws(struct jc *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool jc_lit(struct jc *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return false;
	j->p += n;
	return true;
}

static bool jc_hex4(struct jc *j, unsigned int *v)
{
	*v = 0;
	if (j->end - j->p < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		unsigned char c = *j->p++;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else
			return false;
	}
	return true;
}

/* one UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF) */
static bool jc_utf8(struct jc *j)
{
	const unsigned char *s = j->p;
	size_t left = j->end - s, n;
	unsigned char c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return false;
	if (left < n)
		return false;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return false;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return false;
	j->p += n;
	return true;
}

static bool jc_string(struct jc *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end) {
		unsigned char c = *j->p;
		unsigned int u, lo;

		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c >= 0x80) {
			if (!jc_utf8(j))
				return false;
			continue;
		}
		j->p++;
		if (c != '\\')
			continue;
		if (j->p >= j->end)
			return false;
		c = *j->p++;
		if (c && strchr("\"\\/bfnrt", c))
			continue;
		if (c != 'u' || !jc_hex4(j, &u))
			return false;
		if (u >= 0xdc00 && u <= 0xdfff)
			return false; /* a lone low surrogate */
		if (u >= 0xd800 && u <= 0xdbff &&
		    (!jc_lit(j, "\\u") || !jc_hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff))
			return false; /* a high surrogate without its low half */
	}
	return false;
}

static bool jc_digits(struct jc *j)
{
	const unsigned char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static bool jc_number(struct jc *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (j->p >= j->end || *j->p < '1' || *j->p > '9' || !jc_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!jc_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!jc_digits(j))
			return false;
	}
	return true;
}

static bool jc_value(struct jc *j, int depth);

static bool jc_object(struct jc *j, int depth)
{
	const unsigned char *key[JC_MAX_KEYS];
	size_t klen[JC_MAX_KEYS], nkeys = 0;

	j->p++; /* { */
	jc_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	for (;;) {
		const unsigned char *k;

		jc_ws(j);
		k = j->p;
		if (!jc_string(j) || nkeys == JC_MAX_KEYS)
			return false;
		/* the same key twice: compared as written (the encoders escape one way) */
		for (size_t i = 0; i < nkeys; i++)
			if (klen[i] == (size_t)(j->p - k) && !memcmp(key[i], k, klen[i]))
				return false;
		key[nkeys] = k;
		klen[nkeys++] = j->p - k;
		jc_ws(j);
		if (j->p >= j->end || *j->p++ != ':' || !jc_value(j, depth + 1))
			return false;
		jc_ws(j);
		if (j->p >= j->end)
			return false;
		if (*j->p == '}') {
			j->p++;
			return true;
		}
		if (*j->p++ != ',')
			return false;
	}
}

static bool jc_array(struct jc *j, int depth)
{
	j->p++; /* [ */
	jc_ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return true;
	}
	for (;;) {
		if (!jc_value(j, depth + 1))
			return false;
		jc_ws(j);
		if (j->p >= j->end)
			return false;
		if (*j->p == ']') {
			j->p++;
			return true;
		}
		if (*j->p++ != ',')
			return false;
	}
}

static bool jc_value(struct jc *j, int depth)
{
	if (depth > JC_MAX_DEPTH)
		return false;
	jc_ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
		return jc_object(j, depth);
	case '[':
		return jc_array(j, depth);
	case '"':
		return jc_string(j);
	case 't':
		return jc_lit(j, "true");
	case 'f':
		return jc_lit(j, "false");
	case 'n':
		return jc_lit(j, "null");
	default:
		return jc_number(j);
	}
}

/* exactly one JSON value in s[0..n), whitespace around it allowed */
static inline bool jc_valid(const char *s, size_t n)
{
	struct jc j = { (const unsigned char *)s, (const unsigned char *)s + n };

	if (!jc_value(&j, 0))
		return false;
	jc_ws(&j);
	return j.p == j.end;
}

#endif
