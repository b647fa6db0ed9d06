// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CFI to unwind rows (cfi.c): CIEs and FDEs built byte by byte for the edge cases (64-bit
 * lengths, remember/restore, the PLT's expression, an undefined return address, signal frames,
 * .debug_frame versions, truncation), an ELF without section headers, then every row binutils'
 * readelf --debug-dump=frames-interp prints for real files checked against the rule our rows give
 * at its address, and a perturbed row to show that check can fail. arm64: an arm64 CIE and FDEs
 * by hand (the RA rule, x29, PAC's negate_ra_state), the packed rows, and a program built by an
 * aarch64 gcc (with and without -mbranch-protection) checked against readelf the same way.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi.h"
#include "tap.h"

/* this machine's libraries: the cross-checks read real files of the architecture it runs */
#ifdef __aarch64__
#define LIBDIR "/lib/aarch64-linux-gnu"
#else
#define LIBDIR "/lib/x86_64-linux-gnu"
#endif

/* ---- building sections ---- */

#define SEC_VADDR 0x1000ull

struct buf {
	uint8_t b[8192];
	size_t n;
};

static void u8(struct buf *b, uint8_t v)
{
	if (b->n < sizeof(b->b))
		b->b[b->n++] = v;
}

static void uN(struct buf *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		u8(b, (uint8_t)(v >> (8 * i)));
}

static void uleb(struct buf *b, uint64_t v)
{
	do {
		u8(b, (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static void sleb(struct buf *b, int64_t v)
{
	for (;;) {
		uint8_t c = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			u8(b, c);
			return;
		}
		u8(b, c | 0x80);
	}
}

static void bytes(struct buf *b, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		u8(b, ((const uint8_t *)p)[i]);
}

/* a byte list: BYTES(b, DEF_CFA, 7, 8) */
#define BYTES(b, ...) \
	bytes(b, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

/* an entry's length: 0xffffffff + 8 bytes in the 64-bit format, patched by ent_end */
static size_t ent_begin(struct buf *b, bool is64)
{
	size_t at = b->n;

	if (is64) {
		uN(b, 0xffffffff, 4);
		uN(b, 0, 8);
	} else {
		uN(b, 0, 4);
	}
	return at;
}

static void ent_end(struct buf *b, size_t at, bool is64)
{
	size_t body = at + (is64 ? 12 : 4);
	uint64_t len = b->n - body;

	for (int i = 0; i < (is64 ? 8 : 4); i++)
		b->b[body - (is64 ? 8 : 4) + i] = (uint8_t)(len >> (8 * i));
}

/* DW_CFA_* */
#define ADV(n) (0x40 | (n))
#define OFF(r) (0x80 | (r))
#define RESTORE(r) (0xc0 | (r))
#define NOP 0x00
#define SET_LOC 0x01
#define ADV1 0x02
#define ADV2 0x03
#define ADV4 0x04
#define UNDEF 0x07
#define SAME 0x08
#define REGISTER 0x09
#define REMEMBER 0x0a
#define RESTORE_STATE 0x0b
#define DEF_CFA 0x0c
#define DEF_CFA_REG 0x0d
#define DEF_CFA_OFF 0x0e
#define DEF_CFA_EXPR 0x0f
#define EXPRESSION 0x10
#define OFF_EXT_SF 0x11
#define DEF_CFA_SF 0x12
#define VAL_OFF 0x14
#define ARGS_SIZE 0x2e
#define NEG_OFF_EXT 0x2f
#define NEG_RA 0x2d /* DW_CFA_AARCH64_negate_ra_state */

/*
 * An .eh_frame CIE: code factor 1, data factor df, ra 16, initial CFA rsp + 8 and ra at CFA - 8;
 * aug "zR" style strings get their data from aug_data. Returns its offset.
 */
static size_t cie_eh_df(struct buf *b, bool is64, const char *aug, const uint8_t *aug_data,
			size_t aug_len, int df)
{
	size_t at = ent_begin(b, is64);

	uN(b, 0, 4); /* CIE id: 4 bytes in .eh_frame either way */
	u8(b, 1);
	bytes(b, aug, strlen(aug) + 1);
	uleb(b, 1);
	sleb(b, df);
	u8(b, 16);
	if (aug[0] == 'z') {
		uleb(b, aug_len);
		bytes(b, aug_data, aug_len);
	}
	BYTES(b, DEF_CFA, 7, 8, OFF(16), (uint8_t)(-8 / df));
	ent_end(b, at, is64);
	return at;
}

static size_t cie_eh(struct buf *b, bool is64, const char *aug, const uint8_t *aug_data,
		     size_t aug_len)
{
	return cie_eh_df(b, is64, aug, aug_data, aug_len, -8);
}

static const uint8_t ZR[] = { 0x1b }; /* R: pcrel sdata4 */

/* An .eh_frame FDE of the CIE at cie (R: pcrel sdata4, 'z': no data) for [pc, pc + len). */
static void fde_eh(struct buf *b, bool is64, size_t cie, uint64_t pc, uint32_t len,
		   const uint8_t *ins, size_t n)
{
	size_t at = ent_begin(b, is64);

	uN(b, b->n - cie, 4);
	uN(b, pc - (SEC_VADDR + b->n), 4);
	uN(b, len, 4);
	uleb(b, 0);
	bytes(b, ins, n);
	ent_end(b, at, is64);
}

#define FDEX(b, is64, cie, pc, len, ...)                                \
	fde_eh(b, is64, cie, pc, len, (const uint8_t[]){ __VA_ARGS__ }, \
	       sizeof((const uint8_t[]){ __VA_ARGS__ }))
#define FDE(b, cie, pc, len, ...) FDEX(b, false, cie, pc, len, __VA_ARGS__)

/* ---- running and checking ---- */

struct want {
	uint32_t pc;
	uint8_t kind;
	int16_t cfa_off;
	int8_t fp_off;
};

/* arm64's: the return address's slot too */
struct want64 {
	uint32_t pc;
	uint8_t kind;
	int16_t cfa_off;
	int8_t fp_off;
	int16_t ra_off;
};

static int parse_finish_m(const struct buf *eh, const struct buf *debug, uint16_t machine,
			  struct lt_cfi_rows *r, struct lt_cfi_stats *st)
{
	int err = 0;

	*r = (struct lt_cfi_rows){ .machine = machine };
	*st = (struct lt_cfi_stats){ 0 };
	if (eh)
		err = lt_cfi_parse(eh->b, eh->n, SEC_VADDR, true, r, st);
	if (!err && debug)
		err = lt_cfi_parse(debug->b, debug->n, 0, false, r, st);
	if (!err)
		err = lt_cfi_finish(r, st);
	return err;
}

static int parse_finish(const struct buf *eh, const struct buf *debug, struct lt_cfi_rows *r,
			struct lt_cfi_stats *st)
{
	return parse_finish_m(eh, debug, 0, r, st);
}

static bool rows_are64(const struct lt_cfi_rows *r, const struct want64 *w, size_t n)
{
	bool same = r->n == n;

	for (size_t i = 0; same && i < n; i++)
		same = r->v[i].pc == w[i].pc && r->v[i].kind == w[i].kind &&
		       r->v[i].cfa_off == w[i].cfa_off && r->v[i].fp_off == w[i].fp_off &&
		       r->v[i].ra_off == w[i].ra_off;
	if (!same) {
		printf("#   got %zu rows:", r->n);
		for (size_t i = 0; i < r->n; i++)
			printf(" %#x:%#x/%d/%d/%d", r->v[i].pc, r->v[i].kind, r->v[i].cfa_off,
			       r->v[i].fp_off, r->v[i].ra_off);
		printf("\n");
	}
	return same;
}

static bool rows_are(const struct lt_cfi_rows *r, const struct want *w, size_t n)
{
	struct want64 w64[64];

	for (size_t i = 0; i < n && i < 64; i++)
		w64[i] = (struct want64){ w[i].pc, w[i].kind, w[i].cfa_off, w[i].fp_off, 0 };
	return n <= 64 && rows_are64(r, w64, n);
}

#define CHECK_ROWS(r, name, ...)                                                         \
	ok(rows_are(r, (const struct want[]){ __VA_ARGS__ },                             \
		    sizeof((const struct want[]){ __VA_ARGS__ }) / sizeof(struct want)), \
	   "%s", name)
#define CHECK_ROWS64(r, name, ...)                                                             \
	ok(rows_are64(r, (const struct want64[]){ __VA_ARGS__ },                               \
		      sizeof((const struct want64[]){ __VA_ARGS__ }) / sizeof(struct want64)), \
	   "%s", name)

#define SP LT_UW_CFA_SP
#define FP LT_UW_CFA_FP
#define SAVED LT_UW_FP_SAVED
/* clang-format off */
#define NONE_ROW(pc) { pc, LT_UW_NONE, 0, 0 }
/* clang-format on */

/* rows sorted, strictly, no two alike in a row, kinds valid */
static bool well_formed(const struct lt_cfi_rows *r)
{
	bool a64 = r->machine == EM_AARCH64;
	uint8_t flags = LT_UW_FP_SAVED | (a64 ? LT_UW_RA_SAVED | LT_UW_RA_SIGNED : 0);

	for (size_t i = 0; i < r->n; i++) {
		uint8_t k = r->v[i].kind & LT_UW_CFA_MASK;

		if (k > LT_UW_NONE || (r->v[i].kind & ~(LT_UW_CFA_MASK | flags)) ||
		    (a64 && k == LT_UW_CFA_PLT) ||
		    (!(r->v[i].kind & LT_UW_RA_SAVED) && r->v[i].ra_off))
			return false;
		if (i && (r->v[i].pc <= r->v[i - 1].pc || (r->v[i].kind == r->v[i - 1].kind &&
							   r->v[i].cfa_off == r->v[i - 1].cfa_off &&
							   r->v[i].fp_off == r->v[i - 1].fp_off &&
							   r->v[i].ra_off == r->v[i - 1].ra_off)))
			return false;
	}
	return true;
}

static void test_basic(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 };
	size_t c = cie_eh(&b, false, "zR", ZR, 1);

	/* push rbp; mov rsp, rbp; ... leave-like restore */
	FDE(&b, c, 0x2000, 0x20, ADV(1), DEF_CFA_OFF, 16, OFF(6), 2, ADV(3), DEF_CFA_REG, 6,
	    ADV(0x10), DEF_CFA, 7, 8, RESTORE(6), NOP, NOP);
	ok(!parse_finish(&b, NULL, &r, &st), "basic: parses");
	CHECK_ROWS(&r, "basic: a frame-pointer prologue and its epilogue", { 0x2000, SP, 8, 0 },
		   { 0x2001, SP | SAVED, 16, -2 }, { 0x2004, FP | SAVED, 16, -2 },
		   { 0x2014, SP, 8, 0 }, NONE_ROW(0x2020));
	ok(st.cies == 1 && st.fdes == 1 && st.rows == 5 && st.fp_rows == 2 && st.none_rows == 1 &&
		   !st.bad_entries,
	   "basic: counted (cies %llu fdes %llu rows %llu bad %llu)", (unsigned long long)st.cies,
	   (unsigned long long)st.fdes, (unsigned long long)st.rows,
	   (unsigned long long)st.bad_entries);
	ok(!lt_cfi_find(r.v, r.n, 0x1fff) && lt_cfi_find(r.v, r.n, 0x2003)->cfa_off == 16 &&
		   lt_cfi_find(r.v, r.n, 0x2003)->pc == 0x2001 &&
		   lt_cfi_find(r.v, r.n, 0x2020)->kind == LT_UW_NONE &&
		   lt_cfi_find(r.v, r.n, 0xffffffff)->kind == LT_UW_NONE,
	   "basic: lt_cfi_find as the walker searches");
	lt_cfi_rows_free(&r);

	/* the same in the 64-bit format, CIE and FDE, and a mix */
	for (int mix = 0; mix < 3; mix++) {
		b.n = 0;
		c = cie_eh(&b, mix != 1, "zR", ZR, 1);
		FDEX(&b, mix != 2, c, 0x2000, 0x20, ADV(1), DEF_CFA_OFF, 16, OFF(6), 2, ADV(3),
		     DEF_CFA_REG, 6, ADV(0x10), DEF_CFA, 7, 8, RESTORE(6));
		ok(!parse_finish(&b, NULL, &r, &st), "64-bit lengths (%d): parses", mix);
		CHECK_ROWS(&r, "64-bit lengths: the same rows", { 0x2000, SP, 8, 0 },
			   { 0x2001, SP | SAVED, 16, -2 }, { 0x2004, FP | SAVED, 16, -2 },
			   { 0x2014, SP, 8, 0 }, NONE_ROW(0x2020));
		lt_cfi_rows_free(&r);
	}
}

static void test_state(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 };
	size_t c = cie_eh(&b, false, "zR", ZR, 1);
	uint8_t ins[64];
	size_t n;

	/* remember/restore brings back the CFA rule too (gcc's epilogues in the middle) */
	FDE(&b, c, 0x3000, 0x10, ADV(1), DEF_CFA_OFF, 16, OFF(6), 2, REMEMBER, ADV(1), DEF_CFA_OFF,
	    8, RESTORE(6), ADV(1), RESTORE_STATE, ADV(1), DEF_CFA_OFF, 32);
	ok(!parse_finish(&b, NULL, &r, &st), "remember/restore: parses");
	CHECK_ROWS(&r, "remember/restore: the state comes back", { 0x3000, SP, 8, 0 },
		   { 0x3001, SP | SAVED, 16, -2 }, { 0x3002, SP, 8, 0 },
		   { 0x3003, SP | SAVED, 16, -2 }, { 0x3004, SP | SAVED, 32, -2 },
		   NONE_ROW(0x3010));
	lt_cfi_rows_free(&r);

	/* 16 deep is fine, 17 is malformed; restoring an empty stack too */
	for (int depth = 16; depth <= 17; depth++) {
		b.n = 0;
		c = cie_eh(&b, false, "zR", ZR, 1);
		for (n = 0; n < (size_t)depth; n++)
			ins[n] = REMEMBER;
		ins[n++] = ADV(1);
		ins[n++] = RESTORE_STATE;
		fde_eh(&b, false, c, 0x3000, 0x10, ins, n);
		FDE(&b, c, 0x4000, 0x10, NOP);
		ok(!parse_finish(&b, NULL, &r, &st), "remember x%d: parses", depth);
		if (depth == 16)
			CHECK_ROWS(&r, "remember x16: kept", { 0x3000, SP, 8, 0 }, NONE_ROW(0x3010),
				   { 0x4000, SP, 8, 0 }, NONE_ROW(0x4010));
		else
			ok(st.bad_entries == 1 && st.fdes == 1 && r.n == 2 && r.v[0].pc == 0x4000,
			   "remember x17: that FDE dropped and counted, the next kept");
		lt_cfi_rows_free(&r);
	}
	b.n = 0;
	c = cie_eh(&b, false, "zR", ZR, 1);
	FDE(&b, c, 0x3000, 0x10, ADV(1), RESTORE_STATE);
	ok(!parse_finish(&b, NULL, &r, &st) && st.bad_entries == 1 && !r.n,
	   "restore_state on an empty stack: dropped and counted");
	lt_cfi_rows_free(&r);
}

static void test_expr(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 };
	size_t c = cie_eh(&b, false, "zR", ZR, 1);

	/* .plt: push; jmp, then the expression for the entries */
	FDE(&b, c, 0x1020, 0x40, DEF_CFA_OFF, 16, ADV(6), DEF_CFA_OFF, 24, ADV(10), DEF_CFA_EXPR,
	    11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22);
	/* lit10 in place of lit11: not the walker's threshold */
	FDE(&b, c, 0x1060, 0x10, DEF_CFA_EXPR, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3a, 0x2a, 0x33,
	    0x24, 0x22);
	/* a signal-frame-like expression (breg7 160; deref), then back to a register rule */
	FDE(&b, c, 0x1070, 0x10, DEF_CFA_EXPR, 4, 0x77, 0xa0, 0x01, 0x06, ADV(4), DEF_CFA, 7, 16);
	ok(!parse_finish(&b, NULL, &r, &st), "expressions: parse");
	CHECK_ROWS(&r, "expressions: the PLT's is LT_UW_CFA_PLT, any other LT_UW_EXPR",
		   { 0x1020, SP, 16, 0 }, { 0x1026, SP, 24, 0 }, { 0x1030, LT_UW_CFA_PLT, 8, 0 },
		   { 0x1060, LT_UW_EXPR, 0, 0 }, { 0x1074, SP, 16, 0 }, NONE_ROW(0x1080));
	ok(st.plt_rows == 1 && st.expr_rows == 1, "expressions: counted");
	lt_cfi_rows_free(&r);
}

static void test_rules(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 };
	size_t c = cie_eh(&b, false, "zR", ZR, 1);

	/* _start: ra undefined ends the stack */
	FDE(&b, c, 0x1000, 0x10, UNDEF, 16);
	/* rbp at CFA - 1032 (past s8 words), at CFA - 1024, at CFA - 24 */
	FDE(&b, c, 0x1100, 0x10, OFF(6), 0x81, 0x01, ADV(1), OFF(6), 0x80, 0x01, ADV(1), OFF(6), 3);
	/* data factor -4: rbp at CFA - 12 is not a slot, at CFA - 16 is */
	size_t c4 = cie_eh_df(&b, false, "zR", ZR, 1, -4);
	FDE(&b, c4, 0x1180, 0x10, OFF(6), 3, ADV(1), OFF(6), 4);
	/* rbp in a register, by an expression, same value, val_offset */
	FDE(&b, c, 0x1200, 0x10, REGISTER, 6, 3, ADV(1), EXPRESSION, 6, 2, 0x77, 0, ADV(1), SAME, 6,
	    ADV(1), VAL_OFF, 6, 2);
	/* CFA from r10, off past s16, negative by def_cfa_sf, ra elsewhere */
	FDE(&b, c, 0x1300, 0x10, DEF_CFA, 10, 0, ADV(1), DEF_CFA, 7, 0xc0, 0xb8, 0x02 /* 40000 */,
	    ADV(1), DEF_CFA_SF, 6, 0x02 /* 2 * -8 */, ADV(1), DEF_CFA, 7, 8, OFF(16), 2, ADV(1),
	    REGISTER, 16, 0);
	/* a signal-frame CIE: every row of its FDEs */
	size_t cs = cie_eh(&b, false, "zRS", ZR, 1);
	FDE(&b, cs, 0x1400, 0x10, NOP, ADV(1), DEF_CFA_OFF, 16);
	ok(!parse_finish(&b, NULL, &r, &st), "rules: parse");
	CHECK_ROWS(&r, "rules: END, rbp in reach or EXPR, CFA in reach or EXPR, SIGNAL",
		   { 0x1000, LT_UW_END, 0, 0 }, NONE_ROW(0x1010), { 0x1100, LT_UW_EXPR, 0, 0 },
		   { 0x1101, SP | SAVED, 8, -128 }, { 0x1102, SP | SAVED, 8, -3 }, NONE_ROW(0x1110),
		   { 0x1180, LT_UW_EXPR, 0, 0 }, { 0x1181, SP | SAVED, 8, -2 }, NONE_ROW(0x1190),
		   { 0x1200, LT_UW_EXPR, 0, 0 }, { 0x1202, SP, 8, 0 }, { 0x1203, LT_UW_EXPR, 0, 0 },
		   NONE_ROW(0x1210), { 0x1300, LT_UW_EXPR, 0, 0 }, { 0x1302, FP, -16, 0 },
		   { 0x1303, LT_UW_EXPR, 0, 0 }, NONE_ROW(0x1310), { 0x1400, LT_UW_SIGNAL, 0, 0 },
		   NONE_ROW(0x1410));
	ok(st.signal_fdes == 1 && st.end_rows == 1 && st.signal_rows == 1,
	   "rules: signal FDEs and END rows counted");
	lt_cfi_rows_free(&r);
}

static void test_encodings(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 };
	size_t c, at;

	/* zPLR: an indirect pcrel personality, an LSDA in each FDE's augmentation data */
	c = cie_eh(&b, false, "zPLR", (const uint8_t[]){ 0x9b, 0x10, 0, 0, 0, 0x1b, 0x1b }, 7);
	at = ent_begin(&b, false);
	uN(&b, b.n - c, 4);
	uN(&b, 0x5000 - (SEC_VADDR + b.n), 4);
	uN(&b, 0x40, 4);
	uleb(&b, 4);
	uN(&b, 0x1234, 4);
	/* set_loc (the FDE's encoding), advance_loc1/2/4, args_size, negative offset */
	BYTES(&b, ADV(1), DEF_CFA_OFF, 16, SET_LOC);
	uN(&b, 0x5008 - (SEC_VADDR + b.n), 4);
	BYTES(&b, NEG_OFF_EXT, 6, 2, ARGS_SIZE, 16, ADV1, 8, DEF_CFA_OFF, 24, ADV2, 0x10, 0,
	      DEF_CFA_OFF, 32, ADV4, 8, 0, 0, 0, DEF_CFA_OFF, 8, RESTORE(6));
	ent_end(&b, at, false);
	ok(!parse_finish(&b, NULL, &r, &st), "zPLR, set_loc, advance_loc1/2/4: parse");
	CHECK_ROWS(&r, "zPLR, set_loc, advance_loc1/2/4: rows", { 0x5000, SP, 8, 0 },
		   { 0x5001, SP, 16, 0 }, { 0x5008, SP | SAVED, 16, 2 },
		   { 0x5010, SP | SAVED, 24, 2 }, { 0x5020, SP | SAVED, 32, 2 },
		   { 0x5028, SP, 8, 0 }, NONE_ROW(0x5040));
	lt_cfi_rows_free(&r);

	/* set_loc backwards: malformed */
	b.n = 0;
	c = cie_eh(&b, false, "zR", ZR, 1);
	at = ent_begin(&b, false);
	uN(&b, b.n - c, 4);
	uN(&b, 0x5000 - (SEC_VADDR + b.n), 4);
	uN(&b, 0x40, 4);
	uleb(&b, 0);
	BYTES(&b, ADV(8), SET_LOC);
	uN(&b, 0x5004 - (SEC_VADDR + b.n), 4);
	ent_end(&b, at, false);
	ok(!parse_finish(&b, NULL, &r, &st) && st.bad_entries == 1 && !r.n,
	   "set_loc backwards: dropped and counted");
	lt_cfi_rows_free(&r);

	/* udata8 addresses: an FDE above 4 GiB is skipped and counted */
	b.n = 0;
	c = cie_eh(&b, false, "zR", (const uint8_t[]){ 0x04 }, 1);
	at = ent_begin(&b, false);
	uN(&b, b.n - c, 4);
	uN(&b, 0x100000000ull, 8);
	uN(&b, 0x10, 8);
	uleb(&b, 0);
	ent_end(&b, at, false);
	at = ent_begin(&b, false);
	uN(&b, b.n - c, 4);
	uN(&b, 0xffffff00ull, 8);
	uN(&b, 0xff, 8);
	uleb(&b, 0);
	ent_end(&b, at, false);
	ok(!parse_finish(&b, NULL, &r, &st) && st.high_fdes == 1 && !st.bad_entries,
	   "above 4 GiB: skipped and counted");
	CHECK_ROWS(&r, "up to 4 GiB - 1: kept", { 0xffffff00, SP, 8, 0 }, NONE_ROW(0xffffffff));
	lt_cfi_rows_free(&r);

	/* an unknown augmentation without z, a CIE pointer into nowhere, an unknown opcode */
	b.n = 0;
	c = cie_eh(&b, false, "xy", NULL, 0);
	FDE(&b, c, 0x6000, 0x10, NOP);
	at = ent_begin(&b, false);
	uN(&b, b.n + 100, 4);
	ent_end(&b, at, false);
	c = cie_eh(&b, false, "zR", ZR, 1);
	FDE(&b, c, 0x6100, 0x10, 0x3f);
	FDE(&b, c, 0x6200, 0x10, NOP);
	ok(!parse_finish(&b, NULL, &r, &st) && st.bad_entries == 4 && st.cies == 2,
	   "malformed entries: 4 counted (%llu), 2 CIEs (%llu)", (unsigned long long)st.bad_entries,
	   (unsigned long long)st.cies);
	CHECK_ROWS(&r, "malformed entries: the good FDE kept", { 0x6200, SP, 8, 0 },
		   NONE_ROW(0x6210));
	lt_cfi_rows_free(&r);
}

