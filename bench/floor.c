// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/floor.c: loads bench/floor.bpf.o, attaches the named empty programs
 * (f_exec, f_sys_enter, ...), prints "attached" and holds them until SIGINT
 * or SIGTERM. Used by bench/peers for the hook floor. As root. A perf_event
 * program (f_perf) gets the software cpu-clock of every CPU at 99 Hz, as the
 * profilers sample. With an r_* program (a record floor), the records of the
 * ring f_ring are read every 5 ms, as a consumer in batches would.
 *
 *   floor OBJ PROG...
 */
#include <bpf/libbpf.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

/* a consumer's least: each record's first word read */
static int on_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)size;
	sink += *(volatile uint64_t *)data;
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct ring_buffer *rb = NULL;
	struct bpf_object *obj;
	struct bpf_program *p;
	bool records = false;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: floor OBJ PROG...\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "floor: cannot open %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program (p, obj) {
		bool want = false;

		for (i = 2; i < argc; i++)
			want |= !strcmp(bpf_program__name(p), argv[i]);
		bpf_program__set_autoload(p, want);
		records |= want && !strncmp(bpf_program__name(p), "r_", 2);
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "floor: cannot load %s\n", argv[1]);
		return 1;
	}
	for (i = 2; i < argc; i++) {
		p = bpf_object__find_program_by_name(obj, argv[i]);
		if (p && bpf_program__type(p) == BPF_PROG_TYPE_PERF_EVENT) {
			struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
						     .size = sizeof(a),
						     .config = PERF_COUNT_SW_CPU_CLOCK,
						     .sample_freq = 99,
						     .freq = 1 };
			int ncpu = libbpf_num_possible_cpus();

			for (int c = 0; c < ncpu; c++) {
				int fd = syscall(SYS_perf_event_open, &a, -1, c, -1, 0);

				if (fd < 0 || !bpf_program__attach_perf_event(p, fd)) {
					fprintf(stderr, "floor: cannot sample CPU %d\n", c);
					return 1;
				}
			}
			continue;
		}
		if (!p || !bpf_program__attach(p)) {
			fprintf(stderr, "floor: cannot attach %s\n", argv[i]);
			return 1;
		}
	}
	if (records) {
		rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "f_ring"), on_record, NULL,
				      NULL);
		if (!rb) {
			fprintf(stderr, "floor: cannot read the ring\n");
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop) {
		if (!rb) {
			pause();
			continue;
		}
		ring_buffer__consume(rb);
		usleep(5000);
	}
	ring_buffer__free(rb);
	bpf_object__close(obj);
	return 0;
}
