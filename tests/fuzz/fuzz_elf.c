// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target: the symbolizer's ELF reader on a mutated file, by the path the profiler takes for
 * a mapped binary (procmaps.c, lt_syms_user): elf_get on an open fd (build-id, PT_LOAD segments,
 * the fd held), elf_parse (.symtab, else .dynsym; a -dbg file by build-id), then file offsets to
 * virtual addresses and symbol lookups. Also the vdso's path (the same bytes from memory) and
 * alloc's uprobe lookups on the file (lt_elf_find_func, elf_has_interp).
 *
 * The input lives in a memfd, named by /proc/self/fd/N where a path is taken. Checked besides
 * the sanitizers: a symbol found contains the address, its name is in the table's pool, a
 * build-id is lowercase hex.
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

/* lookups per input: enough to reach every branch of the table's search */
#define MAX_LOOKUPS 64

static void check_build_id(const char *id)
{
	size_t n;

	if (!id)
		return;
	n = strlen(id);
	if (!n || n % 2 || n > 2 * BUILD_ID_MAX || strspn(id, "0123456789abcdef") != n)
		abort();
}

static void lookup(const struct lt_elf *e, uint64_t va)
{
	const struct sym *y = sym_find(&e->syms, va);

	if (!y)
		return;
	if (va < y->addr || va >= y->end || y->name >= e->syms.names.len)
		abort();
	/* a name is NUL-terminated inside the pool */
	if (!memchr(e->syms.names.p + y->name, 0, e->syms.names.len - y->name))
		abort();
}

/* what lt_syms_user does with a frame: file offset -> vaddr -> symbol */
static void lookups(struct lt_syms *s, struct lt_elf *e)
{
	size_t n = 0;
	uint64_t va;

	if (!e->parsed)
		elf_parse(s, e);
	check_build_id(e->build_id);
	for (size_t i = 0; i < e->nloads && n < MAX_LOOKUPS; i++, n += 3) {
		const struct load *l = &e->loads[i];

		if (elf_off_to_vaddr(e, l->off, &va))
			lookup(e, va);
		if (elf_off_to_vaddr(e, l->off + l->filesz / 2, &va))
			lookup(e, va);
		if (elf_off_to_vaddr(e, l->off + l->filesz, &va)) /* page rounding: past the end */
			lookup(e, va);
	}
	/* every symbol's first and last byte, and the gaps around */
	for (size_t i = 0; i < e->syms.n && n < MAX_LOOKUPS; i++, n += 3) {
		const struct sym *y = &e->syms.v[i];

		lookup(e, y->addr);
		lookup(e, y->end - 1);
		lookup(e, y->addr - 1);
	}
	lookup(e, 0);
	lookup(e, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lt_syms *s = lt_syms_new();
	char path[64];
	struct lt_elf *e;
	uint64_t off;
	int fd;

	if (!s)
		abort();
	/* a mapped file: the fd is handed over, parsed on the first frame */
	fd = fuzz_memfd("fuzz_elf", data, size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	e = elf_get(s, dup(fd));
	if (e)
		lookups(s, e);

	/* the vdso: the same bytes read from memory (elf_memory) */
	e = elf_new(s);
	if (e && size) {
		e->image = malloc(size);
		if (e->image) {
			memcpy(e->image, data, size);
			e->image_len = size;
			lookups(s, e);
		}
	}

	/* alloc: the uprobe target and whether a dynamic linker is named */
	lt_elf_find_func(path, "malloc", &off);
	lt_elf_find_func(path, "main", &off);
	elf_has_interp(path);

	close(fd);
	lt_syms_free(s);
	return 0;
}