static void test_layout(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 };
	size_t c = cie_eh(&b, false, "zR", ZR, 1);

	/* out of order in the section; adjacent with the same rule; a gap; an overlap */
	FDE(&b, c, 0x2010, 0x10, NOP);
	FDE(&b, c, 0x2000, 0x10, NOP);
	FDE(&b, c, 0x2040, 0x10, ADV(8), DEF_CFA_OFF, 16);
	FDE(&b, c, 0x2048, 0x10, DEF_CFA_OFF, 64);
	FDE(&b, c, 0x2050, 0, NOP); /* empty */
	uN(&b, 0, 4); /* a terminator in the middle */
	FDE(&b, c, 0x2050, 0x10, DEF_CFA_OFF, 16);
	ok(!parse_finish(&b, NULL, &r, &st), "layout: parses");
	CHECK_ROWS(&r, "layout: sorted, merged, NONE at gaps, overlap dropped",
		   { 0x2000, SP, 8, 0 }, NONE_ROW(0x2020), { 0x2040, SP, 8, 0 },
		   { 0x2048, SP, 16, 0 }, NONE_ROW(0x2060));
	ok(st.overlap_fdes == 1 && st.fdes == 5 && !st.bad_entries, "layout: counted");
	ok(well_formed(&r), "layout: well formed");
	lt_cfi_rows_free(&r);
}

