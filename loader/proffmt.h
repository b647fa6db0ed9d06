/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The output formats of lowtrace profile and lowtrace alloc, one table: a command gives its
 * samples and what their values are (struct lt_pkind), a format writes them. Pure layer: the
 * stacks come symbolized through a callback.
 */
#ifndef LT_PROFFMT_H
#define LT_PROFFMT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "grow.h"
#include "lt_prof.h"
#include "profout.h"
#include "profstack.h"
#include "profuw.h"

#define NAME_MAX_OUT 512 /* bytes of one frame name written; longer ones are cut */
#define LT_PS_VALS 4

/* One aggregate of the kernel's: a process and stack, and what was counted on it. */
struct lt_psample {
	uint32_t tgid;
	char comm[LT_COMM_LEN + 1];
	int32_t kstack, ustack; /* ids in lt_stacks; < 0: none */
	uint64_t caller; /* alloc: the return address read at entry; 0: none */
	int64_t v[LT_PS_VALS]; /* one per value of the kind */
	/* text, one row per site: estimated bytes, count (LT_AL_FP fixed point) and sampled
	 * blocks; [0] allocated, [1] not freed (--leaks) */
	struct lt_psite {
		uint64_t bytes, count_fp, samples;
	} site[2];
};

/* What the values of a command's samples are, and the choices its formats make. */
struct lt_pkind {
	int nvals;
	struct {
		const char *type, *unit; /* pprof's sample type */
		const char *json; /* the key in JSON */
	} val[LT_PS_VALS];
	uint64_t period; /* pprof: the period of val[1] (0: none) */
	const char *comment; /* pprof: a comment (NULL: none) */
	const char *json_head; /* JSON: the members before "duration_ns" */
	int folded; /* folded: the value of a line (an index in v) */
	/* folded: one line per distinct stack, sorted; else one line per sample in order, those
	 * of value 0 left out */
	bool folded_merge;
	int sites; /* text: its tables (1: allocated; 2: and not freed) */
};

/*
 * The kinds of the two commands. profile: count, then nanoseconds (blocked, off: off-CPU; else
 * count × period); its comment and json_head are the caller's. alloc: estimated count and bytes
 * allocated, then (leaks) not freed.
 */
void lt_pkind_profile(struct lt_pkind *k, bool off, uint64_t period);
void lt_pkind_alloc(struct lt_pkind *k, bool leaks);

/* an estimated count in LT_AL_FP fixed point, rounded */
static inline uint64_t lt_fp_round(uint64_t fp)
{
	return (fp + (1ull << (LT_AL_FP_SHIFT - 1))) >> LT_AL_FP_SHIFT;
}

/* The loss counters of lt_prof_err (slots: enum lt_prof_ctr) */
struct lt_prof_counts {
	uint64_t c[LT_PC_SLOTS];
};

extern const char *const lt_prof_ctr_names[LT_PC_SLOTS];
/* name=value of each loss counter, space-separated */
void lt_prof_print_losses(FILE *f, const struct lt_prof_counts *c);

/* Figures over every sample written */
struct lt_pstats {
	uint64_t total; /* sum of v[0] */
	uint64_t with_user; /* ... of the samples with a user stack */
	uint64_t trunc; /* ... of those whose user stack was cut short */
};

typedef void (*lt_pstack_fn)(void *ctx, const struct lt_psample *s, struct lt_sstack *ss);

struct lt_pfmt;

/* One write of samples in a format; the caller sets what is above `st`, zeroes the rest. */
struct lt_pwriter {
	const struct lt_pfmt *fmt;
	const struct lt_pkind *kind;
	struct lt_pout *out;
	lt_pstack_fn stack;
	void *stack_ctx;
	uint64_t t0_real, dur; /* wall-clock start, duration in ns */
	const struct lt_prof_counts *ctr;
	const struct lt_prof_uw *uw;
	struct lt_pstats st;
	/* the formats' own */
	struct lt_pprof *pp;
	struct lt_vec rows[2]; /* folded: lines; text: rows per table; each row starts with a
				* malloc'd string */
	bool first;
};

/* A format: begin, each sample it wants with its stack, end; begin and end give exit codes. */
struct lt_pfmt {
	const char *name;
	bool binary; /* never to a terminal */
	int (*begin)(struct lt_pwriter *w);
	bool (*wants)(const struct lt_pwriter *w, const struct lt_psample *s); /* NULL: all */
	void (*sample)(struct lt_pwriter *w, const struct lt_psample *s,
		       const struct lt_sstack *ss);
	int (*end)(struct lt_pwriter *w);
};

extern const struct lt_pfmt lt_pfmt_text; /* proftext.c */

/* The format named arg among a command's known ones (NULL-terminated), else the usage error */
int lt_pfmt_parse(const char *arg, const char *const *known, const struct lt_pfmt **fmt);
const struct lt_pfmt *lt_pfmt_named(const char *name);
/* Every sample in w->fmt, in order; an exit code. Frees what the format held. */
int lt_pwrite(struct lt_pwriter *w, const struct lt_psample *s, size_t n);

#endif
