// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DWARF CFI (.eh_frame, .debug_frame) to unwind rows, see cfi.h. Every read is bounds-checked:
 * an entry that does not parse is skipped and counted, its rows dropped.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "grow.h"

/* DWARF register numbers: x86_64's, arm64's (x29 the frame pointer, x30 the link register) */
#define REG_RBP 6
#define REG_RSP 7
#define REG_A64_FP 29
#define REG_A64_SP 31

/* DW_EH_PE_*: pointer encodings */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SIGNED 0x08
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_ALIGNED 0x50
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

/* states DW_CFA_remember_state may nest: more is malformed (gcc nests one or two) */
#define STATE_DEPTH 16
/* CIEs kept parsed, by section offset: most files use one to a few */
#define CIE_CACHE 16

/* The PLT's CFA expression (binutils, gcc): rsp + 8, plus 8 once (rip & 15) >= 11. */
static const uint8_t plt_expr[] = {
	0x77, 0x08, /* DW_OP_breg7 (rsp) 8 */
	0x80, 0x00, /* DW_OP_breg16 (rip) 0 */
	0x3f, /* DW_OP_lit15 */
	0x1a, /* DW_OP_and */
	0x3b, /* DW_OP_lit11 */
	0x2a, /* DW_OP_ge */
	0x33, /* DW_OP_lit3 */
	0x24, /* DW_OP_shl */
	0x22, /* DW_OP_plus */
};

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static bool rd_need(struct rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return false;
	}
	return true;
}

static uint64_t rd_uint(struct rd *r, unsigned int n)
{
	uint64_t v = 0;

	if (!rd_need(r, n))
		return 0;
	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* LEB128; bits past 64 are dropped, the bytes still consumed; signed: sign-extended */
static uint64_t rd_leb(struct rd *r, bool sign)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (!rd_need(r, 1))
			return 0;
		b = *r->p++;
		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		}
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static int64_t rd_sleb(struct rd *r)
{
	return (int64_t)rd_leb(r, true);
}

/* a uleb length, then that many bytes: returns their start, NULL when they run past the end */
static const uint8_t *rd_block(struct rd *r, uint64_t *len)
{
	const uint8_t *p;

	*len = rd_uleb(r);
	if (r->bad || *len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return NULL;
	}
	p = r->p;
	r->p += *len;
	return p;
}

struct sec {
	const uint8_t *p;
	size_t len;
	uint64_t vaddr;
	bool eh;
	bool stop_at_zero; /* the length is not known (no section headers): a terminator ends it */
	bool a64; /* arm64's registers and rules (out->machine), else x86_64's */
	uint64_t fp_reg; /* the frame pointer's DWARF number */
	struct lt_cfi_rows *out;
	struct lt_cfi_stats *st;
	struct cie *cache[CIE_CACHE];
};

/* The value of an encoded pointer (not dereferenced). strict: only what an FDE address may use. */
static uint64_t rd_ptr(struct rd *r, const struct sec *s, uint8_t enc, unsigned int asz,
		       bool strict)
{
	uint64_t at, base = 0, v;

	if (r->bad || enc == PE_OMIT) {
		r->bad = true;
		return 0;
	}
	at = s->vaddr + (uint64_t)(r->p - s->p);
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		base = at;
		break;
	case PE_ALIGNED:
		if (strict)
			goto bad;
		if (!rd_need(r, (asz - at % asz) % asz))
			return 0;
		r->p += (asz - at % asz) % asz;
		break;
	default: /* textrel, datarel, funcrel: their bases are unknown here */
		if (strict)
			goto bad;
		break;
	}
	if (strict && (enc & PE_INDIRECT))
		goto bad;
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		v = rd_uint(r, asz);
		break;
	case PE_SIGNED:
		v = rd_uint(r, asz);
		if (asz == 4)
			v = (uint64_t)(int64_t)(int32_t)v;
		break;
	case PE_ULEB128:
		v = rd_uleb(r);
		break;
	case PE_UDATA2:
		v = rd_uint(r, 2);
		break;
	case PE_UDATA4:
		v = rd_uint(r, 4);
		break;
	case PE_UDATA8:
	case PE_SDATA8:
		v = rd_uint(r, 8);
		break;
	case PE_SLEB128:
		v = (uint64_t)rd_sleb(r);
		break;
	case PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)rd_uint(r, 2);
		break;
	case PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)rd_uint(r, 4);
		break;
	default:
		goto bad;
	}
	return base + v;
bad:
	r->bad = true;
	return 0;
}

/* ---- entries ---- */

struct entry {
	size_t off; /* of the length field */
	size_t id_off; /* of the CIE id / CIE pointer */
	size_t body; /* past the id */
	size_t end; /* past the entry */
	uint64_t id;
	unsigned int osz; /* of the id: 4, or 8 in .debug_frame's 64-bit format */
};

/* The entry at off: 1, 0 for a zero terminator (4 bytes), -1 when it does not fit. */
static int rd_entry(const struct sec *s, size_t off, struct entry *e)
{
	struct rd r = { s->p + off, s->p + s->len, false };
	uint64_t len;

	if (off > s->len)
		return -1;
	e->off = off;
	e->osz = 4;
	len = rd_uint(&r, 4);
	if (r.bad)
		return -1;
	if (!len) {
		e->end = off + 4;
		return 0;
	}
	if (len == 0xffffffff) {
		/* .eh_frame's ids stay 4 bytes (the LSB, libunwind); .debug_frame's grow */
		e->osz = s->eh ? 4 : 8;
		len = rd_uint(&r, 8);
	}
	if (r.bad || len < e->osz || len > (uint64_t)(r.end - r.p))
		return -1;
	e->id_off = (size_t)(r.p - s->p);
	e->end = e->id_off + (size_t)len;
	e->id = rd_uint(&r, e->osz);
	e->body = (size_t)(r.p - s->p);
	return 1;
}