/* .debug_frame: CIE id 0xffffffff (64-bit: all ones), absolute addresses, versions 1, 3, 4 */
static void test_debug_frame(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf eh = { 0 }, d = { 0 };
	size_t c = cie_eh(&eh, false, "zR", ZR, 1), at, cie[4];
	const int vers[] = { 1, 3, 4, 4 };

	FDE(&eh, c, 0x2000, 0x20, ADV(1), DEF_CFA_OFF, 16);
	for (int i = 0; i < 4; i++) {
		bool is64 = i == 3;

		cie[i] = at = ent_begin(&d, is64);
		uN(&d, ~0ull, is64 ? 8 : 4);
		u8(&d, (uint8_t)vers[i]);
		u8(&d, 0); /* "" */
		if (vers[i] == 4) {
			u8(&d, 8); /* address size */
			u8(&d, 0); /* segment selector size */
		}
		uleb(&d, 1);
		sleb(&d, -8);
		if (vers[i] == 1)
			u8(&d, 16);
		else
			uleb(&d, 16);
		BYTES(&d, DEF_CFA, 7, 8, OFF(16), 1);
		ent_end(&d, at, is64);
	}
	for (int i = 0; i < 5; i++) {
		bool is64 = i == 3;
		/* the last covers what .eh_frame has: .eh_frame wins */
		uint64_t pc = i == 4 ? 0x2000 : 0x3000 + 0x100 * (uint64_t)i;

		at = ent_begin(&d, is64);
		uN(&d, cie[i % 4], is64 ? 8 : 4);
		uN(&d, pc, 8);
		uN(&d, 0x10, 8);
		BYTES(&d, ADV(2), DEF_CFA_OFF, 32);
		ent_end(&d, at, is64);
	}
	ok(!parse_finish(&eh, &d, &r, &st), ".debug_frame: parses");
	CHECK_ROWS(&r, ".debug_frame: versions 1, 3, 4 and 64-bit fill the gaps of .eh_frame",
		   { 0x2000, SP, 8, 0 }, { 0x2001, SP, 16, 0 }, NONE_ROW(0x2020),
		   { 0x3000, SP, 8, 0 }, { 0x3002, SP, 32, 0 }, NONE_ROW(0x3010),
		   { 0x3100, SP, 8, 0 }, { 0x3102, SP, 32, 0 }, NONE_ROW(0x3110),
		   { 0x3200, SP, 8, 0 }, { 0x3202, SP, 32, 0 }, NONE_ROW(0x3210),
		   { 0x3300, SP, 8, 0 }, { 0x3302, SP, 32, 0 }, NONE_ROW(0x3310));
	ok(st.debug_fdes == 4 && st.cies == 5 && st.fdes == 6 && !st.bad_entries,
	   ".debug_frame: counted (debug %llu, cies %llu, fdes %llu, bad %llu)",
	   (unsigned long long)st.debug_fdes, (unsigned long long)st.cies,
	   (unsigned long long)st.fdes, (unsigned long long)st.bad_entries);
	lt_cfi_rows_free(&r);

	/* an .eh_frame CIE id in .debug_frame is an FDE pointing at offset 0: no CIE there */
	ok(!lt_cfi_parse(eh.b, eh.n, 0, false, &r, &st), "eh bytes as .debug_frame: no crash");
	lt_cfi_rows_free(&r);
}

