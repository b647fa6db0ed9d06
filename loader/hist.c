// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* lowtrace hist: the log2 histograms of an aggregate probe, once or every --interval. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "histfmt.h"
#include "kernel_agg.h"
#include "kernel_handles.h"
#include "kernel_status.h"
#include "lowtrace.h"
#include "opts.h"
#include "out.h"
#include "records.h"
#include "sysnames.h"

/* The aggregate probes of the table: "a|b|c" (synopsis) or "a, b or c" (errors). */
static const char *agg_names(bool bar)
{
	static char list[2][128];
	char *l = list[bar];
	size_t n = 0, k = 0, len = 0;

	for (size_t i = 0; i < lt_nprobes; i++)
		n += lt_probes[i].map && !lt_probes[i].cmd;
	l[0] = 0;
	for (size_t i = 0; i < lt_nprobes && len < sizeof(list[0]); i++) {
		const char *sep = !k ? "" : bar ? "|" : k + 1 == n ? " or " : ", ";

		if (!lt_probes[i].map || lt_probes[i].cmd)
			continue;
		len += snprintf(l + len, sizeof(list[0]) - len, "%s%s", sep, lt_probes[i].name);
		k++;
	}
	return l;
}

static void help_hist(void)
{
	printf("NAME\n    lowtrace hist - print the latency histograms of an aggregate probe\n\n"
	       "SYNOPSIS\n    lowtrace hist %s [--interval S] [--count N] [--json]\n\n",
	       agg_names(true));
	printf("DESCRIPTION\n"
	       "    Reads the probe's per-CPU map from the pinned suite (load --probes ...,PROBE)\n"
	       "    and prints log2 histograms in nanoseconds, counted since load: runq, one\n"
	       "    histogram of run-queue latency; syscalls, one per syscall (and process,\n"
	       "    with load --per-pid); bio, one per device (major:minor) and operation\n"
	       "    (read, write, flush, discard, other), issue to completion. The most\n"
	       "    frequent first. Bucket LO -> HI holds values LO <= v <= HI.\n\n"
	       "OPTIONS\n"
	       "    --interval S         print again every S seconds (until Ctrl-C or --count)\n"
	       "    --count N            with --interval: stop after N prints\n"
	       "    --json               one JSON object per print: {\"probe\", \"ts_ns\",\n"
	       "                         \"histograms\": [{[\"syscall\", \"pid\",] \"count\", "
	       "\"sum_ns\",\n"
	       "                         \"buckets\": [{\"lo\", \"hi\" (exclusive), "
	       "\"count\"}]}]}\n\n"
	       "EXIT STATUS\n    0 done; 2 usage; 3 not loaded (or the probe not attached); 6 the\n"
	       "    suite was unloaded or replaced during --interval; 1 failure.\n");
}

struct hist_entry {
	unsigned char key[LT_AGG_KEY_MAX]; /* what the probe's key writers read */
	struct lt_hist h;
};

struct hist_view {
	const struct lt_probe *probe;
	struct hist_entry *e; /* lt_agg_max_entries() of them, allocated once */
	size_t n;
	size_t cap;
};

static void hist_collect(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct hist_view *v = ctx;

	if (!sum->count || v->n >= v->cap)
		return;
	memset(&v->e[v->n].key, 0, sizeof(v->e[v->n].key));
	memcpy(&v->e[v->n].key, key, v->probe->key_size);
	v->e[v->n].h = *sum;
	v->n++;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;

	return x->h.count < y->h.count ? 1 : x->h.count > y->h.count ? -1 : 0;
}

