// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a scrape of lowtrace metrics writes: every family, read at each scrape from the
 * pinned maps with the readers metrics_suite.c holds open (no allocation per scrape), into
 * the body the HTTP server (http.c) hands over.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "histfmt.h"
#include "lowtrace.h"
#include "metrics.h"
#include "prom.h"

/* keys summed per name (s->cur->prom->nnames) */
static void on_named(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct lt_metrics *s = ctx;
	unsigned int i = s->cur->prom->key_name(key);

	if (i < s->cur->prom->nnames)
		lt_hist_merge(&s->by_name[i], sum);
	lt_hist_merge(&s->all, sum);
}

/* one series per key */
static void on_key(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct lt_metrics *s = ctx;
	const struct lt_prom *m = s->cur->prom;

	s->labels[0] = 0;
	if (m->labels)
		m->labels(s->labels, sizeof(s->labels), key);
	lt_prom_hist(s->body, m->hist, s->labels, sum);
}

/* One counter family: a sample per loaded probe, from its lt_counts at `off`. */
static void put_counters(struct lt_metrics *s, const char *metric, const char *help, size_t off)
{
	struct lt_buf *b = s->body;

	lt_prom_help(b, metric, "counter", help);
	for (size_t i = 0; i < lt_nprobes; i++) {
		if (!s->have[i])
			continue;
		lt_put_s(b, metric);
		lt_put_s(b, "{probe=\"");
		lt_put_s(b, lt_probes[i].name);
		lt_put_s(b, "\"} ");
		lt_put_u64(b, *(const uint64_t *)((const char *)&s->counts[i] + off));
		lt_put_c(b, '\n');
	}
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* one label of an info series: ,key="value" (escaped), none when empty */
static void put_info_label(struct lt_buf *b, const char *key, const char *v)
{
	if (!*v)
		return;
	lt_put_c(b, ',');
	lt_put_s(b, key);
	lt_put_s(b, "=\"");
	lt_prom_label_value(b, v);
	lt_put_c(b, '"');
}

/*
 * --by container: the runtime's names of each container that has a series of its own, as
 * an info series to join on `container` (names are not unique: the id stays the label of
 * the counters). At most --by-max series, each from the runtime's cache: no file is read
 * for a container already looked up.
 */
static void put_container_info(struct by_state *by, struct lt_buf *b)
{
	lt_prom_help(
		b, "lowtrace_container_info", "gauge",
		"1 for each container with a series of its own in "
		"lowtrace_workload_events_total: its name, image, pod name and namespace as its "
		"runtime gives them (join on container).");
	for (unsigned int i = 0; i < by->nlabels && i < by->max; i++) {
		const struct lt_rt_meta *m;

		if (!by->labels[i].name[0] ||
		    !(m = lt_ident_runtime(&by->ident, by->labels[i].name, by->now_ns)))
			continue;
		lt_put_s(b, "lowtrace_container_info{container=\"");
		lt_put_s(b, by->labels[i].name);
		lt_put_c(b, '"');
		put_info_label(b, "container_name", m->name);
		put_info_label(b, "image", m->image);
		put_info_label(b, "pod_name", m->pod_name);
		put_info_label(b, "pod_namespace", m->pod_ns);
		lt_put_s(b, "} 1\n");
	}
}

static int put_by(struct lt_metrics *s)
{
	static const char *const kinds[LT_CG_KINDS] = { "exec", "exit", "fork" };
	struct by_state *by = &s->by;
	struct lt_buf *b = s->body;
	const char *label = lt_by_names[by->kind];
	int err = lt_by_read(by, s->idn.tracked);

	if (err)
		return err < 0 ? err : 0; /* 1: a suite without lt_cg_counts */
	lt_prom_help(b, "lowtrace_workload_events_total", "counter",
		     "Exec, exit and fork events per workload (metrics --by: its systemd unit, "
		     "container id or pod uid; empty when the cgroup names none); past --by-max "
		     "values summed under other.");
	for (unsigned int i = 0; i <= by->max; i++) {
		const struct by_label *l = &by->labels[i];

		if (i >= by->nlabels && i < by->max)
			continue;
		if (i == by->max && !by->nfolded)
			break;
		for (int k = 0; k < LT_CG_KINDS; k++) {
			lt_put_s(b, "lowtrace_workload_events_total{probe=\"");
			lt_put_s(b, kinds[k]);
			lt_put_s(b, "\",");
			lt_put_s(b, label);
			lt_put_s(b, "=\"");
			lt_prom_label_value(b, l->name);
			lt_put_s(b, "\"} ");
			lt_put_u64(b, l->n[k]);
			lt_put_c(b, '\n');
		}
	}
	lt_prom_help(b, "lowtrace_workload_folded", "gauge",
		     "Workloads summed under other (past --by-max) since metrics started (the "
		     "first " STR(LT_CG_MAX) " told apart; later ones are not counted).");
	lt_put_s(b, "lowtrace_workload_folded{by=\"");
	lt_put_s(b, label);
	lt_put_s(b, "\"} ");
	lt_put_u64(b, by->nfolded);
	lt_put_c(b, '\n');
	lt_prom_help(
		b, "lowtrace_workload_untracked_total", "counter",
		"Exec, exit and fork events of cgroups lt_cg_counts had no room for (its cap: " STR(
			LT_CG_MAX) " cgroups), per probe.");
	for (size_t i = 0; i < lt_nprobes; i++) {
		uint16_t t = lt_probes[i].type;

		if (!s->have[i] || (t != LT_TYPE_EXEC && t != LT_TYPE_EXIT && t != LT_TYPE_FORK))
			continue;
		lt_put_s(b, "lowtrace_workload_untracked_total{probe=\"");
		lt_put_s(b, lt_probes[i].name);
		lt_put_s(b, "\"} ");
		lt_put_u64(b, s->counts[i].cg_full);
		lt_put_c(b, '\n');
	}
	if (by->kind == BY_CONTAINER)
		put_container_info(by, b);
	return 0;
}

static void put_cache(struct lt_buf *b, const char *metric, const char *cache, uint64_t v)
{
	lt_put_s(b, metric);
	lt_put_s(b, "{cache=\"");
	lt_put_s(b, cache);
	lt_put_s(b, "\"} ");
	lt_put_u64(b, v);
	lt_put_c(b, '\n');
}

/* This process's own caches against their caps: flat over time, or a leak shows (bench/soak) */
static void put_caches(struct lt_metrics *s)
{
	const struct by_state *by = &s->by;
	struct lt_buf *b = s->body;
	struct lt_ident_stats st;

	if (by->kind == BY_NONE && !s->blame_ids_open)
		return;
	for (int cap = 0; cap < 2; cap++) {
		const char *m = cap ? "lowtrace_cache_capacity" : "lowtrace_cache_entries";

		lt_prom_help(
			b, m, "gauge",
			cap ? "Entries a cache of this metrics process holds at most."
			    : "Entries in a cache of this metrics process (cgroup paths, workload "
			      "labels, cgroups counted per workload).");
		if (by->kind != BY_NONE) {
			lt_ident_stats(&by->ident, &st);
			put_cache(b, m, "by_ident", cap ? st.cap : st.entries);
			put_cache(b, m, "by_labels", cap ? by->max : by->nlabels);
			put_cache(b, m, "by_cgroups", cap ? by->cgs_mask + 1 : by->ncgs);
			put_cache(b, m, "by_folded", cap ? (by->folded_mask + 1) / 2 : by->nfolded);
			if (by->kind == BY_CONTAINER)
				put_cache(b, m, "by_runtime_names",
					  cap ? st.rt.cap : st.rt.entries);
		}
		if (s->blame_ids_open) {
			lt_ident_stats(&s->blame_ids, &st);
			put_cache(b, m, "blame_ident", cap ? st.cap : st.entries);
		}
	}
}

/* The kernel's names of cgroups (progs/cgroup.bpf.c): how full, and what came and went */
static void put_cgroup_names(struct lt_metrics *s)
{
	static const char *const ev[] = { "seeded", "born", "died",	    "renamed",
					  "freed",  "full", "freed_at_once" };
	struct lt_buf *b = s->body;
	struct lt_cg_stat cs;
	uint64_t n, cap, v[7];

	if (!s->idn.tracked || lt_identity_stat(&s->idn, &cs, &n, &cap))
		return;
	lt_prom_help(
		b, "lowtrace_cgroup_names", "gauge",
		"Cgroups of the identity hierarchy the kernel holds the path of (live, and dead "
		"within load --cgroup-grace).");
	lt_put_s(b, "lowtrace_cgroup_names ");
	lt_put_u64(b, n);
	lt_put_c(b, '\n');
	lt_prom_help(b, "lowtrace_cgroup_names_capacity", "gauge",
		     "Paths the kernel holds at most (load --cgroup-cap).");
	lt_put_s(b, "lowtrace_cgroup_names_capacity ");
	lt_put_u64(b, cap);
	lt_put_c(b, '\n');
	lt_prom_help(
		b, "lowtrace_cgroups_total", "counter",
		"Cgroups of the identity hierarchy: seeded by the load's walk, born, died, "
		"renamed; "
		"freed a grace after their death; full: born while the names were full (named by "
		"the consumers' walks instead); freed_at_once: the death queue was full.");
	v[0] = cs.seeded;
	v[1] = cs.born;
	v[2] = cs.died;
	v[3] = cs.renamed;
	v[4] = cs.reaped;
	v[5] = cs.full;
	v[6] = cs.queue_full;
	for (int i = 0; i < 7; i++) {
		lt_put_s(b, "lowtrace_cgroups_total{event=\"");
		lt_put_s(b, ev[i]);
		lt_put_s(b, "\"} ");
		lt_put_u64(b, v[i]);
		lt_put_c(b, '\n');
	}
}

/* kernel.bpf_stats_enabled: the programs' run_cnt and run_time_ns grow only while it is 1 */
static bool bpf_stats_on(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/* The programs' cost per probe, from bpf_prog_info: seconds (ns as a decimal) and runs. */
static void put_run_stats(struct lt_metrics *s)
{
	struct lt_buf *b = s->body;

	lt_prom_help(
		b, "lowtrace_probe_run_seconds_total", "counter",
		"Time the probe's BPF programs ran (kernel run_time_ns, summed over its programs); "
		"only while kernel.bpf_stats_enabled=1.");
	for (size_t i = 0; i < lt_nprobes; i++) {
		uint64_t ns = s->counts[i].run_time_ns;
		char frac[16];

		if (!s->have[i])
			continue;
		snprintf(frac, sizeof(frac), ".%09llu", (unsigned long long)(ns % 1000000000));
		lt_put_s(b, "lowtrace_probe_run_seconds_total{probe=\"");
		lt_put_s(b, lt_probes[i].name);
		lt_put_s(b, "\"} ");
		lt_put_u64(b, ns / 1000000000);
		lt_put_s(b, frac);
		lt_put_c(b, '\n');
	}
	put_counters(
		s, "lowtrace_probe_runs_total",
		"Times the probe's BPF programs ran (kernel run_cnt, summed over its programs); "
		"only while kernel.bpf_stats_enabled=1.",
		offsetof(struct lt_counts, run_cnt));
}

/* One gauge family of the map audit: a sample per map whose value the kernel can tell. */
enum map_value { MAP_ENTRIES, MAP_MAX, MAP_MEMLOCK };

static void put_map_gauge(struct lt_metrics *s, const char *metric, const char *help,
			  enum map_value what)
{
	struct lt_buf *b = s->body;

	lt_prom_help(b, metric, "gauge", help);
	for (size_t i = 0; i < lt_maps_count(s->maps); i++) {
		const struct lt_map_use *m = lt_maps_at(s->maps, i);
		int64_t v = what == MAP_MAX	  ? m->max_entries
			    : what == MAP_MEMLOCK ? m->memlock
						  : m->entries;

		if (v < 0)
			continue; /* local storage: no count, no cap */
		lt_put_s(b, metric);
		lt_put_s(b, "{probe=\"");
		lt_put_s(b, m->probe);
		lt_put_s(b, "\",map=\"");
		lt_put_s(b, m->name);
		lt_put_s(b, "\"} ");
		lt_put_u64(b, (uint64_t)v);
		lt_put_c(b, '\n');
	}
}

/* keys summed per name: a counter per name, the histogram per name or in all */
static int put_named(struct lt_metrics *s, struct lt_agg *a)
{
	const struct lt_prom *m = s->cur->prom;
	struct lt_buf *b = s->body;

	memset(s->by_name, 0, m->nnames * sizeof(*s->by_name));
	memset(&s->all, 0, sizeof(s->all));
	if (lt_agg_read(a, on_named, s))
		return -1;
	lt_prom_help(b, m->count, "counter", m->count_help);
	for (unsigned int i = 0; i < m->nnames; i++) {
		if (!s->by_name[i].count || !m->name(i))
			continue;
		lt_put_s(b, m->count);
		lt_put_c(b, '{');
		lt_put_s(b, m->label);
		lt_put_s(b, "=\"");
		lt_put_s(b, m->name(i));
		lt_put_s(b, "\"} ");
		lt_put_u64(b, s->by_name[i].count);
		lt_put_c(b, '\n');
	}
	/* counted, not timed (load --count-only): a histogram would contradict its count */
	if (!lt_hist_timed(&s->all))
		return 0;
	lt_prom_help(b, m->hist, "histogram", m->hist_help);
	if (!s->per_syscall_latency) {
		lt_prom_hist(b, m->hist, "", &s->all);
		return 0;
	}
	for (unsigned int i = 0; i < m->nnames; i++) {
		if (!s->by_name[i].count || !m->name(i))
			continue;
		snprintf(s->labels, sizeof(s->labels), "%s=\"%s\"", m->label, m->name(i));
		lt_prom_hist(b, m->hist, s->labels, &s->by_name[i]);
	}
	return 0;
}

static int by_drops(const void *a, const void *b)
{
	const struct lt_blame *x = a, *y = b;

	return x->drops < y->drops ? 1 : x->drops > y->drops ? -1 : 0;
}

static int by_throttled(const void *a, const void *b)
{
	const struct lt_blame *x = a, *y = b;

	return x->throttled < y->throttled ? 1 : x->throttled > y->throttled ? -1 : 0;
}

/*
 * One family of losses per probe and cgroup of the task the record was for
 * (s->blame: `n` entries): the BLAME_SERIES largest (probe, cgroup) pairs with
 * any, then the rest per probe under cgroup="other". The LRU map forgets pairs
 * that stopped losing, so a series can go; one that stays only grows.
 */
static void put_blame_family(struct lt_metrics *s, int n, const char *metric, const char *help,
			     bool throttled)
{
	struct lt_ident_cfg cfg = { .cap = 1024,
				    .pid_cap = 1,
				    .ctrl = s->idn.ctrl,
				    .kname = lt_identity_kname,
				    .kctx = &s->idn };
	struct lt_buf *b = s->body;
	uint64_t other[LT_PROBE_SLOTS] = {}, now = lt_now_ns(CLOCK_MONOTONIC);
	int shown = 0;

	lt_prom_help(b, metric, "counter", help);
	qsort(s->blame, n, sizeof(s->blame[0]), throttled ? by_throttled : by_drops);
	for (int i = 0; i < n; i++) {
		const struct lt_probe *p = lt_probe_by_id(s->blame[i].probe);
		uint64_t v = throttled ? s->blame[i].throttled : s->blame[i].drops;
		const struct lt_ident *id;

		if (!p || !v)
			continue;
		if (shown++ >= BLAME_SERIES) {
			other[s->blame[i].probe % LT_PROBE_SLOTS] += v;
			continue;
		}
		if (!s->blame_ids_open)
			s->blame_ids_open = !lt_ident_open(&s->blame_ids, &cfg);
		/* a cgroup made since the cache opened is found by a rescan (the clock paces them) */
		id = s->blame_ids_open ? lt_ident_get(&s->blame_ids, s->blame[i].cgroup_id, 0, now)
				       : NULL;
		lt_put_s(b, metric);
		lt_put_s(b, "{probe=\"");
		lt_put_s(b, p->name);
		lt_put_s(b, "\",cgroup=\"");
		if (id) {
			lt_prom_label_value(b, id->cgroup);
		} else {
			lt_put_s(b, "id:");
			lt_put_u64(b, s->blame[i].cgroup_id);
		}
		lt_put_s(b, "\"} ");
		lt_put_u64(b, v);
		lt_put_c(b, '\n');
	}
	for (unsigned int k = 0; k < LT_PROBE_SLOTS; k++) {
		const struct lt_probe *p = lt_probe_by_id(k);

		if (!other[k] || !p)
			continue;
		lt_put_s(b, metric);
		lt_put_s(b, "{probe=\"");
		lt_put_s(b, p->name);
		lt_put_s(b, "\",cgroup=\"other\"} ");
		lt_put_u64(b, other[k]);
		lt_put_c(b, '\n');
	}
}

/* Records lost per probe and cgroup: dropped (ring full), held back by a rate limit. */
static void put_blame(struct lt_metrics *s)
{
	int n = lt_blame_read(s->blame, LT_BLAME_MAX);

	if (n < 0)
		return; /* a suite without lt_drop_cg */
	put_blame_family(s, n, "lowtrace_drops_by_cgroup_total",
			 "Records the ring had no room for, per probe and cgroup path of the task "
			 "they were for (the " STR(BLAME_SERIES) " largest; the rest per probe in "
								 "cgroup=\"other\").",
			 false);
	put_blame_family(s, n, "lowtrace_throttled_by_cgroup_total",
			 "Events a rate limit (load --rate-limit) held back, per probe and cgroup "
			 "path of the task they were for (the " STR(
				 BLAME_SERIES) " largest; the "
					       "rest per probe in cgroup=\"other\").",
			 true);
}

/* the tcp sweep (the closes it finds count now), then every loaded probe's counters */
static void read_counts(struct lt_metrics *s)
{
	int err = lt_sweep_run(s->sw);

	if (err < 0 && !s->sweep_warned)
		lt_info("cannot sweep tcp (%s): closes the kernel ran no program for are not "
			"counted",
			strerror(-err));
	s->sweep_warned |= err < 0;
	for (size_t i = 0; i < lt_nprobes; i++)
		s->have[i] = s->loaded[lt_probes[i].id] &&
			     !lt_stats_read(&s->sr, &lt_probes[i], &s->counts[i]);
}

/* the counter families of every loaded probe, in their order in the answer */
static const struct {
	const char *metric, *help;
	size_t off; /* in struct lt_counts */
} probe_counters[] = {
	{ "lowtrace_events_total",
	  "Records written to the ring (record probes) or histogram updates (aggregate probes), "
	  "per probe.",
	  offsetof(struct lt_counts, events) },
	{ "lowtrace_drops_total",
	  "Records the kernel could not write (ring full, or no room for an event's state) or "
	  "updates it could not make (map full), per probe.",
	  offsetof(struct lt_counts, drops) },
	{ "lowtrace_shed_total",
	  "Records written short (exec's argv, open's path cut) because the ring was three "
	  "quarters full, per probe.",
	  offsetof(struct lt_counts, shed) },
	{ "lowtrace_throttled_total",
	  "Events a rate limit (load --rate-limit) held back, per probe.",
	  offsetof(struct lt_counts, throttled) },
	{ "lowtrace_missed_total",
	  "Events the kernel skipped the probe for (it was already running on that CPU) and no "
	  "fallback took over, per probe.",
	  offsetof(struct lt_counts, missed) },
	{ "lowtrace_unseen_total",
	  "Events the kernel ran no program for, found afterwards (tcp: connections whose close or "
	  "open no program saw, by the sweep), per probe. Their records are missing.",
	  offsetof(struct lt_counts, unseen) },
};

/* the names of a probe's ops: its record's "op" field, NULL when it has none */
static const struct lt_field *op_field(const struct lt_probe *p)
{
	for (const struct lt_field *f = p->fields; f && f->name; f++)
		if (f->kind == LT_F_ENUM && !strcmp(f->name, "op"))
			return f;
	return NULL;
}

/* file, cred, priv: their records per op, every op of a loaded one (0s too: series persist) */
static void put_op_counters(struct lt_metrics *s)
{
	struct lt_buf *b = s->body;
	bool head = false;

	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_field *f = op_field(&lt_probes[i]);

		if (!s->have[i] || !f)
			continue;
		if (!head)
			lt_prom_help(b, "lowtrace_ops_total", "counter",
				     "Records of the file, cred and priv probes, per probe and op.");
		head = true;
		for (uint32_t o = 0; o < f->nnames && o < LT_OP_SLOTS; o++) {
			if (!f->names[o])
				continue;
			lt_put_s(b, "lowtrace_ops_total{probe=\"");
			lt_put_s(b, lt_probes[i].name);
			lt_put_s(b, "\",op=\"");
			lt_put_s(b, f->names[o]);
			lt_put_s(b, "\"} ");
			lt_put_u64(b, s->counts[i].ops[o]);
			lt_put_c(b, '\n');
		}
	}
}

static void put_probe_counters(struct lt_metrics *s)
{
	for (size_t i = 0; i < sizeof(probe_counters) / sizeof(probe_counters[0]); i++)
		put_counters(s, probe_counters[i].metric, probe_counters[i].help,
			     probe_counters[i].off);
	put_op_counters(s);
}

/* the histograms of the loaded aggregate probes: 0, or -1 when a map cannot be read */
static int put_hists(struct lt_metrics *s)
{
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_prom *m = lt_probes[i].prom;

		if (!m || !s->agg[lt_probes[i].id])
			continue;
		s->cur = &lt_probes[i];
		if (m->nnames) {
			if (put_named(s, s->agg[lt_probes[i].id]))
				return -1;
			continue;
		}
		lt_prom_help(s->body, m->hist, "histogram", m->hist_help);
		if (lt_agg_read(s->agg[lt_probes[i].id], on_key, s))
			return -1;
	}
	return 0;
}

int lt_metrics_scrape(void *ctx, struct lt_buf *b)
{
	struct lt_metrics *s = ctx;

	s->body = b;
	if (!lt_metrics_ready(s))
		return 503;
	if (lt_metrics_room(s))
		return 500;
	read_counts(s);
	put_probe_counters(s);
	put_blame(s);
	if (bpf_stats_on())
		put_run_stats(s);
	if (lt_maps_read(s->maps, true))
		return 500;
	put_map_gauge(s, "lowtrace_map_entries",
		      "Entries in use in a probe's stateful map (hashes counted, arrays full; none "
		      "for task or socket local storage).",
		      MAP_ENTRIES);
	put_map_gauge(s, "lowtrace_map_max_entries",
		      "Entries a probe's stateful map holds at most; a full map's failed inserts "
		      "count as drops.",
		      MAP_MAX);
	if (s->by.kind != BY_NONE && put_by(s))
		return 500;
	put_map_gauge(s, "lowtrace_map_memory_bytes",
		      "Kernel memory of a probe's stateful map (memlock in its fdinfo).",
		      MAP_MEMLOCK);
	put_caches(s);
	put_cgroup_names(s);
	return put_hists(s) ? 500 : 200;
}