/* Every prefix of a section: no crash, nothing from the cut entry, the cut counted. */
static void test_truncated(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 }, t;
	size_t c =
		cie_eh(&b, false, "zPLR", (const uint8_t[]){ 0x9b, 0x10, 0, 0, 0, 0x1b, 0x1b }, 7);
	size_t cie_end = b.n, at;
	bool fine = true;

	at = ent_begin(&b, false);
	uN(&b, b.n - c, 4);
	uN(&b, 0x5000 - (SEC_VADDR + b.n), 4);
	uN(&b, 0x40, 4);
	uleb(&b, 4);
	uN(&b, 0x1234, 4);
	BYTES(&b, ADV(1), DEF_CFA_OFF, 16, OFF(6), 2, ADV1, 8, DEF_CFA_OFF, 24);
	ent_end(&b, at, false);
	for (size_t n = 0; n < b.n; n++) {
		t = b;
		t.n = n;
		if (parse_finish(&t, NULL, &r, &st) || r.n ||
		    (n && n != cie_end && !st.bad_entries) || !well_formed(&r))
			fine = false;
		lt_cfi_rows_free(&r);
		/* the entry's length kept, its bytes cut: the reads past it must fail */
		t = b;
		memset(t.b + n, 0xff, sizeof(t.b) - n);
		if (parse_finish(&t, NULL, &r, &st) || !well_formed(&r))
			fine = false;
		lt_cfi_rows_free(&r);
	}
	ok(fine, "every prefix of %zu bytes: no rows, the cut counted", b.n);
	ok(!parse_finish(&b, NULL, &r, &st) && r.n == 4, "the whole: 4 rows");
	lt_cfi_rows_free(&r);
}

/* ---- ELF files ---- */

static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	uint8_t *p = NULL;
	size_t off = 0;

	if (fd < 0 || fstat(fd, &sb))
		goto out;
	p = malloc((size_t)sb.st_size);
	while (p && off < (size_t)sb.st_size) {
		ssize_t n = read(fd, p + off, (size_t)sb.st_size - off);

		if (n <= 0) {
			free(p);
			p = NULL;
			break;
		}
		off += (size_t)n;
	}
	*len = off;
out:
	if (fd >= 0)
		close(fd);
	return p;
}

static int rows_of_image(uint8_t *img, size_t len, struct lt_cfi_rows *r, struct lt_cfi_stats *st)
{
	Elf *elf = elf_memory((char *)img, len);
	int err;

	*r = (struct lt_cfi_rows){ 0 };
	*st = (struct lt_cfi_stats){ 0 };
	if (!elf)
		return -1;
	err = lt_cfi_elf(elf, r, st);
	elf_end(elf);
	return err;
}

