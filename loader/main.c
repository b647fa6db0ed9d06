// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* lowtrace: the global options and the command table; the commands live in their own files. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "lowtrace.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *about; /* its line in `lowtrace -h` */
} cmds[] = {
	{ "load", cmd_load, "load, attach and pin the probes under " LT_PIN_DIR },
	{ "unload", cmd_unload, "detach and remove every program, link, map and pin of the suite" },
	{ "status", cmd_status, "show loaded probes, their hooks, event, drop and miss counters" },
	{ "events", cmd_events, "stream records from the pinned ring buffer" },
	{ "run", cmd_run, "load without pinning, stream records, clean up on Ctrl-C" },
	{ "hist", cmd_hist, "print the log2 latency histograms of syscalls, runq or bio" },
	{ "top", cmd_top, "a refreshing table of syscalls and probe rates" },
	{ "metrics", cmd_metrics, "serve Prometheus metrics over HTTP (GET /metrics)" },
	{ "profile", cmd_profile, "sample on-CPU or off-CPU stacks: folded, pprof or JSON" },
	{ "alloc", cmd_alloc, "sampled allocations of a process by stack, and its leaks" },
};

static void help(void)
{
	int w = 9;

	printf("NAME\n"
	       "    lowtrace - low-overhead eBPF tracing of processes, with pinned probes\n"
	       "\n"
	       "SYNOPSIS\n"
	       "    lowtrace [-v] COMMAND [OPTIONS]\n"
	       "    lowtrace COMMAND -h\n"
	       "\n"
	       "COMMANDS\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if ((int)strlen(cmds[i].name) > w)
			w = strlen(cmds[i].name); /* a longer name widens the column */
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("    %-*s %s\n", w, cmds[i].name, cmds[i].about);
	printf("\n"
	       "OPTIONS\n"
	       "    -v, --verbose   show libbpf's messages, including the verifier log\n"
	       "    -h, --help      this text\n"
	       "\n"
	       "EXIT STATUS\n"
	       "    0  success\n"
	       "    1  runtime failure (verifier, attach, I/O)\n"
	       "    2  usage error (unknown command, option, probe or value)\n"
	       "    3  not loaded (unload, status, events without a pinned suite)\n"
	       "    4  already loaded (load while a suite is pinned, without --replace)\n"
	       "    5  environment: no privileges, no kernel BTF, no bpffs\n"
	       "    6  the suite went away (unloaded or replaced under events, top, hist "
	       "--interval)\n"
	       "    7  events as a subscriber: the owner of the ring stopped\n"
	       "\n"
	       "CONFIGURATION\n"
	       "    load, metrics and events take --config FILE (the units pass\n"
	       "    /etc/lowtrace/lowtrace.conf): sections [load], [metrics] and [events] of\n"
	       "    'option = value' lines with the long option names (flags: true or false;\n"
	       "    '#' and ';' start comments). A command applies its own section, then its\n"
	       "    command line, which wins. A missing file, an unknown section or option, a\n"
	       "    line without '=' or a bad value (the other sections' numbers included) is\n"
	       "    one error line naming FILE:LINE and exit 2, with nothing loaded.\n"
	       "\n"
	       "SERVICES\n"
	       "    make install puts three systemd units beside the binary: lowtrace.service\n"
	       "    (oneshot: load at boot, unload on stop), lowtrace-metrics.service and\n"
	       "    lowtrace-events.service (events --follow, by default to\n"
	       "    /var/log/lowtrace/events.json), which are part of lowtrace.service.\n"
	       "\n"
	       "Every error is one line on stderr starting with \"lowtrace: \".\n");
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			lt_verbose = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			help();
			return LT_OK;
		} else {
			return lt_error(LT_USAGE, "unknown option '%s' (see 'lowtrace -h')",
					argv[i]);
		}
	}
	if (i >= argc)
		return lt_error(LT_USAGE, "missing command (see 'lowtrace -h')");
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
		if (!strcmp(argv[i], cmds[k].name))
			return cmds[k].fn(argc - i, argv + i);
	if (!strcmp(argv[i], "help")) {
		help();
		return LT_OK;
	}
	return lt_error(LT_USAGE, "unknown command '%s' (see 'lowtrace -h')", argv[i]);
}
