// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target: the CFI compiler (cfi.c) on a mutated input, three ways: the bytes as one
 * .eh_frame section, as .eh_frame and .debug_frame at once (one table: overlaps, precedence),
 * and as an ELF file from memory (section headers, else PT_GNU_EH_FRAME -> .eh_frame_hdr).
 *
 * Checked besides the sanitizers: each parsed FDE's rows lie inside it in address order, from its
 * first byte; the finished table is strictly sorted, no row repeats the one before, every kind
 * is an enum lt_uw_cfa value with no flag but LT_UW_FP_SAVED, the counters add up, and the
 * walker's search lands on a row at or below the address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* where the bytes claim to be: pc-relative pointers land near it */
#define SEC_VADDR 0x400000ull

static void check_parsed(const struct lt_cfi_rows *r)
{
	for (size_t i = 0; i < r->nfde; i++) {
		const struct lt_cfi_fde *f = &r->fde[i];

		if (f->start >= f->end || !f->n || (size_t)f->first + f->n > r->n ||
		    r->v[f->first].pc != f->start)
			abort();
		for (uint32_t k = 0; k < f->n; k++) {
			const struct lt_cfi_row *w = &r->v[f->first + k];

			if (w->pc < f->start || w->pc >= f->end ||
			    (k && w->pc <= r->v[f->first + k - 1].pc))
				abort();
		}
	}
}

static void check_table(const struct lt_cfi_rows *r, const struct lt_cfi_stats *st)
{
	uint64_t kinds = 0;

	if (r->nfde || r->fde || st->rows != r->n)
		abort();
	for (size_t i = 0; i < r->n; i++) {
		const struct lt_cfi_row *w = &r->v[i];
		uint8_t k = w->kind & LT_UW_CFA_MASK;

		if (k > LT_UW_NONE || (w->kind & ~(LT_UW_CFA_MASK | LT_UW_FP_SAVED)))
			abort();
		/* only a walkable CFA rule comes with a saved rbp */
		if ((w->kind & LT_UW_FP_SAVED) && k > LT_UW_CFA_PLT)
			abort();
		if (i &&
		    (w->pc <= w[-1].pc || (w->kind == w[-1].kind && w->cfa_off == w[-1].cfa_off &&
					   w->fp_off == w[-1].fp_off)))
			abort();
		kinds += k >= LT_UW_CFA_PLT;
		if (lt_cfi_find(r->v, r->n, w->pc) != w)
			abort();
		if (w->pc && lt_cfi_find(r->v, r->n, w->pc - 1) != (i ? w - 1 : NULL))
			abort();
	}
	if (kinds != st->expr_rows + st->plt_rows + st->end_rows + st->signal_rows + st->none_rows)
		abort();
	if (r->n && lt_cfi_find(r->v, r->n, UINT64_MAX) != &r->v[r->n - 1])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lt_cfi_rows r = { 0 };
	struct lt_cfi_stats st = { 0 };
	static bool init;
	char *img;
	Elf *elf;

	if (!init) {
		elf_version(EV_CURRENT);
		init = true;
	}
	/* one .eh_frame */
	if (lt_cfi_parse(data, size, SEC_VADDR, true, &r, &st))
		abort();
	check_parsed(&r);
	if (lt_cfi_finish(&r, &st))
		abort();
	check_table(&r, &st);
	lt_cfi_rows_free(&r);

	/* the first half as .eh_frame, the second as .debug_frame, one table */
	st = (struct lt_cfi_stats){ 0 };
	if (lt_cfi_parse(data, size / 2, SEC_VADDR, true, &r, &st) ||
	    lt_cfi_parse(data + size / 2, size - size / 2, 0, false, &r, &st))
		abort();
	check_parsed(&r);
	if (lt_cfi_finish(&r, &st))
		abort();
	check_table(&r, &st);
	lt_cfi_rows_free(&r);

	/* an ELF file in memory (libelf may write to the image: a copy) */
	img = malloc(size ? size : 1);
	if (!img)
		return 0;
	memcpy(img, data, size);
	elf = elf_memory(img, size);
	if (elf) {
		st = (struct lt_cfi_stats){ 0 };
		if (!lt_cfi_elf(elf, &r, &st))
			check_table(&r, &st);
		lt_cfi_rows_free(&r);
		elf_end(elf);
	}
	free(img);
	return 0;
}
