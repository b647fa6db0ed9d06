// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* lowtrace top: probe rates and the busiest syscalls, refreshed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "histfmt.h"
#include "kernel_agg.h"
#include "kernel_handles.h"
#include "kernel_stats.h"
#include "kernel_status.h"
#include "lowtrace.h"
#include "opts.h"
#include "records.h"
#include "sysnames.h"
#include "table.h"

static void help_top(void)
{
	printf("NAME\n    lowtrace top - a refreshing table of syscalls and probe rates\n\n"
	       "SYNOPSIS\n    lowtrace top [--interval S] [--count N] [--rows N]\n\n"
	       "DESCRIPTION\n"
	       "    Every S seconds (default 1): events and drops per second of each loaded\n"
	       "    probe, then, with the syscalls probe loaded, the busiest syscalls: count\n"
	       "    and rate, total time, and p50/p99 latency read from the log2 histograms\n"
	       "    (the upper bound of the bucket holding the quantile). Counts, totals and\n"
	       "    quantiles are since load; rates over the last interval. On a terminal the\n"
	       "    screen is redrawn; otherwise each refresh is printed as a plain block.\n\n"
	       "OPTIONS\n"
	       "    --interval S         seconds between refreshes (default 1)\n"
	       "    --count N            stop after N refreshes\n"
	       "    --rows N             syscalls shown (default 20)\n\n"
	       "EXIT STATUS\n    0 done (Ctrl-C, --count); 2 usage; 3 not loaded; 6 the suite was\n"
	       "    unloaded or replaced; 1 failure.\n");
}

struct top_state {
	struct lt_hist *cur; /* LT_SYS_SLOTS each, allocated once */
	struct lt_hist *prev;
	uint32_t *order;
};

static void top_sum(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct top_state *t = ctx;
	const struct lt_sys_key *k = key;

	if (k->nr < LT_SYS_SLOTS)
		lt_hist_merge(&t->cur[k->nr], sum);
}

/* upper bound (ns) of the bucket where the q-quantile falls */
static uint64_t quantile_ns(const struct lt_hist *h, double q)
{
	uint64_t want = (uint64_t)(q * h->count + 0.5), cum = 0;

	if (!want)
		want = 1;
	for (int i = 0; i < LT_HIST_SLOTS; i++) {
		cum += h->slot[i];
		if (cum >= want)
			return i == LT_HIST_SLOTS - 1 ? UINT64_MAX : lt_hist_hi(i);
	}
	return 0;
}

static const struct lt_hist *top_hists;

static int by_syscall_count(const void *a, const void *b)
{
	uint64_t x = top_hists[*(const uint32_t *)a].count,
		 y = top_hists[*(const uint32_t *)b].count;

	return x < y ? 1 : x > y ? -1 : 0;
}

static void put_us(char *dst, size_t len, uint64_t ns)
{
	if (ns == UINT64_MAX)
		snprintf(dst, len, "inf");
	else if (ns < 10000)
		snprintf(dst, len, "%.2f", ns / 1000.0);
	else
		snprintf(dst, len, "%llu", (unsigned long long)(ns / 1000));
}

struct top_cli {
	struct lt_every every;
	uint64_t rows;
};

static int top_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct top_cli *c = ctx;

	(void)arg;
	if (lt_every_opt(&c->every, key, num))
		c->rows = num; /* --rows */
	return LT_OK;
}

