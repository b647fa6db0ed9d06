// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metrics --by: the cgroups of lt_cg_counts, each with the workload label it got at its first
 * read and its counts then, in a table of open addressing (no allocation per read); the
 * labels past --by-max folded into "other". See struct by_label in metrics.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowtrace.h"
#include "metrics.h"

#define BY_REFRESH_NS 10000000000ull /* a rescan of the cgroup tree at least this often */

const char *const lt_by_names[] = { "", "unit", "container", "pod" };

static uint64_t str_hash(const char *p)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h | 1; /* 0 marks a free slot */
}

int lt_by_init(struct by_state *b, enum by_kind kind, unsigned int max)
{
	size_t n = 1, f = 1;

	b->kind = kind;
	b->max = max;
	if (kind == BY_NONE)
		return LT_OK;
	while (n < 2 * ((size_t)max + 1))
		n <<= 1;
	while (f < 2 * (size_t)LT_CG_MAX)
		f <<= 1;
	b->labels = calloc((size_t)max + 1, sizeof(*b->labels));
	b->index = calloc(n, sizeof(*b->index));
	b->folded = calloc(f, sizeof(*b->folded));
	b->cgs = calloc(f, sizeof(*b->cgs));
	b->index_mask = n - 1;
	b->folded_mask = f - 1;
	b->cgs_mask = f - 1;
	if (!b->labels || !b->index || !b->folded || !b->cgs)
		return lt_error(LT_FAIL, "out of memory (--by-max %u)", max);
	strcpy(b->labels[max].name, "other");
	return LT_OK;
}

void lt_by_free(struct by_state *b)
{
	if (b->kind == BY_NONE)
		return;
	free(b->labels);
	free(b->index);
	free(b->folded);
	free(b->cgs);
}

/* the label of `name`: its own while there is room or it has one, else "other" */
static struct by_label *by_label_of(struct by_state *b, const char *name)
{
	uint64_t h = str_hash(name);
	uint32_t i = h & b->index_mask;

	for (; b->index[i]; i = (i + 1) & b->index_mask)
		if (!strcmp(b->labels[b->index[i] - 1].name, name))
			return &b->labels[b->index[i] - 1];
	if (b->nlabels < b->max) {
		struct by_label *l = &b->labels[b->nlabels];

		snprintf(l->name, sizeof(l->name), "%s", name);
		b->index[i] = ++b->nlabels;
		return l;
	}
	/* folded: count each value once */
	for (i = h & b->folded_mask; b->folded[i] && b->folded[i] != h;
	     i = (i + 1) & b->folded_mask)
		;
	/* at most half full: the probe always ends; past it, new values are not counted */
	if (!b->folded[i] && b->nfolded < (b->folded_mask + 1) / 2) {
		b->folded[i] = h;
		b->nfolded++;
	}
	return &b->labels[b->max];
}

static uint32_t cg_hash(uint64_t id)
{
	return (uint32_t)((id * 0x9e3779b97f4a7c15ull) >> 32);
}

/* the cgroup's slot: its own, or the free one where it goes */
static struct by_cg *cg_slot(struct by_state *b, uint64_t id)
{
	uint32_t i = cg_hash(id) & b->cgs_mask;

	while (b->cgs[i].id && b->cgs[i].id != id)
		i = (i + 1) & b->cgs_mask;
	return &b->cgs[i];
}

/* take a cgroup out of the table, keeping the probe chains whole (backward-shift deletion) */
static void cg_del(struct by_state *b, struct by_cg *e)
{
	uint32_t i = e - b->cgs, j = i;

	for (;;) {
		uint32_t k;

		j = (j + 1) & b->cgs_mask;
		if (!b->cgs[j].id)
			break;
		k = cg_hash(b->cgs[j].id) & b->cgs_mask;
		/* j's entry may move to i when its home k is not cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		b->cgs[i] = b->cgs[j];
		i = j;
	}
	b->cgs[i].id = 0;
	b->ncgs--;
}

static void on_cg(void *ctx, uint64_t cgroup_id, const uint64_t n[LT_CG_KINDS])
{
	struct by_state *b = ctx;
	struct by_cg *c = cg_slot(b, cgroup_id);
	struct by_label *l;

	if (!c->id) {
		/* first seen: its label now, for good */
		const struct lt_ident *id = lt_ident_get(&b->ident, cgroup_id, 0, b->now_ns);
		const char *name = "";

		if (id)
			name = b->kind == BY_UNIT	 ? id->unit
			       : b->kind == BY_CONTAINER ? id->container_id
							 : id->pod_uid;
		c->id = cgroup_id;
		c->first_ns = b->now_ns;
		b->ncgs++;
		c->label = by_label_of(b, name) - b->labels;
		memset(c->last, 0, sizeof(c->last));
	}
	l = &b->labels[c->label];
	for (int k = 0; k < LT_CG_KINDS; k++) {
		/* below the last: the entry was deleted and made again, it counts from 0 */
		l->n[k] += n[k] >= c->last[k] ? n[k] - c->last[k] : n[k];
		c->last[k] = n[k];
	}
	c->seen = b->read;
}

/*
 * After a read: ids no longer in the map leave the table. The kernel frees a cgroup's
 * entry a grace after its death (progs/cgroup.bpf.c); a suite of a lowtrace before that
 * (`tracked` false) has them deleted here once the resolver saw them go away.
 */
static void by_sweep(struct by_state *b, bool tracked)
{
	for (uint32_t i = 0; i <= b->cgs_mask; i++) {
		struct by_cg *c = &b->cgs[i];

		while (c->id && (c->seen != b->read ||
				 (!tracked && lt_ident_gone(&b->ident, c->id, c->first_ns)))) {
			/* not read but still there (a walk that skipped it): kept, else it
			 * would count again from 0 when next read */
			if (c->seen != b->read && !lt_cg_get(b->cg, c->id, on_cg, b))
				continue; /* seen now */
			if (c->seen == b->read)
				lt_cg_delete(b->cg, c->id);
			cg_del(b, c); /* another entry may move into slot i: look again */
		}
	}
}

int lt_by_read(struct by_state *b, bool tracked)
{
	int err;

	b->now_ns = lt_now_ns(CLOCK_MONOTONIC);
	b->read_ns = b->now_ns;
	if (!b->cg)
		return 1; /* a suite without lt_cg_counts */
	if (b->now_ns >= b->refresh_ns + BY_REFRESH_NS) {
		lt_ident_refresh(&b->ident, b->now_ns);
		b->refresh_ns = b->now_ns;
	}
	b->read++;
	err = lt_cg_read(b->cg, on_cg, b);
	if (err)
		return err;
	by_sweep(b, tracked);
	return 0;
}
