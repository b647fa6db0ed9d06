// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowtrace metrics: a small single-threaded HTTP server that answers
 * GET /metrics with the suite's counters and histograms, read at each scrape
 * from the pinned maps with readers opened once (no allocation per scrape).
 *
 * The event loop: one poll over the listening socket and up to CONN_MAX
 * non-blocking connections, each with its own request buffer, parser state,
 * unsent tail and deadline (the headers within REQ_MS of the accept, else 408;
 * the answer within SEND_MS; then a short bounded drain). When all slots are
 * taken, the oldest connection still sending its request makes room. So no
 * client, slow or idle or many, holds up another: each costs one slot and at
 * most its deadlines. Nothing is allocated after the start.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "histfmt.h"
#include "ident.h"
#include "kernel.h"
#include "lowtrace.h"
#include "cmds.h"
#include "opts.h"
#include "prom.h"
#include "records.h"

#define REQ_MAX 8192 /* request line and headers */
#define BODY_BASE (1u << 20) /* counters, gauges, headers: far less */
#define HIST_MAX 8192 /* one histogram's series, labels included (lt_prom_hist) */
#define BODIES 2 /* scrape buffers: one can serve a slow reader while the other serves the rest */
#define CONN_MAX 256 /* open connections */
#define BACKLOG 1024 /* the kernel caps it at net.core.somaxconn */
#define REQ_MS 2000 /* from accept to the end of the headers */
#define SEND_MS 10000 /* from the first byte of the answer to the last */
#define DRAIN_MS 500 /* after the answer, what the client still sends is read and dropped */
#define DRAIN_MAX (64u << 10)
#define ACCEPT_BATCH 64 /* accepts per pass: the open connections get their turn too */

enum conn_state {
	C_FREE,
	C_READ, /* reading the request */
	C_WAIT, /* asked for a scrape: answered at the end of this pass */
	C_SEND, /* the answer, as the socket takes it */
	C_DRAIN, /* answered and shut down for writing: reading until EOF, briefly */
};

struct conn {
	int fd;
	enum conn_state state;
	int body; /* the bodies[] slot this answer sends from, or -1 */
	uint64_t seq; /* accept order: the oldest incomplete request is closed first */
	uint64_t deadline; /* ms: of the state */
	size_t n; /* request bytes read (C_DRAIN: bytes dropped) */
	size_t own_off, own_len; /* own[] sent, to send */
	size_t body_off, body_len; /* of the shared body, sent and to send */
	struct lt_http http;
	char own[224]; /* status line and headers, and the whole answer if not a scrape */
	char req[REQ_MAX];
};

/*
 * Scrape bodies: a scrape is written once per loop pass for every connection
 * whose request completed before it, into a slot no connection is sending
 * from, and each of them sends from it at its own pace (an offset of its own).
 * A slot is written again only when its last reader is done, so a slow reader
 * never sees its bytes change and never holds up a new scrape while another
 * slot is free. When every slot has readers, the readers of the oldest are
 * closed: they are the slowest, and their send deadline was coming anyway.
 */
struct body {
	struct lt_buf b;
	unsigned int users; /* connections sending from it */
	uint64_t gen; /* scrape number */
};

enum by_kind { BY_NONE, BY_UNIT, BY_CONTAINER, BY_POD };
static const char *const by_names[] = { "", "unit", "container", "pod" };

struct metrics_opts {
	const char *listen; /* HOST:PORT or [V6]:PORT */
	bool per_syscall_latency;
	enum by_kind by;
	unsigned int by_max;
};

/*
 * --by: the lifecycle counts of lt_cg_counts summed per workload (unit, container or pod of
 * each cgroup). Each cgroup gets its label at its first scrape and keeps it, and a label's
 * counter grows by what its cgroups' counts grew since the last scrape: so a counter never
 * goes down, not when a cgroup goes away and no longer resolves, nor when its kernel entry is
 * deleted. A value keeps its series from its first scrape on; past by_max values, the rest
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
	uint32_t seen; /* the scrape that last found it in the kernel map */
	uint64_t first_ns; /* the scrape that found it first: a whole rescan after it knows */
	uint64_t last[LT_CG_KINDS]; /* the kernel's counts then */
};