static bool is_cie(const struct sec *s, const struct entry *e)
{
	if (s->eh)
		return e->id == 0;
	return e->id == (e->osz == 4 ? 0xffffffffull : ~0ull);
}

/* ---- the table: rules of the registers the rows need ---- */

enum rule_how { R_UNSET, R_UNDEF, R_SAME, R_OFFSET, R_VAL_OFFSET, R_REG, R_EXPR, R_VAL_EXPR };
enum cfa_how { C_UNSET, C_REG, C_EXPR, C_PLT };

struct rule {
	uint8_t how;
	int64_t off;
};

struct state {
	uint8_t cfa_how;
	bool ra_signed; /* arm64: DW_CFA_AARCH64_negate_ra_state toggles it, remember_state keeps it */
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct rule fp, ra;
};

struct cie {
	size_t off; /* cache key */
	bool ok;
	bool aug_z, signal;
	uint8_t fde_enc, addr_size, seg_size;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	struct state init; /* after the initial instructions */
};

/* The fp rule into r (both architectures: saved at CFA + 8 * n or unchanged); false: it cannot. */
static bool fp_of(const struct state *x, struct lt_cfi_row *r)
{
	switch (x->fp.how) {
	case R_UNSET:
	case R_SAME:
	case R_UNDEF: /* nothing to restore: the walker keeps the frame pointer */
		return true;
	case R_OFFSET:
		if (x->fp.off % 8 || x->fp.off / 8 < INT8_MIN || x->fp.off / 8 > INT8_MAX)
			return false;
		r->kind |= LT_UW_FP_SAVED;
		r->fp_off = (int8_t)(x->fp.off / 8);
		return true;
	default:
		return false;
	}
}

/* r with the frame pointer's rule, or an expression row when it has none a row can hold. */
static struct lt_cfi_row with_fp(const struct state *x, struct lt_cfi_row r)
{
	if (!fp_of(x, &r))
		r = (struct lt_cfi_row){ .kind = LT_UW_EXPR };
	return r;
}

/* A register CFA: sp or the frame pointer (the machine's) + an s16; false for any other. */
static bool cfa_of(const struct state *x, uint64_t sp, uint64_t fp, struct lt_cfi_row *r)
{
	if (x->cfa_off < INT16_MIN || x->cfa_off > INT16_MAX)
		return false;
	if (x->cfa_reg == sp)
		r->kind = LT_UW_CFA_SP;
	else if (x->cfa_reg == fp)
		r->kind = LT_UW_CFA_FP;
	else
		return false;
	r->cfa_off = (int16_t)x->cfa_off;
	return true;
}

/* arm64: CFA from sp or x29; the return address in x30 until saved at CFA + n */
static struct lt_cfi_row row_of_a64(const struct state *x)
{
	struct lt_cfi_row r = { 0 };

	if (x->ra.how == R_UNDEF) {
		r.kind = LT_UW_END;
		return r;
	}
	if (x->cfa_how != C_REG || !cfa_of(x, REG_A64_SP, REG_A64_FP, &r))
		goto expr;
	switch (x->ra.how) {
	case R_UNSET: /* the CIE's initial rule: x30 holds it, as at a function's entry */
	case R_SAME:
		break;
	case R_OFFSET:
		if (x->ra.off < INT16_MIN || x->ra.off > INT16_MAX)
			goto expr;
		r.kind |= LT_UW_RA_SAVED;
		r.ra_off = (int16_t)x->ra.off;
		break;
	default:
		goto expr;
	}
	if (x->ra_signed)
		r.kind |= LT_UW_RA_SIGNED;
	return with_fp(x, r);
expr:
	return (struct lt_cfi_row){ .kind = LT_UW_EXPR };
}

static struct lt_cfi_row row_of(const struct state *x, bool signal, bool a64)
{
	struct lt_cfi_row r = { 0 };

	if (signal) {
		r.kind = LT_UW_SIGNAL;
		return r;
	}
	if (a64)
		return row_of_a64(x);
	if (x->ra.how == R_UNDEF) {
		r.kind = LT_UW_END;
		return r;
	}
	if (x->ra.how != R_OFFSET || x->ra.off != -8)
		goto expr;
	switch (x->cfa_how) {
	case C_REG:
		if (!cfa_of(x, REG_RSP, REG_RBP, &r))
			goto expr;
		break;
	case C_PLT:
		r.kind = LT_UW_CFA_PLT;
		r.cfa_off = 8; /* the expression's base: rsp + 8 */
		break;
	default:
		goto expr;
	}
	return with_fp(x, r);
expr:
	return (struct lt_cfi_row){ .kind = LT_UW_EXPR };
}

static bool same_rule(const struct lt_cfi_row *a, const struct lt_cfi_row *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->fp_off == b->fp_off &&
	       a->ra_off == b->ra_off;
}

