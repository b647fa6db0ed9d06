// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The suite's lifecycle: load, unload, status. */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "kernel_cgroup.h"
#include "kernel_pin.h"
#include "kernel_stats.h"
#include "kernel_status.h"
#include "kernel_suite.h"
#include "lowtrace.h"
#include "opts.h"
#include "records.h"
#include "table.h"

static void help_load(void)
{
	printf("NAME\n    lowtrace load - load, attach and pin the probe suite\n\n"
	       "SYNOPSIS\n    lowtrace load [--probes LIST] [--pid PID] [--cgroup PATH]"
	       " [--ringbuf-size BYTES]\n                  [--per-pid] [--count-only] [--replace]"
	       " [--state MODE] [--max-threads N]\n"
	       "                  [--max-conns N] [--pin-group GROUP] [--config FILE]\n\n"
	       "DESCRIPTION\n"
	       "    Opens and loads the whole suite as one BPF object (one kernel BTF parse),\n"
	       "    attaches the chosen probes and pins links and maps under\n"
	       "    " LT_PIN_DIR " (directory mode 0700, pins 0600), so they outlive this\n"
	       "    command. Mounts bpffs at " LT_PIN_ROOT " if it is not mounted.\n"
	       "    With --pin-group the pins are for that group's readers too (below).\n"
	       "    Records outside --pid/--cgroup are never written to the ring.\n\n"
	       "OPTIONS\n%s"
	       "    --per-pid            syscalls: one histogram per syscall and process (needs\n"
	       "                         syscalls in --probes)\n"
	       "    --count-only         syscalls: counts without latency, one program on\n"
	       "                         sys_exit instead of two (needs syscalls in --probes)\n"
	       "    --replace            load the new suite, then swap it for the pinned one\n"
	       "                         (both run for a moment: no event goes unseen)\n"
	       "    --pin-group GROUP    let GROUP's members read the suite without root (the\n"
	       "                         units' lowtrace user, with CAP_BPF alone): the pin\n"
	       "                         directories root:GROUP 0750, the read-only maps 0640,\n"
	       "                         the ring, the maps readers write, links and programs\n"
	       "                         (also pinned then, for their run statistics) 0660;\n"
	       "                         " LT_PIN_ROOT " made searchable by GROUP (0710, when\n"
	       "                         it is root's 0700). Never world-readable\n%s\n",
	       lt_load_opts_help, lt_config_help);
	lt_print_probes(stdout);
	printf("\nEXIT STATUS\n    0 loaded; 2 usage; 4 already loaded; 5 no privileges, BTF or "
	       "bpffs;"
	       " 1 other failure.\n    A failed load leaves nothing loaded or pinned.\n");
}

static void help_unload(void)
{
	printf("NAME\n    lowtrace unload - remove the pinned suite\n\n"
	       "SYNOPSIS\n    lowtrace unload\n\n"
	       "DESCRIPTION\n"
	       "    Removes every link and map pin under " LT_PIN_DIR " and the directory.\n"
	       "    The kernel frees the programs and maps once no process holds them; a\n"
	       "    running 'lowtrace events' notices and exits.\n\n"
	       "EXIT STATUS\n    0 unloaded; 3 not loaded; 5 no privileges; 1 failure.\n");
}

