// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The unwind view of a process for the profiles' BPF walker: its executable mappings, each with
 * the rows compiled from its file's CFI (cfi.c). Rows are built once per file (by build-id, the
 * symbolizer's cache) and placed into the caller's table once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "hash.h"
#include "lowtrace.h"
#include "sym_int.h"

/* Build the rows of e now, from the mapping's file (or the vdso image). */
static void uw_build(struct lt_uw_table *t, struct lt_elf *e, uint32_t pid,
		     const struct maps_line *m)
{
	struct lt_cfi_rows rows = {};
	struct lt_cfi_stats st = {};
	char path[PATH_BUF];
	struct ident id;
	uint64_t t0 = lt_now_ns(CLOCK_MONOTONIC);
	Elf *elf = NULL;
	int fd = -1;

	e->uw_tried = true;
	if (e->image)
		elf = elf_memory(e->image, e->image_len);
	else if ((fd = map_file_open(pid, m, &id, path, sizeof(path))) >= 0)
		elf = elf_from_fd(fd);
	/* packed for this build's walker; a file of another architecture gets none */
	if (elf && !lt_cfi_elf(elf, &rows, &st) && rows.n && rows.n <= UINT32_MAX &&
	    (e->uw_rows = malloc(rows.n * sizeof(*e->uw_rows)))) {
		if (!lt_cfi_pack(&rows, e->uw_rows)) {
			e->uw_count = (uint32_t)rows.n;
			e->uw_nblk = lt_cfi_index(rows.v, rows.n, &e->uw_blk0, &e->uw_idx);
		} else {
			free(e->uw_rows);
			e->uw_rows = NULL;
		}
	}
	t->cfi_bad += st.bad_entries;
	lt_cfi_rows_free(&rows);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (!e->uw_count)
		t->files_no_cfi++;
	t->build_ns += lt_now_ns(CLOCK_MONOTONIC) - t0;
}

/* Table rows the block index of e takes (its words packed into rows). */
static uint32_t uw_idx_rows(const struct lt_elf *e)
{
	const uint32_t per = sizeof(struct lt_uw_row) / sizeof(uint32_t);

	return (e->uw_nblk + per - 1) / per;
}

/* Place e's block index and rows into the table; false: they do not fit (or there are none). */
static bool uw_place(struct lt_uw_table *t, struct lt_elf *e)
{
	uint32_t ni = uw_idx_rows(e);

	if (e->uw_placed)
		return e->uw_count;
	if (!e->uw_rows)
		return false;
	if (t->cap - t->used < e->uw_count || t->cap - t->used - e->uw_count < ni) {
		t->files_full++;
		return false;
	}
	/* the last index row's spare words stay 0: the walker never reads past nblk */
	memset(t->rows + t->used, 0, (size_t)ni * sizeof(*t->rows));
	if (e->uw_nblk)
		memcpy(t->rows + t->used, e->uw_idx, (size_t)e->uw_nblk * sizeof(*e->uw_idx));
	e->uw_idx_at = t->used;
	t->used += ni;
	t->idx_rows += ni;
	memcpy(t->rows + t->used, e->uw_rows, (size_t)e->uw_count * sizeof(*e->uw_rows));
	e->uw_first = t->used;
	t->used += e->uw_count;
	e->uw_placed = true;
	free(e->uw_rows);
	e->uw_rows = NULL;
	free(e->uw_idx);
	e->uw_idx = NULL;
	t->files++;
	for (size_t i = 0; i < e->nloads; i++)
		if (e->loads[i].exec)
			t->text_bytes += e->loads[i].filesz;
	return true;
}

/* The cached file of an executable mapping, with its rows built; NULL when it has none. */
static struct lt_elf *uw_elf(struct lt_syms *s, struct lt_uw_table *t, uint32_t tgid,
			     struct maps_line *m)
{
	struct lt_mfile *f;

	if (!strchr(m->perms, 'x') || !m->path)
		return NULL;
	if (!strcmp(m->path, "[vdso]"))
		f = vdso_file(s, m->end - m->start);
	else if (m->path[0] == '/' && m->ino)
		f = file_get(s, tgid, m);
	else
		return NULL;
	if (!f || !f->elf)
		return NULL;
	if (!f->elf->uw_tried)
		uw_build(t, f->elf, tgid, m);
	return f->elf;
}

static char *read_maps(uint32_t tgid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	return read_all(path);
}

int lt_syms_unwind(struct lt_syms *s, struct lt_uw_table *t, uint32_t tgid, struct lt_uw_proc *out,
		   uint64_t *maps_hash)
{
	char *text, *cur, *line;
	struct maps_line m;

	lib_init();
	text = read_maps(tgid);
	if (!text)
		return proc_err(errno);
	if (maps_hash)
		*maps_hash = lt_hash_str(text);
	memset(out, 0, sizeof(*out));
	for (cur = text; (line = next_line(&cur));) {
		struct lt_elf *e;
		struct lt_uw_map *um;
		uint64_t va;

		if (!parse_maps_line(line, &m))
			continue;
		e = uw_elf(s, t, tgid, &m);
		if (!e)
			continue;
		if (out->n == LT_UW_MAPS) {
			t->maps_over++;
			continue;
		}
		um = &out->m[out->n];
		um->start = m.start;
		um->end = m.end;
		/* the vdso has no file offset: its image starts at the mapping */
		if (!elf_off_to_vaddr(e, m.path[0] == '[' ? 0 : m.pgoff, &va))
			continue;
		um->bias = m.start - va;
		if (uw_place(t, e)) {
			um->first = e->uw_first;
			um->count = e->uw_count;
			um->idx = e->uw_idx_at;
			um->blk0 = e->uw_blk0;
			um->nblk = e->uw_nblk;
		}
		out->n++;
	}
	free(text);
	return 0;
}

uint64_t lt_syms_unwind_need(struct lt_syms *s, struct lt_uw_table *t, uint32_t tgid)
{
	char *text, *cur, *line;
	struct maps_line m;
	uint64_t need = 0;

	lib_init();
	text = read_maps(tgid);
	if (!text)
		return 0;
	for (cur = text; (line = next_line(&cur));) {
		struct lt_elf *e;

		if (!parse_maps_line(line, &m) || !(e = uw_elf(s, t, tgid, &m)))
			continue;
		if (!e->uw_placed && e->uw_rows && !e->uw_counted) {
			need += e->uw_count + uw_idx_rows(e);
			e->uw_counted = true;
		}
	}
	free(text);
	return need;
}