#define BY_REFRESH_NS 10000000000ull /* a rescan of the cgroup tree at least this often */

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
	uint32_t scrape;
	uint64_t now_ns, refresh_ns;
};

struct server {
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
	struct body bodies[BODIES];
	uint64_t gen; /* scrapes so far */
	unsigned int nconn; /* connections open */
	uint64_t accepted; /* connections so far */
	struct conn conn[CONN_MAX];
	struct pollfd pfd[CONN_MAX + 1];
	unsigned short pconn[CONN_MAX + 1]; /* the conn[] of each pfd[] (0 is the listener) */
	char labels[96];
	const struct lt_probe *cur; /* the aggregate being written */
	struct by_state by;
	struct lt_blame blame[LT_BLAME_MAX]; /* lt_drop_cg: losses per (probe, cgroup) */
	struct lt_ident_cache blame_ids; /* their paths; opened at the first drop */
	struct lt_identity idn; /* the suite's identity hierarchy and kernel names */
	bool blame_ids_open;
};

/* lowtrace_drops_by_cgroup_total: the first BLAME_SERIES (probe, cgroup), the rest in "other" */
#define BLAME_SERIES 50
#define BLAME_LINE 1200 /* one series: a cut path of 256 bytes, every byte escaped, and labels */

/* keys summed per name (s->cur->prom->nnames) */
static void on_named(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct server *s = ctx;
	unsigned int i = s->cur->prom->key_name(key);

	if (i < s->cur->prom->nnames)
		lt_hist_merge(&s->by_name[i], sum);
	lt_hist_merge(&s->all, sum);
}

/* one series per key */
static void on_key(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct server *s = ctx;
	const struct lt_prom *m = s->cur->prom;

	s->labels[0] = 0;
	if (m->labels)
		m->labels(s->labels, sizeof(s->labels), key);
	lt_prom_hist(s->body, m->hist, s->labels, sum);
}

static void help_type(struct lt_buf *b, const char *name, const char *type, const char *help)
{
	lt_put_s(b, "# HELP ");
	lt_put_s(b, name);
	lt_put_c(b, ' ');
	lt_put_s(b, help);
	lt_put_s(b, "\n# TYPE ");
	lt_put_s(b, name);
	lt_put_c(b, ' ');
	lt_put_s(b, type);
	lt_put_c(b, '\n');
}

/* One counter family: a sample per loaded probe, from its lt_counts at `off`. */
static void put_counters(struct server *s, const char *metric, const char *help, size_t off)
{
	struct lt_buf *b = s->body;

	help_type(b, metric, "counter", help);
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

static uint64_t str_hash(const char *p)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h | 1; /* 0 marks a free slot */
}

static int by_init(struct by_state *b, enum by_kind kind, unsigned int max)
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

static void by_free(struct by_state *b)
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
	c->seen = b->scrape;
}

/*
 * After a scrape: ids no longer in the map leave the table. The kernel frees a cgroup's
 * entry a grace after its death (progs/cgroup.bpf.c); a suite of a lowtrace before that
 * (`tracked` false) has them deleted here once the resolver saw them go away.
 */
static void by_sweep(struct by_state *b, bool tracked)
{
	for (uint32_t i = 0; i <= b->cgs_mask; i++) {
		struct by_cg *c = &b->cgs[i];

		while (c->id && (c->seen != b->scrape ||
				 (!tracked && lt_ident_gone(&b->ident, c->id, c->first_ns)))) {
			if (c->seen == b->scrape)
				lt_cg_delete(b->cg, c->id);
			cg_del(b, c); /* another entry may move into slot i: look again */
		}
	}
}

