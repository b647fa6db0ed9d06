// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The output formats of lowtrace profile and lowtrace alloc, one table that both commands pick
 * from (folded stacks, pprof, JSON here; the text report in proftext.c), and the one loop that
 * writes samples through any of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lowtrace.h"
#include "pprof.h"
#include "proffmt.h"

const char *const lt_prof_ctr_names[LT_PC_SLOTS] = {
	[LT_PC_KSTACK_COLL] = "kernel_stack_collisions",
	[LT_PC_USTACK_COLL] = "user_stack_collisions",
	[LT_PC_KSTACK_ERR] = "kernel_stack_errors",
	[LT_PC_USTACK_ERR] = "user_stack_missing",
	[LT_PC_MAP_FULL] = "map_full",
	[LT_PC_TASK_DROP] = "new_process_notices_lost",
	[LT_PC_START_FULL] = "switch_table_full",
	[LT_PC_LIVE_FULL] = "live_table_full",
	[LT_PC_STACKS_FULL] = "stack_table_full",
	[LT_PC_SEEN_FULL] = "process_table_full",
	[LT_PC_CD_FULL] = "countdown_table_full",
};

void lt_prof_print_losses(FILE *f, const struct lt_prof_counts *c)
{
	bool any = false;

	for (int i = 0; i < LT_PC_SLOTS; i++) {
		if (!lt_prof_ctr_names[i])
			continue;
		fprintf(f, "%s%s=%llu", any ? " " : "", lt_prof_ctr_names[i],
			(unsigned long long)c->c[i]);
		any = true;
	}
}

static const char *frame_str(const struct lt_frame *f, char *buf, size_t len)
{
	lt_frame_name(f, buf, len);
	return buf;
}

/* ---- folded: comm;root;...;leaf VALUE ---- */

/* a frame name: ';' and spaces would split it, bytes outside printable ASCII never reach a
 * terminal (\xNN) */
static void put_folded(struct lt_buf *b, const char *s)
{
	for (size_t i = 0; s[i] && i < NAME_MAX_OUT; i++) {
		unsigned char c = s[i];

		if (c == ';' || c == ' ')
			lt_put_c(b, '_');
		else
			lt_put_text_str(b, (const char *)&c, 1);
	}
}

/* a folded line, to be sorted and merged */
struct fline {
	char *s; /* first, as in every row (lt_pwriter.rows) */
	uint64_t v;
};

static int fline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->s, ((const struct fline *)b)->s);
}

static int folded_begin(struct lt_pwriter *w)
{
	w->rows[0].elem = sizeof(struct fline);
	return LT_OK;
}

static bool folded_wants(const struct lt_pwriter *w, const struct lt_psample *s)
{
	return w->kind->folded_merge || s->v[w->kind->folded];
}

static void folded_sample(struct lt_pwriter *w, const struct lt_psample *s,
			  const struct lt_sstack *ss)
{
	uint64_t v = s->v[w->kind->folded];
	struct lt_buf *b = &w->out->b;
	char name[NAME_MAX_OUT];
	size_t start;
	struct fline *l;

	lt_pout_room(w->out, (size_t)(ss->nu + ss->nk + 1) * (NAME_MAX_OUT * 4 + 8) + 32);
	start = b->len;
	put_folded(b, s->comm);
	for (int i = ss->nu - 1; i >= 0; i--) {
		lt_put_c(b, ';');
		put_folded(b, frame_str(&ss->u[i], name, sizeof(name)));
	}
	for (int i = ss->nk - 1; i >= 0; i--) {
		lt_put_c(b, ';');
		put_folded(b, frame_str(&ss->k[i], name, sizeof(name)));
		lt_put_s(b, "_[k]");
	}
	if (!w->kind->folded_merge) {
		lt_put_c(b, ' ');
		lt_put_u64(b, v);
		lt_put_c(b, '\n');
		return;
	}
	/* a copy of the line for sorting, the buffer as it was */
	l = lt_vec_push(&w->rows[0]);
	if (l) {
		l->s = strndup(b->p + start, b->len - start);
		l->v = v;
	}
	b->len = start;
}