/* One run of CFA instructions: a CIE's initial ones (f NULL) or an FDE's. */
struct run {
	struct sec *s;
	const struct cie *c;
	struct state x;
	uint64_t loc, end;
	struct lt_cfi_fde *f;
};

/* The row in force from x->loc on; rows at or past the FDE's end are not kept. */
static int emit(struct run *x)
{
	struct lt_cfi_rows *o = x->s->out;
	struct lt_cfi_row r;
	struct lt_cfi_row *last;

	if (x->loc >= x->end)
		return 0;
	r = row_of(&x->x, x->c->signal, x->s->a64);
	r.pc = (uint32_t)x->loc;
	last = x->f->n ? &o->v[o->n - 1] : NULL;
	if (last && last->pc == r.pc) {
		/* an advance of 0: the later rule holds; it may now repeat the one before */
		if (x->f->n > 1 && same_rule(&o->v[o->n - 2], &r)) {
			o->n--;
			x->f->n--;
		} else {
			*last = r;
		}
		return 0;
	}
	if (last && same_rule(last, &r))
		return 0;
	if (LT_GROW(o->v, o->cap, o->n + 1))
		return -ENOMEM;
	o->v[o->n++] = r;
	x->f->n++;
	return 0;
}

static void set_rule(struct run *x, uint64_t reg, uint8_t how, int64_t off)
{
	struct rule r = { how, off };

	if (reg == x->s->fp_reg)
		x->x.fp = r;
	if (reg == x->c->ra_reg)
		x->x.ra = r;
}

/* An advance to loc: the row before it first. */
static int advance(struct run *x, uint64_t delta, bool *done)
{
	int err;

	if (!x->f) /* a location in a CIE's initial instructions */
		return -EINVAL;
	err = emit(x);
	if (err)
		return err;
	x->loc = delta > UINT64_MAX - x->loc ? UINT64_MAX : x->loc + delta;
	/* the rest describes addresses past the FDE */
	*done = x->loc >= x->end;
	return 0;
}

/* An instruction that defines the CFA (a register and offset, or an expression); false for
 * any other. */
static bool cfa_insn(struct run *x, uint8_t op, struct rd *r)
{
	const struct cie *c = x->c;
	const uint8_t *blk;
	uint64_t len;

	switch (op) {
	case 0x0c: /* DW_CFA_def_cfa */
		x->x.cfa_how = C_REG;
		x->x.cfa_reg = rd_uleb(r);
		x->x.cfa_off = (int64_t)rd_uleb(r);
		break;
	case 0x0d: /* DW_CFA_def_cfa_register */
		x->x.cfa_how = C_REG;
		x->x.cfa_reg = rd_uleb(r);
		break;
	case 0x0e: /* DW_CFA_def_cfa_offset */
		x->x.cfa_off = (int64_t)rd_uleb(r);
		break;
	case 0x0f: /* DW_CFA_def_cfa_expression */
		blk = rd_block(r, &len);
		if (blk && !x->s->a64 && len == sizeof(plt_expr) && !memcmp(blk, plt_expr, len))
			x->x.cfa_how = C_PLT;
		else if (blk)
			x->x.cfa_how = C_EXPR;
		break;
	case 0x12: /* DW_CFA_def_cfa_sf */
		x->x.cfa_how = C_REG;
		x->x.cfa_reg = rd_uleb(r);
		x->x.cfa_off = (int64_t)((uint64_t)rd_sleb(r) * (uint64_t)c->data_align);
		break;
	case 0x13: /* DW_CFA_def_cfa_offset_sf */
		x->x.cfa_off = (int64_t)((uint64_t)rd_sleb(r) * (uint64_t)c->data_align);
		break;
	default:
		return false;
	}
	return true;
}