/* a label value: backslash, double quote and newline escaped */
static void put_label_value(struct lt_buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			lt_put_c(b, '\\');
		if (*v == '\n') {
			lt_put_s(b, "\\n");
			continue;
		}
		lt_put_c(b, *v);
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
	put_label_value(b, v);
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
	help_type(b, "lowtrace_container_info", "gauge",
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

static int put_by(struct server *s)
{
	static const char *const kinds[LT_CG_KINDS] = { "exec", "exit", "fork" };
	struct by_state *by = &s->by;
	struct lt_buf *b = s->body;
	const char *label = by_names[by->kind];
	int err;

	by->now_ns = lt_now_ns(CLOCK_MONOTONIC);
	if (!by->cg)
		return 0; /* a suite without lt_cg_counts */
	if (by->now_ns >= by->refresh_ns + BY_REFRESH_NS) {
		lt_ident_refresh(&by->ident, by->now_ns);
		by->refresh_ns = by->now_ns;
	}
	by->scrape++;
	err = lt_cg_read(by->cg, on_cg, by);
	if (err)
		return err;
	by_sweep(by, s->idn.tracked);
	help_type(b, "lowtrace_workload_events_total", "counter",
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
			put_label_value(b, l->name);
			lt_put_s(b, "\"} ");
			lt_put_u64(b, l->n[k]);
			lt_put_c(b, '\n');
		}
	}
	help_type(b, "lowtrace_workload_folded", "gauge",
		  "Workloads summed under other (past --by-max) since metrics started (the "
		  "first " STR(LT_CG_MAX) " told apart; later ones are not counted).");
	lt_put_s(b, "lowtrace_workload_folded{by=\"");
	lt_put_s(b, label);
	lt_put_s(b, "\"} ");
	lt_put_u64(b, by->nfolded);
	lt_put_c(b, '\n');
	help_type(
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
static void put_caches(struct server *s)
{
	const struct by_state *by = &s->by;
	struct lt_buf *b = s->body;
	struct lt_ident_stats st;

	if (by->kind == BY_NONE && !s->blame_ids_open)
		return;
	for (int cap = 0; cap < 2; cap++) {
		const char *m = cap ? "lowtrace_cache_capacity" : "lowtrace_cache_entries";

		help_type(
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
				put_cache(b, m, "by_runtime_names", cap ? st.rt.cap : st.rt.entries);
		}
		if (s->blame_ids_open) {
			lt_ident_stats(&s->blame_ids, &st);
			put_cache(b, m, "blame_ident", cap ? st.cap : st.entries);
		}
	}
}

/* The kernel's names of cgroups (progs/cgroup.bpf.c): how full, and what came and went */
static void put_cgroup_names(struct server *s)
{
	static const char *const ev[] = { "seeded", "born", "died",	    "renamed",
					  "freed",  "full", "freed_at_once" };
	struct lt_buf *b = s->body;
	struct lt_cg_stat cs;
	uint64_t n, cap, v[7];

	if (!s->idn.tracked || lt_identity_stat(&s->idn, &cs, &n, &cap))
		return;
	help_type(b, "lowtrace_cgroup_names", "gauge",
		  "Cgroups of the identity hierarchy the kernel holds the path of (live, and dead "
		  "within load --cgroup-grace).");
	lt_put_s(b, "lowtrace_cgroup_names ");
	lt_put_u64(b, n);
	lt_put_c(b, '\n');
	help_type(b, "lowtrace_cgroup_names_capacity", "gauge",
		  "Paths the kernel holds at most (load --cgroup-cap).");
	lt_put_s(b, "lowtrace_cgroup_names_capacity ");
	lt_put_u64(b, cap);
	lt_put_c(b, '\n');
	help_type(b, "lowtrace_cgroups_total", "counter",
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
static void put_run_stats(struct server *s)
{
	struct lt_buf *b = s->body;

	help_type(
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

static void put_map_gauge(struct server *s, const char *metric, const char *help,
			  enum map_value what)
{
	struct lt_buf *b = s->body;

	help_type(b, metric, "gauge", help);
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
static int put_named(struct server *s, struct lt_agg *a)
{
	const struct lt_prom *m = s->cur->prom;
	struct lt_buf *b = s->body;

	memset(s->by_name, 0, m->nnames * sizeof(*s->by_name));
	memset(&s->all, 0, sizeof(s->all));
	if (lt_agg_read(a, on_named, s))
		return -1;
	help_type(b, m->count, "counter", m->count_help);
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
	help_type(b, m->hist, "histogram", m->hist_help);
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

static void suite_close(struct server *s)
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

/* Readers of the pinned suite: counters, and the aggregates of the probes it has loaded. */
static int suite_open(struct server *s)
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
	/* room for every histogram the maps can hold: no series is ever left out */
	s->need = BODY_BASE + (BLAME_SERIES + LT_PROBE_SLOTS) * BLAME_LINE;
	if (s->by.kind != BY_NONE) /* a label is at most 128 bytes, escaped 256 */
		s->need += ((size_t)s->by.max + 1) * LT_CG_KINDS * 384;
	if (s->by.kind == BY_CONTAINER) /* its info series: the runtime's names, escaped */
		s->need += (size_t)s->by.max * 2 *
			   (LT_RT_NAME_MAX + LT_RT_IMAGE_MAX + LT_RT_POD_MAX + LT_RT_NS_MAX + 256);
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe *p = &lt_probes[i];

		if (p->prom && s->agg[p->id])
			s->need += (size_t)HIST_MAX * (p->prom->nnames
							       ? p->prom->nnames + 1
							       : lt_agg_max_entries(s->agg[p->id]));
	}
	return LT_OK;
}

/* The scrape's buffer holds the largest answer: grown (rarely: a suite with bigger maps) while
 * no reader uses it. */
static int body_room(struct server *s)
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
static bool suite_ready(struct server *s)
{
	struct stat st;

	if (s->h.dir_fd >= 0 && !lt_pinned_gone(&s->h))
		return true;
	if (s->h.dir_fd >= 0)
		suite_close(s);
	return stat(LT_PIN_DIR, &st) == 0 && suite_open(s) == LT_OK;
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
static void put_blame_family(struct server *s, int n, const char *metric, const char *help,
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

	help_type(b, metric, "counter", help);
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
			put_label_value(b, id->cgroup);
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
static void put_blame(struct server *s)
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

/* the whole exposition into s->body; an error status when the suite is gone */
static int scrape(struct server *s)
{
	struct lt_buf *b = s->body;
	int err;

	b->len = 0;
	if (!suite_ready(s))
		return 503;
	if (body_room(s))
		return 500;
	err = lt_sweep_run(s->sw);
	if (err < 0 && !s->sweep_warned)
		lt_info("cannot sweep tcp (%s): closes the kernel ran no program for are not "
			"counted",
			strerror(-err));
	s->sweep_warned |= err < 0;
	for (size_t i = 0; i < lt_nprobes; i++)
		s->have[i] = s->loaded[lt_probes[i].id] &&
			     !lt_stats_read(&s->sr, &lt_probes[i], &s->counts[i]);
	put_counters(s, "lowtrace_events_total",
		     "Records written to the ring (record probes) or histogram updates (aggregate "
		     "probes), per probe.",
		     offsetof(struct lt_counts, events));
	put_counters(s, "lowtrace_drops_total",
		     "Records the kernel could not write (ring full, or no room for an event's "
		     "state) or updates it could not make (map full), per probe.",
		     offsetof(struct lt_counts, drops));
	put_counters(s, "lowtrace_shed_total",
		     "Records written short (exec's argv, open's path cut) because the ring was "
		     "three quarters full, per probe.",
		     offsetof(struct lt_counts, shed));
	put_counters(s, "lowtrace_throttled_total",
		     "Events a rate limit (load --rate-limit) held back, per probe.",
		     offsetof(struct lt_counts, throttled));
	put_counters(s, "lowtrace_missed_total",
		     "Events the kernel skipped the probe for (it was already running on that CPU) "
		     "and no fallback took over, per probe.",
		     offsetof(struct lt_counts, missed));
	put_counters(s, "lowtrace_unseen_total",
		     "Events the kernel ran no program for, found afterwards (tcp: connections "
		     "whose close no program saw, by the sweep), per probe. Their records are "
		     "missing.",
		     offsetof(struct lt_counts, unseen));
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
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_prom *m = lt_probes[i].prom;

		if (!m || !s->agg[lt_probes[i].id])
			continue;
		s->cur = &lt_probes[i];
		if (m->nnames) {
			if (put_named(s, s->agg[lt_probes[i].id]))
				return 500;
			continue;
		}
		help_type(b, m->hist, "histogram", m->hist_help);
		if (lt_agg_read(s->agg[lt_probes[i].id], on_key, s))
			return 500;
	}
	return 200;
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	default:
		return "Internal Server Error";
	}
}

static void conn_close(struct server *s, struct conn *c)
{
	if (c->body >= 0)
		s->bodies[c->body].users--;
	close(c->fd);
	c->state = C_FREE;
	c->body = -1;
	s->nconn--;
}

/* the status line and headers into own[]; for an error, its short text too */
static void answer_head(struct conn *c, int status, size_t blen)
{
	int len;

	if (status != 200)
		blen = strlen(reason(status)) + 5; /* "404 " ... "\n" */
	len = snprintf(c->own, sizeof(c->own),
		       "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		       "Connection: close\r\n\r\n",
		       status, reason(status),
		       status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain",
		       blen);
	if (status != 200 && !c->http.head)
		len += snprintf(c->own + len, sizeof(c->own) - len, "%d %s\n", status,
				reason(status));
	c->own_off = 0;
	c->own_len = len;
	c->body_off = c->body_len = 0;
}

/*
 * Send what the socket takes; when all is sent, shut down for writing and
 * drain: closing with unread bytes would reset the connection, and the
 * client could lose the answer.
 */
static void conn_send(struct server *s, struct conn *c, uint64_t now)
{
	while (c->own_off < c->own_len || c->body_off < c->body_len) {
		struct iovec iov[2];
		struct msghdr mh = { .msg_iov = iov };
		ssize_t w;

		if (c->own_off < c->own_len)
			iov[mh.msg_iovlen++] =
				(struct iovec){ c->own + c->own_off, c->own_len - c->own_off };
		if (c->body_off < c->body_len)
			iov[mh.msg_iovlen++] = (struct iovec){ s->bodies[c->body].b.p + c->body_off,
							       c->body_len - c->body_off };
		w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w < 0) {
			conn_close(s, c);
			return;
		}
		if ((size_t)w <= c->own_len - c->own_off) {
			c->own_off += w;
		} else {
			c->body_off += w - (c->own_len - c->own_off);
			c->own_off = c->own_len;
		}
	}
	if (c->body >= 0)
		s->bodies[c->body].users--;
	c->body = -1;
	shutdown(c->fd, SHUT_WR);
	c->state = C_DRAIN;
	c->deadline = now + DRAIN_MS;
	c->n = 0;
}

/* an answer that needs no scrape */
static void conn_answer(struct server *s, struct conn *c, int status, uint64_t now)
{
	answer_head(c, status, 0);
	c->state = C_SEND;
	c->deadline = now + SEND_MS;
	conn_send(s, c, now);
}

static void conn_read(struct server *s, struct conn *c, uint64_t now)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->req + c->n, sizeof(c->req) - c->n, MSG_DONTWAIT);
		int status;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r < 0) {
			conn_close(s, c);
			return;
		}
		if (r == 0) { /* the client stopped sending before the end of the headers */
			conn_answer(s, c, 400, now);
			return;
		}
		c->n += r;
		status = lt_http_parse(&c->http, c->req, c->n, sizeof(c->req));
		if (status == 200) {
			c->state = C_WAIT;
			return;
		}
		if (status) {
			conn_answer(s, c, status, now);
			return;
		}
	}
}

/* read and drop what the client still sends, up to DRAIN_MAX bytes, until it closes */
static void conn_drain(struct server *s, struct conn *c)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->req, sizeof(c->req), MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		c->n += r > 0 ? r : 0;
		if (r <= 0 || c->n >= DRAIN_MAX) {
			conn_close(s, c);
			return;
		}
	}
}