/* The same file with its section headers gone: .eh_frame by PT_GNU_EH_FRAME, the same rows. */
static void test_no_sections(const char *path)
{
	struct lt_cfi_rows a, b;
	struct lt_cfi_stats sa, sb;
	size_t len;
	uint8_t *img = slurp(path, &len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

	if (!img || len < sizeof(*eh)) {
		ok(1, "# skip %s not readable", path);
		free(img);
		return;
	}
	ok(!rows_of_image(img, len, &a, &sa) && a.n, "%s from memory: %zu rows", path, a.n);
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	if (a.machine == EM_AARCH64) /* arm64's .plt row needs its section header: 2 rows less */
		ok(!rows_of_image(img, len, &b, &sb) && b.n <= a.n && b.n + 2 >= a.n,
		   "%s without section headers: %zu rows by .eh_frame_hdr (%zu with the .plt)",
		   path, b.n, a.n);
	else
		ok(!rows_of_image(img, len, &b, &sb) && b.n == a.n &&
			   !memcmp(a.v, b.v, a.n * sizeof(*a.v)),
		   "%s without section headers: the same %zu rows by .eh_frame_hdr", path, b.n);
	lt_cfi_rows_free(&a);
	lt_cfi_rows_free(&b);
	free(img);
}

/* The vdso as the loader reads it: an image in memory (the kernel's own .eh_frame). */
static char vdso_path[] = "/tmp/test_cfi_vdso.XXXXXX";
static const char *vdso_file;

/* .eh_frame or .debug_frame by section header, or a PT_GNU_EH_FRAME segment */
static bool image_has_cfi(uint8_t *img, size_t len)
{
	Elf *elf = elf_memory((char *)img, len);
	Elf_Scn *scn = NULL;
	size_t shstrndx, nph = 0;
	bool has = false;
	GElf_Shdr sh;
	GElf_Phdr ph;

	if (!elf)
		return false;
	if (!elf_getshdrstrndx(elf, &shstrndx))
		while (!has && (scn = elf_nextscn(elf, scn))) {
			const char *name = gelf_getshdr(scn, &sh)
						   ? elf_strptr(elf, shstrndx, sh.sh_name)
						   : NULL;

			has = name && (!strcmp(name, ".eh_frame") || !strcmp(name, ".debug_frame"));
		}
	if (!elf_getphdrnum(elf, &nph))
		for (size_t k = 0; k < nph && !has; k++)
			has = gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_GNU_EH_FRAME;
	elf_end(elf);
	return has;
}

static void test_vdso(void)
{
	char *path = vdso_path;
	int fd, err;
	bool cfi;
	unsigned long lo = 0, hi = 0;
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint8_t *img;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	if (f)
		fclose(f);
	if (!lo || hi <= lo) {
		ok(1, "# skip no [vdso] mapping");
		return;
	}
	img = malloc(hi - lo);
	if (!img)
		return;
	memcpy(img, (const void *)lo, hi - lo);
	err = rows_of_image(img, hi - lo, &r, &st);
	/* arm64's vdso may come without CFI (6.12's has none): then no rows, -ENOENT, and no rows
	 * for readelf to check either */
	cfi = image_has_cfi(img, hi - lo);
	if (cfi)
		ok(!err && r.n && well_formed(&r) && !st.bad_entries,
		   "[vdso]: %zu rows from %llu FDEs", r.n, (unsigned long long)st.fdes);
	else
		ok(err == -ENOENT && !r.n, "[vdso] without CFI: -ENOENT, no rows (%d)", err);
	lt_cfi_rows_free(&r);
	/* and as a file, for readelf */
	fd = cfi ? mkstemp(path) : -1;
	if (fd >= 0) {
		if (write(fd, img, hi - lo) == (ssize_t)(hi - lo))
			vdso_file = path;
		close(fd);
	}
	free(img);
}

static void test_not_x86(void)
{
	struct lt_cfi_rows r = { 0 };
	struct lt_cfi_stats st = { 0 };
	char junk[64] = "not an ELF file";
	Elf *elf = elf_memory(junk, sizeof(junk));

	ok(elf && lt_cfi_elf(elf, &r, &st) == -EINVAL, "not ELF: -EINVAL");
	if (elf)
		elf_end(elf);
	lt_cfi_rows_free(&r);
}

/* ---- arm64 ---- */

#define RA_SAVED LT_UW_RA_SAVED
#define SIGNED LT_UW_RA_SIGNED

/* An arm64 .eh_frame CIE as gcc writes it: code factor 4, data factor -8, ra x30, CFA sp + 0. */
static size_t cie_a64(struct buf *b, const char *aug)
{
	size_t at = ent_begin(b, false);

	uN(b, 0, 4);
	u8(b, 1);
	bytes(b, aug, strlen(aug) + 1);
	uleb(b, 4);
	sleb(b, -8);
	u8(b, 30);
	uleb(b, 1);
	u8(b, 0x1b); /* R: pcrel sdata4; B, the B key, has no data */
	BYTES(b, DEF_CFA, 31, 0);
	ent_end(b, at, false);
	return at;
}

static void test_a64(void)
{
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct buf b = { 0 };
	size_t c = cie_a64(&b, "zR");
	struct lt_uw_row_arm64 p[8];
	struct lt_uw_row_x86 q[8];

	/* paciasp; stp x29, x30, [sp, -32]!; mov x29, sp; ...; ldp x29, x30, [sp], 32; autiasp;
	 * ret: 4-byte advances */
	FDE(&b, c, 0x2000, 0x28, ADV(1), NEG_RA, ADV(1), DEF_CFA_OFF, 32, OFF(29), 4, OFF(30), 3,
	    ADV(1), DEF_CFA_REG, 29, ADV(4), RESTORE(30), RESTORE(29), DEF_CFA, 31, 0, ADV(1),
	    NEG_RA);
	ok(!parse_finish_m(&b, NULL, EM_AARCH64, &r, &st), "arm64: parses");
	CHECK_ROWS64(&r, "arm64: x30 until stp saves it, signed from paciasp to autiasp",
		     { 0x2000, SP, 0, 0, 0 }, { 0x2004, SP | SIGNED, 0, 0, 0 },
		     { 0x2008, SP | SAVED | RA_SAVED | SIGNED, 32, -4, -24 },
		     { 0x200c, FP | SAVED | RA_SAVED | SIGNED, 32, -4, -24 },
		     { 0x201c, SP | SIGNED, 0, 0, 0 }, { 0x2020, SP, 0, 0, 0 },
		     { 0x2028, LT_UW_NONE, 0, 0, 0 });
	ok(st.signed_rows == 4 && st.fp_rows == 2 && !st.bad_entries && !st.expr_rows &&
		   well_formed(&r),
	   "arm64: counted (signed %llu fp %llu)", (unsigned long long)st.signed_rows,
	   (unsigned long long)st.fp_rows);
	ok(lt_cfi_row_size(&r) == 16 && sizeof(p[0]) == 16 && sizeof(q[0]) == 8,
	   "arm64: 16-byte walker rows, x86_64's 8");
	if (r.n == 7) {
		lt_cfi_pack_arm64(r.v, r.n, p);
		ok(p[3].pc == 0x200c && p[3].kind == (FP | SAVED | RA_SAVED | SIGNED) &&
			   p[3].cfa_off == 32 && p[3].fp_off == -4 && p[3].ra_off == -24 &&
			   p[6].kind == LT_UW_NONE && p[6].pc == 0x2028,
		   "arm64: packed as the walker reads them");
	}
#ifdef __aarch64__
	ok(!lt_cfi_pack(&r, (struct lt_uw_row *)p), "arm64 rows pack for this (arm64) walker");
#else
	ok(lt_cfi_pack(&r, (struct lt_uw_row *)q) == -ENOTSUP,
	   "arm64 rows do not pack for this (x86_64) walker");
#endif
	lt_cfi_rows_free(&r);

	/* the same bytes as x86_64's: 0x2d is no x86_64 instruction, the FDE is malformed */
	ok(!parse_finish_m(&b, NULL, EM_X86_64, &r, &st) && !r.n && st.bad_entries == 1,
	   "arm64's negate_ra_state in an x86_64 FDE: dropped and counted");
	lt_cfi_rows_free(&r);

	/* the B key; remember/restore keeps the PAC state; rules the row cannot hold */
	b.n = 0;
	c = cie_a64(&b, "zRB");
	FDE(&b, c, 0x3000, 0x14, NEG_RA, ADV(1), DEF_CFA_OFF, 16, OFF(30), 2, REMEMBER, ADV(1),
	    RESTORE(30), DEF_CFA_OFF, 0, NEG_RA, ADV(1), RESTORE_STATE);
	FDE(&b, c, 0x3100, 0x8, UNDEF, 30); /* _start: the outermost frame */
	FDE(&b, c, 0x3200, 0x8, DEF_CFA, 19, 16); /* CFA from x19 */
	FDE(&b, c, 0x3300, 0x8, REGISTER, 30, 19); /* x30 moved to x19 */
	FDE(&b, c, 0x3400, 0x8, DEF_CFA_OFF, 16, OFF(29), 2); /* x29 saved, x30 not */
	ok(!parse_finish_m(&b, NULL, EM_AARCH64, &r, &st), "arm64 rules: parses");
	CHECK_ROWS64(
		&r, "arm64 rules: state, END, EXPR, x29 alone", { 0x3000, SP | SIGNED, 0, 0, 0 },
		{ 0x3004, SP | RA_SAVED | SIGNED, 16, 0, -16 }, { 0x3008, SP, 0, 0, 0 },
		{ 0x300c, SP | RA_SAVED | SIGNED, 16, 0, -16 }, { 0x3014, LT_UW_NONE, 0, 0, 0 },
		{ 0x3100, LT_UW_END, 0, 0, 0 }, { 0x3108, LT_UW_NONE, 0, 0, 0 },
		{ 0x3200, LT_UW_EXPR, 0, 0, 0 }, { 0x3208, LT_UW_NONE, 0, 0, 0 },
		{ 0x3300, LT_UW_EXPR, 0, 0, 0 }, { 0x3308, LT_UW_NONE, 0, 0, 0 },
		{ 0x3400, SP | SAVED, 16, -2, 0 }, { 0x3408, LT_UW_NONE, 0, 0, 0 });
	lt_cfi_rows_free(&r);

	/* x86_64 rows pack to exactly the compiled rule, 8 bytes */
	b.n = 0;
	c = cie_eh(&b, false, "zR", ZR, 1);
	FDE(&b, c, 0x2000, 0x20, ADV(1), DEF_CFA_OFF, 16, OFF(6), 2, ADV(3), DEF_CFA_REG, 6);
	ok(!parse_finish(&b, NULL, &r, &st) && r.n == 4, "x86_64 rows: parse");
	if (r.n == 4) {
		lt_cfi_pack_x86(r.v, r.n, q);
		ok(q[2].pc == 0x2004 && q[2].kind == (FP | SAVED) && q[2].cfa_off == 16 &&
			   q[2].fp_off == -2 && lt_cfi_row_size(&r) == 8,
		   "x86_64 rows: packed as the walker reads them");
	}
#ifndef __aarch64__
	ok(!lt_cfi_pack(&r, (struct lt_uw_row *)q) &&
		   !memcmp(&q[2], &(struct lt_uw_row_x86){ 0x2004, 16, FP | SAVED, -2 }, 8),
	   "x86_64 rows pack for this (x86_64) walker");
#endif
	lt_cfi_rows_free(&r);
}

/* ---- the cross-check against readelf --debug-dump=frames-interp ---- */

struct xrow {
	uint64_t loc;
	char cfa[24], rbp[24], ra[24]; /* "" for a column readelf does not print */
	uint32_t fde;
	bool cie; /* an FDE without a table of its own: its CIE's initial row */
};

struct xfde {
	uint64_t start, end;
	bool debug, signal, used;
};

struct xfile {
	struct xrow *rows;
	size_t nrows, rcap;
	struct xfde *fdes;
	size_t nfdes, fcap;
	bool a64; /* an arm64 file: x29 is the "rbp" column, the RA rule is checked too */
	/* executable sections and .plt, from the section headers */
	uint64_t exec_lo[64], exec_hi[64];
	size_t nexec;
	uint64_t plt_lo, plt_hi;
};

struct xcie {
	uint64_t off;
	bool debug, signal, has_init;
	struct xrow init; /* the last row of its table */
};

/* the tokens of a table row; a register rule's "(r9)" after "r9" is dropped: one column */
static size_t tokens(char *line, char **tok, size_t max)
{
	size_t n = 0;

	for (char *t = strtok(line, " \t"); t && n < max; t = strtok(NULL, " \t"))
		if (t[0] != '(' || !n)
			tok[n++] = t;
	return n;
}

struct xcols {
	int cfa, rbp, ra;
};

static void add_row(struct xfile *x, const struct xrow *r)
{
	/* at one location the later row holds */
	if (x->nrows && x->rows[x->nrows - 1].fde == r->fde &&
	    x->rows[x->nrows - 1].loc == r->loc) {
		x->rows[x->nrows - 1] = *r;
		return;
	}
	if (x->nrows == x->rcap) {
		x->rcap = x->rcap ? 2 * x->rcap : 4096;
		x->rows = realloc(x->rows, x->rcap * sizeof(*x->rows));
	}
	x->rows[x->nrows++] = *r;
}

/* a table's header ("LOC CFA rbx rbp ra") or row ("0000000000026000 rsp+16 c-16 c-8"): 1 row */
static int table_line(char *line, struct xcols *c, struct xrow *r)
{
	char *tok[64];
	size_t n;

	if (strstr(line, "LOC") && strstr(line, "CFA")) {
		n = tokens(line, tok, 64);
		*c = (struct xcols){ -1, -1, -1 };
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(tok[i], "CFA"))
				c->cfa = (int)i;
			else if (!strcmp(tok[i], "rbp") || !strcmp(tok[i], "x29"))
				c->rbp = (int)i;
			else if (!strcmp(tok[i], "ra"))
				c->ra = (int)i;
		}
		return 0;
	}
	if (strspn(line, "0123456789abcdef") != 16 || line[16] != ' ' || c->cfa <= 0)
		return 0;
	n = tokens(line, tok, 64);
	r->loc = strtoull(tok[0], NULL, 16);
	r->cfa[0] = r->rbp[0] = r->ra[0] = 0;
	if ((size_t)c->cfa < n)
		snprintf(r->cfa, sizeof(r->cfa), "%s", tok[c->cfa]);
	if (c->rbp > 0 && (size_t)c->rbp < n)
		snprintf(r->rbp, sizeof(r->rbp), "%s", tok[c->rbp]);
	if (c->ra > 0 && (size_t)c->ra < n)
		snprintf(r->ra, sizeof(r->ra), "%s", tok[c->ra]);
	return 1;
}