/* Runs [p, end): 0, -EINVAL (malformed) or -ENOMEM. The FDE's last row is emitted here. */
static int run_insns(struct run *x, const uint8_t *p, const uint8_t *end)
{
	struct rd r = { p, end, false };
	struct state stack[STATE_DEPTH];
	const struct cie *c = x->c;
	unsigned int depth = 0;
	bool done = false;
	uint64_t reg, len, v;
	int err = 0;

	while (!done && !err && r.p < r.end) {
		uint8_t op = *r.p++, low = op & 0x3f;

		/* the three with an operand in the opcode: 0x40, 0x80, 0xc0 */
		if (op & 0xc0)
			op &= 0xc0;
		switch (op) {
		case 0x40: /* DW_CFA_advance_loc */
			err = advance(x, low * c->code_align, &done);
			break;
		case 0x80: /* DW_CFA_offset */
		case 0x05: /* DW_CFA_offset_extended */
			reg = op == 0x80 ? low : rd_uleb(&r);
			set_rule(x, reg, R_OFFSET,
				 (int64_t)(rd_uleb(&r) * (uint64_t)c->data_align));
			break;
		case 0xc0: /* DW_CFA_restore */
		case 0x06: /* DW_CFA_restore_extended */
			reg = op == 0xc0 ? low : rd_uleb(&r);
			/* a CIE's own restore has no initial rule to go back to */
			if (x->f) {
				if (reg == x->s->fp_reg)
					x->x.fp = c->init.fp;
				if (reg == c->ra_reg)
					x->x.ra = c->init.ra;
			} else {
				set_rule(x, reg, R_UNSET, 0);
			}
			break;
		case 0x00: /* DW_CFA_nop */
			break;
		case 0x01: /* DW_CFA_set_loc */
			if (!x->f)
				return -EINVAL;
			v = rd_ptr(&r, x->s, c->fde_enc, c->addr_size, true);
			if (r.bad || v < x->loc)
				return -EINVAL;
			err = advance(x, v - x->loc, &done);
			break;
		case 0x02: /* DW_CFA_advance_loc1 */
		case 0x03: /* DW_CFA_advance_loc2 */
			v = rd_uint(&r, op - 1);
			if (!r.bad)
				err = advance(x, v * c->code_align, &done);
			break;
		case 0x04: /* DW_CFA_advance_loc4 */
			v = rd_uint(&r, 4);
			if (!r.bad)
				err = advance(x, v * c->code_align, &done);
			break;
		case 0x07: /* DW_CFA_undefined */
			set_rule(x, rd_uleb(&r), R_UNDEF, 0);
			break;
		case 0x08: /* DW_CFA_same_value */
			set_rule(x, rd_uleb(&r), R_SAME, 0);
			break;
		case 0x09: /* DW_CFA_register */
			reg = rd_uleb(&r);
			set_rule(x, reg, R_REG, (int64_t)rd_uleb(&r));
			break;
		case 0x0a: /* DW_CFA_remember_state: the CFA rule too, as gcc expects */
			if (depth == STATE_DEPTH)
				return -EINVAL;
			stack[depth++] = x->x;
			break;
		case 0x0b: /* DW_CFA_restore_state */
			if (!depth)
				return -EINVAL;
			x->x = stack[--depth];
			break;
		case 0x10: /* DW_CFA_expression */
		case 0x16: /* DW_CFA_val_expression */
			reg = rd_uleb(&r);
			if (rd_block(&r, &len))
				set_rule(x, reg, op == 0x10 ? R_EXPR : R_VAL_EXPR, 0);
			break;
		case 0x11: /* DW_CFA_offset_extended_sf */
			reg = rd_uleb(&r);
			set_rule(x, reg, R_OFFSET,
				 (int64_t)((uint64_t)rd_sleb(&r) * (uint64_t)c->data_align));
			break;
		case 0x14: /* DW_CFA_val_offset */
			reg = rd_uleb(&r);
			set_rule(x, reg, R_VAL_OFFSET,
				 (int64_t)(rd_uleb(&r) * (uint64_t)c->data_align));
			break;
		case 0x15: /* DW_CFA_val_offset_sf */
			reg = rd_uleb(&r);
			set_rule(x, reg, R_VAL_OFFSET,
				 (int64_t)((uint64_t)rd_sleb(&r) * (uint64_t)c->data_align));
			break;
		case 0x2e: /* DW_CFA_GNU_args_size */
			rd_uleb(&r);
			break;
		case 0x2c: /* DW_CFA_AARCH64_negate_ra_state_with_pc (PAuth_LR) */
		case 0x2d: /* DW_CFA_AARCH64_negate_ra_state (elsewhere GNU_window_save): paciasp */
			if (!x->s->a64)
				return -EINVAL;
			x->x.ra_signed = !x->x.ra_signed;
			break;
		case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
			reg = rd_uleb(&r);
			set_rule(x, reg, R_OFFSET,
				 (int64_t)(0 - rd_uleb(&r) * (uint64_t)c->data_align));
			break;
		default: /* the CFA's rule, else unknown: its operands cannot be skipped */
			if (!cfa_insn(x, op, &r))
				return -EINVAL;
		}
		if (r.bad)
			return -EINVAL;
	}
	if (err)
		return err;
	return x->f && !done ? emit(x) : 0;
}

/* ---- CIEs and FDEs ---- */

static bool parse_cie(struct sec *s, size_t off, struct cie *c)
{
	struct entry e;
	struct rd r;
	const char *aug;
	size_t n;
	struct run x;

	memset(c, 0, sizeof(*c));
	c->off = off;
	if (rd_entry(s, off, &e) != 1 || !is_cie(s, &e))
		return false;
	r = (struct rd){ s->p + e.body, s->p + e.end, false };
	n = rd_uint(&r, 1); /* version */
	if (r.bad || !(n == 1 || n == 3 || (n == 4 && !s->eh)))
		return false;
	c->addr_size = 8;
	aug = (const char *)r.p;
	if (!memchr(aug, 0, (size_t)(r.end - r.p)))
		return false;
	r.p += strlen(aug) + 1;
	if (n == 4) {
		c->addr_size = (uint8_t)rd_uint(&r, 1);
		c->seg_size = (uint8_t)rd_uint(&r, 1);
		if (r.bad || (c->addr_size != 4 && c->addr_size != 8) || c->seg_size > 8)
			return false;
	}
	if (aug[0] == 'e' && aug[1] == 'h') { /* old gcc: the EH data's address */
		rd_uint(&r, c->addr_size);
		aug += 2;
	}
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = n == 1 ? rd_uint(&r, 1) : rd_uleb(&r);
	c->fde_enc = PE_ABSPTR; /* address-sized */
	if (aug[0] == 'z') {
		uint64_t len;
		const uint8_t *d = rd_block(&r, &len);
		struct rd a;

		if (!d)
			return false;
		a = (struct rd){ d, d + len, false };
		c->aug_z = true;
		for (const char *ch = aug + 1; *ch && !a.bad; ch++) {
			if (*ch == 'R') {
				c->fde_enc = (uint8_t)rd_uint(&a, 1);
			} else if (*ch == 'L') {
				rd_uint(&a, 1); /* the LSDA's encoding: the pointer is the FDE's */
			} else if (*ch == 'P') {
				uint8_t enc = (uint8_t)rd_uint(&a, 1);

				rd_ptr(&a, s, enc, c->addr_size, false);
			} else if (*ch == 'S') {
				c->signal = true;
			} else if (*ch != 'B' && *ch != 'G') {
				/* unknown: its data cannot be placed, the rest is skipped (as libgcc) */
				break;
			}
		}
		if (a.bad)
			return false;
	} else if (aug[0]) {
		return false; /* without z the instructions cannot be found */
	}
	if (r.bad)
		return false;
	x = (struct run){ .s = s, .c = c, .end = 0 };
	x.x.cfa_how = C_UNSET;
	if (run_insns(&x, r.p, r.end))
		return false;
	c->init = x.x;
	c->ok = true;
	return true;
}