static void help_status(void)
{
	printf("NAME\n    lowtrace status - show what is loaded\n\n"
	       "SYNOPSIS\n    lowtrace status [--json | --measure S]\n\n"
	       "DESCRIPTION\n"
	       "    For each probe: whether it is attached, the hook the kernel reports for\n"
	       "    its link (tp_btf, raw_tp, fentry, ...), its program id, and the records\n"
	       "    written and dropped (ring full, or state map full) since load. MISSED:\n"
	       "    events the kernel skipped the probe for (it was already running on that\n"
	       "    CPU) that no fallback program took over; up to that many records may be\n"
	       "    missing.\n"
	       "    Also the ring size and filters, and where workload identity comes from:\n"
	       "    the identity hierarchy the suite's ids are in (cgroup2, or a v1\n"
	       "    controller's: load --identity-cgroup) and its mount, the v1 hierarchies,\n"
	       "    the cgroup2 mount, the cgroups there now and the cap of the identity cache\n"
	       "    of events and run (--ident-cap); then the cgroups the kernel names (seeded\n"
	       "    at load, born, died, renamed, freed a grace after their death, not named\n"
	       "    for lack of room).\n"
	       "    Then where per-thread and per-socket state lives (state: task-local or\n"
	       "    socket-local storage, or bounded hashes), and for each loaded probe its\n"
	       "    stateful maps: MAP, the kernel's TYPE, ENTRIES in use and MAX, so a map\n"
	       "    near its limit shows before it loses anything (a full map's failed\n"
	       "    inserts count as DROPS). Arrays are always full; task and socket local\n"
	       "    storage hold one entry per task or socket and have no cap: \"-\".\n\n"
	       "OPTIONS\n    --json               one JSON object (with the kernel's run_cnt and\n"
	       "                         run_time_ns per probe, which grow only while BPF\n"
	       "                         statistics are on; \"state\":{\"task\",\"sk\"}:\n"
	       "                         \"local\" or \"hash\"; per loaded probe \"maps\":[{name,\n"
	       "                         type, entries, max_entries, memlock (bytes)}], null\n"
	       "                         where the kernel cannot tell)\n"
	       "    --measure S          turn the kernel's BPF run-time statistics on for S\n"
	       "                         seconds and print each probe's program runs and\n"
	       "                         average cost per run (ns) over that window\n\n"
	       "EXIT STATUS\n    0 loaded; 3 not loaded; 1 failure.\n");
}

/* ---- status ---- */

/*
 * Where identity comes from on this machine: the suite's identity hierarchy, the v1
 * hierarchies beside it, and the cgroups a walk finds now (what the cache of
 * events and run starts with, up to its cap).
 */
struct ident_info {
	char root[512]; /* the identity hierarchy's mount */
	char v2[512]; /* the cgroup2 mount */
	unsigned int v1;
	uint64_t cgroups, cap;
	int ctrl;
	bool kernel; /* the suite names cgroups (lt_cg_names): names..cs are read */
	uint64_t names, names_cap, grace_s;
	struct lt_cg_stat cs;
};

static void ident_info(struct ident_info *ii, const struct lt_status *st)
{
	struct lt_ident_cfg cfg = { .ctrl = st->cg_ctrl };
	struct lt_handles h = { .suite = NULL };
	struct lt_ident_stats is = {};
	struct lt_identity idn;
	struct lt_ident_cache c;

	memset(ii, 0, sizeof(*ii));
	ii->ctrl = st->cg_ctrl;
	lt_ident_pick("cgroup2", NULL, ii->v2, sizeof(ii->v2));
	if (!lt_ident_open(&c, &cfg)) {
		snprintf(ii->root, sizeof(ii->root), "%s", lt_ident_root(&c));
		ii->v1 = lt_ident_v1_count(&c);
		lt_ident_stats(&c, &is);
	}
	lt_ident_close(&c);
	ii->cgroups = is.entries;
	ii->cap = is.cap;
	if (!lt_identity_open(&idn, &h) && idn.tracked)
		ii->kernel = !lt_identity_stat(&idn, &ii->cs, &ii->names, &ii->names_cap);
	ii->grace_s = st->cg_grace_ns / 1000000000ull;
	lt_identity_close(&idn);
}

/* The cgroups whose tasks' records the ring had no room for, most first (lt_drop_cg). */
#define BLAME_SHOWN 5

struct blame_view {
	struct lt_blame top[BLAME_SHOWN];
	int n;
	struct lt_ident_cache ids;
	struct lt_identity idn; /* the suite's hierarchy; its names answer for dead cgroups */
	bool ids_open;
};

static void blame_load(struct blame_view *v)
{
	struct lt_handles h = { .suite = NULL };
	struct lt_ident_cfg cfg = { .kname = lt_identity_kname, .kctx = &v->idn };

	v->idn.names_fd = -1;
	v->ids_open = false;
	v->n = lt_blame_read(v->top, BLAME_SHOWN);
	if (v->n <= 0) {
		v->n = 0; /* a suite without the map: nothing to blame */
		return;
	}
	lt_identity_open(&v->idn, &h);
	cfg.ctrl = v->idn.ctrl;
	v->ids_open = !lt_ident_open(&v->ids, &cfg);
}