static int folded_end(struct lt_pwriter *w)
{
	struct fline *l = w->rows[0].p;
	size_t n = w->rows[0].n;

	if (n)
		qsort(l, n, sizeof(*l), fline_cmp);
	for (size_t i = 0; i < n; i++) {
		uint64_t v = l[i].v;

		while (i + 1 < n && !strcmp(l[i].s, l[i + 1].s))
			v += l[++i].v;
		lt_pout_room(w->out, strlen(l[i].s) + 32);
		lt_put_s(&w->out->b, l[i].s);
		lt_put_c(&w->out->b, ' ');
		lt_put_u64(&w->out->b, v);
		lt_put_c(&w->out->b, '\n');
	}
	return LT_OK;
}

/* ---- pprof: gzip'd protobuf ---- */

static int pprof_begin(struct lt_pwriter *w)
{
	const struct lt_pkind *k = w->kind;

	w->pp = lt_pprof_new();
	if (!w->pp)
		return lt_error(LT_FAIL, "out of memory");
	for (int i = 0; i < k->nvals; i++)
		lt_pprof_sample_type(w->pp, k->val[i].type, k->val[i].unit);
	if (k->period)
		lt_pprof_period(w->pp, k->val[1].type, k->val[1].unit, k->period);
	lt_pprof_times(w->pp, w->t0_real, w->dur);
	return LT_OK;
}

static void pprof_sample(struct lt_pwriter *w, const struct lt_psample *s,
			 const struct lt_sstack *ss)
{
	uint64_t loc[2 * LT_STACK_DEPTH + 1];
	char name[NAME_MAX_OUT];
	size_t n = 0;

	for (int i = 0; i < ss->nk; i++)
		loc[n++] = lt_pprof_location(w->pp, 0, ss->k[i].addr, ss->k[i].func);
	for (int i = 0; i < ss->nu; i++) {
		const struct lt_frame *f = &ss->u[i];
		uint64_t m = f->module ? lt_pprof_mapping(w->pp, f->map_start, f->map_limit,
							  f->map_pgoff, f->module, f->build_id)
				       : 0;

		loc[n++] = lt_pprof_location(w->pp, m, f->addr,
					     f->func ? f->func : frame_str(f, name, sizeof(name)));
	}
	for (size_t i = 0; i < n; i++)
		if (!loc[i])
			return; /* out of memory: lt_pprof_write reports it */
	lt_pprof_sample(w->pp, loc, n, s->v, s->comm, s->tgid);
}

static int pprof_end(struct lt_pwriter *w)
{
	int err;

	if (w->kind->comment)
		lt_pprof_comment(w->pp, w->kind->comment);
	lt_pout_flush(w->out);
	err = lt_pprof_write(w->pp, w->out->fd);
	if (err)
		return lt_error(LT_FAIL, "cannot write the pprof file: %s", strerror(-err));
	return LT_OK;
}

/* ---- JSON: one object, the stacks in an array ---- */

static int json_begin(struct lt_pwriter *w)
{
	struct lt_buf *b = &w->out->b;

	lt_put_c(b, '{');
	lt_put_s(b, w->kind->json_head);
	lt_json_u64(b, "duration_ns", w->dur);
	lt_put_s(b, ",\"stacks\":[");
	w->first = true;
	return LT_OK;
}

static void json_sample(struct lt_pwriter *w, const struct lt_psample *s,
			const struct lt_sstack *ss)
{
	struct lt_buf *b = &w->out->b;
	char name[NAME_MAX_OUT];

	lt_pout_room(w->out, (size_t)(ss->nu + ss->nk + 1) * (NAME_MAX_OUT * 6 + 300));
	lt_put_s(b, w->first ? "\n{" : ",\n{");
	w->first = false;
	lt_put_s(b, "\"pid\":");
	lt_put_u64(b, s->tgid);
	lt_json_str(b, "comm", s->comm, strlen(s->comm));
	for (int i = 0; i < w->kind->nvals; i++)
		lt_json_u64(b, w->kind->val[i].json, s->v[i]);
	lt_put_s(b, ",\"frames\":[");
	for (int i = 0; i < ss->nk + ss->nu; i++) {
		const struct lt_frame *f = i < ss->nk ? &ss->k[i] : &ss->u[i - ss->nk];
		size_t n = lt_frame_name(f, name, sizeof(name));

		lt_put_s(b, i ? ",{\"name\":" : "{\"name\":");
		lt_put_json_str(b, name, n);
		if (f->module)
			lt_json_str(b, "module", f->module, strnlen(f->module, NAME_MAX_OUT));
		lt_json_u64(b, "offset", f->mod_off);
		lt_json_u64(b, "addr", f->addr);
		lt_json_bool(b, "kernel", i < ss->nk);
		lt_put_c(b, '}');
	}
	lt_put_s(b, "]}");
}

