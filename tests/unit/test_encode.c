// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Encoders: exact output, and untrusted bytes never break JSON or a terminal. */
#define _GNU_SOURCE /* O_DIRECT */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
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

/* every number of digits, and the edges of each */
static void numbers(void)
{
	static const uint64_t v[] = { 0,
				      7,
				      9,
				      10,
				      42,
				      99,
				      100,
				      101,
				      999,
				      1000,
				      65535,
				      123456789,
				      4294967295ull,
				      10000000000000000000ull,
				      UINT64_MAX };
	char want[32];
	bool same = true;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		b.len = 0;
		lt_put_u64(&b, v[i]);
		b.p[b.len] = 0;
		snprintf(want, sizeof(want), "%llu", (unsigned long long)v[i]);
		same &= !strcmp(b.p, want);
	}
	for (uint64_t x = 0; x < 100000; x += 7) {
		b.len = 0;
		lt_put_u64(&b, x);
		b.p[b.len] = 0;
		snprintf(want, sizeof(want), "%llu", (unsigned long long)x);
		same &= !strcmp(b.p, want);
	}
	ok(same, "lt_put_u64 writes what printf writes, 0 to UINT64_MAX");
	b.len = 0;
	lt_put_s64(&b, INT64_MIN);
	b.p[b.len] = 0;
	ok(!strcmp(b.p, "-9223372036854775808"), "lt_put_s64: INT64_MIN");
}

/*
 * The word-at-a-time escapers against themselves a byte at a time: for ASCII
 * (each byte escaped on its own) a string's encoding is its bytes' encodings
 * joined, and one byte never takes the 8-byte path. 100 000 random strings
 * over the bytes the word test must catch and their neighbours.
 */
static void words(void)
{
	static const unsigned char pick[] = { 0,   1,	0x1f, 0x20, 0x21, '"',	'#',  '\\',
					      '[', ']', 'a',  'z',  '~',  0x7f, 0x5b, 0x5d };
	static char one[64], whole[512], s[48];
	unsigned long long x = 0x2545f4914f6cdd1dull;
	unsigned long bad_json = 0, bad_text = 0;
	struct lt_buf w = { whole, 0, sizeof(whole) }, o = { one, 0, sizeof(one) };

	for (int k = 0; k < 100000; k++) {
		size_t n, jn = 0, tn = 0;
		static char jref[512], tref[512];

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = x % sizeof(s);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			s[i] = (char)(x % 3 ? 'a' + x % 26 : pick[x % sizeof(pick)]);
		}
		jref[jn++] = '"';
		for (size_t i = 0; i < n; i++) {
			o.len = 0;
			lt_put_json_str(&o, s + i, 1);
			memcpy(jref + jn, one + 1, o.len - 2);
			jn += o.len - 2;
			o.len = 0;
			lt_put_text_str(&o, s + i, 1);
			memcpy(tref + tn, one, o.len);
			tn += o.len;
		}
		jref[jn++] = '"';
		w.len = 0;
		lt_put_json_str(&w, s, n);
		bad_json += w.len != jn || memcmp(whole, jref, jn);
		w.len = 0;
		lt_put_text_str(&w, s, n);
		bad_text += w.len != tn || memcmp(whole, tref, tn);
	}
	ok(!bad_json, "JSON escaping word at a time = byte at a time (%lu of 100000 differ)",
	   bad_json);
	ok(!bad_text, "text escaping word at a time = byte at a time (%lu of 100000 differ)",
	   bad_text);
}

