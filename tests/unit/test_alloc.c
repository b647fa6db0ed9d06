// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Steady state allocates nothing per record: malloc, calloc, realloc and
 * free are wrapped (-Wl,--wrap) and counted across 100 000 decode+encode
 * rounds after a warm-up.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records.h"
#include "tap.h"

#include "alloc_count.h"

static char mem[256 * 1024];
static struct lt_exec ex;
static struct lt_exit xt;
static struct lt_fork fk;
static struct lt_signal sg;
static struct lt_oom om;
static struct lt_open op;
static struct lt_tcp tc;
static struct lt_tcp_retrans tr;
static struct lt_lost lo;

static void fill(void)
{
	static const char args[] = "/usr/bin/env\0-i\0\x1b[0m\0\xff\xfe tail";

	ex.hdr = (struct lt_hdr){ LT_TYPE_EXEC, sizeof(ex), 1, LT_HDR_CGROUP, 1, 2, 2, 0 };
	memcpy(ex.comm, "env\x01", 5);
	memcpy(ex.filename, "/usr/bin/env", 13);
	ex.filename_len = 12;
	memcpy(ex.args, args, sizeof(args));
	ex.args_len = sizeof(args);
	xt.hdr = (struct lt_hdr){ LT_TYPE_EXIT, sizeof(xt), 0, LT_HDR_CGROUP, 3, 2, 2, 0 };
	fk.hdr = (struct lt_hdr){
		LT_TYPE_FORK, sizeof(fk) - 16, 0, LT_HDR_CGROUP, 4, 1, 1, 0
	}; /* older */
	sg.hdr = (struct lt_hdr){ LT_TYPE_SIGNAL, sizeof(sg), 0, LT_HDR_CGROUP, 5, 1, 1, 0 };
	sg.sig = 40; /* a real-time signal's name is built, not looked up */
	sg.result = 9; /* unknown result */
	om.hdr = (struct lt_hdr){ LT_TYPE_OOM, sizeof(om), 0, LT_HDR_CGROUP, 6, 1, 1, 0 };
	op.hdr = (struct lt_hdr){ LT_TYPE_OPEN, sizeof(op), 0, LT_HDR_CGROUP, 7, 1, 1, 0 };
	op.flags = 0777777777; /* every flag name and unnamed bits */
	op.mode = 0644;
	op.ret = -2;
	memcpy(op.path, "/etc/\x1b]0;x", 10);
	op.path_len = 10;
	tc.hdr = (struct lt_hdr){ LT_TYPE_TCP, sizeof(tc), 0, LT_HDR_CGROUP, 8, 1, 1, 0 };
	tc.addr.family = 6;
	memset(tc.addr.saddr, 0xfe, 16);
	tc.addr.daddr[15] = 1;
	tc.direction = LT_TCP_ACCEPT;
	tr.hdr = (struct lt_hdr){ LT_TYPE_TCP_RETRANS, sizeof(tr), 0, LT_HDR_CGROUP, 9, 1, 1, 0 };
	tr.addr.family = 4;
	tr.addr.saddr[0] = 127;
	tr.state = 2;
	lo.hdr = (struct lt_hdr){ LT_TYPE_LOST, sizeof(lo), 1, LT_HDR_CGROUP, 10, 2, 2, 0 };
	lo.probe = LT_PROBE_EXEC;
	lo.count = 12;
}

#define NRECS 9

/* identity from a cache on a made cgroup tree (and this host's v1 hierarchies, if any) */
static struct lt_ident_cache ident;
static uint64_t ident_id, with_ident;

static void rounds(int n, struct lt_buf *b, struct lt_decode_stats *st)
{
	static struct lt_rec r;
	const void *recs[] = { &ex, &xt, &fk, &sg, &om, &op, &tc, &tr, &lo };
	size_t sizes[] = { sizeof(ex), sizeof(xt), sizeof(fk), sizeof(sg), sizeof(om),
			   sizeof(op), sizeof(tc), sizeof(tr), sizeof(lo) };

	for (int i = 0; i < n; i++) {
		for (int k = 0; k < NRECS; k++) {
			const struct lt_probe *p = lt_decode(recs[k], sizes[k], &r, st);

			if (!p)
				continue;
			if (b->cap - b->len < LT_ENC_MAX)
				b->len = 0; /* what a flush does */
			const struct lt_ident *id =
				lt_ident_get(&ident, ident_id, r.hdr.pid, r.hdr.ts_ns);

			with_ident += id && id->cid_len;
			if (i & 1)
				lt_encode_text_id(b, p, &r, id);
			else
				lt_encode_json_id(b, p, &r, id);
		}
	}
}

int main(void)
{
	struct lt_buf b = { mem, 0, sizeof(mem) };
	struct lt_decode_stats st = {};
	void *volatile probe; /* volatile: -O2 would elide a malloc+free pair */

	/* the counter itself works: an explicit malloc is seen */
	probe = malloc(16);
	ok(allocs == 1, "wrapped malloc is counted");
	free(probe);

	fill();
	{
		static char tree[] = "/tmp/lt-alloc-XXXXXX";
		char p[300];
		struct lt_ident_cfg cfg = { .root = tree };
		struct stat sb;

		ok(mkdtemp(tree) != NULL, "a made cgroup tree");
		snprintf(p, sizeof(p), "%s/docker-%s.scope", tree,
			 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
		mkdir(p, 0755);
		stat(p, &sb);
		ident_id = sb.st_ino;
		ok(!lt_ident_open(&ident, &cfg), "identity cache open");
		rmdir(p);
		rmdir(tree);
	}
	rounds(1000, &b, &st); /* warm-up */
	allocs = frees = 0;
	with_ident = 0;
	memset(&st, 0, sizeof(st));
	rounds(100000, &b, &st);
	ok(st.fast + st.older == 100000 * NRECS,
	   "%d records of %d types decoded (%lu fast, %lu older)", 100000 * NRECS, NRECS,
	   (unsigned long)st.fast, (unsigned long)st.older);
	ok(allocs == 0, "zero allocations in 100000 decode+encode rounds (saw %lu)", allocs);
	ok(frees == 0, "zero frees in 100000 decode+encode rounds (saw %lu)", frees);
	ok(with_ident == (uint64_t)100000 * NRECS, "every record had its identity (%lu)",
	   (unsigned long)with_ident);
	lt_ident_close(&ident);
	return tap_done();
}