/* The CIE at off, parsed once; NULL when malformed (or out of memory). */
static const struct cie *get_cie(struct sec *s, size_t off)
{
	struct cie **slot = &s->cache[(off / 4) % CIE_CACHE];

	if (*slot && (*slot)->off == off)
		return (*slot)->ok ? *slot : NULL;
	if (!*slot) {
		*slot = malloc(sizeof(**slot));
		if (!*slot)
			return NULL;
	}
	parse_cie(s, off, *slot);
	return (*slot)->ok ? *slot : NULL;
}

/* 0, 1 when malformed (skipped), -ENOMEM */
static int parse_fde(struct sec *s, const struct entry *e)
{
	struct lt_cfi_rows *o = s->out;
	const struct cie *c;
	struct lt_cfi_fde f = { 0 };
	struct rd r;
	struct run x;
	uint64_t pc, range, len;
	size_t cie_off;
	int err;

	if (s->eh) {
		if (e->id > e->id_off)
			return 1;
		cie_off = e->id_off - (size_t)e->id;
	} else {
		if (e->id >= s->len)
			return 1;
		cie_off = (size_t)e->id;
	}
	c = get_cie(s, cie_off);
	if (!c)
		return 1;
	r = (struct rd){ s->p + e->body, s->p + e->end, false };
	rd_uint(&r, c->seg_size);
	pc = rd_ptr(&r, s, c->fde_enc, c->addr_size, true);
	range = rd_ptr(&r, s, c->fde_enc & 0x0f, c->addr_size, true);
	if (c->aug_z)
		rd_block(&r, &len);
	if (r.bad || range > UINT64_MAX - pc)
		return 1;
	if (!range)
		return 0;
	if (pc + range > UINT32_MAX) {
		s->st->high_fdes++;
		return 0;
	}
	f.start = (uint32_t)pc;
	f.end = (uint32_t)(pc + range);
	f.first = (uint32_t)o->n;
	f.debug = !s->eh;
	if (o->n > UINT32_MAX - 1)
		return -ENOMEM;
	x = (struct run){ .s = s, .c = c, .x = c->init, .loc = pc, .end = f.end, .f = &f };
	err = run_insns(&x, r.p, r.end);
	if (err) {
		o->n = f.first;
		return err == -ENOMEM ? err : 1;
	}
	if (LT_GROW(o->fde, o->fde_cap, o->nfde + 1)) {
		o->n = f.first;
		return -ENOMEM;
	}
	o->fde[o->nfde++] = f;
	s->st->fdes++;
	if (c->signal)
		s->st->signal_fdes++;
	return 0;
}

static int parse_sec(struct sec *s)
{
	struct entry e;
	size_t off = 0;
	int err = 0, k;

	while (off < s->len) {
		k = rd_entry(s, off, &e);
		if (k < 0) {
			/* no length to go on with: the rest is lost */
			s->st->bad_entries++;
			break;
		}
		off = e.end;
		if (!k) {
			if (s->stop_at_zero)
				break;
			continue;
		}
		if (is_cie(s, &e)) {
			s->st->cies++;
			if (!get_cie(s, e.off))
				s->st->bad_entries++;
			continue;
		}
		err = parse_fde(s, &e);
		if (err < 0)
			break;
		if (err)
			s->st->bad_entries++;
		err = 0;
	}
	for (int i = 0; i < CIE_CACHE; i++)
		free(s->cache[i]);
	return err;
}

/* A section to parse for out (its machine's registers). */
static struct sec sec_of(const uint8_t *p, size_t len, uint64_t vaddr, bool eh,
			 struct lt_cfi_rows *out, struct lt_cfi_stats *st)
{
	bool a64 = out->machine == EM_AARCH64;

	return (struct sec){ .p = p,
			     .len = len,
			     .vaddr = vaddr,
			     .eh = eh,
			     .a64 = a64,
			     .fp_reg = a64 ? REG_A64_FP : REG_RBP,
			     .out = out,
			     .st = st };
}

int lt_cfi_parse(const uint8_t *sec, size_t len, uint64_t sec_vaddr, bool eh,
		 struct lt_cfi_rows *out, struct lt_cfi_stats *st)
{
	struct sec s = sec_of(sec, len, sec_vaddr, eh, out, st);

