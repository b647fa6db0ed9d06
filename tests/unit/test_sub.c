// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The subscriber's hello (loader/subproto.c): what a subscriber sends is read back whole, and
 * every malformed byte the owner could be sent is refused; the filter in the owner.
 */
#include <errno.h>
#include <string.h>

#include "sub.h"
#include "tap.h"

static size_t make(const char *container, const char *unit, const char *cname, uint64_t types,
		   uint32_t pid, unsigned char *buf)
{
	struct lt_sub_filter f = { .types = types, .pid = pid };

	strcpy(f.container, container);
	strcpy(f.unit, unit);
	strcpy(f.cname, cname);
	return lt_sub_hello_make(&f, buf);
}

/* a good hello, one byte at `at` changed to `v`: refused? */
static bool refused(size_t at, unsigned char v)
{
	unsigned char buf[1024];
	struct lt_sub_filter f;
	const char *why;
	size_t n = make("abc", "web.service", "web", 1ull << LT_TYPE_EXEC, 42, buf);

	buf[at] = v;
	return lt_sub_hello_parse(buf, n, &f, &why) != 0 && why && *why;
}

int main(void)
{
	unsigned char buf[1024];
	struct lt_sub_filter f;
	struct lt_sub_hello h;
	const char *why;
	size_t n;

	n = make("0123abcd", "nginx.service", "web-1", 1ull << LT_TYPE_EXIT, 1234, buf);
	ok(n == sizeof(h) + 8 + 13 + 5, "a hello is its fixed part and its strings (%zu)", n);
	ok(!lt_sub_hello_parse(buf, n, &f, &why), "a good hello is taken");
	ok(f.types == 1ull << LT_TYPE_EXIT && f.pid == 1234 && !strcmp(f.container, "0123abcd") &&
		   !strcmp(f.unit, "nginx.service") && !strcmp(f.cname, "web-1"),
	   "the filter read back is the one sent");
	n = make("", "", "", 0, 0, buf);
	ok(!lt_sub_hello_parse(buf, n, &f, &why) && !f.types && !f.pid && !f.container[0],
	   "an empty filter: everything");

	/* lengths: short, long, and each length byte off by one */
	n = make("abc", "web.service", "web", 0, 0, buf);
	for (size_t len = 0; len < n; len++)
		if (!lt_sub_hello_parse(buf, len, &f, &why))
			ok(0, "a hello cut to %zu bytes is refused", len);
	ok(lt_sub_hello_parse(buf, sizeof(h) - 1, &f, &why) == -EPROTO, "a short hello is refused");
	ok(lt_sub_hello_parse(buf, n + 1, &f, &why) == -EINVAL, "a byte past the hello is refused");
	ok(refused(offsetof(struct lt_sub_hello, container_len), 4), "a container length too long");
	ok(refused(offsetof(struct lt_sub_hello, unit_len), 255), "a unit length past the end");
	ok(refused(offsetof(struct lt_sub_hello, cname_len), 0), "a name length too short");

	/* each fixed field */
	ok(refused(0, 'X'), "a bad magic");
	ok(refused(offsetof(struct lt_sub_hello, version), 2), "another version");
	ok(refused(offsetof(struct lt_sub_hello, flags), 1), "flags not 0");
	ok(refused(offsetof(struct lt_sub_hello, zero), 1), "the zero byte not 0");
	ok(refused(offsetof(struct lt_sub_hello, types) + 7, 0x80), "a type no record has");
	ok(refused(offsetof(struct lt_sub_hello, pid) + 3, 0x40), "a pid out of range");

	/* the strings: hex prefix, printable names, a unit that is a unit */
	ok(refused(sizeof(h), 'G'), "a container prefix not hex");
	ok(refused(sizeof(h), 'A'), "a container prefix in upper case");
	ok(refused(sizeof(h) + 3, '/'), "a unit with a slash");
	ok(refused(sizeof(h) + 3, 0), "a unit with a NUL");
	ok(refused(sizeof(h) + 3 + 10, 'x'), "a unit without .service or .scope");
	ok(refused(sizeof(h) + 3 + 11, 0x1b), "a name with an escape byte");
	ok(refused(sizeof(h) + 3 + 11, 0xff), "a name with a byte past ASCII");
	ok(!refused(sizeof(h) + 3 + 11, 'z'), "a name of printable bytes is taken");

	/* every single byte value at every position: no crash, and never a filter with junk */
	n = make("abc", "web.service", "web", 1ull << LT_TYPE_EXEC, 42, buf);
	for (size_t at = 0; at < n; at++)
		for (int v = 0; v < 256; v++) {
			unsigned char b[1024];

			memcpy(b, buf, n);
			b[at] = v;
			if (!lt_sub_hello_parse(b, n, &f, &why) &&
			    (strlen(f.container) > LT_IDENT_CID_LEN || strchr(f.unit, '/'))) {
				ok(0, "byte %zu = %d gave a bad filter", at, v);
				return tap_done();
			}
		}
	ok(1, "every byte at every position: refused or a valid filter");
	return tap_done();
}
