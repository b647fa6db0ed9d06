// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Encoders: exact output, and untrusted bytes never break JSON or a terminal. */
#include <string.h>

#include "records.h"
#include "tap.h"

static char mem[LT_ENC_MAX * 2];
static struct lt_buf b = { mem, 0, sizeof(mem) };

static const char *json(const char *s, size_t n)
{
	b.len = 0;
	lt_put_json_str(&b, s, n);
	b.p[b.len] = 0;
	return b.p;
}

static const char *text(const char *s, size_t n)
{
	b.len = 0;
	lt_put_text_str(&b, s, n);
	b.p[b.len] = 0;
	return b.p;
}

#define S(lit) lit, sizeof(lit) - 1

int main(void)
{
	struct lt_rec r;
	struct lt_exec *e = (void *)&r;
	struct lt_exit *x = (void *)&r;
	static const char args[] = "/bin/sh\0-c\0exit 7\0\0arg with spaces";
	static char worst[LT_ARGS_MAX];

	ok(!strcmp(json(S("plain")), "\"plain\""), "plain string");
	ok(!strcmp(json(S("q\"b\\")), "\"q\\\"b\\\\\""), "quote and backslash escaped");
	ok(!strcmp(json(S("\x1b[31m\n\x7f")), "\"\\u001b[31m\\u000a\\u007f\""),
	   "ESC, newline and DEL as \\u00XX");
	ok(!strcmp(json(S("\xc3\xa9 \xf0\x9f\x98\x80")), "\"\xc3\xa9 \xf0\x9f\x98\x80\""),
	   "valid UTF-8 passes through");
	ok(!strcmp(json(S("\xff\xc3\x28")), "\"\\u00ff\\u00c3(\""), "invalid UTF-8 bytes escaped");
	ok(!strcmp(json(S("\xc0\xaf\xed\xa0\x80")), "\"\\u00c0\\u00af\\u00ed\\u00a0\\u0080\""),
	   "overlong and surrogate sequences escaped");
	ok(!strcmp(json(S("\xe2\x82")), "\"\\u00e2\\u0082\""), "sequence cut at the end escaped");
	ok(!strcmp(text(S("a b\x1b]0;x\x07\xff")), "a\\x20b\\x1b]0;x\\x07\\xff"),
	   "text: spaces, escapes and high bytes as \\xNN");

	memset(&r, 0, sizeof(r));
	e->hdr = (struct lt_hdr){ LT_TYPE_EXEC, sizeof(*e), 1, 123456789, 100, 101 };
	e->ppid = 1;
	e->uid = 1000;
	e->gid = 1001;
	e->argc = 5;
	e->cgroup_id = 4242;
	memcpy(e->comm, "sh", 3);
	memcpy(e->filename, "/bin/sh", 8);
	e->filename_len = 7;
	memcpy(e->args, args, sizeof(args) - 1);
	e->args_len = sizeof(args) - 1;
	b.len = 0;
	lt_encode_json(&b, lt_probe_by_type(LT_TYPE_EXEC), &r);
	b.p[b.len] = 0;
	ok(!strcmp(b.p, "{\"type\":\"exec\",\"ts_ns\":123456789,\"cpu\":1,\"pid\":100,\"tid\":101,"
			"\"ppid\":1,\"uid\":1000,\"gid\":1001,\"cgroup_id\":4242,\"comm\":\"sh\","
			"\"filename\":\"/bin/sh\",\"filename_truncated\":false,\"argc\":5,"
			"\"args\":[\"/bin/sh\",\"-c\",\"exit 7\",\"\",\"arg with spaces\"],"
			"\"args_truncated\":false}\n"),
	   "exec JSON line exact (empty arg kept, unterminated last arg kept)");

	/* args_len beyond the array is clamped, never read past it */
	e->args_len = 60000;
	e->flags = LT_EXEC_ARGS_TRUNC;
	b.len = 0;
	lt_encode_json(&b, lt_probe_by_type(LT_TYPE_EXEC), &r);
	ok(b.len < LT_ENC_MAX && strstr(b.p, "\"args_truncated\":true"),
	   "hostile args_len clamped to the array");

	/* the worst case fits LT_ENC_MAX: every byte escaped */
	memset(worst, 0x01, sizeof(worst));
	memcpy(e->args, worst, sizeof(worst));
	memset(e->filename, 0x01, LT_FILENAME_MAX);
	memset(e->comm, 0x01, LT_COMM_LEN);
	e->filename_len = LT_FILENAME_MAX;
	e->args_len = LT_ARGS_MAX;
	b.len = 0;
	lt_encode_json(&b, lt_probe_by_type(LT_TYPE_EXEC), &r);
	ok(b.len <= LT_ENC_MAX, "worst-case exec JSON (%zu bytes) fits LT_ENC_MAX", b.len);

	memset(&r, 0, sizeof(r));
	x->hdr = (struct lt_hdr){ LT_TYPE_EXIT, sizeof(*x), 0, 5, 9, 9 };
	x->ppid = 1;
	x->exit_code = 0;
	x->signal = 9;
	x->lifetime_ns = 1000;
	memcpy(x->comm,
	       "sl\x1b"
	       "ep",
	       6);
	b.len = 0;
	lt_encode_text(&b, lt_probe_by_type(LT_TYPE_EXIT), &r);
	b.p[b.len] = 0;
	ok(!strcmp(b.p, "exit ts_ns=5 cpu=0 pid=9 tid=9 ppid=1 comm=sl\\x1bep exit_code=0 "
			"signal=9 lifetime_ns=1000\n"),
	   "exit text line exact");
	return tap_done();
}