/* cgroup `id`'s path, escaped for JSON or text into `b`; false when unknown */
static bool blame_path(struct blame_view *v, uint64_t id, struct lt_buf *b, bool json)
{
	const struct lt_ident *ident;

	if (!v->ids_open || !(ident = lt_ident_get(&v->ids, id, 0, 0)))
		return false;
	if (json)
		lt_put_json_str(b, ident->cgroup, ident->cgroup_len);
	else
		lt_put_text_str(b, ident->cgroup, ident->cgroup_len);
	return true;
}

static void blame_free(struct blame_view *v)
{
	if (v->ids_open)
		lt_ident_close(&v->ids);
	lt_identity_close(&v->idn);
}

static int print_blame_text(void)
{
	static const struct lt_col cols[] = {
		{ "PROBE", -12 },     { "DROPS", 12 },	{ "THROTTLED", 12 },
		{ "CGROUP_ID", -20 }, { "CGROUP", -1 },
	};
	struct lt_table t;
	struct blame_view v;
	char buf[4096];
	int err = LT_OK;

	blame_load(&v);
	lt_table_init(&t, cols, sizeof(cols) / sizeof(cols[0]));
	for (int i = 0; i < v.n; i++) {
		struct lt_buf b = { buf, 0, sizeof(buf) };
		const struct lt_probe *p = lt_probe_by_id(v.top[i].probe);

		if (!blame_path(&v, v.top[i].cgroup_id, &b, false))
			lt_put_s(&b, "-");
		lt_table_cell(&t, "%s", p ? p->name : "?");
		lt_table_cell(&t, "%llu", (unsigned long long)v.top[i].drops);
		lt_table_cell(&t, "%llu", (unsigned long long)v.top[i].throttled);
		lt_table_cell(&t, "%llu", (unsigned long long)v.top[i].cgroup_id);
		lt_table_cell(&t, "%.*s", (int)b.len, buf);
		lt_table_end_row(&t);
	}
	if (v.n) {
		printf("losses by cgroup (most first)\n");
		err = lt_table_print(&t, stdout);
	}
	lt_table_free(&t);
	blame_free(&v);
	return err;
}

static void print_blame_json(void)
{
	struct blame_view v;
	char buf[4096];

	blame_load(&v);
	printf(",\"drops_by_cgroup\":[");
	for (int i = 0; i < v.n; i++) {
		struct lt_buf b = { buf, 0, sizeof(buf) };
		const struct lt_probe *p = lt_probe_by_id(v.top[i].probe);

		if (!blame_path(&v, v.top[i].cgroup_id, &b, true))
			lt_put_s(&b, "null");
		printf("%s{\"probe\":\"%s\",\"cgroup_id\":%llu,\"cgroup\":%.*s,\"drops\":%llu,"
		       "\"throttled\":%llu}",
		       i ? "," : "", p ? p->name : "?", (unsigned long long)v.top[i].cgroup_id,
		       (int)b.len, buf, (unsigned long long)v.top[i].drops,
		       (unsigned long long)v.top[i].throttled);
	}
	printf("]");
	blame_free(&v);
}

/* load --rate-limit: shown only when a probe has one */
static int print_rates_text(const struct lt_status *st)
{
	static const struct lt_col cols[] = {
		{ "PROBE", -12 },
		{ "EVENTS/S", 12 },
		{ "THROTTLED", 12 },
	};
	struct lt_table t;
	int err = LT_OK;

	lt_table_init(&t, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe_status *ps = &st->probe[lt_probes[i].id];

		if (!ps->loaded || !ps->rate)
			continue;
		lt_table_cell(&t, "%s", lt_probes[i].name);
		lt_table_cell(&t, "%u", ps->rate);
		lt_table_cell(&t, "%llu", (unsigned long long)ps->stat.throttled);
		lt_table_end_row(&t);
	}
	if (t.nrows || t.err) {
		printf("rate limits (per cgroup)\n");
		err = lt_table_print(&t, stdout);
	}
	lt_table_free(&t);
	return err;
}

