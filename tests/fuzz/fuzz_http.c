// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the request parser of lowtrace metrics: any bytes give
 * one of the documented statuses, 0 (need more) only while the buffer has room,
 * and the same answer whether the request came in one piece or two.
 * ASan checks that nothing past n is read (libFuzzer's copy ends at n).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define CAP 8192 /* the server's request buffer */

static bool documented(int s)
{
	return s == 0 || s == 200 || s == 400 || s == 404 || s == 405 || s == 414 || s == 431;
}

static int parse(const char *p, size_t n, size_t cap, bool *head)
{
	struct lt_http h = { 0 };
	int s = lt_http_parse(&h, p, n, cap);

	if (!documented(s) || (!s && n >= cap) || h.pos > n ||
	    (s && lt_http_parse(&h, p, n, cap) != s))
		abort();
	*head = h.head;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	size_t n = size < CAP ? size : CAP;
	bool head, h2;
	int whole = parse(p, n, CAP, &head);

	/* HEAD only for a 200 or 404 of a request whose method is HEAD */
	if (head && (memcmp(p, "HEAD ", 5) || (whole != 200 && whole != 404)))
		abort();
	/* the input as the whole buffer: full, so never 0 */
	if (size && !parse(p, size, size, &h2))
		abort();
	/* in two pieces: at every split point of a short input, at ~256 of a long one */
	for (size_t k = 0; k < n; k += n / 256 + 1) {
		struct lt_http h = { 0 };
		int first = lt_http_parse(&h, p, k, CAP);

		if ((first && first != whole) || lt_http_parse(&h, p, n, CAP) != whole ||
		    h.head != head)
			abort();
	}
	return 0;
}