int cmd_top(int argc, char **argv)
{
	static const int keys[] = { LT_O_INTERVAL, LT_O_COUNT, LT_O_ROWS, 0 };
	static const struct lt_col probe_cols[] = {
		{ "PROBE", -12 },
		{ "EVENTS/S", 12 },
		{ "DROPS/S", 12 },
	};
	static const struct lt_col sys_cols[] = {
		{ "SYSCALL", -20 }, { "COUNT", 12 },  { "RATE/S", 10 },
		{ "TOTAL_MS", 12 }, { "P50_US", 10 }, { "P99_US", 10 },
	};
	struct lt_table pt, syst;
	const struct lt_probe *sp = lt_probe_by_name("syscalls", strlen("syscalls"));
	static struct lt_status st;
	static uint64_t last_ev[LT_PROBE_SLOTS], last_dr[LT_PROBE_SLOTS];
	struct top_state t = {};
	struct lt_stats_reader sr = {};
	struct lt_handles h;
	struct lt_agg *sys = NULL;
	struct top_cli c = {};
	bool tty = isatty(STDOUT_FILENO);
	uint64_t prints = 0, t0, t1;
	int err;

	c.rows = 20;
	err = lt_opts_parse(argc, argv, keys, help_top, top_opt, &c);
	if (err)
		return err;
	if (!c.every.interval_s)
		c.every.interval_s = 1;
	err = lt_read_status(&st);
	if (err)
		return err;
	err = lt_open_pinned(&h, false);
	if (err)
		return err;
	err = lt_stats_open(&sr, &h);
	/* top's table is the syscalls probe's: its row names the map */
	if (!err && st.probe[sp->id].loaded)
		err = lt_agg_open(&sys, sp);
	lt_table_init(&pt, probe_cols, sizeof(probe_cols) / sizeof(probe_cols[0]));
	lt_table_init(&syst, sys_cols, sizeof(sys_cols) / sizeof(sys_cols[0]));
	t.cur = calloc(LT_SYS_SLOTS, sizeof(*t.cur));
	t.prev = calloc(LT_SYS_SLOTS, sizeof(*t.prev));
	t.order = calloc(LT_SYS_SLOTS, sizeof(*t.order));
	if (!err && (!t.cur || !t.prev || !t.order))
		err = lt_error(LT_FAIL, "out of memory");
	lt_catch_stop();
	t0 = lt_now_ms();
	while (!err && !lt_stop) {
		double secs;
		size_t n = 0;

		t1 = lt_now_ms();
		secs = prints ? (t1 - t0) / 1000.0 : 0;
		t0 = t1;
		if (lt_pinned_gone(&h)) {
			err = lt_error(LT_GONE, "the suite was unloaded or replaced");
			break;
		}
		if (tty)
			printf("\033[H\033[2J");
		printf("lowtrace top: every %llu s, rates over the last interval\n",
		       (unsigned long long)c.every.interval_s);
		for (size_t i = 0; i < lt_nprobes; i++) {
			struct lt_counts s;
			uint32_t id = lt_probes[i].id;

			if (!st.probe[id].loaded || lt_stats_read(&sr, &lt_probes[i], &s))
				continue;
			lt_table_cell(&pt, "%s", lt_probes[i].name);
			if (secs > 0) {
				lt_table_cell(&pt, "%.1f", (s.events - last_ev[id]) / secs);
				lt_table_cell(&pt, "%.1f", (s.drops - last_dr[id]) / secs);
			} else {
				lt_table_cell(&pt, "-");
				lt_table_cell(&pt, "-");
			}
			lt_table_end_row(&pt);
			last_ev[id] = s.events;
			last_dr[id] = s.drops;
		}
		err = lt_table_print(&pt, stdout);
		if (err)
			break;
		if (!sys) {
			printf("\nsyscalls: not loaded (lowtrace load --probes ...,syscalls)\n");
		} else {
			int rerr;

			memset(t.cur, 0, LT_SYS_SLOTS * sizeof(*t.cur));
			rerr = lt_agg_read(sys, top_sum, &t);
			if (rerr) {
				err = lt_error(LT_FAIL, "cannot read %s: %s", sp->map,
					       strerror(-rerr));
				break;
			}
			for (uint32_t nr = 0; nr < LT_SYS_SLOTS; nr++)
				if (t.cur[nr].count)
					t.order[n++] = nr;
			top_hists = t.cur;
			qsort(t.order, n, sizeof(*t.order), by_syscall_count);
			for (size_t k = 0; k < n && k < c.rows; k++) {
				const struct lt_hist *x = &t.cur[t.order[k]];
				char name[32], p50[24], p99[24], rate[24];

				put_us(p50, sizeof(p50), quantile_ns(x, 0.50));
				put_us(p99, sizeof(p99), quantile_ns(x, 0.99));
				if (!lt_hist_timed(x)) { /* load --count-only */
					strcpy(p50, "-");
					strcpy(p99, "-");
				}
				if (secs > 0)
					snprintf(rate, sizeof(rate), "%.1f",
						 (x->count - t.prev[t.order[k]].count) / secs);
				else
					snprintf(rate, sizeof(rate), "-");
				lt_table_cell(&syst, "%s",
					      lt_syscall_name(t.order[k], name, sizeof(name)));
				lt_table_cell(&syst, "%llu", (unsigned long long)x->count);
				lt_table_cell(&syst, "%s", rate);
				lt_table_cell(&syst, "%.3f", x->sum_ns / 1e6);
				lt_table_cell(&syst, "%s", p50);
				lt_table_cell(&syst, "%s", p99);
				lt_table_end_row(&syst);
			}
			printf("\n");
			err = lt_table_print(&syst, stdout);
			if (err)
				break;
			memcpy(t.prev, t.cur, LT_SYS_SLOTS * sizeof(*t.cur));
		}
		if (!tty)
			printf("\n");
		fflush(stdout);
		prints++;
		if (c.every.count && prints >= c.every.count)
			break;
		lt_sleep_s(c.every.interval_s);
	}
	lt_table_free(&pt);
	lt_table_free(&syst);
	free(t.cur);
	free(t.prev);
	free(t.order);
	lt_agg_close(sys);
	lt_stats_close(&sr);
	lt_close_handles(&h);
	return err;
}
