/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DWARF call frame information (.eh_frame, .debug_frame) compiled into the walker's unwind rows
 * (lt_unwind.h). x86_64 only. A pure layer: libelf, no libbpf.
 *
 * Each FDE's table is run once and every row mapped to the compact form: CFA from rsp or rbp
 * (or the PLT's expression), return address at CFA - 8, rbp saved at CFA + 8 * n or unchanged.
 * Anything else becomes LT_UW_EXPR (the walk stops there) rather than a wrong frame.
 */
#ifndef LT_CFI_H
#define LT_CFI_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_unwind.h"

/* One parsed FDE and its rows in lt_cfi_rows.v, between lt_cfi_parse and lt_cfi_finish. */
struct lt_cfi_fde {
	uint32_t start, end; /* [start, end), ELF virtual addresses */
	uint32_t first, n; /* its rows: v[first .. first + n), pc ascending, inside the range */
	bool debug; /* from .debug_frame: used only where no .eh_frame FDE is */
};

struct lt_cfi_rows {
	struct lt_uw_row *v; /* malloc'd: a caller may take it (and free it) */
	size_t n, cap;
	struct lt_cfi_fde *fde; /* parsed and not yet finished; empty after lt_cfi_finish */
	size_t nfde, fde_cap;
};

/* Counters; every call adds to them. */
struct lt_cfi_stats {
	uint64_t cies; /* CIEs read (well-formed or not) */
	uint64_t fdes; /* FDEs whose tables were run */
	uint64_t rows; /* rows out of lt_cfi_finish */
	uint64_t expr_rows; /* of those: LT_UW_EXPR, the walk stops */
	uint64_t plt_rows, end_rows, signal_rows, none_rows; /* of those: by kind */
	uint64_t fp_rows; /* of those: rbp saved (LT_UW_FP_SAVED) */
	uint64_t signal_fdes; /* FDEs of a CIE with augmentation S */
	uint64_t bad_entries; /* malformed CIEs and FDEs skipped (their rows dropped) */
	uint64_t high_fdes; /* FDEs ending above 4 GiB: rows hold 32-bit addresses */
	uint64_t overlap_fdes; /* FDEs dropped for overlapping an earlier one of their section */
	uint64_t outside_fdes; /* FDEs outside the executable segments (a discarded function's) */
	uint64_t debug_fdes; /* .debug_frame FDEs used: no .eh_frame FDE covers them */
};

/*
 * Parses one CFI section: .eh_frame when eh, else .debug_frame. sec_vaddr is the ELF virtual
 * address of sec[0] (pc-relative pointers; 0 for .debug_frame). Appends each well-formed FDE's
 * rows and its lt_cfi_fde to out; malformed entries are skipped and counted. 0 or -ENOMEM.
 */
int lt_cfi_parse(const uint8_t *sec, size_t len, uint64_t sec_vaddr, bool eh,
		 struct lt_cfi_rows *out, struct lt_cfi_stats *st);

/*
 * Turns the FDEs parsed into out into one table: sorted by pc, overlaps dropped (.eh_frame wins
 * over .debug_frame), consecutive identical rows merged, an LT_UW_NONE row where an FDE ends and
 * no other starts. Once, after the parses: only rows of parsed FDEs are kept. 0 or -ENOMEM (out
 * unchanged).
 */
int lt_cfi_finish(struct lt_cfi_rows *out, struct lt_cfi_stats *st);

/*
 * All rows of an ELF file (x86_64): .eh_frame (by section header, else PT_GNU_EH_FRAME ->
 * .eh_frame_hdr), .debug_frame where .eh_frame has no FDE, finished as above. out starts empty.
 * 0; -ENOENT: no CFI; -ENOTSUP: not x86_64 ELF64; -EINVAL: not ELF; -ENOMEM.
 */
int lt_cfi_elf(Elf *elf, struct lt_cfi_rows *out, struct lt_cfi_stats *st);

void lt_cfi_rows_free(struct lt_cfi_rows *r);

/* The row covering vaddr as the walker finds it (the last with pc <= vaddr), or NULL. */
const struct lt_uw_row *lt_cfi_find(const struct lt_uw_row *v, size_t n, uint64_t vaddr);

#endif
