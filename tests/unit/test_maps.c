// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The map audit's reader (kernel_audit.c) on real maps: hash entries are counted exactly by
 * batch and key-by-key reads, arrays are full, a map listed twice by one probe is one row and
 * a map shared by two probes is read once, and after lt_maps_add no read allocates (malloc
 * and friends are wrapped and counted). Needs root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_audit.h"
#include "lt_hist.h"
#include "lowtrace.h"
#include "tap.h"

#include "alloc_count.h"

#define HASH_KEYS 1000
#define PCPU_KEYS 300

static int fill(int fd, __u32 keys, size_t vsize)
{
	char *val = calloc(1, vsize);

	for (__u32 k = 0; val && k < keys; k++)
		if (bpf_map_update_elem(fd, &k, val, BPF_ANY)) {
			free(val);
			return -errno;
		}
	free(val);
	return val ? 0 : -ENOMEM;
}

static const struct lt_map_use *row(struct lt_maps *m, const char *probe, const char *name)
{
	for (size_t i = 0; i < lt_maps_count(m); i++) {
		const struct lt_map_use *u = lt_maps_at(m, i);

		if (!strcmp(u->probe, probe) && !strcmp(u->name, name))
			return u;
	}
	return NULL;
}

int main(void)
{
	int ncpu = libbpf_num_possible_cpus();
	size_t pcpu_vsize = (size_t)ncpu * sizeof(struct lt_hist);
	const struct lt_map_use *h, *p, *a, *s;
	struct lt_maps *m;
	int hfd, pfd, afd, err = 0;

	if (geteuid()) {
		printf("1..0 # skip not root: creates BPF maps\n");
		return 0;
	}
	hfd = bpf_map_create(BPF_MAP_TYPE_HASH, "lt_test_hash", 4, 8, 4096, NULL);
	pfd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "lt_test_pcpu", 4, sizeof(struct lt_hist),
			     1024, NULL);
	afd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "lt_test_arr", 4, 8, 8, NULL);
	ok(hfd >= 0 && pfd >= 0 && afd >= 0, "maps created (%s)", strerror(errno));
	if (hfd < 0 || pfd < 0 || afd < 0)
		return tap_done();
	ok(!fill(hfd, HASH_KEYS, 8) && !fill(pfd, PCPU_KEYS, pcpu_vsize), "maps filled");

	m = lt_maps_new();
	allocs = 0;
	err |= lt_maps_add(m, "one", "lt_test_hash", hfd);
	err |= lt_maps_add(m, "one", "lt_test_pcpu", pfd);
	err |= lt_maps_add(m, "one", "lt_test_pcpu", dup(pfd)); /* .own and .map: one row */
	err |= lt_maps_add(m, "two", "lt_test_arr", afd);
	err |= lt_maps_add(m, "two", "lt_test_hash", dup(hfd)); /* shared: read once */
	ok(!err && lt_maps_count(m) == 4 && allocs > 0, "4 rows from 5 adds (%lu allocations)",
	   allocs);

	err = lt_maps_read(m, true);
	h = row(m, "one", "lt_test_hash");
	p = row(m, "one", "lt_test_pcpu");
	a = row(m, "two", "lt_test_arr");
	s = row(m, "two", "lt_test_hash");
	ok(!err && h && p && a && s, "read: %s", strerror(-err));
	if (!h || !p || !a || !s)
		return tap_done();
	ok(lt_maps_batched(m), "the kernel's batch lookup was used");
	ok(h->entries == HASH_KEYS && h->max_entries == 4096 && !strcmp(h->type, "hash"),
	   "hash: %lld of %lld, %s", (long long)h->entries, (long long)h->max_entries, h->type);
	ok(p->entries == PCPU_KEYS && p->max_entries == 1024 && !strcmp(p->type, "percpu_hash"),
	   "per-CPU hash over %d CPUs: %lld of %lld, %s", ncpu, (long long)p->entries,
	   (long long)p->max_entries, p->type);
	ok(a->entries == 8 && a->max_entries == 8 && !strcmp(a->type, "percpu_array"),
	   "array: full, %lld of %lld, %s", (long long)a->entries, (long long)a->max_entries,
	   a->type);
	ok(s->entries == h->entries && s->max_entries == h->max_entries && s->memlock == h->memlock,
	   "a shared map: the same numbers in both probes' rows");
	ok(h->memlock > 0 && p->memlock > 0 && !h->per, "memlock from fdinfo: %lld and %lld bytes",
	   (long long)h->memlock, (long long)p->memlock);

	allocs = 0;
	for (int i = 0; i < 100; i++)
		err |= lt_maps_read(m, i & 1);
	ok(!err && allocs == 0, "100 more batch reads: %lu allocations", allocs);

	for (__u32 k = 0; k < 100; k++)
		bpf_map_delete_elem(hfd, &k);
	lt_maps_no_batch(m);
	err = lt_maps_read(m, false);
	ok(!err && !lt_maps_batched(m) && h->entries == HASH_KEYS - 100 && p->entries == PCPU_KEYS,
	   "key-by-key read (kernels without batch ops): %lld and %lld", (long long)h->entries,
	   (long long)p->entries);
	allocs = 0;
	for (int i = 0; i < 20; i++)
		err |= lt_maps_read(m, false);
	ok(!err && allocs == 0, "20 more key-by-key reads: %lu allocations", allocs);
	lt_maps_close(m);
	return tap_done();
}
