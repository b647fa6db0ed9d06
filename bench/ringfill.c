// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/ringfill.c: the producer of bench/e2e. Loads bench/ringfill.bpf.o on the pinned
 * suite's ring and runs rf_fill every millisecond, RATE/1000 records a run, for SECONDS
 * seconds, on CPU (default 0): a mixed stream of exec (5 arguments), open, tcp and signal
 * records as the probes write them (4:5:3:4 of every 16). Prints
 * "written W failed F seconds S": failed are records the ring had no room for.
 *
 *   ringfill OBJ RATE SECONDS [CPU]
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "samples.h" /* lt_abi.h: the __u32 family, before ringfill.h */
#include "ringfill.h"

static void set_tpl(struct rf_tpl *t, const void *rec, size_t size)
{
	t->size = size;
	memcpy(t->bytes, rec, size);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const __u32 mix[RF_MIX] = { 0, 1, 2, 3, 1, 3, 0, 1, 2, 3, 1, 0, 3, 2, 1, 0 };
	static struct lt_exec e;
	static struct lt_open o;
	static unsigned char buf[sizeof(struct lt_exec)];
	struct lt_tcp t;
	struct lt_signal sg;
	struct bpf_object *obj;
	struct bpf_map *ring, *bss;
	struct bpf_program *p;
	struct rf_state *rf;
	struct timespec next;
	cpu_set_t cpus;
	long rate, secs, ms;
	double t0, t1;
	__u32 zero = 0;
	int fd, cpu = argc > 4 ? atoi(argv[4]) : 0;

	if (argc < 4 || (rate = atol(argv[2])) < 1000 || (secs = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: ringfill OBJ RATE(>=1000) SECONDS [CPU]\n");
		return 2;
	}
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		perror("ringfill: sched_setaffinity");
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "ringfill: cannot open %s\n", argv[1]);
		return 1;
	}
	ring = bpf_object__find_map_by_name(obj, "lt_events");
	fd = bpf_obj_get("/sys/fs/bpf/lowtrace/maps/lt_events");
	if (!ring || fd < 0 || bpf_map__reuse_fd(ring, fd) || bpf_object__load(obj)) {
		fprintf(stderr,
			"ringfill: cannot load on the pinned ring (lowtrace load first): %s\n",
			strerror(errno));
		return 1;
	}
	bss = bpf_object__find_map_by_name(obj, ".bss");
	p = bpf_object__find_program_by_name(obj, "rf_fill");
	if (!p || !bss || bpf_map__value_size(bss) != sizeof(*rf)) {
		fprintf(stderr, "ringfill: %s has no rf_fill or rf\n", argv[1]);
		return 1;
	}
	/* written through the map (this libbpf does not map .bss for an object without a skeleton) */
	rf = calloc(1, sizeof(*rf));
	if (!rf)
		return 1;
	sample_exec(&e);
	set_tpl(&rf->tpl[0], buf, pack_exec(&e, buf));
	sample_open(&o);
	set_tpl(&rf->tpl[1], buf, pack_open(&o, buf));
	sample_tcp(&t);
	set_tpl(&rf->tpl[2], &t, sizeof(t));
	sample_signal(&sg);
	set_tpl(&rf->tpl[3], &sg, sizeof(sg));
	memcpy(rf->mix, mix, sizeof(mix));
	rf->n = rate / 1000;
	if (bpf_map_update_elem(bpf_map__fd(bss), &zero, rf, BPF_ANY)) {
		perror("ringfill: set the templates");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	t0 = now_s();
	for (ms = 0; ms < secs * 1000; ms++) {
		LIBBPF_OPTS(bpf_test_run_opts, ro);

		if (bpf_prog_test_run_opts(bpf_program__fd(p), &ro)) {
			perror("ringfill: test run");
			return 1;
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	t1 = now_s();
	if (bpf_map_lookup_elem(bpf_map__fd(bss), &zero, rf)) {
		perror("ringfill: read the counts");
		return 1;
	}
	printf("written %llu failed %llu seconds %.3f\n", (unsigned long long)rf->written,
	       (unsigned long long)rf->failed, t1 - t0);
	bpf_object__close(obj);
	return 0;
}