int main(void)
{
	struct lt_rec r;
	struct lt_exec *e = (void *)&r;
	struct lt_exit *x = (void *)&r;
	static const char args[] = "/bin/sh\0-c\0exit 7\0\0arg with spaces";
	static char worst[LT_ARGS_MAX];

	numbers();
	words();
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
	e->hdr = (struct lt_hdr){ LT_TYPE_EXEC, sizeof(*e), 1,	 LT_HDR_CGROUP,
				  123456789,	100,	    101, 4242 };
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
	/* ancestry: exec_ids past a double's integers, a known and an unknown ancestor */
	e->euid = 0;
	e->egid = 1001;
	e->exec_id = 18446744073709551615ull;
	e->parent_exec_id = 9007199254740993ull;
	e->n_anc = 2;
	e->anc_more = 1;
	e->anc[0] = (struct lt_anc){ .exec_id = 9007199254740993ull, .pid = 1, .name_len = 10 };
	memcpy(e->anc[0].name, "/sbin/i\"t\x01", 10);
	e->anc[1] = (struct lt_anc){ .pid = 0, .flags = LT_ANC_UNKNOWN };
	b.len = 0;
	lt_encode_json(&b, lt_probe_by_type(LT_TYPE_EXEC), &r);
	b.p[b.len] = 0;
	ok(!strcmp(b.p, "{\"type\":\"exec\",\"ts_ns\":123456789,\"cpu\":1,\"pid\":100,\"tid\":101,"
			"\"cgroup_id\":4242,"
			"\"ppid\":1,\"uid\":1000,\"gid\":1001,\"pid_ns\":0,\"mnt_ns\":0,\"net_ns\":"
			"0,\"comm\":\"sh\","
			"\"filename\":\"/bin/sh\",\"filename_truncated\":false,\"argc\":5,"
			"\"args\":[\"/bin/sh\",\"-c\",\"exit 7\",\"\",\"arg with spaces\"],"
			"\"args_truncated\":false,\"args_shed\":false,\"euid\":0,\"egid\":1001,"
			"\"fileless\":false,\"exec_id\":\"18446744073709551615\","
			"\"parent_exec_id\":\"9007199254740993\",\"ancestors\":[{\"pid\":1,"
			"\"exec_id\":\"9007199254740993\",\"filename\":\"/sbin/i\\\"t\\u0001\"},"
			"{\"pid\":0,\"exec_id\":null,\"filename\":null}],"
			"\"ancestors_truncated\":true}\n"),
	   "exec JSON line exact (empty arg kept, unterminated last arg kept, ancestry)");
	b.len = 0;
	lt_encode_text(&b, lt_probe_by_type(LT_TYPE_EXEC), &r);
	b.p[b.len] = 0;
	ok(strstr(b.p, " euid=0 egid=1001 exec_id=18446744073709551615 parent_exec_id=9007199254740993"
		       " ancestors=1:/sbin/i\"t\\x01,0:? ...\n") != NULL,
	   "exec text: ancestry");

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
	e->n_anc = LT_ANC_MAX;
	for (int i = 0; i < LT_ANC_MAX; i++) {
		e->anc[i] = (struct lt_anc){ .exec_id = ~0ull, .pid = ~0u, .name_len = LT_ANC_NAME - 1 };
		memset(e->anc[i].name, 0x01, LT_ANC_NAME);
	}
	b.len = 0;
	lt_encode_json(&b, lt_probe_by_type(LT_TYPE_EXEC), &r);
	ok(b.len <= LT_ENC_MAX, "worst-case exec JSON (%zu bytes) fits LT_ENC_MAX", b.len);
	{
		/* with the worst identity too: a 1024-byte path and a 128-byte unit, all escaped */
		static char wpath[1024];
		struct lt_ident wid = {};

		memset(wpath, 0x01, sizeof(wpath));
		memset(wid.unit, 0x01, LT_IDENT_UNIT_MAX);
		memset(wid.container_id, 'a', LT_IDENT_CID_LEN);
		memset(wid.pod_uid, 'b', LT_IDENT_POD_LEN);
		wid.cgroup = wpath;
		wid.cgroup_len = sizeof(wpath);
		wid.unit_len = LT_IDENT_UNIT_MAX;
		wid.cid_len = LT_IDENT_CID_LEN;
		wid.pod_len = LT_IDENT_POD_LEN;
		b.len = 0;
		lt_encode_json_id(&b, lt_probe_by_type(LT_TYPE_EXEC), &r, &wid);
		ok(b.len <= LT_ENC_MAX, "worst-case exec JSON with identity (%zu bytes) fits",
		   b.len);
	}

	memset(&r, 0, sizeof(r));
	x->hdr = (struct lt_hdr){ LT_TYPE_EXIT, sizeof(*x), 0, LT_HDR_CGROUP, 5, 9, 9, 0 };
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
	ok(!strcmp(b.p,
		   "exit ts_ns=5 cpu=0 pid=9 tid=9 cgroup_id=0 ppid=1 comm=sl\\x1bep exit_code=0 "
		   "signal=9 lifetime_ns=1000\n"),
	   "exit text line exact");

	/* the records of the later probes: names, addresses and numbers as documented */
	{
		struct lt_signal *g = (void *)&r;
		struct lt_open *o = (void *)&r;
		struct lt_tcp *t = (void *)&r;
		struct lt_tcp_retrans *q = (void *)&r;

		memset(&r, 0, sizeof(r));
		g->hdr = (struct lt_hdr){
			LT_TYPE_SIGNAL, sizeof(*g), 1, LT_HDR_CGROUP, 7, 10, 11, 0
		};
		g->target_pid = 20;
		g->target_tid = 21;
		g->sig = 34;
		g->result = 2;
		memcpy(g->comm, "kill", 5);
		memcpy(g->target_comm, "sleep", 6);
		b.len = 0;
		lt_encode_json(&b, lt_probe_by_type(LT_TYPE_SIGNAL), &r);
		b.p[b.len] = 0;
		ok(!strcmp(b.p, "{\"type\":\"signal\",\"ts_ns\":7,\"cpu\":1,\"pid\":10,\"tid\":11,"
				"\"cgroup_id\":0,"
				"\"comm\":\"kill\",\"target_pid\":20,\"target_tid\":21,"
				"\"target_comm\":\"sleep\",\"sig\":34,\"sig_name\":\"SIGRT2\","
				"\"group\":false,\"result\":\"already_pending\"}\n"),
		   "signal JSON exact (real-time signal name, result name)");

		memset(&r, 0, sizeof(r));
		o->hdr = (struct lt_hdr){ LT_TYPE_OPEN, sizeof(*o), 0, LT_HDR_CGROUP, 8, 3, 3, 0 };
		o->ret = -13;
		o->dfd = 5;
		o->flags = 02 | 0100 | 02000000 | 0100000000; /* O_RDWR|O_CREAT|O_CLOEXEC|unnamed */
		o->mode = 0600;
		o->syscall = LT_OPEN_OPENAT;
		memcpy(o->path, "a\tb", 3);
		o->path_len = 3;
		b.len = 0;
		lt_encode_json(&b, lt_probe_by_type(LT_TYPE_OPEN), &r);
		lt_encode_text(&b, lt_probe_by_type(LT_TYPE_OPEN), &r);
		b.p[b.len] = 0;
		ok(!strcmp(b.p,
			   "{\"type\":\"open\",\"ts_ns\":8,\"cpu\":0,\"pid\":3,\"tid\":3,\"cgroup_"
			   "id\":0,"
			   "\"comm\":\"\",\"syscall\":\"openat\",\"dfd\":5,\"path\":\"a\\u0009b\","
			   "\"path_truncated\":false,\"path_shed\":false,\"flags\":[\"O_RDWR\",\"O_"
			   "CREAT\","
			   "\"O_CLOEXEC\",\"0100000000\"],\"mode\":384,\"ret\":-13}\n"
			   "open ts_ns=8 cpu=0 pid=3 tid=3 cgroup_id=0 comm= syscall=openat dfd=5 "
			   "path=a\\x09b "
			   "flags=O_RDWR|O_CREAT|O_CLOEXEC|0100000000 mode=0600 ret=-13\n"),
		   "open JSON and text exact (flag names, unnamed bits in octal)");

		/* the four flags whose values differ by architecture (x86-64 and arm64 move them
		 * within the same four bits), named by this build's: libc's values for three,
		 * O_LARGEFILE (0 in a 64-bit libc) the bit the others leave */
		o->flags = O_DIRECTORY;
		b.len = 0;
		lt_encode_text(&b, lt_probe_by_type(LT_TYPE_OPEN), &r);
		b.p[b.len] = 0;
		ok(strstr(b.p, " flags=O_RDONLY|O_DIRECTORY mode=") != NULL,
		   "O_DIRECTORY by this build's value");
		o->flags = O_WRONLY | O_NOFOLLOW | O_DIRECT |
			   (0740000 & ~(O_DIRECTORY | O_NOFOLLOW | O_DIRECT));
		b.len = 0;
		lt_encode_text(&b, lt_probe_by_type(LT_TYPE_OPEN), &r);
		b.p[b.len] = 0;
		ok(strstr(b.p, " flags=O_WRONLY|O_DIRECT|O_LARGEFILE|O_NOFOLLOW mode=") != NULL,
		   "O_NOFOLLOW, O_DIRECT, O_LARGEFILE by this build's values");

		memset(&r, 0, sizeof(r));
		t->hdr = (struct lt_hdr){ LT_TYPE_TCP, sizeof(*t), 0, LT_HDR_CGROUP, 9, 4, 4, 0 };
		t->addr.family = 6;
		t->addr.saddr[0] = 0xfe;
		t->addr.saddr[1] = 0x80;
		t->addr.saddr[15] = 1;
		t->addr.daddr[15] = 1;
		t->addr.sport = 443;
		t->addr.dport = 50000;
		t->direction = LT_TCP_ACCEPT;
		t->tx_bytes = 10;
		t->rx_bytes = 20;
		t->duration_ns = 30;
		b.len = 0;
		lt_encode_json(&b, lt_probe_by_type(LT_TYPE_TCP), &r);
		b.p[b.len] = 0;
		ok(!strcmp(b.p,
			   "{\"type\":\"tcp\",\"ts_ns\":9,\"cpu\":0,\"pid\":4,\"tid\":4,\"cgroup_"
			   "id\":0,"
			   "\"comm\":\"\",\"family\":6,\"saddr\":\"fe80::1\",\"daddr\":\"::1\","
			   "\"sport\":443,\"dport\":50000,\"direction\":\"accept\",\"tx_bytes\":10,"
			   "\"rx_bytes\":20,\"duration_ns\":30}\n"),
		   "tcp JSON exact (v6 addresses)");

		memset(&r, 0, sizeof(r));
		q->hdr = (struct lt_hdr){
			LT_TYPE_TCP_RETRANS, sizeof(*q), 0, LT_HDR_CGROUP, 1, 0, 0, 0
		};
		q->addr.family = 4;
		memcpy(q->addr.saddr, "\x0a\x00\x00\x01", 4);
		memcpy(q->addr.daddr, "\xc0\xa8\x01\xfe", 4);
		q->addr.sport = 1;
		q->addr.dport = 2;
		q->state = 1;
		b.len = 0;
		lt_encode_text(&b, lt_probe_by_type(LT_TYPE_TCP_RETRANS), &r);
		b.p[b.len] = 0;
		ok(!strcmp(b.p, "tcp_retrans ts_ns=1 cpu=0 pid=0 tid=0 cgroup_id=0 comm= family=4 "
				"saddr=10.0.0.1 "
				"daddr=192.168.1.254 sport=1 dport=2 state=ESTABLISHED\n"),
		   "tcp_retrans text exact (v4 addresses, state name)");
	}
	{
		/* identity keys last, escaped like kernel strings; absent ones not written */
		struct lt_ident id = { .cgroup = "/a b/\"q\".service", .cgroup_len = 16 };
		static const char cid[] =
			"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

		memcpy(id.unit, "\"q\".service", 12);
		id.unit_len = 11;
		memset(&r, 0, sizeof(r));
		x->hdr = (struct lt_hdr){ LT_TYPE_EXIT, sizeof(*x), 0, LT_HDR_CGROUP, 5, 9, 9, 0 };
		b.len = 0;
		lt_encode_json_id(&b, lt_probe_by_type(LT_TYPE_EXIT), &r, &id);
		b.p[b.len] = 0;
		ok(strstr(b.p, ",\"lifetime_ns\":0,\"cgroup\":\"/a b/\\\"q\\\".service\","
			       "\"unit\":\"\\\"q\\\".service\"}\n") != NULL,
		   "JSON: cgroup and unit last, escaped; no container_id or pod_uid: %s", b.p);
		memcpy(id.container_id, cid, 65);
		id.cid_len = 64;
		memcpy(id.pod_uid, "1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b", 37);
		id.pod_len = 36;
		b.len = 0;
		lt_encode_text_id(&b, lt_probe_by_type(LT_TYPE_EXIT), &r, &id);
		b.p[b.len] = 0;
		ok(strstr(b.p, " cgroup=/a\\x20b/\"q\".service "
			       "container_id=0123456789abcdef0123456789abcdef"
			       "0123456789abcdef0123456789abcdef pod_uid=1f2e3d4c-5b6a-4789-8a9b-"
			       "0c1d2e3f4a5b unit=\"q\".service\n") != NULL,
		   "text: the same keys, escaped: %s", b.p);
	}

	/* a lost record: its probe by name, the window in the header's clock */
	{
		struct lt_lost *l = (void *)&r;
		const struct lt_probe *lp = lt_probe_by_type(LT_TYPE_LOST);

		memset(&r, 0, sizeof(r));
		l->hdr = (struct lt_hdr){
			LT_TYPE_LOST, sizeof(*l), 1, LT_HDR_CGROUP, 900, 4, 5, 77
		};
		l->probe = LT_PROBE_FORK;
		l->count = 298;
		l->first_ts_ns = 100;
		l->last_ts_ns = 800;
		l->throttled = 5;
		l->unseen = 7;
		ok(lp && lp == &lt_lost_record && !lt_probe_by_name("lost", 4),
		   "the lost record has a description, and no probe row");
		b.len = 0;
		lt_encode_json(&b, lp, &r);
		b.p[b.len] = 0;
		ok(!strcmp(b.p, "{\"type\":\"lost\",\"ts_ns\":900,\"cpu\":1,\"pid\":4,\"tid\":5,"
				"\"cgroup_id\":77,\"probe\":\"fork\",\"count\":298,"
				"\"first_ts_ns\":100,\"last_ts_ns\":800,\"throttled\":5,"
				"\"unseen\":7}\n"),
		   "lost JSON exact: %s", b.p);
		b.len = 0;
		lt_encode_text(&b, lp, &r);
		b.p[b.len] = 0;
		ok(!strcmp(b.p,
			   "lost ts_ns=900 cpu=1 pid=4 tid=5 cgroup_id=77 probe=fork count=298 "
			   "first_ts_ns=100 last_ts_ns=800 throttled=5 unseen=7\n"),
		   "lost text exact: %s", b.p);
		ok(lt_rec_probe_type(lp, &r) == LT_TYPE_FORK,
		   "--type tests a lost record as its probe's records");
		l->probe = 31;
		b.len = 0;
		lt_encode_json(&b, lp, &r);
		b.p[b.len] = 0;
		ok(strstr(b.p, ",\"probe\":\"probe_31\",") && lt_rec_probe_type(lp, &r) == 0,
		   "a probe this loader does not know: by number, and no --type passes it: %s",
		   b.p);
		l->probe = LT_PROBE_SYSCALLS;
		ok(lt_rec_probe_type(lp, &r) == 0, "an aggregate probe's: no record type");
	}
	return tap_done();
}