static void hist_print(struct hist_view *v, struct lt_out *out, bool json)
{
	struct lt_buf *b = &out->b;
	char title[96];

	if (json) {
		lt_put_s(b, "{\"probe\":\"");
		lt_put_s(b, v->probe->name);
		lt_put_c(b, '"');
		lt_json_u64(b, "ts_ns", lt_now_ms() * 1000000ull);
		lt_json_key(b, "histograms");
		lt_put_c(b, '[');
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct hist_entry *e = &v->e[i];

		if (b->cap - b->len < LT_HIST_ENC_MAX)
			lt_out_flush(out);
		if (json) {
			lt_put_s(b, i ? ",{" : "{");
			/* lt_hist_json starts with a comma: a first field here */
			v->probe->key_json(b, &e->key);
			lt_hist_json(b, &e->h);
			lt_put_c(b, '}');
			continue;
		}
		v->probe->key_title(title, sizeof(title), v->probe, &e->key);
		lt_hist_text(b, title, &e->h);
		lt_put_c(b, '\n');
	}
	if (json)
		lt_put_s(b, "]}\n");
	else if (!v->n)
		lt_put_s(b, "(no events yet)\n");
	lt_out_flush(out);
}

struct hist_cli {
	struct lt_every every;
	bool json;
};

static int hist_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct hist_cli *c = ctx;

	(void)arg;
	if (lt_every_opt(&c->every, key, num))
		c->json = true; /* --json */
	return LT_OK;
}

int cmd_hist(int argc, char **argv)
{
	static const int keys[] = { LT_O_INTERVAL, LT_O_COUNT, LT_O_JSON, 0 };
	static char mem[LT_OUT_SIZE];
	struct lt_out out;
	const struct lt_probe *p = NULL;
	struct hist_view v = {};
	struct lt_agg *a;
	struct lt_handles h = { .dir_fd = -1 };
	struct hist_cli c = {};
	uint64_t prints = 0;
	int err;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		help_hist();
		return LT_OK;
	}
	if (argc < 2 || argv[1][0] == '-')
		return lt_error(LT_USAGE, "hist: which probe? (%s; see 'lowtrace hist -h')",
				agg_names(false));
	p = lt_probe_by_name(argv[1], strlen(argv[1]));
	if (!p || !p->map || p->cmd)
		return lt_error(LT_USAGE, "hist: '%s' is not an aggregate probe (%s)", argv[1],
				agg_names(false));
	argv[1] = argv[0];
	/* --count without --interval is refused there (the rules in opts.c) */
	err = lt_opts_parse(argc - 1, argv + 1, keys, help_hist, hist_opt, &c);
	if (err)
		return err;
	{
		static struct lt_status st;

		err = lt_read_status(&st);
		if (err)
			return err;
		if (!st.probe[p->id].loaded)
			return lt_error(
				LT_NOT_LOADED,
				"not loaded: probe %s is not attached (lowtrace load --probes "
				"...,%s)",
				p->name, p->name);
	}
	/* --interval: the pins, to notice an unload or replace */
	if (c.every.interval_s) {
		err = lt_open_pinned(&h, false);
		if (err)
			return err;
	}
	err = lt_agg_open(&a, p);
	if (err) {
		lt_close_handles(&h);
		return err;
	}
	v.probe = p;
	v.cap = lt_agg_max_entries(a);
	v.e = calloc(v.cap, sizeof(*v.e));
	if (!v.e) {
		lt_agg_close(a);
		lt_close_handles(&h);
		return lt_error(LT_FAIL, "out of memory");
	}
	lt_out_init(&out, mem, sizeof(mem));
	lt_catch_stop();
	for (;;) {
		v.n = 0;
		err = lt_agg_read(a, hist_collect, &v);
		if (err) {
			err = lt_error(LT_FAIL, "cannot read %s: %s", p->map, strerror(-err));
			break;
		}
		qsort(v.e, v.n, sizeof(*v.e), by_count_desc);
		hist_print(&v, &out, c.json);
		prints++;
		if (out.failed || !c.every.interval_s || (c.every.count && prints >= c.every.count))
			break;
		if (!lt_sleep_s(c.every.interval_s))
			break;
		if (lt_pinned_gone(&h)) {
			err = lt_error(LT_GONE, "the suite was unloaded or replaced");
			break;
		}
		if (!c.json)
			lt_put_c(&out.b, '\n');
	}
	free(v.e);
	lt_agg_close(a);
	lt_close_handles(&h);
	return err;
}
