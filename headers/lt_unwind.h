/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User stacks without frame pointers: unwind rows compiled in userspace from a binary's CFI
 * (.eh_frame, .debug_frame) and walked by the profiles' BPF programs.
 *
 * lt_uw_rows is one array of rows; each ELF file (shared by build-id across processes) owns a
 * contiguous, sorted range of it. lt_uw_procs maps a process to its executable mappings, sorted
 * by address, each with the row range of its file. A row covers the addresses from its pc to the
 * next row's pc and says how to find the caller's frame there:
 *   x86_64: CFA = (rsp or rbp) + cfa_off; return address at CFA - 8; rbp saved at CFA + 8 *
 *   fp_off or unchanged.
 *   arm64: CFA = (sp or x29) + cfa_off; return address in x30 (lr) or, LT_UW_RA_SAVED, at CFA +
 *   ra_off, signed by PAC when LT_UW_RA_SIGNED; x29 saved at CFA + 8 * fp_off or unchanged.
 * Rows the compact form cannot express are marked so the walker stops and counts why. The row
 * layout is the target's (the BPF objects and the loader are built for one architecture).
 */
#ifndef LT_UNWIND_H
#define LT_UNWIND_H

#include "lt_abi.h"

/* The CFA rule of a row (low 4 bits of lt_uw_row.kind). */
enum lt_uw_cfa {
	LT_UW_CFA_SP = 0, /* CFA = rsp (arm64: sp) + cfa_off */
	LT_UW_CFA_FP = 1, /* CFA = rbp (arm64: x29) + cfa_off */
	/* x86_64, the PLT's DWARF expression: CFA = rsp + 8, and 8 more once ((ip & 15) >= 11) */
	LT_UW_CFA_PLT = 2,
	LT_UW_END = 3, /* return address undefined: the outermost frame, the stack is complete */
	LT_UW_EXPR = 4, /* a DWARF expression or register rule the row cannot hold: the walk stops */
	LT_UW_SIGNAL = 5, /* a signal frame (augmentation S): the walk stops */
	LT_UW_NONE = 6, /* no FDE covers these addresses: a frame-pointer step */
};
#define LT_UW_CFA_MASK 0x0f
#define LT_UW_FP_SAVED 0x10 /* kind flag: rbp (x29) is saved at CFA + 8 * fp_off (else unchanged) */
#define LT_UW_RA_SAVED 0x20 /* arm64 flag: the return address is at CFA + ra_off (else in x30) */
#define LT_UW_RA_SIGNED 0x40 /* arm64 flag: the return address is signed (a PAC above the VA) */

/* the build's target: the walker's (BPF, __TARGET_ARCH_*) or the loader's (the compiler's) */
#if defined(__TARGET_ARCH_arm64) || (!defined(__bpf__) && defined(__aarch64__))
#define LT_UW_ARM64 1
#endif

#ifdef LT_UW_ARM64
/*
 * 16 bytes, not the 10 it needs: an array map keeps each value 8-byte aligned anyway. The return
 * address rule moves with the prologue (x30 until stp saves it), so it is in the row.
 */
struct lt_uw_row {
	__u32 pc; /* first ELF virtual address the row covers */
	__s16 cfa_off; /* bytes */
	__u8 kind; /* enum lt_uw_cfa | LT_UW_FP_SAVED | LT_UW_RA_SAVED | LT_UW_RA_SIGNED */
	__s8 fp_off; /* in 8-byte words from the CFA */
	__s16 ra_off; /* bytes from the CFA, with LT_UW_RA_SAVED */
	__u8 _pad0[6];
};
#else
struct lt_uw_row {
	__u32 pc; /* first ELF virtual address the row covers */
	__s16 cfa_off; /* bytes */
	__u8 kind; /* enum lt_uw_cfa | LT_UW_FP_SAVED */
	__s8 fp_off; /* in 8-byte words from the CFA */
};
#endif

/* set on a walked stack's last frame when the walk reached the outermost frame: a whole stack */
#define LT_UW_COMPLETE (1ull << 63)