	/* room up front, copies saved: gcc's .eh_frame holds a row per 5 or 6 bytes, an FDE per 40
	 * (a hint: the vectors grow past it) */
	if (LT_GROW(out->v, out->cap, out->n + len / 6) ||
	    LT_GROW(out->fde, out->fde_cap, out->nfde + len / 40))
		return -ENOMEM;
	return parse_sec(&s);
}

/* ---- the table ---- */

static int fde_cmp(const void *a, const void *b)
{
	const struct lt_cfi_fde *x = a, *y = b;

	if (x->debug != y->debug)
		return x->debug ? 1 : -1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* the one met first in its section */
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Whether [start, end) meets one of the sorted, disjoint fdes v[0 .. n). */
static bool overlaps(const struct lt_cfi_fde *v, size_t n, uint32_t start, uint32_t end)
{
	size_t lo = 0, hi = n;

	/* the first that ends after start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].start < end;
}

/* The lower start of the two sorted runs keep[*i .. neh) and keep[*j .. nkeep), taken. */
static const struct lt_cfi_fde *merge_head(const struct lt_cfi_fde *keep, size_t *i, size_t neh,
					   size_t *j, size_t nkeep)
{
	if (*i < neh && (*j == nkeep || keep[*i].start < keep[*j].start))
		return &keep[(*i)++];
	return *j < nkeep ? &keep[(*j)++] : NULL;
}

static void push_row(struct lt_cfi_row *v, size_t *n, struct lt_cfi_row r)
{
	if (!*n || !same_rule(&v[*n - 1], &r))
		v[(*n)++] = r;
}

int lt_cfi_finish(struct lt_cfi_rows *out, struct lt_cfi_stats *st)
{
	struct lt_cfi_fde *f = out->fde, *keep;
	size_t neh = 0, nkeep = 0, ndebug = 0, n = 0, i, j;
	struct lt_cfi_row *v;

	if (!out->nfde) {
		free(out->fde);
		out->fde = NULL;
		out->fde_cap = 0;
		out->n = 0;
		return 0;
	}
	/* rows plus one NONE row per FDE at most */
	v = malloc((out->n + out->nfde) * sizeof(*v));
	keep = malloc(out->nfde * sizeof(*keep));
	if (!v || !keep) {
		free(v);
		free(keep);
		return -ENOMEM;
	}
	qsort(f, out->nfde, sizeof(*f), fde_cmp);
	/* .eh_frame first: an FDE overlapping the one before is dropped */
	for (i = 0; i < out->nfde && !f[i].debug; i++) {
		if (nkeep && f[i].start < keep[nkeep - 1].end) {
			st->overlap_fdes++;
			continue;
		}
		keep[nkeep++] = f[i];
	}
	neh = nkeep;
	/* then .debug_frame where .eh_frame has nothing */
	for (; i < out->nfde; i++) {
		if (overlaps(keep, neh, f[i].start, f[i].end))
			continue;
		if (ndebug && f[i].start < keep[nkeep - 1].end) {
			st->overlap_fdes++;
			continue;
		}
		keep[nkeep++] = f[i];
		ndebug++;
	}
	st->debug_fdes += ndebug;
	/* both runs by start: merge them */
	i = 0;
	j = neh;
	for (const struct lt_cfi_fde *x = merge_head(keep, &i, neh, &j, nkeep), *next; x;
	     x = next) {
		for (uint32_t k = 0; k < x->n; k++)
			push_row(v, &n, out->v[x->first + k]);
		next = merge_head(keep, &i, neh, &j, nkeep);
		if (!next || next->start != x->end)
			push_row(v, &n, (struct lt_cfi_row){ .pc = x->end, .kind = LT_UW_NONE });
	}
	free(keep);
	free(out->v);
	free(out->fde);
	out->v = v;
	out->n = n;
	out->cap = out->n + out->nfde;
	out->fde = NULL;
	out->nfde = out->fde_cap = 0;
	st->rows += n;
	for (i = 0; i < n; i++) {
		switch (v[i].kind & LT_UW_CFA_MASK) {
		case LT_UW_EXPR:
			st->expr_rows++;
			break;
		case LT_UW_CFA_PLT:
			st->plt_rows++;
			break;
		case LT_UW_END:
			st->end_rows++;
			break;
		case LT_UW_SIGNAL:
			st->signal_rows++;
			break;
		case LT_UW_NONE:
			st->none_rows++;
			break;
		}
		if (v[i].kind & LT_UW_FP_SAVED)
			st->fp_rows++;
		if (v[i].kind & LT_UW_RA_SIGNED)
			st->signed_rows++;
	}
	return 0;
}

/* ---- ELF files ---- */

/* FDEs outside the executable segments: a function the linker discarded (address 0 in
 * .debug_frame) or garbage. Files without segments (relocatable) keep all. */
static void drop_outside(Elf *elf, struct lt_cfi_rows *out, struct lt_cfi_stats *st)
{
	size_t nph, n = 0;
	bool any = false;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return;
	for (size_t k = 0; k < nph; k++)
		if (gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			any = true;
	if (!any)
		return;
	for (size_t i = 0; i < out->nfde; i++) {
		const struct lt_cfi_fde *f = &out->fde[i];
		bool in = false;

		for (size_t k = 0; k < nph && !in; k++)
			in = gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_LOAD &&
			     (ph.p_flags & PF_X) && f->start >= ph.p_vaddr &&
			     f->end - ph.p_vaddr <= ph.p_memsz;
		if (in)
			out->fde[n++] = *f;
		else
			st->outside_fdes++;
	}
	out->nfde = n;
}

/* The bytes of the file at vaddr up to the end of its PT_LOAD; NULL when none holds it. */
static Elf_Data *load_bytes(Elf *elf, uint64_t vaddr, uint64_t max)
{
	size_t nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return NULL;
	for (size_t k = 0; k < nph; k++) {
		uint64_t in;

		if (!gelf_getphdr(elf, (int)k, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		in = vaddr - ph.p_vaddr;
		if (ph.p_offset > INT64_MAX - in)
			return NULL;
		return elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + in),
					    ph.p_filesz - in < max ? ph.p_filesz - in : max,
					    ELF_T_BYTE);
	}
	return NULL;
}

/* .eh_frame without section headers: PT_GNU_EH_FRAME is .eh_frame_hdr, which points to it. */
static int eh_by_hdr(Elf *elf, struct lt_cfi_rows *out, struct lt_cfi_stats *st, bool *found)
{
	struct sec s = { .eh = true, .stop_at_zero = true, .out = out, .st = st };
	Elf_Data *h = NULL, *d;
	uint64_t eh_vaddr, count, last = 0;
	uint8_t enc_ptr, enc_count, enc_table;
	struct entry e;
	GElf_Phdr ph;
	struct rd r;
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t k = 0; k < nph && !h; k++)
		if (gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_GNU_EH_FRAME && ph.p_filesz &&
		    ph.p_offset <= INT64_MAX)
			h = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ELF_T_BYTE);
	if (!h || !h->d_buf)
		return 0;
	s.p = h->d_buf;
	s.len = h->d_size;
	s.vaddr = ph.p_vaddr;
	r = (struct rd){ s.p, s.p + s.len, false };
	if (rd_uint(&r, 1) != 1) /* version */
		return 0;
	enc_ptr = (uint8_t)rd_uint(&r, 1);
	enc_count = (uint8_t)rd_uint(&r, 1);
	enc_table = (uint8_t)rd_uint(&r, 1);
	eh_vaddr = rd_ptr(&r, &s, enc_ptr, 8, true);
	if (r.bad)
		return 0;
	/* the sorted table's last FDE ends .eh_frame, where a terminator may be missing (lld) */
	if (enc_count != PE_OMIT && enc_table == 0x3b) { /* datarel sdata4: from the header */
		count = rd_ptr(&r, &s, enc_count, 8, true);
		if (!r.bad && count <= (uint64_t)(r.end - r.p) / 8)
			for (uint64_t k = 0; k < count; k++) {
				uint64_t fde;

				rd_uint(&r, 4); /* its initial location */
				fde = (uint64_t)(int64_t)(int32_t)rd_uint(&r, 4) + ph.p_vaddr;
				if (fde > last)
					last = fde;
			}
	}
	d = load_bytes(elf, eh_vaddr, UINT64_MAX);
	if (!d || !d->d_buf)
		return 0;
	*found = true;
	s = sec_of(d->d_buf, d->d_size, eh_vaddr, true, out, st);
	s.stop_at_zero = true;
	if (last >= eh_vaddr && last - eh_vaddr < s.len &&
	    rd_entry(&s, (size_t)(last - eh_vaddr), &e) == 1)
		s.len = e.end;
	return parse_sec(&s);
}

/* A section's bytes, decompressed if need be; NULL when none. */
static Elf_Data *sec_bytes(Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS)
		return NULL;
	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size ? d : NULL;
}

