// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The aggregate reader (kernel_agg.c) on a real per-CPU hash: sums over CPUs are
 * exact, batch and key-by-key reads agree, and after the first read no
 * read allocates (malloc and friends are wrapped and counted). Needs root.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_agg.h"
#include "lowtrace.h"
#include "tap.h"

#include "alloc_count.h"

#define KEYS 1000

struct seen {
	unsigned long keys;
	unsigned long bad;
	int ncpu;
};

/* key k holds, on every CPU, count = k + 1 and slot[k % LT_HIST_SLOTS] = 2 */
static void check(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct seen *s = ctx;
	const struct lt_sys_key *k = key;

	s->keys++;
	if (sum->count != (__u64)(k->nr + 1) * s->ncpu ||
	    sum->slot[k->nr % LT_HIST_SLOTS] != 2ull * s->ncpu ||
	    sum->sum_ns != (__u64)k->pid * s->ncpu)
		s->bad++;
}

int main(void)
{
	int ncpu = libbpf_num_possible_cpus(), fd;
	struct lt_hist *vals;
	struct lt_agg *a = NULL;
	struct seen s = { .ncpu = ncpu };
	int err;

	if (geteuid()) {
		printf("1..0 # skip not root: creates a BPF map\n");
		return 0;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "lt_test_agg", sizeof(struct lt_sys_key),
			    sizeof(struct lt_hist), 4096, NULL);
	ok(fd >= 0, "per-CPU hash created (%s)", fd < 0 ? strerror(errno) : "ok");
	if (fd < 0)
		return tap_done();
	vals = calloc(ncpu, sizeof(*vals)); /* lt_hist is a multiple of 8: the kernel's stride */
	for (__u32 k = 0; k < KEYS; k++) {
		struct lt_sys_key key = { .nr = k, .pid = 7 * k };

		for (int c = 0; c < ncpu; c++) {
			memset(&vals[c], 0, sizeof(vals[c]));
			vals[c].count = k + 1;
			vals[c].sum_ns = key.pid;
			vals[c].slot[k % LT_HIST_SLOTS] = 2;
		}
		if (bpf_map_update_elem(fd, &key, vals, BPF_ANY))
			break;
	}
	free(vals);
	allocs = 0;
	err = lt_agg_open_fd(&a, fd, "lt_test_agg");
	/* the counter itself works (also under a sanitizer): opening allocates the buffers */
	ok(!err && a && allocs > 0, "reader opened (%lu allocations)", allocs);
	if (err)
		return tap_done();

	err = lt_agg_read(a, check, &s);
	ok(!err && s.keys == KEYS && !s.bad, "batch read: %lu keys, %lu wrong sums over %d CPUs",
	   s.keys, s.bad, ncpu);
	ok(lt_agg_batched(a), "the kernel's batch lookup was used");
	allocs = 0;
	for (int i = 0; i < 100; i++)
		err |= lt_agg_read(a, check, &s);
	ok(!err && allocs == 0, "100 more batch reads of %d keys: %lu allocations", KEYS, allocs);

	lt_agg_no_batch(a);
	s.keys = s.bad = 0;
	err = lt_agg_read(a, check, &s);
	ok(!err && s.keys == KEYS && !s.bad && !lt_agg_batched(a),
	   "key-by-key read (kernels without batch ops): %lu keys, %lu wrong", s.keys, s.bad);
	allocs = 0;
	for (int i = 0; i < 20; i++)
		err |= lt_agg_read(a, check, &s);
	ok(!err && allocs == 0, "20 more key-by-key reads: %lu allocations", allocs);
	lt_agg_close(a);
	return tap_done();
}