/*
 * A free slot for a new connection: when all are taken, close the connection
 * that has waited longest for its request to complete, else the one that has
 * drained longest; none when all are answering (the new one waits in the
 * backlog).
 */
static struct conn *conn_slot(struct server *s)
{
	struct conn *victim = NULL;

	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state == C_FREE)
			return c;
		if ((c->state == C_READ || c->state == C_DRAIN) &&
		    (!victim || (c->state == C_READ && victim->state == C_DRAIN) ||
		     (c->state == victim->state && c->seq < victim->seq)))
			victim = c;
	}
	if (victim)
		conn_close(s, victim);
	return victim;
}

static bool slot_evictable(struct server *s)
{
	if (s->nconn < CONN_MAX)
		return true;
	for (int i = 0; i < CONN_MAX; i++)
		if (s->conn[i].state == C_READ || s->conn[i].state == C_DRAIN)
			return true;
	return false;
}

static void accept_some(struct server *s, int lfd, uint64_t now)
{
	for (int k = 0; k < ACCEPT_BATCH && slot_evictable(s); k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct conn *c;

		if (fd < 0)
			return; /* EAGAIN, or an error of that one connection (or EMFILE: next pass) */
		c = conn_slot(s);
		if (!c) { /* not after slot_evictable */
			close(fd);
			return;
		}
		memset(&c->http, 0, sizeof(c->http));
		c->fd = fd;
		c->state = C_READ;
		c->body = -1;
		c->n = 0;
		c->seq = ++s->accepted;
		c->deadline = now + REQ_MS;
		s->nconn++;
	}
}

