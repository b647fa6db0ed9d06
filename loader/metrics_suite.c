// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The life of lowtrace metrics' readers: the pinned suite's counters, aggregates, maps and
 * names, opened at the start, closed when the suite is unloaded and opened again when one is
 * pinned (load --replace is an upgrade, not the end of the service); the room a scrape of it
 * needs; the tables that outlive every suite; --by's reads between scrapes.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "lowtrace.h"
#include "metrics.h"

#define BODY_BASE (1u << 20) /* counters, gauges, headers: far less */
#define HIST_MAX 8192 /* one histogram's series, labels included (lt_prom_hist) */

static void suite_close(struct lt_metrics *s)
{
	for (int i = 0; i < LT_PROBE_SLOTS; i++) {
		lt_agg_close(s->agg[i]);
		s->agg[i] = NULL;
	}
	lt_maps_close(s->maps);
	s->maps = NULL;
	lt_cg_close(s->by.cg);
	s->by.cg = NULL;
	/* the next suite's identity hierarchy may be another */
	lt_ident_close(&s->by.ident);
	if (s->blame_ids_open)
		lt_ident_close(&s->blame_ids);
	s->blame_ids_open = false;
	lt_identity_close(&s->idn);
	lt_stats_close(&s->sr);
	lt_sweeper_close(s->sw);
	s->sw = NULL;
	lt_close_handles(&s->h);
}

/* room for every histogram the maps can hold: no series is ever left out */
static size_t body_need(const struct lt_metrics *s)
{
	size_t need = BODY_BASE + (BLAME_SERIES + LT_PROBE_SLOTS) * BLAME_LINE;

	if (s->by.kind != BY_NONE) /* a label is at most 128 bytes, escaped 256 */
		need += ((size_t)s->by.max + 1) * LT_CG_KINDS * 384;
	if (s->by.kind == BY_CONTAINER) /* its info series: the runtime's names, escaped */
		need += (size_t)s->by.max * 2 *
			(LT_RT_NAME_MAX + LT_RT_IMAGE_MAX + LT_RT_POD_MAX + LT_RT_NS_MAX + 256);
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe *p = &lt_probes[i];

		if (p->prom && s->agg[p->id])
			need += (size_t)HIST_MAX * (p->prom->nnames
							    ? p->prom->nnames + 1
							    : lt_agg_max_entries(s->agg[p->id]));
	}
	return need;
}

/* Readers of the pinned suite: counters, and the aggregates of the probes it has loaded. */
static int suite_open(struct lt_metrics *s)
{
	struct lt_status st;
	int err = lt_read_status(&st);

	if (err)
		return err;
	err = lt_open_pinned(&s->h, false);
	if (err)
		return err;
	lt_identity_open(&s->idn, &s->h);
	if (s->by.kind != BY_NONE &&
	    lt_ident_open(&s->by.ident, &(struct lt_ident_cfg){
						.ctrl = s->idn.ctrl,
						.kname = lt_identity_kname,
						.kctx = &s->idn,
						.runtime = s->by.kind == BY_CONTAINER,
					})) {
		suite_close(s);
		return lt_error(LT_FAIL, "out of memory");
	}
	err = lt_stats_open(&s->sr, &s->h);
	if (!err)
		err = lt_sweeper_open(&s->sw, &s->h);
	for (size_t i = 0; !err && i < lt_nprobes; i++) {
		s->loaded[lt_probes[i].id] = st.probe[lt_probes[i].id].loaded;
		if (lt_probes[i].map && s->loaded[lt_probes[i].id])
			err = lt_agg_open(&s->agg[lt_probes[i].id], &lt_probes[i]);
	}
	if (!err)
		err = lt_maps_open(&s->maps, s->loaded);
	if (err) {
		suite_close(s);
		return err;
	}
	/* a suite of a lowtrace without lt_cg_counts: no per-workload series */
	if (s->by.kind != BY_NONE && lt_cg_open(&s->by.cg) == -ENOMEM) {
		suite_close(s);
		return lt_error(LT_FAIL, "out of memory");
	}
	s->need = body_need(s);
	return LT_OK;
}

/* The scrape's buffer holds the largest answer: grown (rarely: a suite with bigger maps) while
 * no reader uses it. */
int lt_metrics_room(struct lt_metrics *s)
{
	struct lt_buf *b = s->body;
	char *p;

	if (b->cap >= s->need)
		return 0;
	p = realloc(b->p, s->need);
	if (!p)
		return -1;
	b->p = p;
	b->cap = s->need;
	return 0;
}

/*
 * After an unload: 503 until a suite is pinned again, then that one (a
 * `load --replace` is an upgrade, not the end of the service). Its counters
 * start from zero, which Prometheus reads as a counter reset.
 */
bool lt_metrics_ready(struct lt_metrics *s)
{
	struct stat st;

	if (s->h.dir_fd >= 0 && !lt_pinned_gone(&s->h))
		return true;
	if (s->h.dir_fd >= 0)
		suite_close(s);
	return stat(LT_PIN_DIR, &st) == 0 && suite_open(s) == LT_OK;
}

/* --by's reads between scrapes: a quarter of the grace apart, within these bounds */
#define BY_READ_MIN_MS 250
#define BY_READ_MAX_MS 60000

unsigned int lt_metrics_tick(struct lt_metrics *s)
{
	uint64_t every = s->idn.grace_ns / 4000000, now, due;

	if (s->by.kind == BY_NONE)
		return BY_READ_MAX_MS;
	every = every < BY_READ_MIN_MS	 ? BY_READ_MIN_MS
		: every > BY_READ_MAX_MS ? BY_READ_MAX_MS
					 : every;
	now = lt_now_ms();
	due = s->by.read_ns / 1000000 + every;
	if (s->by.read_ns && now < due)
		return (unsigned int)(due - now);
	/* a suite without lt_cg_counts, or none pinned: tried again at the next tick */
	if (!lt_metrics_ready(s) || lt_by_read(&s->by, s->idn.tracked))
		s->by.read_ns = lt_now_ns(CLOCK_MONOTONIC);
	return (unsigned int)every;
}

int lt_metrics_start(struct lt_metrics *s, bool per_syscall_latency, enum by_kind by,
		     unsigned int by_max)
{
	int err;

	s->per_syscall_latency = per_syscall_latency;
	s->idn.names_fd = -1;
	err = lt_by_init(&s->by, by, by_max);
	if (!err)
		err = suite_open(s);
	if (err) {
		lt_by_free(&s->by);
		return err;
	}
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].prom && lt_probes[i].prom->nnames > s->nnames)
			s->nnames = lt_probes[i].prom->nnames;
	s->by_name = calloc(s->nnames ? s->nnames : 1, sizeof(*s->by_name));
	if (!s->by_name) {
		lt_metrics_stop(s);
		return lt_error(LT_FAIL, "out of memory");
	}
	return LT_OK;
}

void lt_metrics_stop(struct lt_metrics *s)
{
	suite_close(s);
	lt_by_free(&s->by);
	free(s->by_name);
	s->by_name = NULL;
}
