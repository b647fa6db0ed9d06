// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * encodecost: what the consumer spends per record in userspace, decode and
 * encode into the reused output buffer (no kernel, no BPF, no I/O).
 *
 *   encodecost [-n ITERS] [-r RUNS]   ns/record, median of RUNS runs
 *   encodecost dump                   the JSON and text of a fixed set of records
 *
 * Built from the loader's pure layers, e.g. from the top of the tree:
 *   gcc -O2 -Iheaders -Iloader -Ibuild -o encodecost bench/encodecost.c \
 *	loader/encode.c loader/decode.c loader/records.c loader/probes.c loader/hist.c
 *
 * Timed: an exec record with 5 arguments and an open record, packed as the
 * kernel writes them, and a tcp record,
 * each as JSON and as text; the buffer is reset when it fills, as a flush
 * would. `dump` covers every record type with edge cases (unknown enum
 * values, truncation flags, hostile lengths, invalid UTF-8, control bytes,
 * IPv6) and seeded random records, so two builds' outputs can be diffed.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "records.h"
#include "samples.h"

#define MAX_RUNS 31

static char mem[256 * 1024];
static struct lt_buf out = { mem, 0, sizeof(mem) };

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* a kubernetes container's identity, as the stream appends it (the lookup is not timed here) */
static struct lt_ident pod_ident = {
	.cgroup =
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a_4789_"
		"8a9b_0c1d2e3f4a5b.slice/cri-containerd-0123456789abcdef0123456789abcdef0123456789"
		"abcdef0123456789abcdef.scope",
	.cgroup_len = 191,
	.cid_len = 64,
	.pod_len = 36,
	.unit_len = 85,
	.plain = LT_IDENT_PLAIN_CGROUP | LT_IDENT_PLAIN_UNIT, /* as the cache marks it */
	.container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	.pod_uid = "1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b",
	.unit = "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef."
		"scope",
};