static const char *state_json(enum lt_state_kind k)
{
	return k == LT_KIND_LOCAL ? "\"local\"" : "\"hash\"";
}

/* a number, or "-" where the kernel cannot tell */
static void put_num_text(struct lt_table *t, int64_t v)
{
	if (v < 0)
		lt_table_cell(t, "-");
	else
		lt_table_cell(t, "%lld", (long long)v);
}

static void put_num_json(const char *key, int64_t v)
{
	if (v < 0)
		printf(",\"%s\":null", key);
	else
		printf(",\"%s\":%lld", key, (long long)v);
}

/* where per-object state lives, and how full each loaded probe's stateful map is */
static int print_maps_text(const struct lt_status *st)
{
	static const struct lt_col cols[] = {
		{ "PROBE", -12 },  { "MAP", -16 }, { "TYPE", -16 },
		{ "ENTRIES", 10 }, { "MAX", 10 },  { "", -1 }, /* per what */
	};
	struct lt_table t;
	int err;

	if (st->state_task != LT_KIND_UNKNOWN) {
		if (st->state_task == LT_KIND_HASH && st->state_sk == LT_KIND_HASH)
			printf("state: bounded hashes (kernel without local storage for "
			       "tracing, or --state hash)\n");
		else
			printf("state: %s, %s\n",
			       st->state_task == LT_KIND_LOCAL ? "task-local storage"
							       : "per-thread bounded hash",
			       st->state_sk == LT_KIND_LOCAL ? "socket-local storage"
							     : "per-socket bounded hash");
	}
	if (!st->nmaps)
		return LT_OK;
	lt_table_init(&t, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < st->nmaps; i++) {
		const struct lt_map_use *m = &st->maps[i];

		lt_table_cell(&t, "%s", m->probe);
		lt_table_cell(&t, "%s", m->name);
		lt_table_cell(&t, "%s", m->type);
		put_num_text(&t, m->entries);
		put_num_text(&t, m->max_entries);
		if (m->per)
			lt_table_cell(&t, "per %s", m->per);
		lt_table_end_row(&t);
	}
	err = lt_table_print(&t, stdout);
	lt_table_free(&t);
	return err;
}

