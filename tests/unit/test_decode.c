// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Decoder: the fast path, older and newer producers, and rejects. */
#include <string.h>

#include "records.h"
#include "tap.h"

static struct lt_decode_stats st;
static struct lt_rec out;
static unsigned char buf[4096];

static void hdr(void *p, __u16 type, __u16 size)
{
	struct lt_hdr h = { .type = type, .size = size, .cpu = 1, .ts_ns = 42, .pid = 7, .tid = 8 };

	memcpy(p, &h, sizeof(h));
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

int main(void)
{
	const struct lt_probe *p;
	struct lt_exec ex;
	struct lt_exit xt;
	struct lt_fork fk;

	/* 1. same size: one memcpy, every byte equal */
	memset(&ex, 0xab, sizeof(ex));
	hdr(&ex, LT_TYPE_EXEC, sizeof(ex));
	memset(&out, 0x55, sizeof(out));
	p = lt_decode(&ex, sizeof(ex), &out, &st);
	ok(p && p->type == LT_TYPE_EXEC, "exact-size exec decodes as exec");
	ok(!memcmp(&out, &ex, sizeof(ex)), "exact size: all %zu bytes copied", sizeof(ex));
	ok(st.fast == 1 && st.older == 0 && st.newer == 0, "exact size counted as fast path");

	/* 2. older producer: a fork record that ended before comm */
	memset(&fk, 0xcd, sizeof(fk));
	hdr(&fk, LT_TYPE_FORK, offsetof(struct lt_fork, comm));
	fk.child_pid = 99;
	memset(&out, 0x55, sizeof(out));
	p = lt_decode(&fk, sizeof(fk), &out, &st);
	ok(p && p->type == LT_TYPE_FORK, "short fork decodes as fork");
	ok(((struct lt_fork *)(void *)&out)->child_pid == 99, "short fork: known field kept");
	ok(all_zero(out.raw + offsetof(struct lt_fork, comm), LT_COMM_LEN),
	   "short fork: fields it lacked read as zero");
	ok(st.older == 1, "short record counted as older");

	/* 3. newer producer: an exit record with 40 bytes we do not know */
	memset(buf, 0xee, sizeof(buf));
	memset(&xt, 0, sizeof(xt));
	hdr(&xt, LT_TYPE_EXIT, sizeof(xt) + 40);
	xt.exit_code = 7;
	xt.signal = 9;
	memcpy(xt.comm, "abc", 4);
	memcpy(buf, &xt, sizeof(xt));
	memset(&out, 0x55, sizeof(out));
	p = lt_decode(buf, sizeof(xt) + 40, &out, &st);
	ok(p && p->type == LT_TYPE_EXIT, "long exit decodes as exit");
	ok(!memcmp(&out, &xt, sizeof(xt)), "long exit: the known part copied");
	ok(out.raw[sizeof(xt)] == 0x55, "long exit: the unknown tail is not copied");
	ok(st.newer == 1, "long record counted as newer");

	/* 4. rejects: below the header, size below header, size past the buffer */
	p = lt_decode(&xt, sizeof(struct lt_hdr) - 1, &out, &st);
	ok(!p && st.rejected == 1, "sample shorter than the header is rejected");
	hdr(buf, LT_TYPE_EXIT, sizeof(struct lt_hdr) - 8);
	p = lt_decode(buf, 64, &out, &st);
	ok(!p && st.rejected == 2, "size field below the header size is rejected");
	hdr(buf, LT_TYPE_EXEC, sizeof(struct lt_exec));
	p = lt_decode(buf, 100, &out, &st);
	ok(!p && st.rejected == 3, "size field past the buffer is rejected");

	/* 5. a type this loader does not know is skipped and counted */
	hdr(buf, 999, 64);
	p = lt_decode(buf, 64, &out, &st);
	ok(!p && st.unknown == 1, "unknown type skipped and counted");
	ok(st.fast == 1 && st.older == 1 && st.newer == 1, "rejects did not touch other counters");
	return tap_done();
}