static int json_end(struct lt_pwriter *w)
{
	struct lt_buf *b = &w->out->b;

	lt_pout_room(w->out, 4096);
	lt_put_s(b, "\n]");
	lt_json_u64(b, "samples", w->st.total);
	lt_json_u64(b, "user_stacks", w->st.with_user);
	lt_json_u64(b, "user_stacks_truncated", w->st.trunc);
	lt_put_s(b, ",\"lost\":{");
	for (int i = 0, n = 0; i < LT_PC_SLOTS; i++) {
		if (!lt_prof_ctr_names[i])
			continue;
		lt_put_s(b, n++ ? ",\"" : "\"");
		lt_put_s(b, lt_prof_ctr_names[i]);
		lt_put_s(b, "\":");
		lt_put_u64(b, w->ctr->c[i]);
	}
	lt_put_c(b, '}');
	lt_prof_uw_json(b, w->uw, w->ctr->c);
	lt_put_s(b, "}\n");
	return LT_OK;
}

/* ---- the kinds ---- */

void lt_pkind_profile(struct lt_pkind *k, bool off, uint64_t period)
{
	*k = (struct lt_pkind){
		.nvals = 2,
		.val = { { off ? "blocks" : "samples", "count", "count" },
			 { off ? "off-cpu" : "cpu", "nanoseconds", "ns" } },
		.period = off ? 0 : period,
		.folded = off ? 1 : 0,
		.folded_merge = true,
	};
}

void lt_pkind_alloc(struct lt_pkind *k, bool leaks)
{
	*k = (struct lt_pkind){
		.nvals = leaks ? 4 : 2,
		/* alloc writes no JSON: no keys */
		.val = { { "alloc_objects", "count", NULL },
			 { "alloc_space", "bytes", NULL },
			 { "inuse_objects", "count", NULL },
			 { "inuse_space", "bytes", NULL } },
		.folded = leaks ? 3 : 1,
		.sites = leaks ? 2 : 1,
	};
}

/* ---- the table ---- */

static const struct lt_pfmt folded = {
	.name = "folded",
	.begin = folded_begin,
	.wants = folded_wants,
	.sample = folded_sample,
	.end = folded_end,
};

static const struct lt_pfmt pprof = {
	.name = "pprof",
	.binary = true,
	.begin = pprof_begin,
	.sample = pprof_sample,
	.end = pprof_end,
};

static const struct lt_pfmt json = {
	.name = "json",
	.begin = json_begin,
	.sample = json_sample,
	.end = json_end,
};

static const struct lt_pfmt *const fmts[] = { &lt_pfmt_text, &folded, &pprof, &json };

const struct lt_pfmt *lt_pfmt_named(const char *name)
{
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (!strcmp(fmts[i]->name, name))
			return fmts[i];
	return NULL;
}

int lt_pfmt_parse(const char *arg, const char *const *known, const struct lt_pfmt **fmt)
{
	char list[128] = "";

	for (int i = 0; known[i]; i++) {
		if (!strcmp(arg, known[i])) {
			*fmt = lt_pfmt_named(arg);
			return LT_OK;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 known[i]);
	}
	return lt_error(LT_USAGE, "--format: unknown format '%s' (known: %s)", arg, list);
}

/* what a failed or finished write left: rows not printed, each beginning with its string */
static void rows_free(struct lt_pwriter *w)
{
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; i < w->rows[t].n; i++)
			free(*(char **)((char *)w->rows[t].p + i * w->rows[t].elem));
		free(w->rows[t].p);
		memset(&w->rows[t], 0, sizeof(w->rows[t]));
	}
	lt_pprof_free(w->pp);
	w->pp = NULL;
}

int lt_pwrite(struct lt_pwriter *w, const struct lt_psample *s, size_t n)
{
	static struct lt_sstack ss;
	int ret = w->fmt->begin(w);

	for (size_t i = 0; i < n && ret == LT_OK; i++) {
		if (w->fmt->wants && !w->fmt->wants(w, &s[i]))
			continue;
		w->stack(w->stack_ctx, &s[i], &ss);
		w->st.total += s[i].v[0];
		if (ss.nu) {
			w->st.with_user += s[i].v[0];
			if (lt_sstack_cut(&ss))
				w->st.trunc += s[i].v[0];
		}
		w->fmt->sample(w, &s[i], &ss);
	}
	if (ret == LT_OK)
		ret = w->fmt->end(w);
	rows_free(w);
	return ret;
}