/* one scrape for every connection waiting for one (see struct body) */
static void answer_waiting(struct server *s, uint64_t now)
{
	struct body *bd = NULL;
	int status, slot;

	for (int i = 0; i < BODIES; i++)
		if (!s->bodies[i].users && (!bd || s->bodies[i].gen < bd->gen))
			bd = &s->bodies[i];
	if (!bd) {
		bd = &s->bodies[0];
		for (int i = 1; i < BODIES; i++)
			if (s->bodies[i].gen < bd->gen)
				bd = &s->bodies[i];
		for (int i = 0; i < CONN_MAX; i++)
			if (s->conn[i].state == C_SEND && s->conn[i].body == bd - s->bodies)
				conn_close(s, &s->conn[i]);
	}
	slot = bd - s->bodies;
	s->body = &bd->b;
	status = scrape(s);
	bd->gen = ++s->gen;
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state != C_WAIT)
			continue;
		answer_head(c, status, bd->b.len);
		if (status == 200 && !c->http.head) {
			c->body = slot;
			c->body_len = bd->b.len;
			bd->users++;
		}
		c->state = C_SEND;
		c->deadline = now + SEND_MS;
		conn_send(s, c, now);
	}
}

/* one pass of the event loop: wait for the sockets or the nearest deadline, serve them */
static void serve_pass(struct server *s, int lfd)
{
	uint64_t now = lt_now_ms(), next = now + 500;
	nfds_t np = 0;
	bool waiting = false;
	int r;

	if (slot_evictable(s)) {
		s->pfd[np] = (struct pollfd){ lfd, POLLIN, 0 };
		s->pconn[np++] = 0;
	}
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state == C_FREE)
			continue;
		if (c->deadline < next)
			next = c->deadline;
		s->pfd[np] = (struct pollfd){ c->fd, c->state == C_SEND ? POLLOUT : POLLIN, 0 };
		s->pconn[np++] = i;
	}
	r = poll(s->pfd, np, next > now ? (int)(next - now) : 0);
	if (r < 0)
		return; /* EINTR: a stop signal, seen by the caller */
	now = lt_now_ms();
	for (nfds_t k = 0; k < np; k++) {
		struct conn *c = &s->conn[s->pconn[k]];

		if (!s->pfd[k].revents || s->pfd[k].fd == lfd)
			continue;
		if (c->state == C_READ)
			conn_read(s, c, now);
		else if (c->state == C_SEND)
			conn_send(s, c, now);
		else if (c->state == C_DRAIN)
			conn_drain(s, c);
	}
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state == C_FREE || c->state == C_WAIT || c->deadline > now)
			continue;
		if (c->state == C_READ)
			conn_answer(s, c, 408, now);
		else /* too slow to take its answer, or to close after it */
			conn_close(s, c);
	}
	if (np && s->pfd[0].fd == lfd && s->pfd[0].revents)
		accept_some(s, lfd, now);
	for (int i = 0; i < CONN_MAX && !waiting; i++)
		waiting = s->conn[i].state == C_WAIT;
	if (waiting)
		answer_waiting(s, now);
}