static bool read_readelf(const char *path, struct xfile *x)
{
	char cmd[4200], *line = NULL;
	size_t cap = 0, ncie = 0, cie_cap = 0;
	struct xcie *cies = NULL, *in_cie = NULL;
	struct xcols cols = { -1, -1, -1 };
	bool debug = false, in_fde = false;
	struct xrow r;
	FILE *f;

	/* the file alone: not the -dbg file its .gnu_debuglink names */
	snprintf(cmd, sizeof(cmd),
		 "readelf --debug-dump=frames-interp --debug-dump=no-follow-links '%s' 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long off, len, id, lo, hi;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "Contents of the ", 16)) {
			debug = !!strstr(line, ".debug_frame");
			in_fde = false;
			in_cie = NULL;
			continue;
		}
		if (strstr(line, " CIE") && sscanf(line, "%llx", &off) == 1) {
			/* CIE "zRS": a signal frame's */
			const char *q = strchr(line, '"'), *e = q ? strchr(q + 1, '"') : NULL;

			if (ncie == cie_cap) {
				cie_cap = cie_cap ? 2 * cie_cap : 64;
				cies = realloc(cies, cie_cap * sizeof(*cies));
			}
			in_cie = &cies[ncie++];
			*in_cie = (struct xcie){ .off = off,
						 .debug = debug,
						 .signal = e && memchr(q, 'S', (size_t)(e - q)) };
			in_fde = false;
			cols = (struct xcols){ -1, -1, -1 };
			continue;
		}
		if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &id,
			   &lo, &hi) == 6) {
			struct xfde d = { lo, hi, debug, false, false };
			const struct xcie *c = NULL;

			for (size_t i = 0; i < ncie; i++)
				if (cies[i].off == id && cies[i].debug == debug)
					c = &cies[i];
			d.signal = c && c->signal;
			if (x->nfdes == x->fcap) {
				x->fcap = x->fcap ? 2 * x->fcap : 1024;
				x->fdes = realloc(x->fdes, x->fcap * sizeof(*x->fdes));
			}
			x->fdes[x->nfdes++] = d;
			/* readelf prints no table for an FDE of nops: its CIE's row holds, until
			 * a row of its own at the same place replaces this one */
			if (c && c->has_init) {
				r = c->init;
				r.loc = lo;
				r.fde = (uint32_t)(x->nfdes - 1);
				r.cie = true;
				add_row(x, &r);
			}
			in_fde = true;
			in_cie = NULL;
			cols = (struct xcols){ -1, -1, -1 };
			continue;
		}
		if (in_cie && table_line(line, &cols, &r)) {
			in_cie->init = r;
			in_cie->has_init = true;
		} else if (in_fde && table_line(line, &cols, &r)) {
			r.fde = (uint32_t)(x->nfdes - 1);
			r.cie = false;
			add_row(x, &r);
		}
	}
	free(line);
	free(cies);
	return pclose(f) == 0 && x->nfdes;
}

static void read_sections(const char *path, struct xfile *x)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while ((scn = elf_nextscn(elf, scn))) {
			const char *name;

			if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".plt")) {
				x->plt_lo = sh.sh_addr;
				x->plt_hi = sh.sh_addr + sh.sh_size;
			}
			if (x->nexec < 64) {
				x->exec_lo[x->nexec] = sh.sh_addr;
				x->exec_hi[x->nexec++] = sh.sh_addr + sh.sh_size;
			}
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* readelf's "c-16", "rsp+8": the number after the sign; false when it is not that form */
static bool num_after(const char *s, const char *prefix, long *v)
{
	char *end;
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) || (s[n] != '+' && s[n] != '-'))
		return false;
	*v = strtol(s + n, &end, 10);
	return !*end;
}

/* w with the frame pointer's rule of a readelf row (its rbp/x29 column) */
static struct lt_cfi_row expect_fp(const struct xrow *r, struct lt_cfi_row w)
{
	long v;

	if (!r->rbp[0] || !strcmp(r->rbp, "u") || !strcmp(r->rbp, "s"))
		return w;
	if (!num_after(r->rbp, "c", &v) || v % 8 || v / 8 < INT8_MIN || v / 8 > INT8_MAX)
		return (struct lt_cfi_row){ .kind = LT_UW_EXPR };
	w.kind |= LT_UW_FP_SAVED;
	w.fp_off = (int8_t)(v / 8);
	return w;
}

/*
 * arm64: CFA sp+N or x29+N, ra c+N (saved) or u (x30: readelf prints an unset column and an
 * undefined one alike, so u is also END, see compare), x29 c+N or unchanged. readelf does not
 * show the PAC state: LT_UW_RA_SIGNED is not compared here.
 */
static struct lt_cfi_row expect_a64(const struct xfile *x, const struct xrow *r)
{
	const struct xfde *f = &x->fdes[r->fde];
	struct lt_cfi_row w = { .pc = (uint32_t)r->loc }, expr = { .kind = LT_UW_EXPR };
	long v;

	if (f->signal)
		return (struct lt_cfi_row){ .kind = LT_UW_SIGNAL };
	if (num_after(r->cfa, "sp", &v) || num_after(r->cfa, "x29", &v)) {
		if (v < INT16_MIN || v > INT16_MAX)
			return expr;
		w.kind = r->cfa[0] == 's' ? LT_UW_CFA_SP : LT_UW_CFA_FP;
		w.cfa_off = (int16_t)v;
	} else {
		return expr;
	}
	if (num_after(r->ra, "c", &v)) {
		if (v < INT16_MIN || v > INT16_MAX)
			return expr;
		w.kind |= LT_UW_RA_SAVED;
		w.ra_off = (int16_t)v;
	} else if (r->ra[0] && strcmp(r->ra, "u") && strcmp(r->ra, "s")) {
		return expr;
	}
	return expect_fp(r, w);
}

/* What the row at a readelf row's location must be, from its columns (the rules of cfi.h). */
static struct lt_cfi_row expect(const struct xfile *x, const struct xrow *r)
{
	const struct xfde *f = &x->fdes[r->fde];
	struct lt_cfi_row w = { .pc = (uint32_t)r->loc }, expr = { .kind = LT_UW_EXPR };
	long v;

	if (x->a64)
		return expect_a64(x, r);
	if (f->signal)
		return (struct lt_cfi_row){ .kind = LT_UW_SIGNAL };
	if (!strcmp(r->ra, "u"))
		return (struct lt_cfi_row){ .kind = LT_UW_END };
	if (strcmp(r->ra, "c-8"))
		return expr;
	if (!strcmp(r->cfa, "exp")) {
		if (r->loc < x->plt_lo || r->loc >= x->plt_hi)
			return expr;
		w.kind = LT_UW_CFA_PLT;
		w.cfa_off = 8;
	} else if (num_after(r->cfa, "rsp", &v) || num_after(r->cfa, "rbp", &v)) {
		if (v < INT16_MIN || v > INT16_MAX)
			return expr;
		w.kind = r->cfa[1] == 's' ? LT_UW_CFA_SP : LT_UW_CFA_FP;
		w.cfa_off = (int16_t)v;
	} else {
		return expr;
	}
	return expect_fp(r, w);
}

