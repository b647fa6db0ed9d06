// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target: the CFI compiler (cfi.c) on a mutated input, four ways: the bytes as one
 * .eh_frame section of an x86_64 file and of an arm64 one (its registers, RA rule, PAC state),
 * as .eh_frame and .debug_frame at once (one table: overlaps, precedence), and as an ELF file
 * from memory (section headers, else PT_GNU_EH_FRAME -> .eh_frame_hdr; either e_machine).
 *
 * Checked besides the sanitizers: each parsed FDE's rows lie inside it in address order, from its
 * first byte; the finished table is strictly sorted, no row repeats the one before, every kind
 * is an enum lt_uw_cfa value with no flag but LT_UW_FP_SAVED (arm64: and the RA flags, no PLT
 * rule, an RA offset only with LT_UW_RA_SAVED), the counters add up, the walker's search lands
 * on a row at or below the address, and the packed rows carry the same rule.
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

static struct lt_uw_row_x86 px[1 << 16];
static struct lt_uw_row_arm64 pa[1 << 16];

static void check_table(const struct lt_cfi_rows *r, const struct lt_cfi_stats *st)
{
	bool a64 = r->machine == EM_AARCH64;
	uint8_t flags = LT_UW_FP_SAVED | (a64 ? LT_UW_RA_SAVED | LT_UW_RA_SIGNED : 0);
	uint64_t kinds = 0, signed_rows = 0;
	size_t np = r->n < (1 << 16) ? r->n : (1 << 16);

	if (r->nfde || r->fde || st->rows != r->n)
		abort();
	for (size_t i = 0; i < r->n; i++) {
		const struct lt_cfi_row *w = &r->v[i];
		uint8_t k = w->kind & LT_UW_CFA_MASK;

		if (k > LT_UW_NONE || (w->kind & ~(LT_UW_CFA_MASK | flags)) || w->_pad0)
			abort();
		if (a64 && (k == LT_UW_CFA_PLT || (!(w->kind & LT_UW_RA_SAVED) && w->ra_off)))
			abort();
		if (!a64 && w->ra_off)
			abort();
		/* the RA flags only with a walkable CFA rule */
		if ((w->kind & (LT_UW_RA_SAVED | LT_UW_RA_SIGNED)) && k > LT_UW_CFA_FP)
			abort();
		/* only a walkable CFA rule comes with a saved rbp */
		if ((w->kind & LT_UW_FP_SAVED) && k > LT_UW_CFA_PLT)
			abort();
		if (i &&
		    (w->pc <= w[-1].pc || (w->kind == w[-1].kind && w->cfa_off == w[-1].cfa_off &&
					   w->fp_off == w[-1].fp_off && w->ra_off == w[-1].ra_off)))
			abort();
		kinds += k >= LT_UW_CFA_PLT;
		signed_rows += !!(w->kind & LT_UW_RA_SIGNED);
		if (lt_cfi_find(r->v, r->n, w->pc) != w)
			abort();
		if (w->pc && lt_cfi_find(r->v, r->n, w->pc - 1) != (i ? w - 1 : NULL))
			abort();
	}
	if (kinds !=
		    st->expr_rows + st->plt_rows + st->end_rows + st->signal_rows + st->none_rows ||
	    signed_rows != st->signed_rows)
		abort();
	/* packed for the walker: the same rule */
	if (a64) {
		lt_cfi_pack_arm64(r->v, np, pa);
		for (size_t i = 0; i < np; i++)
			if (pa[i].pc != r->v[i].pc || pa[i].kind != r->v[i].kind ||
			    pa[i].cfa_off != r->v[i].cfa_off || pa[i].fp_off != r->v[i].fp_off ||
			    pa[i].ra_off != r->v[i].ra_off)
				abort();
	} else {
		lt_cfi_pack_x86(r->v, np, px);
		for (size_t i = 0; i < np; i++)
			if (px[i].pc != r->v[i].pc || px[i].kind != r->v[i].kind ||
			    px[i].cfa_off != r->v[i].cfa_off || px[i].fp_off != r->v[i].fp_off)
				abort();
	}
	if (r->n && lt_cfi_find(r->v, r->n, UINT64_MAX) != &r->v[r->n - 1])
		abort();
}

/* the checks of parsed rows, the table made from them, and the rows freed */
static void finish_checked(struct lt_cfi_rows *r, struct lt_cfi_stats *st)
{
	check_parsed(r);
	if (lt_cfi_finish(r, st))
		abort();
	check_table(r, st);
	lt_cfi_rows_free(r);
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
	/* one .eh_frame, of an x86_64 file, then of an arm64 one */
	for (int m = 0; m < 2; m++) {
		st = (struct lt_cfi_stats){ 0 };
		r.machine = m ? EM_AARCH64 : EM_X86_64;
		if (lt_cfi_parse(data, size, SEC_VADDR, true, &r, &st))
			abort();
		finish_checked(&r, &st);
	}

	/* the first half as .eh_frame, the second as .debug_frame, one table */
	st = (struct lt_cfi_stats){ 0 };
	if (lt_cfi_parse(data, size / 2, SEC_VADDR, true, &r, &st) ||
	    lt_cfi_parse(data + size / 2, size - size / 2, 0, false, &r, &st))
		abort();
	finish_checked(&r, &st);

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