static double one_run(const void *rec, size_t size, int json, long iters, const struct lt_ident *id)
{
	static struct lt_rec r;
	struct lt_decode_stats st = {};
	double t0 = now_ns();

	for (long i = 0; i < iters; i++) {
		const struct lt_probe *p = lt_decode(rec, size, &r, &st);

		if (out.cap - out.len < LT_ENC_MAX)
			out.len = 0;
		if (json)
			lt_encode_json_id(&out, p, &r, id);
		else
			lt_encode_text_id(&out, p, &r, id);
	}
	return (now_ns() - t0) / iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void bench(long iters, int runs)
{
	static struct lt_exec e;
	static struct lt_open o;
	static struct lt_tcp t;
	static _Alignas(8) unsigned char pe[sizeof(e) + 16], po[sizeof(o)];
	size_t pe_n, po_n;

	sample_exec(&e);
	sample_open(&o);
	sample_tcp(&t);
	pe_n = pack_exec(&e, pe);
	po_n = pack_open(&o, po);

	const struct {
		const char *name;
		const void *rec;
		size_t size;
		const struct lt_ident *id;
	} recs[] = { { "exec", pe, pe_n, NULL },
		     { "open", po, po_n, NULL },
		     { "tcp", &t, sizeof(t), NULL },
		     { "exec+id", pe, pe_n, &pod_ident } };

	for (size_t k = 0; k < sizeof(recs) / sizeof(recs[0]); k++) {
		for (int json = 1; json >= 0; json--) {
			double ns[MAX_RUNS];

			one_run(recs[k].rec, recs[k].size, json, iters / 10,
				recs[k].id); /* warm-up */
			for (int i = 0; i < runs; i++)
				ns[i] = one_run(recs[k].rec, recs[k].size, json, iters, recs[k].id);
			qsort(ns, runs, sizeof(ns[0]), cmp_double);
			printf("%-7s %-4s %7.1f ns/record (median of %d x %ld)\n", recs[k].name,
			       json ? "json" : "text", ns[runs / 2], runs, iters);
		}
	}
}

/* ---- dump ---- */

static void emit(const void *rec, size_t size)
{
	static struct lt_rec r;
	struct lt_decode_stats st = {};
	const struct lt_probe *p = lt_decode(rec, size, &r, &st);

	if (!p) {
		printf("(rejected)\n");
		return;
	}
	out.len = 0;
	lt_encode_json(&out, p, &r);
	lt_encode_text(&out, p, &r);
	fwrite(out.p, 1, out.len, stdout);
}

/* xorshift64: the same records on every machine and libc */
static unsigned long long rnd_state = 0x9e3779b97f4a7c15ull;

static unsigned long long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* random bytes, biased towards what the encoders branch on */
static void rnd_fill(unsigned char *p, size_t n)
{
	static const unsigned char pick[] = { 0,    0,	  0,	1,    ' ',  '"',  '\\',
					      0x7f, 0x80, 0xc3, 0xa9, 0xe2, 0x82, 0xac,
					      0xed, 0xa0, 0xf0, 0x9f, 0x98, 0xf4, 0x90,
					      0xff, 'a',  'Z',	'/',  '.',  '-',  0x1b };

	for (size_t i = 0; i < n; i++) {
		unsigned long long v = rnd();

		p[i] = v & 1 ? pick[(v >> 8) % sizeof(pick)] : (unsigned char)(v >> 16);
	}
}

static void dump_exec(void)
{
	static struct lt_exec e;

	sample_exec(&e);
	emit(&e, sizeof(e));
	e.flags = LT_EXEC_ARGS_TRUNC;
	emit(&e, sizeof(e));
	e.flags = LT_EXEC_FILENAME_TRUNC | LT_EXEC_ARGS_TRUNC | 0xfc;
	emit(&e, sizeof(e));
	e.args_len = 0;
	e.flags = LT_EXEC_FILENAME_TRUNC;
	emit(&e, sizeof(e));
	e.args_len = 1; /* one empty argument */
	emit(&e, sizeof(e));
	e.args_len = 60000; /* hostile lengths: clamped to the arrays */
	e.filename_len = 60000;
	memset(e.comm, 'c', sizeof(e.comm)); /* no NUL */
	memset(e.filename, 0x01, sizeof(e.filename));
	memset(e.args, 0, sizeof(e.args));
	emit(&e, sizeof(e));
	memset(e.args, 'x', sizeof(e.args));
	emit(&e, sizeof(e));
	sample_exec(&e);
	e.filename_len = 4; /* shorter than the NUL-terminated string */
	memcpy(e.comm, "\x1b[31m\xff\xc3\x28\xe2\x82", 11);
	memcpy(e.args, "a b\0\xc3\xa9\0\"q\\\0\t\n\0", 15);
	e.args_len = 15;
	emit(&e, sizeof(e));
	e.hdr.size = 200; /* older producer */
	emit(&e, sizeof(e));
	e.hdr.size = sizeof(e) + 8; /* newer producer */
	emit(&e, sizeof(e) + 8);
}

static void dump_exit(void)
{
	static struct lt_exit x;

	for (int i = 0; i < 4; i++) {
		memset(&x, 0, sizeof(x));
		x.hdr = (struct lt_hdr){ LT_TYPE_EXIT,	   sizeof(x), i,     LT_HDR_CGROUP,
					 5ull << (i * 15), 9,	      9 + i, 0 };
		x.ppid = i ? 1 : 0;
		x.exit_code = i * 85;
		x.signal = i == 2 ? 11 : 0;
		x.core_dumped = i == 2 ? 1 : i == 3 ? 0x80 : 0;
		x.lifetime_ns = i == 3 ? ~0ull : 1000ull * i;
		memcpy(x.comm,
		       "sl\x1b"
		       "ep\x7f",
		       7);
		emit(&x, sizeof(x));
	}
}

static void dump_fork(void)
{
	static struct lt_fork f;

	memset(&f, 0, sizeof(f));
	f.hdr = (struct lt_hdr){ LT_TYPE_FORK, sizeof(f), 1, LT_HDR_CGROUP, 42, 10, 10, 0 };
	f.child_pid = 4294967295u;
	memcpy(f.comm, "bash", 5);
	emit(&f, sizeof(f));
	f.hdr.size = sizeof(f) - 16; /* older: no comm */
	emit(&f, sizeof(f));
}

static void dump_signal(void)
{
	static struct lt_signal g;
	static const __s32 sigs[] = { 0,  1,  9,  15, 31,  32, 33,
				      34, 63, 64, 65, 100, -1, -2147483647 - 1 };
	static const __s32 results[] = { 0, 1, 2, 3, 4, 5, -1, 2147483647 };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		memset(&g, 0, sizeof(g));
		g.hdr = (struct lt_hdr){
			LT_TYPE_SIGNAL, sizeof(g), 1, LT_HDR_CGROUP, 7, 10, 11, 0
		};
		g.target_pid = 20;
		g.target_tid = 21 + i;
		g.sig = sigs[i];
		g.result = results[i % (sizeof(results) / sizeof(results[0]))];
		g.group = i % 3 == 1 ? 1 : i % 3 == 2 ? 0xff : 0;
		memcpy(g.comm, "kill", 5);
		memcpy(g.target_comm, "sleep\x01", 7);
		emit(&g, sizeof(g));
	}
}

static void dump_oom(void)
{
	static struct lt_oom o;

	memset(&o, 0, sizeof(o));
	o.hdr = (struct lt_hdr){ LT_TYPE_OOM, sizeof(o), 0, LT_HDR_CGROUP, 6, 1, 1, 0 };
	o.victim_pid = 1234;
	o.victim_uid = 65534;
	o.pages = 1ull << 40;
	o.total_vm = ~0ull;
	memcpy(o.comm, "stress-ng", 10);
	memcpy(o.victim_comm, "chrome \"x\"", 11);
	emit(&o, sizeof(o));
}