static bool in_exec(const struct xfile *x, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < x->nexec; i++)
		if (lo >= x->exec_lo[i] && hi <= x->exec_hi[i])
			return true;
	return false;
}

/* which readelf FDEs our table follows: .eh_frame's, .debug_frame's where those have none */
static void pick_fdes(struct xfile *x)
{
	for (size_t i = 0; i < x->nfdes; i++) {
		struct xfde *f = &x->fdes[i];

		f->used = f->end > f->start && in_exec(x, f->start, f->end);
		for (size_t j = 0; j < x->nfdes && f->used; j++) {
			const struct xfde *g = &x->fdes[j];

			/* eh over debug; within one section the earlier one */
			if (j != i && g->start < f->end && f->start < g->end && g->end > g->start &&
			    (g->debug < f->debug || (g->debug == f->debug && j < i)))
				f->used = false;
		}
	}
}

struct xcount {
	size_t checked, mismatched, ends, skipped, by_cie;
};

static struct xcount compare(const struct xfile *x, const struct lt_cfi_row *v, size_t n,
			     bool quiet)
{
	struct xcount c = { 0 };
	int shown = 0;

	for (size_t i = 0; i < x->nrows; i++) {
		const struct xrow *r = &x->rows[i];
		const struct xfde *f = &x->fdes[r->fde];
		const struct lt_cfi_row *got;
		struct lt_cfi_row w;

		if (!f->used || r->loc < f->start || r->loc >= f->end) {
			c.skipped++;
			continue;
		}
		w = expect(x, r);
		got = lt_cfi_find(v, n, r->loc);
		c.checked++;
		c.by_cie += r->cie;
		if (got && (got->kind & ~LT_UW_RA_SIGNED) == w.kind && got->cfa_off == w.cfa_off &&
		    got->fp_off == w.fp_off && got->ra_off == w.ra_off)
			continue;
		/* arm64: readelf's u is also the outermost frame's undefined x30 */
		if (got && x->a64 && !strcmp(r->ra, "u") && got->kind == LT_UW_END)
			continue;
		c.mismatched++;
		if (!quiet && shown++ < 10)
			printf("#   %#llx: readelf CFA %s rbp %s ra %s -> %u/%d/%d, ours "
			       "%u/%d/%d\n",
			       (unsigned long long)r->loc, r->cfa, r->rbp[0] ? r->rbp : "-",
			       r->ra[0] ? r->ra : "-", w.kind, w.cfa_off, w.fp_off,
			       got ? got->kind : 255, got ? got->cfa_off : 0,
			       got ? got->fp_off : 0);
	}
	/* where an FDE ends and none other starts: LT_UW_NONE */
	for (size_t i = 0; i < x->nfdes; i++) {
		const struct xfde *f = &x->fdes[i];
		const struct lt_cfi_row *got;
		bool next = false;

		if (!f->used)
			continue;
		for (size_t j = 0; j < x->nfdes && !next; j++)
			next = x->fdes[j].used && x->fdes[j].start <= f->end &&
			       f->end < x->fdes[j].end;
		if (next)
			continue;
		got = lt_cfi_find(v, n, f->end);
		c.ends++;
		if (!got || got->kind != LT_UW_NONE || got->pc != f->end) {
			c.mismatched++;
			if (!quiet && shown++ < 10)
				printf("#   %#llx: an FDE's end, no NONE row\n",
				       (unsigned long long)f->end);
		}
	}
	return c;
}

static void xfile_free(struct xfile *x)
{
	free(x->rows);
	free(x->fdes);
}

/* lt_cfi_elf on the file as the loader opens it */
static int rows_of_file(const char *path, struct lt_cfi_rows *r, struct lt_cfi_stats *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	int err = -1;

	*r = (struct lt_cfi_rows){ 0 };
	*st = (struct lt_cfi_stats){ 0 };
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		err = lt_cfi_elf(elf, r, st);
		elf_end(elf);
	}
	close(fd);
	return err;
}

/* The walker's search with a block index (progs/unwind.bpf.c's uw_row): the range, then the
 * binary search inside it with rows[lo].pc <= vaddr < rows[hi].pc. */
static const struct lt_cfi_row *index_find(const struct lt_cfi_row *v, size_t n,
					   const uint32_t *idx, uint32_t blk0, uint32_t nblk,
					   uint64_t vaddr)
{
	size_t lo, hi;

	if (!n || !lt_cfi_index_range(idx, blk0, nblk, n, vaddr, &lo, &hi) || hi > n || lo >= hi ||
	    v[lo].pc > vaddr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].pc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return &v[lo];
}

/* Every address around every row, and between: the index finds what the whole search finds.
 * Returns the addresses that differ; *words: the index's size (0: none). */
static size_t index_check(const struct lt_cfi_row *v, size_t n, uint32_t *words)
{
	uint32_t *idx, blk0, nblk = lt_cfi_index(v, n, &blk0, &idx);
	size_t bad = 0;

	*words = nblk;
	for (size_t i = 0; i < n; i++) {
		uint64_t at[] = { v[i].pc,
				  v[i].pc - 1ull,
				  v[i].pc + 1ull,
				  i + 1 < n ? (v[i].pc + (uint64_t)v[i + 1].pc) / 2
					    : v[i].pc + 4096ull,
				  (uint64_t)(v[i].pc | ((1u << LT_UW_BLK_SHIFT) - 1)),
				  (uint64_t)(v[i].pc & ~((1u << LT_UW_BLK_SHIFT) - 1)) };

		for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++)
			bad += index_find(v, n, idx, blk0, nblk, at[j]) != lt_cfi_find(v, n, at[j]);
	}
	bad += index_find(v, n, idx, blk0, nblk, 0) != lt_cfi_find(v, n, 0);
	bad += index_find(v, n, idx, blk0, nblk, 0xffffffffull) != lt_cfi_find(v, n, 0xffffffffull);
	free(idx);
	return bad;
}

static void test_index(void)
{
	struct lt_cfi_row v[64] = {};
	uint32_t words, *idx, blk0;
	size_t n = 0;

	/* rows on a block's start, several in one block, a block with none, one far above */
	for (uint32_t pc = 0x1000; pc < 0x1400; pc += 0x30)
		v[n++].pc = pc;
	v[n++].pc = 0x1500;
	v[n++].pc = 0x1501;
	v[n++].pc = 0x1800;
	ok(!index_check(v, n, &words) && words == (0x1800 >> LT_UW_BLK_SHIFT) - 0x10 + 1,
	   "index: dense rows, every address as the whole search (%u words)", words);
	ok(!index_check(v, 1, &words) && words == 1, "index: one row");
	{
		/* self-check: a word one row late hides the row that covers its block's start */
		uint32_t nblk = lt_cfi_index(v, n, &blk0, &idx), k = 2;
		uint64_t at = (uint64_t)(blk0 + k) << LT_UW_BLK_SHIFT;

		idx[k]++;
		ok(nblk > k && index_find(v, n, idx, blk0, nblk, at) != lt_cfi_find(v, n, at),
		   "index: self-check, a word one row late is noticed");
		free(idx);
	}
	v[n++].pc = 0x10000000;
	ok(lt_cfi_index(v, n, &blk0, &idx) == 0 && !idx && !index_check(v, n, &words),
	   "index: rows too sparse get none, the whole search stands");
	ok(lt_cfi_index(v, 0, &blk0, &idx) == 0 && !idx, "index: no rows, none");
}