static int print_status_text(const struct lt_status *st)
{
	static const struct lt_col cols[] = {
		{ "PROBE", -12 }, { "HOOK", -8 },  { "PROG_ID", -8 },
		{ "EVENTS", 12 }, { "DROPS", 12 }, { "MISSED", 12 },
	};
	struct ident_info ii;
	struct lt_table t;
	int err;

	printf("loaded: pinned at %s\n", LT_PIN_DIR);
	printf("ring buffer: %u bytes\n", st->ringbuf_size);
	printf("filters: pid=");
	if (st->filter_pid)
		printf("%u", st->filter_pid);
	else
		printf("any");
	printf(" cgroup_id=");
	if (st->filter_cgroup_id)
		printf("%llu\n", (unsigned long long)st->filter_cgroup_id);
	else
		printf("any\n");
	ident_info(&ii, st);
	if (ii.ctrl == LT_CTRL_V2)
		printf("identity: cgroup2 at %s, %u v1 hierarchies, %llu cgroups (cache cap "
		       "%llu)\n",
		       ii.root[0] ? ii.root : "(none)", ii.v1, (unsigned long long)ii.cgroups,
		       (unsigned long long)ii.cap);
	else
		printf("identity: cgroup v1 %s at %s, %u v1 hierarchies, cgroup2 at %s, %llu "
		       "cgroups (cache cap %llu)\n",
		       lt_ident_ctrl_name(ii.ctrl), ii.root[0] ? ii.root : "(none)", ii.v1,
		       ii.v2[0] ? ii.v2 : "(none)", (unsigned long long)ii.cgroups,
		       (unsigned long long)ii.cap);
	if (ii.kernel)
		printf("cgroups: %llu named in the kernel (cap %llu; %llu seeded, %llu born, %llu "
		       "died, %llu renamed, %llu freed %llu s after death, %llu full, %llu "
		       "freed at once)\n",
		       (unsigned long long)ii.names, (unsigned long long)ii.names_cap,
		       (unsigned long long)ii.cs.seeded, (unsigned long long)ii.cs.born,
		       (unsigned long long)ii.cs.died, (unsigned long long)ii.cs.renamed,
		       (unsigned long long)ii.cs.reaped, (unsigned long long)ii.grace_s,
		       (unsigned long long)ii.cs.full, (unsigned long long)ii.cs.queue_full);
	if (st->anc_known)
		printf("ancestry: %llu processes known (cap %llu; %llu execs, %llu forks, %llu "
		       "freed, %llu missing, %llu unknown)\n",
		       (unsigned long long)st->procs, (unsigned long long)st->procs_cap,
		       (unsigned long long)st->anc.execs, (unsigned long long)st->anc.forks,
		       (unsigned long long)st->anc.freed, (unsigned long long)st->anc.missing,
		       (unsigned long long)st->anc.unknown);
	lt_table_init(&t, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe_status *ps = &st->probe[lt_probes[i].id];

		if (lt_probes[i].cmd)
			continue; /* never pinned */
		lt_table_cell(&t, "%s", lt_probes[i].name);
		if (!ps->loaded) {
			lt_table_cell(&t, "-");
			lt_table_end_row(&t);
			continue;
		}
		lt_table_cell(&t, "%s", ps->hook);
		lt_table_cell(&t, "%u", ps->prog_id);
		lt_table_cell(&t, "%llu", (unsigned long long)ps->stat.events);
		lt_table_cell(&t, "%llu", (unsigned long long)ps->stat.drops);
		lt_table_cell(&t, "%llu", (unsigned long long)ps->stat.missed);
		lt_table_end_row(&t);
	}
	err = lt_table_print(&t, stdout);
	lt_table_free(&t);
	if (err)
		return err;
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe_status *ps = &st->probe[lt_probes[i].id];

		if (ps->loaded && ps->stat.unseen)
			printf("unseen: %s %llu (the kernel ran no program for them: their records "
			       "are missing)\n",
			       lt_probes[i].name, (unsigned long long)ps->stat.unseen);
	}
	err = print_rates_text(st);
	if (!err)
		err = print_maps_text(st);
	if (!err)
		err = print_blame_text();
	return err;
}

/*
 * What a killed loader left that could not be finished (lt_pins_tidy ran in
 * lt_read_status): shown, never hidden. Also a load or unload at work now.
 */
static int leftovers(char names[][LT_LEFTOVER_LEN])
{
	int n = lt_pins_leftovers(names, 8);

	return n < 0 ? 0 : n;
}

static void print_leftovers_text(FILE *f)
{
	char names[8][LT_LEFTOVER_LEN];
	int n = leftovers(names);

	for (int i = 0; i < n; i++)
		fprintf(f,
			"leftover: %s/%s (a load or unload at work, or a killed one: "
			"'lowtrace unload' finishes it)\n",
			LT_PIN_ROOT, names[i]);
}

/* a path from the mountinfo: escaped as JSON (a mount point may hold any byte) */
static void print_json_string(const char *s)
{
	char buf[4096];
	struct lt_buf b = { buf, 0, sizeof(buf) };

	lt_put_json_str(&b, s, strlen(s)); /* < 512 bytes */
	fwrite(buf, 1, b.len, stdout);
}

