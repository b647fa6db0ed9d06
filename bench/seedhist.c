// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/seedhist.c: fills a pinned aggregate map of lowtrace with keys, so
 * that `lowtrace metrics` has that many histograms to serve. For
 * bench/growth: real workloads reach a few dozen keys, and a scrape reads the
 * map whatever wrote the keys.
 *
 *   seedhist sys MAP NR PIDS   lt_sys_hist keys (nr, pid) for nr < NR and
 *                              PIDS pids each (pid 0 when PIDS is 0)
 *   seedhist bio MAP DEVS      lt_bio_hist keys: DEVS devices x read, write,
 *                              flush, discard
 *
 * Every key gets the same histogram on every CPU (a count in each slot).
 * Prints how many keys it wrote and how many the map holds then; stops at the
 * first failed update (map full).
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lt_hist.h"

static int ncpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int lo = 0, hi = 0;

	/* "0-N" or "0" */
	if (!f || fscanf(f, "%d-%d", &lo, &hi) < 1)
		return 1;
	fclose(f);
	return hi >= lo ? hi + 1 : lo + 1;
}

static int sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int update(int fd, const void *key, const void *val)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (unsigned long)key;
	a.value = (unsigned long)val;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/* keys in the map now, the real ones included */
static int count(int fd)
{
	char key[64], next[64];
	union bpf_attr a;
	int n = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.next_key = (unsigned long)next;
	while (!sys_bpf(BPF_MAP_GET_NEXT_KEY, &a)) {
		memcpy(key, next, sizeof(key));
		a.key = (unsigned long)key;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	int n = ncpus(), fd, keys = 0;
	size_t stride = (sizeof(struct lt_hist) + 7) & ~7ul;
	char *val = calloc(n, stride);
	union bpf_attr a;

	if (argc < 4 || !val || (strcmp(argv[1], "sys") && strcmp(argv[1], "bio"))) {
		fprintf(stderr, "usage: seedhist sys MAP NR PIDS | seedhist bio MAP DEVS\n");
		return 2;
	}
	for (int c = 0; c < n; c++) {
		struct lt_hist *h = (struct lt_hist *)(val + c * stride);

		for (int i = 0; i < LT_HIST_SLOTS; i++)
			h->slot[i] = i + 1;
		h->count = LT_HIST_SLOTS * (LT_HIST_SLOTS + 1) / 2;
		h->sum_ns = 123456789;
	}
	memset(&a, 0, sizeof(a));
	a.pathname = (unsigned long)argv[2];
	fd = sys_bpf(BPF_OBJ_GET, &a);
	if (fd < 0) {
		fprintf(stderr, "seedhist: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (!strcmp(argv[1], "sys") && argc == 5) {
		unsigned int nr = atoi(argv[3]), pids = atoi(argv[4]);

		for (unsigned int i = 0; i < nr; i++) {
			for (unsigned int p = 0; p < (pids ? pids : 1); p++) {
				/* pids well above pid_max: no clash with the real ones */
				struct lt_sys_key k = { .nr = i, .pid = pids ? 5000000 + p : 0 };

				if (update(fd, &k, val))
					goto full;
				keys++;
			}
		}
	} else if (!strcmp(argv[1], "bio") && argc == 4) {
		unsigned int devs = atoi(argv[3]);

		for (unsigned int d = 0; d < devs; d++) {
			for (unsigned char op = LT_BIO_READ; op <= LT_BIO_DISCARD; op++) {
				/* major 250+: no clash with this machine's disks */
				struct lt_bio_key k = { .dev = (250 + d / 1000) << 20 | d % 1000,
							.op = op };

				if (update(fd, &k, val))
					goto full;
				keys++;
			}
		}
	} else {
		fprintf(stderr, "seedhist: bad arguments\n");
		return 2;
	}
	printf("keys=%d total=%d\n", keys, count(fd));
	return 0;
full:
	printf("keys=%d full=%s total=%d\n", keys, strerror(errno), count(fd));
	return 0;
}