#ifdef LT_UW_ARM64
/* arm64 user addresses are below this (48-bit VA; 52-bit ones are not walked); a PAC sits above */
#define LT_UW_USER_END (1ull << 48)
#else
/* x86_64 user addresses are below this (4-level paging; 5-level ones are not walked) */
#define LT_UW_USER_END (1ull << 47)
#endif

/* executable mappings per process the walker knows; more are walked by frame pointers */
#define LT_UW_MAPS 64

/*
 * A file's block index: the rows of one 2^LT_UW_BLK_SHIFT-byte block of ELF addresses are found
 * from one index word, so the walker's search touches a few neighbouring rows instead of ~log2(n)
 * rows across the whole table (each a cache miss when samples are milliseconds apart). Word k is
 * the row (from the file's first) that covers the start of block blk0 + k; the words sit in
 * lt_uw_rows, packed sizeof(struct lt_uw_row) / 4 to a row, from row idx on.
 */
#define LT_UW_BLK_SHIFT 8

struct lt_uw_map {
	__u64 start, end; /* the mapping's addresses */
	__u64 bias; /* address - bias = the file's ELF virtual address */
	__u32 first; /* its file's rows in lt_uw_rows */
	__u32 count; /* 0: no unwind info for this file (frame pointers) */
	__u32 idx; /* its file's block index in lt_uw_rows (words, see LT_UW_BLK_SHIFT) */
	__u32 blk0; /* the block of the first row's pc */
	__u32 nblk; /* index words; 0: none (the rows are searched whole) */
	__u32 _pad0;
};

/* Value of lt_uw_procs (key: tgid). */
struct lt_uw_proc {
	__u32 n; /* mappings in m[], sorted by start, not overlapping */
	/* written by the walker: when (bpf_ktime_get_ns() >> 20) a pc in none of m[] last asked
	 * the loader to read the maps again (a library at a new address, the size unchanged) */
	__u32 stale_at;
	struct lt_uw_map m[LT_UW_MAPS];
};

#ifdef LT_UW_ARM64
_Static_assert(sizeof(struct lt_uw_row) == 16, "lt_uw_row size");
LT_ASSERT_OFF(struct lt_uw_row, ra_off, 8);
#else
_Static_assert(sizeof(struct lt_uw_row) == 8, "lt_uw_row size");
#endif
LT_ASSERT_OFF(struct lt_uw_row, kind, 6);
_Static_assert(sizeof(struct lt_uw_map) == 48, "lt_uw_map size");
LT_ASSERT_OFF(struct lt_uw_map, first, 24);
LT_ASSERT_OFF(struct lt_uw_map, idx, 32);
LT_ASSERT_OFF(struct lt_uw_map, nblk, 40);
_Static_assert(sizeof(struct lt_uw_proc) == 8 + 48 * LT_UW_MAPS, "lt_uw_proc size");
LT_ASSERT_OFF(struct lt_uw_proc, m, 8);

/* For the ABI test and the BTF anchors (see LT_ABI_RECORDS); arm64's row has two more. */
#ifdef LT_UW_ARM64
#define LT_ABI_UW_ROW_ARCH(M) M(lt_uw_row, ra_off) M(lt_uw_row, _pad0)
#else
#define LT_ABI_UW_ROW_ARCH(M)
#endif
#define LT_ABI_UNWIND(S, M)                                                                    \
	S(lt_uw_row) M(lt_uw_row, pc) M(lt_uw_row, cfa_off) M(lt_uw_row, kind)                   \
	M(lt_uw_row, fp_off) LT_ABI_UW_ROW_ARCH(M)                                             \
	S(lt_uw_map) M(lt_uw_map, start) M(lt_uw_map, end) M(lt_uw_map, bias)                    \
	M(lt_uw_map, first) M(lt_uw_map, count) M(lt_uw_map, idx) M(lt_uw_map, blk0)             \
	M(lt_uw_map, nblk) M(lt_uw_map, _pad0)                                                 \
	S(lt_uw_proc) M(lt_uw_proc, n) M(lt_uw_proc, stale_at) M(lt_uw_proc, m)

#endif /* LT_UNWIND_H */