static void print_status_json(const struct lt_status *st)
{
	struct ident_info ii;
	char names[8][LT_LEFTOVER_LEN];
	int n = leftovers(names);

	printf("{\"loaded\":true,\"pin_dir\":\"%s\",\"ringbuf_size\":%u,\"filter_pid\":%u,"
	       "\"filter_cgroup_id\":%llu,\"probes\":[",
	       LT_PIN_DIR, st->ringbuf_size, st->filter_pid,
	       (unsigned long long)st->filter_cgroup_id);
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe_status *ps = &st->probe[lt_probes[i].id];

		if (lt_probes[i].cmd)
			continue; /* never pinned */
		printf("%s{\"name\":\"%s\",\"loaded\":%s", i ? "," : "", lt_probes[i].name,
		       ps->loaded ? "true" : "false");
		if (ps->loaded)
			printf(",\"hook\":\"%s\",\"prog_id\":%u,\"events\":%llu,\"drops\":%llu,"
			       "\"missed\":%llu,\"unseen\":%llu,\"recovered\":%llu,"
			       "\"throttled\":%llu,\"rate_limit\":%u,\"shed\":%llu,\"run_cnt\":%"
			       "llu,"
			       "\"run_time_ns\":%llu",
			       ps->hook, ps->prog_id, (unsigned long long)ps->stat.events,
			       (unsigned long long)ps->stat.drops,
			       (unsigned long long)ps->stat.missed,
			       (unsigned long long)ps->stat.unseen,
			       (unsigned long long)ps->stat.recovered,
			       (unsigned long long)ps->stat.throttled, ps->rate,
			       (unsigned long long)ps->stat.shed,
			       (unsigned long long)ps->stat.run_cnt,
			       (unsigned long long)ps->stat.run_time_ns);
		if (ps->loaded) {
			bool first = true;

			printf(",\"maps\":[");
			for (size_t k = 0; k < st->nmaps; k++) {
				const struct lt_map_use *m = &st->maps[k];

				if (strcmp(m->probe, lt_probes[i].name))
					continue;
				printf("%s{\"name\":\"%s\",\"type\":\"%s\"", first ? "" : ",",
				       m->name, m->type);
				put_num_json("entries", m->entries);
				put_num_json("max_entries", m->max_entries);
				put_num_json("memlock", m->memlock);
				printf("}");
				first = false;
			}
			printf("]");
		}
		printf("}");
	}
	printf("]");
	if (st->state_task == LT_KIND_UNKNOWN)
		printf(",\"state\":null");
	else
		printf(",\"state\":{\"task\":%s,\"sk\":%s}", state_json(st->state_task),
		       state_json(st->state_sk));
	ident_info(&ii, st);
	printf(",\"identity\":{\"hierarchy\":\"%s\",\"mount\":", lt_ident_ctrl_name(ii.ctrl));
	if (ii.root[0])
		print_json_string(ii.root);
	else
		printf("null");
	printf(",\"cgroup2\":");
	if (ii.v2[0])
		print_json_string(ii.v2);
	else
		printf("null");
	printf(",\"v1_hierarchies\":%u,\"cgroups\":%llu,\"cache_cap\":%llu", ii.v1,
	       (unsigned long long)ii.cgroups, (unsigned long long)ii.cap);
	if (ii.kernel)
		printf(",\"kernel\":{\"names\":%llu,\"cap\":%llu,\"grace_s\":%llu,\"seeded\":%llu,"
		       "\"born\":%llu,\"died\":%llu,\"renamed\":%llu,\"freed\":%llu,\"full\":%llu,"
		       "\"freed_at_once\":%llu}",
		       (unsigned long long)ii.names, (unsigned long long)ii.names_cap,
		       (unsigned long long)ii.grace_s, (unsigned long long)ii.cs.seeded,
		       (unsigned long long)ii.cs.born, (unsigned long long)ii.cs.died,
		       (unsigned long long)ii.cs.renamed, (unsigned long long)ii.cs.reaped,
		       (unsigned long long)ii.cs.full, (unsigned long long)ii.cs.queue_full);
	else
		printf(",\"kernel\":null");
	printf("}");
	if (st->anc_known)
		printf(",\"ancestry\":{\"processes\":%llu,\"cap\":%llu,\"execs\":%llu,\"forks\":%llu,"
		       "\"freed\":%llu,\"missing\":%llu,\"unknown\":%llu}",
		       (unsigned long long)st->procs, (unsigned long long)st->procs_cap,
		       (unsigned long long)st->anc.execs, (unsigned long long)st->anc.forks,
		       (unsigned long long)st->anc.freed, (unsigned long long)st->anc.missing,
		       (unsigned long long)st->anc.unknown);
	else
		printf(",\"ancestry\":null");
	print_blame_json();
	printf(",\"leftovers\":[");
	for (int i = 0; i < n; i++)
		printf("%s\"%s/%s\"", i ? "," : "", LT_PIN_ROOT, names[i]);
	printf("]}\n");
}

