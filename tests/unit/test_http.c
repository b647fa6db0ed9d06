// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The request parser of lowtrace metrics: every status it answers, bare-LF
 * lines, 414 against 431, junk caught before a line end, and requests that
 * arrive in pieces (each split gives the answer of the whole).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "tap.h"

#define CAP 8192

static bool head;

static int status(const char *s, size_t n)
{
	return lt_http_status(s, n, CAP, &head);
}

#define S(lit) lit, sizeof(lit) - 1

/* fed in two pieces at every split point: the same answer as in one piece */
static bool same_at_every_split(const char *s, size_t n, int want)
{
	for (size_t k = 0; k <= n; k++) {
		struct lt_http h = { 0 };
		int first = lt_http_parse(&h, s, k, CAP);

		if (first && first != want)
			return false;
		if (lt_http_parse(&h, s, n, CAP) != want)
			return false;
	}
	return true;
}

static char big[CAP];

int main(void)
{
	ok(status(S("GET /metrics HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n")) == 200 && !head,
	   "GET /metrics with headers: 200");
	ok(status(S("GET /metrics HTTP/1.1\n\n")) == 200 && !head, "bare LF lines: 200");
	ok(status(S("GET /metrics HTTP/1.0\nHost: a\r\nX:\n\r\n")) == 200,
	   "CRLF and bare LF mixed, an empty value: 200");
	ok(status(S("HEAD /metrics HTTP/1.1\r\n\r\n")) == 200 && head, "HEAD: 200, no body");
	ok(status(S("HEAD /metrics?name[]=x HTTP/1.1\r\n\r\n")) == 200 && head,
	   "HEAD with a query: 200");
	ok(status(S("GET /metrics HTTP/1.1\r\n\r\nPOST /x junk\x01")) == 200,
	   "bytes after the blank line are not read");
	ok(status(S("GET /metric HTTP/1.1\r\n\r\n")) == 404 &&
		   status(S("GET /metrics/ HTTP/1.1\r\n\r\n")) == 404 &&
		   status(S("GET * HTTP/1.1\r\n\r\n")) == 404,
	   "other paths: 404");
	ok(status(S("POST /metrics HTTP/1.1\r\n\r\n")) == 405 &&
		   status(S("get /metrics HTTP/1.1\r\n\r\n")) == 405,
	   "other methods (case matters): 405");
	ok(status(S("GET  HTTP/1.1\r\n\r\n")) == 400, "empty path: 400");
	ok(status(S("GET /metrics  HTTP/1.1\r\n\r\n")) == 400 &&
		   status(S(" GET /metrics HTTP/1.1\r\n\r\n")) == 400,
	   "a second space, a leading space: 400");
	ok(status(S("GET /metrics HTTP/2.0\r\n\r\n")) == 400 &&
		   status(S("GET /metrics HTTP/1.x\r\n\r\n")) == 400 &&
		   status(S("GET /metrics HTTP/1.1 \r\n\r\n")) == 400 &&
		   status(S("GET /metrics\r\n\r\n")) == 400,
	   "no HTTP/1.x version: 400");
	ok(status(S("GET /metrics HTTP/1.1\rX")) == 400 &&
		   status(S("GET /metrics HTTP/1.1\r\nA: b\r\r\n")) == 400,
	   "CR not followed by LF: 400");
	ok(status(S("GET /metrics HTTP/1.1\r\nA b: c\r\n\r\n")) == 400 &&
		   status(S("GET /metrics HTTP/1.1\r\nA : c\r\n\r\n")) == 400 &&
		   status(S("GET /metrics HTTP/1.1\r\nA: c\r\n folded\r\n\r\n")) == 400 &&
		   status(S("GET /metrics HTTP/1.1\r\nA: c\x01\r\n\r\n")) == 400 &&
		   status(S("GET /metrics HTTP/1.1\r\nA: c\0d\r\n\r\n")) == 400,
	   "bad header lines (space in name, folding, control bytes): 400");
	ok(status(S("GET /metrics HTTP/1.1\r\nA: caf\xc3\xa9\t\r\n\r\n")) == 200,
	   "a header value with high bytes and a tab: 200");

	/* junk is caught at its first bad byte, not at a line end or a full buffer */
	ok(status(S("\x16\x03\x01\x02")) == 400, "a TLS hello: 400 at once");
	ok(status(S("GET /met\x80")) == 400 && status(S("GE\x01")) == 400,
	   "a high or control byte in the request line: 400 at once");
	ok(status(S("ABCDEFGHIJKLMNOPQ")) == 400, "a method longer than 16 bytes: 400 at once");
	ok(status(S("GET /metrics HTTP/1.1\r\n\x7f")) == 400, "a header line of junk: 400");

	/* partial requests: wait */
	ok(status(S("")) == 0 && status(S("GET")) == 0 && status(S("GET /metrics")) == 0 &&
		   status(S("GET /metrics HTTP/1.1\r")) == 0 &&
		   status(S("GET /metrics HTTP/1.1\r\nHost: a\r\n")) == 0 &&
		   status(S("GET /metrics HTTP/1.1\r\nHost: a\r\n\r")) == 0,
	   "partial requests: 0 (need more)");
	{
		static const char req[] =
			"GET /metrics?a=b HTTP/1.1\r\nHost: x\nAccept: */*\r\n\r\n";
		static const char bad[] = "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n";
		static const char notfound[] = "HEAD /nope HTTP/1.0\n\n";

		ok(same_at_every_split(S(req), 200) && same_at_every_split(S(bad), 400) &&
			   same_at_every_split(S(notfound), 404),
		   "in two pieces at every split point: the answer of the whole");
	}
	{
		struct lt_http h = { 0 };

		ok(lt_http_parse(&h, S("GET /x HTTP/1.1\n\n"), CAP) == 404 &&
			   lt_http_parse(&h, S("GET /x HTTP/1.1\n\n"), CAP) == 404,
		   "the answer sticks on later calls");
	}

	/* a full buffer: the request line did not fit (414) or the headers did not (431) */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	ok(status(big, sizeof(big)) == 414, "a path that fills the buffer: 414");
	ok(status(big, sizeof(big) - 1) == 0, "the same one byte short: 0 (need more)");
	memcpy(big, "GET /metrics HTTP/1.1\r\nX-Big: ", 30);
	ok(status(big, sizeof(big)) == 431, "a header that fills the buffer: 431");
	for (size_t i = 30; i + 6 < sizeof(big); i += 6)
		memcpy(big + i, "\r\nA: b", 6);
	ok(status(big, sizeof(big)) == 431, "many small headers that fill the buffer: 431");
	memset(big, 'A', sizeof(big));
	ok(status(big, sizeof(big)) == 400, "a buffer of one letter: 400 (junk), not 414");
	memset(big, 0, sizeof(big));
	ok(status(big, sizeof(big)) == 400, "a buffer of zeros: 400");
	return tap_done();
}
