// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Symbolizer: /proc/kallsyms for the kernel; for user space, snapshots of /proc/PID/maps whose
 * files are cached by identity (dev, inode, size, mtime) and whose ELF contents (load segments,
 * symbols) are cached by build-id, so a library mapped by a thousand processes is read once.
 * Symbols are parsed on first use; until then the file stays open, which is what lets a process
 * that exited, or a deleted file, be symbolized later.
 *
 * This file: the lifetime of lt_syms, frame names and counters; it stands above elf.c,
 * kallsyms.c and procmaps.c, which share symtab.c below them.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "sym_int.h"

/* ---- lifetime, names, counters ---- */

struct lt_syms *lt_syms_new(void)
{
	lib_init();
	return calloc(1, sizeof(struct lt_syms));
}

void lt_syms_free(struct lt_syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nsnap; i++) {
		free(s->snapv[i]->maps);
		if (s->snapv[i]->jit) {
			symtab_free(s->snapv[i]->jit);
			free(s->snapv[i]->jit);
		}
		free(s->snapv[i]);
	}
	for (size_t i = 0; i < s->nfile; i++) {
		free(s->filev[i]->path);
		free(s->filev[i]);
	}
	for (size_t i = 0; i < s->nelf; i++) {
		struct lt_elf *e = s->elfv[i];

		if (e->fd >= 0)
			close(e->fd);
		free(e->build_id);
		free(e->loads);
		free(e->image);
		free(e->uw_rows);
		free(e->uw_idx);
		symtab_free(&e->syms);
		free(e);
	}
	kernel_reset(s);
	free(s->kmods);
	free(s->snapv);
	free(s->filev);
	free(s->elfv);
	free(s->snaps.b);
	free(s->files.b);
	free(s->elfs.b);
	free(s);
}

size_t lt_frame_name(const struct lt_frame *f, char *buf, size_t len)
{
	const char *base;
	int n;

	if (!buf || !len)
		return 0;
	if (f && f->func) {
		n = snprintf(buf, len, "%s", f->func);
	} else if (f && f->module && !f->off_unknown) {
		base = strrchr(f->module, '/');
		base = base && base[1] ? base + 1 : f->module;
		n = snprintf(buf, len, "%s+0x%" PRIx64, base, f->mod_off);
	} else {
		n = snprintf(buf, len, "[unknown]");
	}
	if (n < 0) {
		buf[0] = 0;
		return 0;
	}
	return (size_t)n < len ? (size_t)n : len - 1;
}

void lt_syms_get_stats(const struct lt_syms *s, struct lt_syms_stats *st)
{
	if (s)
		*st = s->st;
	else
		memset(st, 0, sizeof(*st));
}