static void cross_check(const char *file, bool perturb, size_t min_checked, size_t min_debug)
{
	struct xfile x = { 0 };
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	struct xcount c;
	char *path = realpath(file, NULL);

	if (!path || access(path, R_OK)) {
		ok(1, "# skip %s: not here", file);
		free(path);
		return;
	}
	if (!read_readelf(path, &x)) {
		ok(1, "# skip %s: no readelf output (binutils)", path);
		xfile_free(&x);
		free(path);
		return;
	}
	read_sections(path, &x);
	pick_fdes(&x);
	ok(!rows_of_file(path, &r, &st) && r.n, "%s: %zu rows, %llu FDEs (%llu from .debug_frame)",
	   path, r.n, (unsigned long long)st.fdes, (unsigned long long)st.debug_fdes);
	x.a64 = r.machine == EM_AARCH64;
	ok(well_formed(&r) && !st.bad_entries, "%s: rows well formed, no bad entries (%llu)", path,
	   (unsigned long long)st.bad_entries);
	{
		uint32_t words;
		size_t bad = index_check(r.v, r.n, &words);

		ok(!bad && words,
		   "%s: the block index finds every row's addresses as the whole"
		   " search (%u words for %zu rows; %zu differ)",
		   path, words, r.n, bad);
	}
	c = compare(&x, r.v, r.n, false);
	printf("# %s: readelf: %zu rows of %zu FDEs; %zu checked (%zu FDEs of no table of their"
	       " own by their CIE's), %zu FDE ends, %zu skipped (FDE not used or row outside it);"
	       " ours: %llu expr, %llu plt, %llu end, %llu signal, %llu fp-saved rows\n",
	       path, x.nrows, x.nfdes, c.checked, c.by_cie, c.ends, c.skipped,
	       (unsigned long long)st.expr_rows, (unsigned long long)st.plt_rows,
	       (unsigned long long)st.end_rows, (unsigned long long)st.signal_rows,
	       (unsigned long long)st.fp_rows);
	ok(c.checked >= min_checked && !c.mismatched,
	   "%s: every readelf row matches ours (%zu mismatched)", path, c.mismatched);
	if (min_debug)
		ok(st.debug_fdes >= min_debug,
		   "%s: .debug_frame FDEs used where .eh_frame has none", path);
	if (perturb && r.n > 2) {
		/* the check must notice one row off: a checked row's CFA, then its rbp slot */
		size_t k = 0;
		struct lt_cfi_row *y;

		for (size_t i = x.nrows / 2; i < x.nrows && !k; i++)
			if (x.fdes[x.rows[i].fde].used &&
			    !strcmp(x.rows[i].cfa, x.a64 ? "sp+16" : "rsp+16") &&
			    lt_cfi_find(r.v, r.n, x.rows[i].loc)->pc == x.rows[i].loc)
				k = (size_t)(lt_cfi_find(r.v, r.n, x.rows[i].loc) - r.v) + 1;
		ok(k, "self-check: a row to perturb");
		if (k) {
			y = &r.v[k - 1];
			y->cfa_off += 8;
			c = compare(&x, r.v, r.n, true);
			ok(c.mismatched >= 1, "self-check: a CFA 8 bytes off is noticed (%zu)",
			   c.mismatched);
			y->cfa_off -= 8;
			y->kind ^= LT_UW_FP_SAVED;
			c = compare(&x, r.v, r.n, true);
			ok(c.mismatched >= 1, "self-check: rbp saved or not is noticed (%zu)",
			   c.mismatched);
			y->kind ^= LT_UW_FP_SAVED;
			y->pc++;
			c = compare(&x, r.v, r.n, true);
			ok(c.mismatched >= 1, "self-check: a row moved by a byte is noticed (%zu)",
			   c.mismatched);
			y->pc--;
			c = compare(&x, r.v, r.n, true);
			ok(!c.mismatched, "self-check: restored, clean again");
		}
	}
	lt_cfi_rows_free(&r);
	xfile_free(&x);
	free(path);
}

/* the C program both compiler tests build: a leaf, recursion with alloca, a big frame */
static const char test_prog_src[] =
	"#include <alloca.h>\n#include <string.h>\n"
	"__attribute__((noinline)) static int leaf(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) static int deep(int n) {\n"
	"\tchar *p = alloca(n + 16); memset(p, n, n + 16);\n"
	"\treturn n ? deep(n - 1) + p[n] + leaf(n) : 0; }\n"
	"__attribute__((noinline)) int many(int a, int b, int c, int d) {\n"
	"\tvolatile long v[64]; for (int i = 0; i < 64; i++) v[i] = a * i + b;\n"
	"\treturn (int)v[c & 63] + deep(d & 15); }\n"
	"int main(int argc, char **argv) { (void)argv; return many(argc, 2, 3, 4) & 1; }\n";

/*
 * A program whose own functions have only .debug_frame (no unwind tables: arm64's gcc makes
 * them even without asynchronous ones), the C runtime's .eh_frame: both sections in one table.
 * Skipped without a compiler.
 */
static void debug_frame_program(void)
{
	char dir[] = "/tmp/test_cfi.XXXXXX", src[64], bin[64], cmd[256];
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(1, "# skip no temporary directory");
		return;
	}
	snprintf(src, sizeof(src), "%s/p.c", dir);
	snprintf(bin, sizeof(bin), "%s/p", dir);
	f = fopen(src, "w");
	if (f) {
		fputs(test_prog_src, f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-exceptions"
		 " -o %s %s 2>/dev/null",
		 bin, src);
	if (!f || system(cmd)) {
		ok(1, "# skip no C compiler for a .debug_frame program");
	} else {
		cross_check(bin, false, 10, 3);
	}
	unlink(bin);
	unlink(src);
	rmdir(dir);
}

/* an aarch64 C compiler: the cross gcc, or this machine's on arm64; NULL when none */
static const char *a64_cc(void)
{
#ifdef __aarch64__
	return system("command -v cc >/dev/null 2>&1") ? NULL : "cc";
#else
	return system("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1") ? NULL
									  : "aarch64-linux-gnu-gcc";
#endif
}

/*
 * A program built by an aarch64 gcc, with PAC (-mbranch-protection=standard) and without: every
 * readelf row matches ours (CFA, x29, the RA rule); signed rows exactly in the PAC build; and a
 * row whose saved return address is dropped is noticed.
 */
static void a64_program(void)
{
	char dir[] = "/tmp/test_cfi.XXXXXX", src[64], bin[2][64], cmd[512];
	const char *cc = a64_cc(), *prot[2] = { "none", "standard" };
	struct lt_cfi_rows r;
	struct lt_cfi_stats st;
	FILE *f;

	if (!cc) {
		ok(1, "# skip no aarch64 compiler (make deps ARCH=arm64 installs one)");
		return;
	}
	if (!mkdtemp(dir)) {
		ok(0, "a64: a temporary directory");
		return;
	}
	snprintf(src, sizeof(src), "%s/p.c", dir);
	f = fopen(src, "w");
	if (f) {
		fputs(test_prog_src, f);
		fclose(f);
	}
	for (int k = 0; k < 2; k++) {
		snprintf(bin[k], sizeof(bin[k]), "%s/p-%s", dir, prot[k]);
		snprintf(cmd, sizeof(cmd), "%s -O2 -mbranch-protection=%s -o %s %s", cc, prot[k],
			 bin[k], src);
		ok(f && !system(cmd), "a64: %s", cmd);
		cross_check(bin[k], false, 20, 0);
		ok(!rows_of_file(bin[k], &r, &st) && r.machine == EM_AARCH64 &&
			   (k ? st.signed_rows >= 3 : !st.signed_rows) && st.end_rows >= 1,
		   "a64 %s: %llu signed rows, %llu END (_start)", prot[k],
		   (unsigned long long)st.signed_rows, (unsigned long long)st.end_rows);
		if (k) {
			struct xfile x = { 0 };
			struct lt_cfi_row *y = NULL;

			read_readelf(bin[k], &x);
			read_sections(bin[k], &x);
			pick_fdes(&x);
			x.a64 = true;
			for (size_t i = 0; i < r.n && !y; i++)
				if (r.v[i].kind & LT_UW_RA_SAVED)
					y = &r.v[i];
			/* the PLT (no CFI): x30 and sp, from its first byte */
			ok(x.plt_hi > x.plt_lo && lt_cfi_find(r.v, r.n, x.plt_hi - 1) &&
				   lt_cfi_find(r.v, r.n, x.plt_hi - 1)->pc == x.plt_lo &&
				   lt_cfi_find(r.v, r.n, x.plt_hi - 1)->kind == LT_UW_CFA_SP &&
				   !lt_cfi_find(r.v, r.n, x.plt_hi - 1)->cfa_off,
			   "a64: the .plt: one row, return address in x30, CFA sp");
			ok(y && compare(&x, r.v, r.n, true).checked >= 20 &&
				   !compare(&x, r.v, r.n, true).mismatched,
			   "a64 self-check: a row with x30 saved, clean");
			if (y) {
				y->kind &= (uint8_t)~LT_UW_RA_SAVED;
				ok(compare(&x, r.v, r.n, true).mismatched >= 1,
				   "a64 self-check: x30 saved or not is noticed");
				y->kind |= LT_UW_RA_SAVED;
				y->ra_off += 8;
				ok(compare(&x, r.v, r.n, true).mismatched >= 1,
				   "a64 self-check: x30's slot 8 bytes off is noticed");
			}
			xfile_free(&x);
		}
		lt_cfi_rows_free(&r);
		unlink(bin[k]);
	}
	unlink(src);
	rmdir(dir);
}

int main(void)
{
	elf_version(EV_CURRENT);
	test_basic();
	test_state();
	test_expr();
	test_rules();
	test_encodings();
	test_layout();
	test_debug_frame();
	test_truncated();
	test_not_x86();
	test_a64();
	test_vdso();
	test_index();
	test_no_sections(LIBDIR "/libc.so.6");

	cross_check(LIBDIR "/libc.so.6", true, 10000, 0);
	cross_check("/usr/bin/python3", true, 10000, 0);
	cross_check(LIBDIR "/libstdc++.so.6", false, 10000, 0);
	debug_frame_program();
	a64_program();
	if (vdso_file) {
		cross_check(vdso_file, false, 10, 0);
		unlink(vdso_file);
	}
	return tap_done();
}