static int serve(const struct metrics_opts *o)
{
	static struct server s;
	struct sockaddr_storage ss;
	socklen_t sl;
	int lfd, one = 1, err;

	if (lt_parse_listen(o->listen, &ss, &sl))
		return lt_error(LT_USAGE,
				"--listen %s: want HOST:PORT or [V6]:PORT with a numeric "
				"address",
				o->listen);
	s.per_syscall_latency = o->per_syscall_latency;
	s.idn.names_fd = -1;
	err = by_init(&s.by, o->by, o->by_max);
	if (err) {
		by_free(&s.by);
		return err;
	}
	err = suite_open(&s);
	if (err)
		return err;
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].prom && lt_probes[i].prom->nnames > s.nnames)
			s.nnames = lt_probes[i].prom->nnames;
	s.by_name = calloc(s.nnames ? s.nnames : 1, sizeof(*s.by_name));
	for (int i = 0; i < BODIES; i++) {
		/* malloc maps it: pages a scrape does not reach are never touched */
		s.bodies[i].b.p = malloc(s.need);
		s.bodies[i].b.cap = s.need;
		if (!err && !s.bodies[i].b.p)
			err = lt_error(LT_FAIL, "out of memory");
	}
	if (!err && !s.by_name)
		err = lt_error(LT_FAIL, "out of memory");
	lfd = -1;
	if (!err) {
		lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lfd, (struct sockaddr *)&ss, sl) || listen(lfd, BACKLOG))
			err = lt_error(LT_FAIL, "--listen %s: %s", o->listen, strerror(errno));
	}
	if (!err) {
		lt_catch_stop();
		signal(SIGPIPE, SIG_IGN); /* a client that hangs up is its own problem */
		printf("serving http://%s/metrics\n", o->listen);
		fflush(stdout);
	}
	while (!err && !lt_stop)
		serve_pass(&s, lfd);
	for (int i = 0; i < CONN_MAX; i++)
		if (s.conn[i].state != C_FREE)
			conn_close(&s, &s.conn[i]);
	if (lfd >= 0)
		close(lfd);
	suite_close(&s);
	by_free(&s.by);
	if (s.blame_ids_open)
		lt_ident_close(&s.blame_ids);
	free(s.by_name);
	for (int i = 0; i < BODIES; i++)
		free(s.bodies[i].b.p);
	return err;
}