static void dump_open(void)
{
	static struct lt_open o;
	static const __u32 flags[] = { 0,
				       1,
				       2,
				       3,
				       0100 | 01000,
				       02000000 | 0200000 | 0400000,
				       0777777777,
				       0xffffffff,
				       0100000000,
				       020200000 };
	static const __u32 modes[] = { 0, 0644, 0777, 07777, 0xffffffff };
	static const __s32 rets[] = { 3, 0, -2, -13, -2147483647 - 1, 2147483647 };

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		sample_open(&o);
		o.flags = flags[i];
		o.mode = modes[i % (sizeof(modes) / sizeof(modes[0]))];
		o.ret = rets[i % (sizeof(rets) / sizeof(rets[0]))];
		o.syscall = i < 4 ? i : i == 4 ? 255 : i % 3;
		o.dfd = i & 1 ? -100 : (int)i;
		o.rflags = i % 4; /* none, TRUNC, FAULT, both */
		if (i == 6) {
			memset(o.path, 'p', sizeof(o.path));
			o.path_len = 60000;
		} else if (i == 7) {
			memcpy(o.path, "/tmp/\x1b]0;x\x07\xff \xc3\xa9", 16);
			o.path_len = 16;
		} else if (i == 8) {
			o.path_len = 0;
		}
		emit(&o, sizeof(o));
	}
}

static void dump_tcp(void)
{
	static struct lt_tcp t;
	static struct lt_tcp_retrans q;

	for (int i = 0; i < 6; i++) {
		memset(&t, 0, sizeof(t));
		t.hdr = (struct lt_hdr){ LT_TYPE_TCP, sizeof(t), 0, LT_HDR_CGROUP, 9, 4, 4, 0 };
		t.addr.family = i == 0 ? 4 : i == 1 ? 6 : i == 2 ? 0 : i == 3 ? 6 : i == 4 ? 6 : 9;
		if (i == 1) {
			t.addr.saddr[0] = 0xfe;
			t.addr.saddr[1] = 0x80;
			t.addr.saddr[15] = 1;
			t.addr.daddr[15] = 1;
		} else if (i == 3) {
			memcpy(t.addr.saddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x7f\0\0\x01", 16);
			memset(t.addr.daddr, 0xff, 16);
		} else if (i == 4) {
			memcpy(t.addr.saddr, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		} else {
			memcpy(t.addr.saddr, "\xc0\xa8\x01\x02", 4);
			memcpy(t.addr.daddr, "\x08\x08\x08\x08", 4);
		}
		t.addr.sport = 443 + i;
		t.addr.dport = 65535 - i;
		t.direction = i;
		t.tx_bytes = i * 1000;
		t.rx_bytes = ~0ull - i;
		t.duration_ns = 30 + i;
		memcpy(t.comm, "nginx", 6);
		emit(&t, sizeof(t));
	}
	for (int st = 0; st <= 14; st++) {
		memset(&q, 0, sizeof(q));
		q.hdr = (struct lt_hdr){
			LT_TYPE_TCP_RETRANS, sizeof(q), 0, LT_HDR_CGROUP, 1, 0, 0, 0
		};
		q.addr.family = st & 1 ? 4 : 6;
		memcpy(q.addr.saddr, "\x0a\x00\x00\x01", 4);
		memcpy(q.addr.daddr, "\xc0\xa8\x01\xfe", 4);
		q.addr.sport = 1;
		q.addr.dport = 2;
		q.state = st == 14 ? 255 : st;
		emit(&q, sizeof(q));
	}
}

static void dump_task(void)
{
	static struct lt_task k;

	memset(&k, 0, sizeof(k));
	k.hdr = (struct lt_hdr){ LT_TYPE_TASK, sizeof(k), 1, LT_HDR_CGROUP, 3, 5, 5, 0 };
	memcpy(k.comm, "python3\xff", 9);
	emit(&k, sizeof(k));
}

/* every type with random bytes after the header: unknown values, hostile lengths */
static void dump_random(int n)
{
	static struct lt_rec r;

	for (int i = 0; i < n; i++) {
		for (unsigned int type = 1; type < LT_TYPE_MAX; type++) {
			const struct lt_probe *p = lt_probe_by_type(type);

			rnd_fill(r.raw, p->rec_size);
			r.hdr.type = type;
			r.hdr.size = p->rec_size;
			emit(&r, p->rec_size);
		}
	}
}

int main(int argc, char **argv)
{
	long iters = 2000000;
	int runs = 5;

	if (argc == 2 && !strcmp(argv[1], "dump")) {
		dump_exec();
		dump_exit();
		dump_fork();
		dump_signal();
		dump_oom();
		dump_open();
		dump_tcp();
		dump_task();
		dump_random(3000);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			iters = atol(argv[++i]);
		} else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else {
			fprintf(stderr,
				"usage: encodecost [-n ITERS] [-r RUNS] | encodecost dump\n");
			return 2;
		}
	}
	if (iters < 10 || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "encodecost: -n at least 10, -r 1..%d\n", MAX_RUNS);
		return 2;
	}
	bench(iters, runs);
	return 0;
}
