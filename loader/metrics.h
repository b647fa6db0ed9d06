/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the files of lowtrace metrics share, one command in four files: metrics.c (options,
 * help, the driver), metrics_suite.c (the pinned suite's readers, opened at the start and
 * after a reload; --by's reads between scrapes), metrics_scrape.c (what a scrape writes),
 * metrics_by.c (--by: the cgroups counted per workload). The HTTP server under them is
 * http.c, which knows none of this.
 */
#ifndef LT_METRICS_H
#define LT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "ident.h"
#include "kernel.h"
#include "lt_hist.h"
#include "records.h"

/* ---- --by (metrics_by.c) ---- */

enum by_kind { BY_NONE, BY_UNIT, BY_CONTAINER, BY_POD };
extern const char *const lt_by_names[]; /* by kind: the option's value and the label's name */

/*
 * --by: the lifecycle counts of lt_cg_counts summed per workload (unit, container or pod of
 * each cgroup). Each cgroup gets its label at its first read and keeps it, and a label's
 * counter grows by what its cgroups' counts grew since the last read: so a counter never
 * goes down, not when a cgroup goes away and no longer resolves, nor when its kernel entry is
 * deleted. Reads come with scrapes and between them, a quarter of the suite's cgroup grace
 * apart (lt_metrics_tick): a dead cgroup's entry, freed a grace after its death, is read
 * first whatever the scrape interval. A value keeps its series from its first read on; past
 * by_max values, the rest
 * are summed under "other". Cgroups the resolver saw go away are deleted from lt_cg_counts
 * after their last counts are taken, so the kernel map holds live cgroups. All tables are
 * allocated at start: a scrape allocates nothing.
 */
struct by_label {
	char name[LT_IDENT_UNIT_MAX + 1];
	uint64_t n[LT_CG_KINDS]; /* since metrics started */
};

struct by_cg {
	uint64_t id; /* 0: free */
	uint32_t label; /* index in labels[] */
	uint32_t seen; /* the read that last found it in the kernel map */
	uint64_t first_ns; /* the read that found it first: a whole rescan after it knows */
	uint64_t last[LT_CG_KINDS]; /* the kernel's counts then */
};

struct by_state {
	enum by_kind kind;
	unsigned int max; /* values with a series of their own */
	struct lt_ident_cache ident;
	struct lt_cg_reader *cg; /* of the open suite */
	struct by_label *labels; /* max + 1: labels[max] is "other" */
	unsigned int nlabels;
	uint32_t *index; /* open addressing: label index + 1, 0 free */
	uint32_t index_mask;
	uint64_t *folded; /* values folded into other (their hashes, 0 free) */
	uint32_t folded_mask;
	uint64_t nfolded;
	struct by_cg *cgs; /* open addressing by cgroup id, 2 * LT_CG_MAX */
	uint32_t cgs_mask, ncgs;
	uint32_t read; /* reads so far */
	uint64_t now_ns, refresh_ns, read_ns;
};

/* Tables for `max` values of `kind` (none for BY_NONE); an exit code, lt_by_free either way. */
int lt_by_init(struct by_state *b, enum by_kind kind, unsigned int max);
void lt_by_free(struct by_state *b);
/*
 * The counts of every cgroup now added to their labels' counters, gone cgroups out of the
 * table (and out of lt_cg_counts unless the suite names cgroups itself: `tracked`).
 * Returns 0, 1 when the suite has no lt_cg_counts (no series), or -errno.
 */
int lt_by_read(struct by_state *b, bool tracked);

/* ---- the exposition's state (metrics_suite.c opens it, metrics_scrape.c writes from it) ---- */

/* lowtrace_drops_by_cgroup_total: the first BLAME_SERIES (probe, cgroup), the rest in "other" */
#define BLAME_SERIES 50
#define BLAME_LINE 1200 /* one series: a cut path of 256 bytes, every byte escaped, and labels */

struct lt_metrics {
	bool per_syscall_latency;
	struct lt_handles h;
	struct lt_stats_reader sr;
	struct lt_sweeper *sw; /* the tcp sweep, run at scrapes (every LT_SWEEP_MS at most) */
	bool sweep_warned; /* it cannot run: said once */
	bool loaded[LT_PROBE_SLOTS];
	struct lt_counts counts[LT_PROBE_SLOTS]; /* per row of lt_probes, this scrape */
	bool have[LT_PROBE_SLOTS];
	struct lt_agg *agg[LT_PROBE_SLOTS];
	struct lt_maps *maps; /* the loaded probes' stateful maps */
	struct lt_hist *by_name; /* per name of a probe's keys (syscalls: over processes) */
	unsigned int nnames; /* room in by_name */
	struct lt_hist all; /* every key */
	size_t need; /* bytes the largest answer of the loaded suite may take (suite_open) */
	struct lt_buf *body; /* the scrape being written */
	char labels[96];
	const struct lt_probe *cur; /* the aggregate being written */
	struct by_state by;
	struct lt_blame blame[LT_BLAME_MAX]; /* lt_drop_cg: losses per (probe, cgroup) */
	struct lt_ident_cache blame_ids; /* their paths; opened at the first drop */
	struct lt_identity idn; /* the suite's identity hierarchy and kernel names */
	bool blame_ids_open;
};

/* The tables and the first suite's readers: an exit code; on failure nothing is left open. */
int lt_metrics_start(struct lt_metrics *s, bool per_syscall_latency, enum by_kind by,
		     unsigned int by_max);
void lt_metrics_stop(struct lt_metrics *s);
/* A suite to read: the open one, else one pinned since (after an unload or a reload). */
bool lt_metrics_ready(struct lt_metrics *s);
/* Room in s->body for the largest answer of the open suite: 0 or -1. */
int lt_metrics_room(struct lt_metrics *s);
/*
 * Between scrapes: --by's read when it is due (a quarter of the suite's cgroup grace after
 * the last). Returns the ms until the next is due (the server's longest wait).
 */
unsigned int lt_metrics_tick(struct lt_metrics *s);

/* The whole exposition into b (lt_http_scrape_fn): 200, or 503 without a suite, 500. */
int lt_metrics_scrape(void *ctx, struct lt_buf *b);

#endif
