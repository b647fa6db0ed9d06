/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DWARF call frame information (.eh_frame, .debug_frame) compiled into the walker's unwind rows
 * (lt_unwind.h). x86_64 and arm64 files, whatever this build's architecture: the register set is
 * the file's (e_machine). A pure layer: libelf, no libbpf.
 *
 * Each FDE's table is run once and every row mapped to the compact form:
 *   x86_64: CFA from rsp or rbp (or the PLT's expression), return address at CFA - 8, rbp saved
 *   at CFA + 8 * n or unchanged;
 *   arm64: CFA from sp (31) or x29, return address in x30 (30) or saved at CFA + n, signed or not
 *   (DW_CFA_AARCH64_negate_ra_state), x29 saved at CFA + 8 * n or unchanged.
 * Anything else becomes LT_UW_EXPR (the walk stops there) rather than a wrong frame. The rows
 * here are the architecture-neutral lt_cfi_row; lt_cfi_pack_* turn them into the walker's.
 */
#ifndef LT_CFI_H
#define LT_CFI_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_unwind.h"

/* A compiled row, either architecture: pc, kind (enum lt_uw_cfa and its flags) and offsets as in
 * lt_unwind.h; ra_off only with LT_UW_RA_SAVED (arm64; x86_64's is CFA - 8, implied). */
struct lt_cfi_row {
	uint32_t pc;
	int16_t cfa_off;
	uint8_t kind;
	int8_t fp_off;
	int16_t ra_off;
	uint16_t _pad0; /* 0: rows compare whole (memcmp) */
};

/* The walker's rows of each architecture (lt_unwind.h's lt_uw_row is the one of this build). */
struct lt_uw_row_x86 {
	uint32_t pc;
	int16_t cfa_off;
	uint8_t kind;
	int8_t fp_off;
};

struct lt_uw_row_arm64 {
	uint32_t pc;
	int16_t cfa_off;
	uint8_t kind;
	int8_t fp_off;
	int16_t ra_off;
	uint8_t _pad0[6];
};

/* One parsed FDE and its rows in lt_cfi_rows.v, between lt_cfi_parse and lt_cfi_finish. */
struct lt_cfi_fde {
	uint32_t start, end; /* [start, end), ELF virtual addresses */
	uint32_t first, n; /* its rows: v[first .. first + n), pc ascending, inside the range */
	bool debug; /* from .debug_frame: used only where no .eh_frame FDE is */
};

struct lt_cfi_rows {
	/* the register set: EM_AARCH64, else x86_64 (0 too); set before lt_cfi_parse, or by
	 * lt_cfi_elf from the file */
	uint16_t machine;
	struct lt_cfi_row *v; /* malloc'd: a caller may take it (and free it) */
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
	uint64_t fp_rows; /* of those: rbp (x29) saved (LT_UW_FP_SAVED) */
	uint64_t signed_rows; /* of those: arm64, the return address signed (LT_UW_RA_SIGNED) */
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
 * All rows of an ELF file (x86_64 or arm64, out->machine set from it): .eh_frame (by section
 * header, else PT_GNU_EH_FRAME -> .eh_frame_hdr), .debug_frame where .eh_frame has no FDE,
 * finished as above. out starts empty.
 * 0; -ENOENT: no CFI; -ENOTSUP: not x86_64 or arm64 ELF64; -EINVAL: not ELF; -ENOMEM.
 */
int lt_cfi_elf(Elf *elf, struct lt_cfi_rows *out, struct lt_cfi_stats *st);

void lt_cfi_rows_free(struct lt_cfi_rows *r);

/* The row covering vaddr as the walker finds it (the last with pc <= vaddr), or NULL. */
const struct lt_cfi_row *lt_cfi_find(const struct lt_cfi_row *v, size_t n, uint64_t vaddr);

/*
 * The block index of n rows (pc ascending; lt_unwind.h, LT_UW_BLK_SHIFT): *idx (malloc'd) gets
 * one word per block from the first row's to the last's, the row covering the block's start (0
 * where no row does yet), *blk0 the first row's block. The number of words, or 0 (and *idx NULL):
 * no rows, the rows too sparse for an index worth its size (more words than 4 a row), or no
 * memory: the walker then searches the rows whole.
 */
uint32_t lt_cfi_index(const struct lt_cfi_row *v, size_t n, uint32_t *blk0, uint32_t **idx);

/* The rows of v that the walker searches for vaddr with the index (idx, blk0, nblk from
 * lt_cfi_index; nblk 0: all of them): [*lo, *hi); false: vaddr is below the first block. */
bool lt_cfi_index_range(const uint32_t *idx, uint32_t blk0, uint32_t nblk, size_t n, uint64_t vaddr,
			size_t *lo, size_t *hi);

/* n rows of an x86_64 file as the x86 walker reads them (8 bytes: exactly the compiled rule). */
void lt_cfi_pack_x86(const struct lt_cfi_row *v, size_t n, struct lt_uw_row_x86 *out);

/* n rows of an arm64 file as the arm64 walker reads them (16 bytes, the RA rule with them). */
void lt_cfi_pack_arm64(const struct lt_cfi_row *v, size_t n, struct lt_uw_row_arm64 *out);

/* Bytes per walker row of the rows' architecture. */
size_t lt_cfi_row_size(const struct lt_cfi_rows *r);

/* r's rows packed for this build's walker (lt_uw_row), out holds r->n; -ENOTSUP: rows of another
 * architecture (a foreign binary, say under qemu-user: its stacks are not walked by tables). */
int lt_cfi_pack(const struct lt_cfi_rows *r, struct lt_uw_row *out);

#endif