/*
 * arm64's .plt has no CFI (the linker writes none, unlike x86_64's): a stub only branches, so the
 * return address is in x30 and the CFA is sp, one row for the section. (The lazy binder's PLT0
 * pushes 16 bytes first: a walk that starts there gets its caller's CFA 16 bytes low.)
 */
static int a64_plt(struct lt_cfi_rows *out, uint64_t lo, uint64_t size)
{
	struct lt_cfi_fde f = { 0 };

	if (!size || lo > UINT32_MAX || size > UINT32_MAX - lo)
		return 0;
	if (LT_GROW(out->v, out->cap, out->n + 1) || LT_GROW(out->fde, out->fde_cap, out->nfde + 1))
		return -ENOMEM;
	f.start = (uint32_t)lo;
	f.end = (uint32_t)(lo + size);
	f.first = (uint32_t)out->n;
	f.n = 1;
	out->v[out->n++] = (struct lt_cfi_row){ .pc = f.start, .kind = LT_UW_CFA_SP };
	out->fde[out->nfde++] = f;
	return 0;
}

int lt_cfi_elf(Elf *elf, struct lt_cfi_rows *out, struct lt_cfi_stats *st)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t plt_lo = 0, plt_size = 0;
	/* an .eh_frame header, NOBITS too (a -dbg file): its segments hold no CFI to look for */
	bool found = false, eh_shdr = false;
	int err = 0;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		return -ENOTSUP;
	out->machine = eh.e_machine;
	if (!elf_getshdrstrndx(elf, &shstrndx)) {
		while (!err && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *d;
			bool is_eh;

			if (!gelf_getshdr(scn, &sh) ||
			    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			if (!strcmp(name, ".plt") && sh.sh_type == SHT_PROGBITS &&
			    (sh.sh_flags & SHF_EXECINSTR)) {
				plt_lo = sh.sh_addr;
				plt_size = sh.sh_size;
			}
			is_eh = !strcmp(name, ".eh_frame");
			if (!is_eh && strcmp(name, ".debug_frame"))
				continue;
			eh_shdr |= is_eh;
			d = sec_bytes(scn, &sh);
			if (!d)
				continue;
			found = true;
			err = lt_cfi_parse(d->d_buf, d->d_size, is_eh ? sh.sh_addr : 0, is_eh, out,
					   st);
		}
	}
	if (!err && !eh_shdr)
		err = eh_by_hdr(elf, out, st, &found);
	if (!err && !found)
		err = -ENOENT;
	if (!err && out->machine == EM_AARCH64)
		err = a64_plt(out, plt_lo, plt_size);
	if (!err) {
		drop_outside(elf, out, st);
		err = lt_cfi_finish(out, st);
	}
	return err;
}