/* ---- the command ---- */

static void help_metrics(void)
{
	printf("NAME\n    lowtrace metrics - serve Prometheus metrics of the pinned suite\n\n"
	       "SYNOPSIS\n    lowtrace metrics [--listen HOST:PORT] [--per-syscall-latency]"
	       " [--config FILE]\n\n"
	       "DESCRIPTION\n"
	       "    Answers HTTP GET (and HEAD) /metrics with the text exposition format 0.0.4,\n"
	       "    read from the pinned maps at each scrape: lowtrace_events_total{probe},\n"
	       "    lowtrace_drops_total{probe}, lowtrace_missed_total{probe} (events the\n"
	       "    kernel skipped the probe for), lowtrace_unseen_total{probe} (events it ran\n"
	       "    no program for: tcp closes the sweep found),\n"
	       "    lowtrace_drops_by_cgroup_total{probe,cgroup} (ring drops per cgroup path\n"
	       "    of the writing task: the 50 largest, the rest of a probe's in\n"
	       "    cgroup=\"other\"), lowtrace_throttled_total{probe}\n"
	       "    and lowtrace_throttled_by_cgroup_total{probe,cgroup} (events a rate limit\n"
	       "    held back, the same way), lowtrace_shed_total{probe} (records written\n"
	       "    short, the ring three quarters full), lowtrace_map_entries{probe,map} and\n"
	       "    lowtrace_map_max_entries{probe,map} (gauges: how full each loaded probe's\n"
	       "    stateful maps are; no sample where the kernel cannot tell, as for task and\n"
	       "    socket local storage), lowtrace_map_memory_bytes{probe,map} (their kernel\n"
	       "    memory), lowtrace_probe_run_seconds_total{probe} and\n"
	       "    lowtrace_probe_runs_total{probe} (the probes' BPF programs' run time and\n"
	       "    runs; only while kernel.bpf_stats_enabled=1, absent otherwise), and for\n"
	       "    the aggregate probes that are loaded\n"
	       "    lowtrace_syscalls_total{name}, lowtrace_syscall_latency_seconds,\n"
	       "    lowtrace_runq_latency_seconds, lowtrace_bio_latency_seconds{device,op}\n"
	       "    (histograms: cumulative _bucket{le}, _sum, _count). Other paths get 404,\n"
	       "    other methods 405, junk, malformed requests and an empty path 400, a\n"
	       "    request line over 8 KiB 414, headers over 8 KiB 431, headers not complete\n"
	       "    2 s after the connect 408; after each answer the server shuts down its\n"
	       "    side and reads what the client still sends, briefly, before closing.\n"
	       "    Serves up to 256 connections at once, each with its own deadlines (2 s\n"
	       "    for the request, 10 s for the answer); when all are taken, the oldest\n"
	       "    one still sending its request is closed to make room. Runs until Ctrl-C\n"
	       "    or SIGTERM; answers 503 while no suite is loaded, and serves the next\n"
	       "    suite once one is (load --replace keeps it serving).\n\n"
	       "OPTIONS\n"
	       "    --listen HOST:PORT   numeric address to bind (default 127.0.0.1:9464, "
	       "loopback\n"
	       "                         only); [::1]:9464 for IPv6, 0.0.0.0:9464 for all\n"
	       "    --per-syscall-latency  one latency histogram per syscall (label name)\n"
	       "    --by unit|container|pod  lowtrace_workload_events_total{probe,BY}: exec,\n"
	       "                         exit and fork per systemd unit, container id or pod\n"
	       "                         uid of the task's cgroup (\"\" when it names none),\n"
	       "                         counted per cgroup in the kernel (lt_cg_counts, %u\n"
	       "                         cgroups; beyond: lowtrace_workload_untracked_total)\n"
	       "    --by-max N           values of BY with series of their own (default 100);\n"
	       "                         a value keeps its series once it has one, later ones\n"
	       "                         are summed under BY=\"other\", counted by the gauge\n"
	       "                         lowtrace_workload_folded{by}; with --by, the gauges\n"
	       "                         lowtrace_cache_entries{cache} and\n"
	       "                         lowtrace_cache_capacity{cache}: this process's caches\n"
	       "%s\n"
	       "EXIT STATUS\n    0 stopped by a signal; 2 usage; 3 not loaded; 1 failure (e.g. "
	       "the\n"
	       "    address is in use).\n",
	       LT_CG_MAX, lt_config_help);
}

static int metrics_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct metrics_opts *o = ctx;

	switch (key) {
	case LT_O_LISTEN:
		o->listen = arg;
		return LT_OK;
	case LT_O_PER_SYS_LAT:
		o->per_syscall_latency = true;
		return LT_OK;
	case LT_O_BY_MAX:
		o->by_max = num;
		return LT_OK;
	}
	for (int k = BY_UNIT; k <= BY_POD; k++)
		if (!strcmp(arg, by_names[k])) {
			o->by = k;
			return LT_OK;
		}
	return lt_error(LT_USAGE, "--by: '%s' is not unit, container or pod", arg);
}

int cmd_metrics(int argc, char **argv)
{
	struct metrics_opts o = { .listen = "127.0.0.1:9464", .by_max = 100 };
	int err = lt_opts_parse(argc, argv, lt_metrics_keys, help_metrics, metrics_opt, &o);

	if (err)
		return err;
	return serve(&o);
}
