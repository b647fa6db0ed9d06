// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/cfitime: the userspace time to compile a file's CFI into unwind rows (loader/cfi.c), and
 * the rows' size against the file's code. No kernel involved; used by bench/unwindcost.
 *
 *   gcc -O2 -Wall -Iheaders -Iloader -o cfitime bench/cfitime.c loader/cfi.c loader/grow.c -lelf
 *   cfitime [-r REPS] FILE...
 *
 * Per file, REPS times (default 20): open, elf_begin, lt_cfi_elf, elf_end, close; that is what
 * the loader pays per file it builds (it builds each file once per run, by build-id). One line
 * per file, under a header:
 *   MEDIAN/MIN/MAX MS  the REPS wall times (CLOCK_MONOTONIC)
 *   ROWS, ROW KIB      rows out of lt_cfi_elf, at the walker's row size (8 bytes x86_64, 16 arm64)
 *   TEXT MIB           the .text section; EXEC MIB: the executable PT_LOAD segments' file
 *                      size, which is what the profiler's summary line calls "text"
 *   ROWS/MIB, KIB/MIB  rows and row KiB per MiB of .text
 *   FDES, EXPR         FDEs whose tables were run; rows the walker stops at (DWARF expression)
 * Exit 1 when a file has no rows or cannot be read (its line says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* .text's size, and the file size of the executable PT_LOAD segments */
static void code_size(Elf *elf, uint64_t *text, uint64_t *exec)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, nph;
	GElf_Shdr sh;
	GElf_Phdr ph;

	*text = *exec = 0;
	if (!elf_getshdrstrndx(elf, &shstrndx))
		while ((scn = elf_nextscn(elf, scn))) {
			const char *name;

			if (gelf_getshdr(scn, &sh) &&
			    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(name, ".text"))
				*text = sh.sh_size;
		}
	if (!elf_getphdrnum(elf, &nph))
		for (size_t i = 0; i < nph; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X))
				*exec += ph.p_filesz;
}

/* open + build + close, as the loader does per file; sizes on request */
static int once(const char *path, struct lt_cfi_rows *rows, struct lt_cfi_stats *st,
		uint64_t *text, uint64_t *exec)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -EINVAL;
	}
	err = lt_cfi_elf(elf, rows, st);
	if (text)
		code_size(elf, text, exec);
	elf_end(elf);
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	int reps = 20, i = 1, rc = 0;

	if (argc > 2 && !strcmp(argv[1], "-r")) {
		reps = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || reps < 1) {
		fprintf(stderr, "usage: cfitime [-r REPS] FILE...\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	printf("%9s %7s %7s %7s %8s %9s %8s %9s %8s %7s %6s  %s\n", "MEDIAN MS", "MIN MS",
	       "MAX MS", "ROWS", "ROW KIB", "TEXT MIB", "EXEC MIB", "ROWS/MIB", "KIB/MIB", "FDES",
	       "EXPR", "FILE");
	for (; i < argc; i++) {
		uint64_t *ns = calloc((size_t)reps, sizeof(*ns)), text = 0, exec = 0;
		struct lt_cfi_rows rows = { 0 };
		struct lt_cfi_stats st = { 0 };
		double mib;
		int err = 0;

		if (!ns)
			return 1;
		for (int k = 0; k < reps && !err; k++) {
			uint64_t t0;

			lt_cfi_rows_free(&rows);
			memset(&st, 0, sizeof(st));
			t0 = now_ns();
			err = once(argv[i], &rows, &st, k ? NULL : &text, k ? NULL : &exec);
			ns[k] = now_ns() - t0;
		}
		if (err || !rows.n) {
			printf("%9s %7s %7s %7s %8s %9s %8s %9s %8s %7s %6s  %s (%s)\n", "-", "-",
			       "-", "-", "-", "-", "-", "-", "-", "-", "-", argv[i],
			       err ? strerror(-err) : "no rows");
			rc = 1;
		} else {
			qsort(ns, (size_t)reps, sizeof(*ns), cmp_u64);
			mib = text / 1048576.0;
			printf("%9.2f %7.2f %7.2f %7zu %8.0f %9.2f %8.2f %9.0f %8.0f %7llu %6llu  %s\n",
			       (reps % 2 ? ns[reps / 2] : (ns[reps / 2 - 1] + ns[reps / 2]) / 2) / 1e6,
			       ns[0] / 1e6, ns[reps - 1] / 1e6, rows.n,
			       rows.n * lt_cfi_row_size(&rows) / 1024.0, mib, exec / 1048576.0,
			       mib > 0 ? rows.n / mib : 0,
			       mib > 0 ? rows.n * lt_cfi_row_size(&rows) / 1024.0 / mib : 0,
			       (unsigned long long)st.fdes, (unsigned long long)st.expr_rows, argv[i]);
		}
		lt_cfi_rows_free(&rows);
		free(ns);
	}
	return rc;
}