void lt_cfi_rows_free(struct lt_cfi_rows *r)
{
	free(r->v);
	free(r->fde);
	*r = (struct lt_cfi_rows){ 0 };
}

const struct lt_cfi_row *lt_cfi_find(const struct lt_cfi_row *v, size_t n, uint64_t vaddr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].pc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &v[lo - 1] : NULL;
}

uint32_t lt_cfi_index(const struct lt_cfi_row *v, size_t n, uint32_t *blk0, uint32_t **idx)
{
	uint64_t nblk;
	size_t r = 0;
	uint32_t *w;

	*idx = NULL;
	*blk0 = 0;
	if (!n)
		return 0;
	*blk0 = v[0].pc >> LT_UW_BLK_SHIFT;
	nblk = (uint64_t)(v[n - 1].pc >> LT_UW_BLK_SHIFT) - *blk0 + 1;
	/* sparse rows (a few FDEs far apart): the whole search costs less memory than the words */
	if (nblk > 4 * (uint64_t)n || !(w = malloc(nblk * sizeof(*w))))
		return 0;
	for (uint64_t k = 0; k < nblk; k++) {
		uint64_t start = (*blk0 + k) << LT_UW_BLK_SHIFT;

		while (r + 1 < n && v[r + 1].pc <= start)
			r++;
		w[k] = (uint32_t)r;
	}
	*idx = w;
	return (uint32_t)nblk;
}

bool lt_cfi_index_range(const uint32_t *idx, uint32_t blk0, uint32_t nblk, size_t n, uint64_t vaddr,
			size_t *lo, size_t *hi)
{
	uint64_t k = vaddr >> LT_UW_BLK_SHIFT;

	*lo = 0;
	*hi = n;
	if (!nblk)
		return true;
	if (k < blk0)
		return false;
	k -= blk0;
	if (k >= nblk) {
		*lo = n - 1;
		return true;
	}
	*lo = idx[k];
	/* the row covering the next block's start covers no address of this block past it */
	if (k + 1 < nblk)
		*hi = idx[k + 1] + 1;
	return true;
}

void lt_cfi_pack_x86(const struct lt_cfi_row *v, size_t n, struct lt_uw_row_x86 *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct lt_uw_row_x86){ .pc = v[i].pc,
						 .cfa_off = v[i].cfa_off,
						 .kind = v[i].kind,
						 .fp_off = v[i].fp_off };
}

void lt_cfi_pack_arm64(const struct lt_cfi_row *v, size_t n, struct lt_uw_row_arm64 *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct lt_uw_row_arm64){ .pc = v[i].pc,
						   .cfa_off = v[i].cfa_off,
						   .kind = v[i].kind,
						   .fp_off = v[i].fp_off,
						   .ra_off = v[i].ra_off };
}

size_t lt_cfi_row_size(const struct lt_cfi_rows *r)
{
	return r->machine == EM_AARCH64 ? sizeof(struct lt_uw_row_arm64)
					: sizeof(struct lt_uw_row_x86);
}

/* this build's lt_uw_row is one of the two above, byte for byte */
#ifdef LT_UW_ARM64
#define LT_CFI_NATIVE EM_AARCH64
#define LT_ROW_NATIVE struct lt_uw_row_arm64
LT_ASSERT_OFF(struct lt_uw_row, ra_off, __builtin_offsetof(struct lt_uw_row_arm64, ra_off));
#else
#define LT_CFI_NATIVE EM_X86_64
#define LT_ROW_NATIVE struct lt_uw_row_x86
#endif
_Static_assert(sizeof(struct lt_uw_row) == sizeof(LT_ROW_NATIVE), "lt_uw_row size");
LT_ASSERT_OFF(struct lt_uw_row, cfa_off, __builtin_offsetof(LT_ROW_NATIVE, cfa_off));
LT_ASSERT_OFF(struct lt_uw_row, kind, __builtin_offsetof(LT_ROW_NATIVE, kind));
LT_ASSERT_OFF(struct lt_uw_row, fp_off, __builtin_offsetof(LT_ROW_NATIVE, fp_off));

int lt_cfi_pack(const struct lt_cfi_rows *r, struct lt_uw_row *out)
{
	if ((r->machine ? r->machine : EM_X86_64) != LT_CFI_NATIVE)
		return -ENOTSUP;
#ifdef LT_UW_ARM64
	lt_cfi_pack_arm64(r->v, r->n, (struct lt_uw_row_arm64 *)out);
#else
	lt_cfi_pack_x86(r->v, r->n, (struct lt_uw_row_x86 *)out);
#endif
	return 0;
}