/* status --measure S: the kernel's run-time statistics on for S seconds */
static int status_measure(uint64_t secs)
{
	static const struct lt_col cols[] = {
		{ "PROBE", -12 }, { "HOOK", -8 },   { "RUNS", 14 },
		{ "RUNS/S", 12 }, { "NS/RUN", 10 },
	};
	static struct lt_status a, b;
	struct lt_table t;
	int fd, err;

	err = lt_read_status(&a);
	if (err)
		return err;
	err = lt_enable_stats(&fd);
	if (err)
		return err;
	err = lt_read_status(&a);
	lt_catch_stop();
	if (!err) {
		lt_sleep_s(secs);
		err = lt_read_status(&b);
	}
	close(fd);
	if (err)
		return err;
	lt_table_init(&t, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe_status *x = &a.probe[lt_probes[i].id];
		const struct lt_probe_status *y = &b.probe[lt_probes[i].id];
		uint64_t runs = y->stat.run_cnt - x->stat.run_cnt;
		uint64_t ns = y->stat.run_time_ns - x->stat.run_time_ns;

		if (!x->loaded || !y->loaded)
			continue;
		lt_table_cell(&t, "%s", lt_probes[i].name);
		lt_table_cell(&t, "%s", y->hook);
		lt_table_cell(&t, "%llu", (unsigned long long)runs);
		lt_table_cell(&t, "%.1f", (double)runs / secs);
		lt_table_cell(&t, "%.0f", runs ? (double)ns / runs : 0.0);
		lt_table_end_row(&t);
	}
	err = lt_table_print(&t, stdout);
	lt_table_free(&t);
	return err;
}

struct status_cli {
	bool json;
	uint64_t measure_s;
};

static int status_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct status_cli *c = ctx;

	(void)arg;
	if (key == LT_O_JSON)
		c->json = true;
	else
		c->measure_s = num;
	return LT_OK;
}

int cmd_status(int argc, char **argv)
{
	static const int keys[] = { LT_O_JSON, LT_O_MEASURE, 0 };
	struct status_cli c = {};
	struct lt_status st;
	int err = lt_opts_parse(argc, argv, keys, help_status, status_opt, &c);

	if (err)
		return err;
	if (c.measure_s)
		return status_measure(c.measure_s);
	err = lt_read_status(&st);
	if (err) {
		print_leftovers_text(stderr);
		return err;
	}
	if (c.json) {
		print_status_json(&st);
		return LT_OK;
	}
	err = print_status_text(&st);
	print_leftovers_text(stdout);
	return err;
}

/* ---- load / unload ---- */

static int load_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct lt_load_opts *o = ctx;
	struct group *g;

	if (key != LT_O_PIN_GROUP)
		return lt_load_opt(ctx, key, arg, num);
	g = getgrnam(arg);
	if (!g)
		return lt_error(LT_USAGE, "--pin-group %s: no such group", arg);
	o->pin_group = true;
	o->pin_gid = g->gr_gid;
	return LT_OK;
}

int cmd_load(int argc, char **argv)
{
	struct lt_load_opts o;
	struct lt_suite *s;
	struct lt_status st;
	int err;

	lt_load_defaults(&o);
	err = lt_opts_parse(argc, argv, lt_load_keys, help_load, load_opt, &o);
	if (!err)
		err = lt_load_check(&o);
	if (err)
		return err;
	o.pin = true;
	err = lt_load(&o, &s);
	if (err)
		return err;
	lt_suite_free(s); /* the pins keep it loaded */
	/* the summary is read back from the pins: it shows what the kernel has */
	err = lt_read_status(&st);
	if (!err)
		err = print_status_text(&st);
	return err;
}

int cmd_unload(int argc, char **argv)
{
	static const int keys[] = { 0 };
	int err = lt_opts_parse(argc, argv, keys, help_unload, NULL, NULL);

	if (err)
		return err;
	err = lt_unload();
	if (!err)
		printf("unloaded: removed %s\n", LT_PIN_DIR);
	return err;
}
