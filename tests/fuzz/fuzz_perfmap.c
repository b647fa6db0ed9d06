// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target: what the profiler reads of a process that may be hostile besides its ELF files:
 * its perf map (/tmp/perf-PID.map, perfmap_parse in procmaps.c) and the NSpid line of its
 * /proc/PID/status (lt_nspid_parse). Checked besides the sanitizers: the table is sorted, its
 * names are in its pool, every symbol found contains the address asked for, and an NSpid found
 * is one of the fields of the line.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sym_int.h"
#include "fuzz_memfd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_table(const struct symtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct sym *y = &t->v[i], *f;

		if (y->name >= t->names.len || (i && t->v[i - 1].addr >= y->addr))
			abort();
		f = sym_find(t, y->addr);
		if (!f || f->addr > y->addr || y->addr >= f->end)
			abort();
		if (y->addr) {
			f = sym_find(t, y->addr - 1);
			if (f && (f->addr > y->addr - 1 || y->addr - 1 >= f->end))
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symtab t = {};
	char *status;
	uint32_t ns;
	int fd = fuzz_memfd("fuzz_perfmap", data, size);

	perfmap_parse(&t, fd, 1000000000ull);
	check_table(&t);
	symtab_free(&t);
	close(fd);

	status = malloc(size + 1);
	if (!status)
		return 0;
	memcpy(status, data, size);
	status[size] = 0;
	ns = lt_nspid_parse(status);
	if (ns) {
		char *at = strstr(status, "NSpid:"), num[16];

		snprintf(num, sizeof(num), "%u", ns);
		if (!at || !strstr(at, num))
			abort();
	}
	free(status);
	return 0;
}
