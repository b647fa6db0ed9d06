// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowtrace metrics: a small single-threaded HTTP server that answers GET /metrics with the
 * suite's counters and histograms. This file is the command: its options, its help, and the
 * driver that opens the readers (metrics_suite.c), starts the server (http.c) with the
 * scrape (metrics_scrape.c) as its callback, and runs it until a stop signal.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "http.h"
#include "lowtrace.h"
#include "metrics.h"
#include "opts.h"

struct metrics_opts {
	const char *listen; /* HOST:PORT or [V6]:PORT */
	bool per_syscall_latency;
	enum by_kind by;
	unsigned int by_max;
};

static int serve(const struct metrics_opts *o)
{
	static struct lt_metrics s; /* zeroed, and too large for the stack (its blame table) */
	struct lt_http_server *srv = NULL;
	struct sockaddr_storage ss;
	socklen_t sl;
	int err;

	if (lt_parse_listen(o->listen, &ss, &sl))
		return lt_error(LT_USAGE,
				"--listen %s: want HOST:PORT or [V6]:PORT with a numeric "
				"address",
				o->listen);
	err = lt_metrics_start(&s, o->per_syscall_latency, o->by, o->by_max);
	if (err)
		return err;
	err = lt_http_open(&srv, o->listen, &ss, sl, s.need, lt_metrics_scrape, &s);
	if (!err) {
		lt_metrics_tick(&s); /* --by: the counts since the load, before the first scrape */
		lt_catch_stop();
		signal(SIGPIPE, SIG_IGN); /* a client that hangs up is its own problem */
		printf("serving http://%s/metrics\n", o->listen);
		fflush(stdout);
	}
	while (!err && !lt_stop)
		lt_http_pass(srv, lt_metrics_tick(&s));
	lt_http_close(srv);
	lt_metrics_stop(&s);
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
	       "                         and read at each scrape and between them, a quarter\n"
	       "                         of load --cgroup-grace apart: a removed cgroup's\n"
	       "                         counts are taken before its grace ends\n"
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
		if (!strcmp(arg, lt_by_names[k])) {
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
