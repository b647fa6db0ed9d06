// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* lowtrace: the command line. Loading and ring access live in kernel.c. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "encode.h"
#include "hist.h"
#include "kernel.h"
#include "lowtrace.h"
#include "metrics.h"
#include "records.h"
#include "lt_syscall_names.h"

#define DEFAULT_RINGBUF (1u << 20)
#define OUT_BUF_SIZE (256 * 1024)
#define STOP_SAMPLE (-ECANCELED) /* returned by the sample callback to end a stream */
#define POLL_MS 100 /* producers wake us only when the ring fills: the latency bound */

int lt_verbose;
static volatile sig_atomic_t stop_signal;
static void on_signal(int sig);

int lt_error(int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "lowtrace: %s\n", msg);
	return code;
}

static const char main_help[] =
	"NAME\n"
	"    lowtrace - low-overhead eBPF tracing of processes, with pinned probes\n"
	"\n"
	"SYNOPSIS\n"
	"    lowtrace [-v] COMMAND [OPTIONS]\n"
	"    lowtrace COMMAND -h\n"
	"\n"
	"COMMANDS\n"
	"    load      load, attach and pin the probes under " LT_PIN_DIR "\n"
	"    unload    detach and remove every program, link, map and pin of the suite\n"
	"    status    show loaded probes, their hooks, event, drop and miss counters\n"
	"    events    stream records from the pinned ring buffer\n"
	"    run       load without pinning, stream records, clean up on Ctrl-C\n"
	"    hist      print the log2 latency histograms of syscalls, runq or bio\n"
	"    top       a refreshing table of syscalls and probe rates\n"
	"    metrics   serve Prometheus metrics over HTTP (GET /metrics)\n"
	"    profile   sample on-CPU or off-CPU stacks: folded, pprof or JSON\n"
	"    alloc     sampled allocations of a process by stack, and its leaks\n"
	"\n"
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
	"\n"
	"Every error is one line on stderr starting with \"lowtrace: \".\n";

static const char load_opts_help[] =
	"    --probes LIST        comma-separated probes to attach (default: all default probes)\n"
	"    --pid PID            only record processes of this thread group (kernel-side;\n"
	"                         signal and oom also keep signals to it and its OOM kill)\n"
	"    --cgroup PATH        only record tasks in this cgroup v2 directory or below it\n"
	"    --ringbuf-size BYTES ring buffer size: a power of two >= 4096, K/M suffixes allowed\n"
	"                         (default 1M)\n"
	"    --per-pid            syscalls: one histogram per syscall and process\n";

static const char events_opts_help[] =
	"    --json               one JSON object per line (default)\n"
	"    --text               one key=value line per record; non-printable bytes as \\xNN\n"
	"    --type LIST          only these record types (the probe names, see load -h)\n"
	"    --count N            stop after N records\n"
	"    --duration SECS      stop after SECS seconds\n";

static void print_probes(FILE *f)
{
	fprintf(f, "PROBES\n");
	for (size_t i = 0; i < lt_nprobes; i++)
		if (!lt_probes[i].cmd)
			fprintf(f, "    %-12s %s%s\n", lt_probes[i].name, lt_probes[i].about,
				lt_probes[i].dflt ? "" : " [opt-in]");
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].cmd)
			fprintf(f, "    %-12s %s [lowtrace %s]\n", lt_probes[i].name,
				lt_probes[i].about, lt_probes[i].cmd);
}

static void help_load(void)
{
	printf("NAME\n    lowtrace load - load, attach and pin the probe suite\n\n"
	       "SYNOPSIS\n    lowtrace load [--probes LIST] [--pid PID] [--cgroup PATH]"
	       " [--ringbuf-size BYTES] [--replace]\n\n"
	       "DESCRIPTION\n"
	       "    Opens and loads the whole suite as one BPF object (one kernel BTF parse),\n"
	       "    attaches the chosen probes and pins links and maps under\n"
	       "    " LT_PIN_DIR " (directory mode 0700, pins 0600), so they outlive this\n"
	       "    command. Mounts bpffs at " LT_PIN_ROOT " if it is not mounted.\n"
	       "    Records outside --pid/--cgroup are never written to the ring.\n\n"
	       "OPTIONS\n%s"
	       "    --replace            unload a pinned suite first instead of failing\n\n",
	       load_opts_help);
	print_probes(stdout);
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
	       "    written and dropped (ring full) since load. MISSED: events the kernel\n"
	       "    skipped the probe for (it was already running on that CPU) that no\n"
	       "    fallback program took over; up to that many records may be missing.\n"
	       "    Also the ring size and filters.\n\n"
	       "OPTIONS\n    --json               one JSON object (with the kernel's run_cnt and\n"
	       "                         run_time_ns per probe, which grow only while BPF\n"
	       "                         statistics are on)\n"
	       "    --measure S          turn the kernel's BPF run-time statistics on for S\n"
	       "                         seconds and print each probe's program runs and\n"
	       "                         average cost per run (ns) over that window\n\n"
	       "EXIT STATUS\n    0 loaded; 3 not loaded; 1 failure.\n");
}

static void help_events(void)
{
	printf("NAME\n    lowtrace events - stream records from the pinned ring buffer\n\n"
	       "SYNOPSIS\n    lowtrace events [--json|--text] [--type LIST] [--pid PID]"
	       " [--count N] [--duration SECS]\n\n"
	       "DESCRIPTION\n"
	       "    Reads the ring of a suite pinned by 'lowtrace load' until Ctrl-C, --count\n"
	       "    or --duration. The ring has one consumer position, so a second 'events'\n"
	       "    fails instead of splitting records. When the kernel drops records (ring\n"
	       "    full) or skips a probe (see MISSED in 'status -h'), a line on stderr says\n"
	       "    how many, per probe.\n");
	lt_probe_fields_help(stdout);
	printf("    Kernel strings are untrusted: JSON escapes control bytes and invalid\n"
	       "    UTF-8 as \\u00XX; text escapes every non-printable byte.\n\n"
	       "OPTIONS\n%s"
	       "    --pid PID            only records of this thread group (here, not in the "
	       "kernel)\n\n"
	       "EXIT STATUS\n    0 done; 2 usage; 3 not loaded; 1 failure (e.g. another "
	       "consumer).\n",
	       events_opts_help);
}

static void help_run(void)
{
	printf("NAME\n    lowtrace run - load, stream, and clean up\n\n"
	       "SYNOPSIS\n    lowtrace run [load options] [events options]\n\n"
	       "DESCRIPTION\n"
	       "    Loads the suite in this process without pinning, streams its records like\n"
	       "    'events', and detaches everything on Ctrl-C, SIGTERM, --count or --duration.\n"
	       "    Independent of a pinned suite.\n\n"
	       "OPTIONS\n%s%s\n",
	       load_opts_help, events_opts_help);
	print_probes(stdout);
}

/* Strict unsigned parse with optional K/M/G suffix (when `suffix`). */
int lt_parse_u64(const char *opt, const char *s, bool suffix, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		goto bad;
	if (suffix && *end && !end[1]) {
		unsigned int shift = *end == 'K' || *end == 'k'	  ? 10
				     : *end == 'M' || *end == 'm' ? 20
				     : *end == 'G' || *end == 'g' ? 30
								  : 0;
		if (!shift || v > (~0ull >> shift))
			goto bad;
		v <<= shift;
		end++;
	}
	if (*end || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return lt_error(LT_USAGE, "%s: invalid value '%s'", opt, s);
}

static int parse_probes(const char *s, uint64_t *mask, bool by_type)
{
	*mask = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		const struct lt_probe *p = lt_probe_by_name(s, n);

		if (!p) {
			char known[256] = "";

			for (size_t i = 0; i < lt_nprobes; i++) {
				if ((by_type && !lt_probes[i].type) || lt_probes[i].cmd)
					continue;
				strcat(known, *known ? ", " : "");
				strcat(known, lt_probes[i].name);
			}
			return lt_error(LT_USAGE, "unknown %s '%.*s' (known: %s)",
					by_type ? "type" : "probe", (int)n, s, known);
		}
		if (p->cmd)
			return lt_error(LT_USAGE, "probe '%s' is loaded by 'lowtrace %s', not here",
					p->name, p->cmd);
		if (by_type && !p->type)
			return lt_error(LT_USAGE,
					"--type %s: an aggregate probe writes no records (see "
					"'lowtrace hist %s')",
					p->name, p->name);
		*mask |= by_type ? 1ull << p->type : 1ull << (p - lt_probes);
		s += n;
		if (*s == ',' && *++s == 0)
			break;
	}
	if (!*mask)
		return lt_error(LT_USAGE, "empty %s list", by_type ? "type" : "probe");
	return 0;
}

enum {
	OPT_PROBES = 256,
	OPT_PID,
	OPT_CGROUP,
	OPT_RINGBUF,
	OPT_REPLACE,
	OPT_JSON,
	OPT_TEXT,
	OPT_TYPE,
	OPT_COUNT,
	OPT_DURATION,
	OPT_INTERVAL,
	OPT_PER_PID,
	OPT_LISTEN,
	OPT_PER_SYS_LAT,
	OPT_ROWS,
	OPT_MEASURE,
};

struct cli {
	struct lt_load_opts load;
	bool text;
	uint64_t types; /* bit per record type, 0: all */
	uint64_t count;
	uint64_t duration_s;
	uint64_t interval_s;
	bool json_status;
	const char *listen;
	bool per_syscall_latency;
	uint64_t rows;
	uint64_t measure_s;
};

/* Parse the options of one subcommand; `allowed` lists the OPT_* it takes. */
static int parse_opts(int argc, char **argv, const int *allowed, void (*help)(void), struct cli *c)
{
	static const struct option all[] = {
		{ "probes", required_argument, 0, OPT_PROBES },
		{ "pid", required_argument, 0, OPT_PID },
		{ "cgroup", required_argument, 0, OPT_CGROUP },
		{ "ringbuf-size", required_argument, 0, OPT_RINGBUF },
		{ "replace", no_argument, 0, OPT_REPLACE },
		{ "json", no_argument, 0, OPT_JSON },
		{ "text", no_argument, 0, OPT_TEXT },
		{ "type", required_argument, 0, OPT_TYPE },
		{ "count", required_argument, 0, OPT_COUNT },
		{ "duration", required_argument, 0, OPT_DURATION },
		{ "interval", required_argument, 0, OPT_INTERVAL },
		{ "per-pid", no_argument, 0, OPT_PER_PID },
		{ "listen", required_argument, 0, OPT_LISTEN },
		{ "per-syscall-latency", no_argument, 0, OPT_PER_SYS_LAT },
		{ "rows", required_argument, 0, OPT_ROWS },
		{ "measure", required_argument, 0, OPT_MEASURE },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	uint64_t v;
	int o, err;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":h", all, NULL)) != -1) {
		bool ok = false;

		if (o == 'h') {
			help();
			exit(LT_OK);
		}
		if (o == '?')
			return lt_error(LT_USAGE, "%s: unknown option '%s' (see 'lowtrace %s -h')",
					argv[0], argv[optind - 1], argv[0]);
		if (o == ':')
			return lt_error(LT_USAGE, "%s: option '%s' needs a value", argv[0],
					argv[optind - 1]);
		for (const int *a = allowed; *a; a++)
			ok |= *a == o;
		if (!ok)
			return lt_error(
				LT_USAGE,
				"%s: option '%s' does not apply here (see 'lowtrace %s -h')",
				argv[0], argv[optind - 1], argv[0]);
		switch (o) {
		case OPT_PROBES:
			err = parse_probes(optarg, &c->load.probes, false);
			break;
		case OPT_TYPE:
			err = parse_probes(optarg, &c->types, true);
			break;
		case OPT_PID:
			err = lt_parse_u64("--pid", optarg, false, 0x3fffffff, &v);
			if (!err && !v)
				err = lt_error(LT_USAGE, "--pid: invalid value '0'");
			c->load.pid = v;
			break;
		case OPT_CGROUP:
			c->load.cgroup = optarg;
			err = 0;
			break;
		case OPT_RINGBUF:
			err = lt_parse_u64("--ringbuf-size", optarg, true, 1u << 30, &v);
			if (!err && (v < 4096 || (v & (v - 1))))
				err = lt_error(LT_USAGE,
					       "--ringbuf-size: %s is not a power of two between "
					       "4096 and 1G",
					       optarg);
			c->load.ringbuf_size = v;
			break;
		case OPT_REPLACE:
			c->load.replace = true;
			err = 0;
			break;
		case OPT_JSON:
			c->text = false;
			c->json_status = true;
			err = 0;
			break;
		case OPT_TEXT:
			c->text = true;
			err = 0;
			break;
		case OPT_COUNT:
			err = lt_parse_u64("--count", optarg, false, ~0ull, &c->count);
			if (!err && !c->count)
				err = lt_error(LT_USAGE, "--count: must be at least 1");
			break;
		case OPT_INTERVAL:
			err = lt_parse_u64("--interval", optarg, false, 86400, &c->interval_s);
			if (!err && !c->interval_s)
				err = lt_error(LT_USAGE, "--interval: must be at least 1");
			break;
		case OPT_MEASURE:
			err = lt_parse_u64("--measure", optarg, false, 3600, &c->measure_s);
			if (!err && !c->measure_s)
				err = lt_error(LT_USAGE, "--measure: must be at least 1");
			break;
		case OPT_ROWS:
			err = lt_parse_u64("--rows", optarg, false, 1000, &c->rows);
			if (!err && !c->rows)
				err = lt_error(LT_USAGE, "--rows: must be at least 1");
			break;
		case OPT_LISTEN:
			c->listen = optarg;
			err = 0;
			break;
		case OPT_PER_SYS_LAT:
			c->per_syscall_latency = true;
			err = 0;
			break;
		case OPT_PER_PID:
			c->load.sys_per_pid = true;
			err = 0;
			break;
		case OPT_DURATION:
			err = lt_parse_u64("--duration", optarg, false, 86400 * 365,
					   &c->duration_s);
			if (!err && !c->duration_s)
				err = lt_error(LT_USAGE, "--duration: must be at least 1");
			break;
		default:
			err = LT_USAGE;
		}
		if (err)
			return err;
	}
	if (optind < argc)
		return lt_error(LT_USAGE, "%s: unexpected argument '%s' (see 'lowtrace %s -h')",
				argv[0], argv[optind], argv[0]);
	return LT_OK;
}

static uint64_t default_probes(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].dflt)
			m |= 1ull << i;
	return m;
}

/* ---- status ---- */

static void print_status_text(const struct lt_status *st)
{
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
	printf("%-12s %-8s %-8s %12s %12s %12s\n", "PROBE", "HOOK", "PROG_ID", "EVENTS", "DROPS",
	       "MISSED");
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe_status *ps = &st->probe[lt_probes[i].id];

		if (lt_probes[i].cmd)
			continue; /* never pinned */
		if (!ps->loaded) {
			printf("%-12s -\n", lt_probes[i].name);
			continue;
		}
		printf("%-12s %-8s %-8u %12llu %12llu %12llu\n", lt_probes[i].name, ps->hook,
		       ps->prog_id, (unsigned long long)ps->stat.events,
		       (unsigned long long)ps->stat.drops, (unsigned long long)ps->stat.missed);
	}
}

static void print_status_json(const struct lt_status *st)
{
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
			       "\"missed\":%llu,\"recovered\":%llu,\"run_cnt\":%llu,"
			       "\"run_time_ns\":%llu",
			       ps->hook, ps->prog_id, (unsigned long long)ps->stat.events,
			       (unsigned long long)ps->stat.drops,
			       (unsigned long long)ps->stat.missed,
			       (unsigned long long)ps->stat.recovered,
			       (unsigned long long)ps->stat.run_cnt,
			       (unsigned long long)ps->stat.run_time_ns);
		printf("}");
	}
	printf("]}\n");
}

/* status --measure S: the kernel's run-time statistics on for S seconds */
static int status_measure(uint64_t secs)
{
	static struct lt_status a, b;
	int fd, err;

	err = lt_read_status(&a);
	if (err)
		return err;
	err = lt_enable_stats(&fd);
	if (err)
		return err;
	err = lt_read_status(&a);
	signal(SIGINT, on_signal);
	for (uint64_t t = 0; !err && t < secs * 10 && !stop_signal; t++)
		usleep(100000);
	if (!err)
		err = lt_read_status(&b);
	close(fd);
	if (err)
		return err;
	printf("%-12s %-8s %14s %12s %10s\n", "PROBE", "HOOK", "RUNS", "RUNS/S", "NS/RUN");
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_probe_status *x = &a.probe[lt_probes[i].id];
		const struct lt_probe_status *y = &b.probe[lt_probes[i].id];
		uint64_t runs = y->stat.run_cnt - x->stat.run_cnt;
		uint64_t ns = y->stat.run_time_ns - x->stat.run_time_ns;

		if (!x->loaded || !y->loaded)
			continue;
		printf("%-12s %-8s %14llu %12.1f %10.0f\n", lt_probes[i].name, y->hook,
		       (unsigned long long)runs, (double)runs / secs,
		       runs ? (double)ns / runs : 0.0);
	}
	return LT_OK;
}

static int cmd_status(int argc, char **argv)
{
	static const int allowed[] = { OPT_JSON, OPT_MEASURE, 0 };
	struct lt_status st;
	struct cli c = {};
	int err = parse_opts(argc, argv, allowed, help_status, &c);

	if (err)
		return err;
	if (c.measure_s)
		return status_measure(c.measure_s);
	err = lt_read_status(&st);
	if (err)
		return err;
	if (c.json_status)
		print_status_json(&st);
	else
		print_status_text(&st);
	return LT_OK;
}

/* ---- load / unload ---- */

static const int load_allowed[] = { OPT_PROBES,	 OPT_PID,     OPT_CGROUP, OPT_RINGBUF,
				    OPT_REPLACE, OPT_PER_PID, 0 };

static void cli_defaults(struct cli *c)
{
	memset(c, 0, sizeof(*c));
	c->load.probes = default_probes();
	c->load.ringbuf_size = DEFAULT_RINGBUF;
}

static int cmd_load(int argc, char **argv)
{
	struct lt_suite *s;
	struct lt_status st;
	struct cli c;
	int err;

	cli_defaults(&c);
	err = parse_opts(argc, argv, load_allowed, help_load, &c);
	if (err)
		return err;
	c.load.pin = true;
	err = lt_load(&c.load, &s);
	if (err)
		return err;
	lt_suite_free(s); /* the pins keep it loaded */
	/* the summary is read back from the pins: it shows what the kernel has */
	err = lt_read_status(&st);
	if (!err)
		print_status_text(&st);
	return err;
}

static int cmd_unload(int argc, char **argv)
{
	static const int allowed[] = { 0 };
	struct cli c = {};
	int err = parse_opts(argc, argv, allowed, help_unload, &c);

	if (err)
		return err;
	err = lt_unload();
	if (!err)
		printf("unloaded: removed %s\n", LT_PIN_DIR);
	return err;
}

/* ---- events / run ---- */

struct stream {
	struct lt_buf out;
	bool text;
	bool write_failed;
	uint64_t types;
	uint32_t pid;
	uint64_t count;
	uint64_t emitted;
	struct lt_rec rec;
	struct lt_decode_stats ds;
};

/* One write() per drained batch; a closed reader (EPIPE) ends the stream quietly. */
static void flush_out(struct stream *s)
{
	size_t off = 0;

	while (off < s->out.len && !s->write_failed) {
		ssize_t n = write(STDOUT_FILENO, s->out.p + off, s->out.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (errno != EPIPE)
				lt_error(LT_FAIL, "write: %s", strerror(errno));
			s->write_failed = true;
			break;
		}
		off += n;
	}
	s->out.len = 0;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct stream *s = ctx;
	const struct lt_probe *p = lt_decode(data, size, &s->rec, &s->ds);

	if (!p || (s->types && !((s->types >> p->type) & 1)) ||
	    (s->pid && s->rec.hdr.pid != s->pid))
		return 0;
	if (s->out.cap - s->out.len < LT_ENC_MAX)
		flush_out(s);
	if (s->text)
		lt_encode_text(&s->out, p, &s->rec);
	else
		lt_encode_json(&s->out, p, &s->rec);
	if (s->write_failed || (s->count && ++s->emitted >= s->count))
		return STOP_SAMPLE;
	return 0;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* One probe's growth of a counter into a " name=+N" list. */
struct growth {
	char list[256];
	size_t len;
	uint64_t total;
};

static void grew(struct growth *g, const char *probe, uint64_t now, uint64_t before)
{
	if (now <= before)
		return;
	g->total += now - before;
	g->len += snprintf(g->list + g->len, sizeof(g->list) - g->len, " %s=+%llu", probe,
			   (unsigned long long)(now - before));
	if (g->len >= sizeof(g->list))
		g->len = sizeof(g->list) - 1;
}

/* Report drops and misses that grew since the last look: nothing is lost silently. */
static void report_losses(struct lt_stats_reader *sr, struct lt_counts *last)
{
	struct growth drops = {}, missed = {};

	for (size_t i = 0; i < lt_nprobes; i++) {
		struct lt_counts st;
		struct lt_counts *l = &last[lt_probes[i].id];

		if (lt_stats_read(sr, &lt_probes[i], &st))
			continue;
		grew(&drops, lt_probes[i].name, st.drops, l->drops);
		grew(&missed, lt_probes[i].name, st.missed, l->missed);
		*l = st;
	}
	if (drops.total)
		fprintf(stderr, "lowtrace: kernel dropped %llu records (ring full):%s\n",
			(unsigned long long)drops.total, drops.list);
	if (missed.total)
		fprintf(stderr,
			"lowtrace: kernel skipped probes %llu times (already running on that CPU; "
			"records may be missing):%s\n",
			(unsigned long long)missed.total, missed.list);
}

/*
 * Stream records until a signal, --count, --duration or unload. `own` is the
 * in-process suite of `run`: on a stop it is detached first and the ring
 * drained, so records already written are printed, not freed with the ring.
 */
static int stream(const struct lt_handles *h, const struct cli *c, struct lt_suite *own)
{
	static char outbuf[OUT_BUF_SIZE];
	static struct stream s;
	struct lt_stats_reader sr;
	static struct lt_counts last[LT_PROBE_SLOTS];
	uint64_t start = now_ms(), last_check = start;
	struct sigaction sa = { .sa_handler = on_signal };
	struct lt_ring *ring;
	int err = LT_OK, n = 0;

	s.out.p = outbuf;
	s.out.cap = sizeof(outbuf);
	s.text = c->text;
	s.types = c->types;
	s.pid = c->load.pid;
	s.count = c->count;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = lt_stats_open(&sr, h);
	if (err) {
		lt_stats_close(&sr);
		return err;
	}
	for (size_t i = 0; i < lt_nprobes; i++)
		lt_stats_read(&sr, &lt_probes[i], &last[lt_probes[i].id]);
	ring = lt_ring_open(h->ring_fd, on_sample, &s);
	if (!ring) {
		lt_stats_close(&sr);
		return LT_FAIL;
	}
	while (!stop_signal) {
		uint64_t t;
		int timeout = POLL_MS;

		if (c->duration_s) {
			uint64_t end = start + c->duration_s * 1000;

			t = now_ms();
			if (t >= end)
				break;
			if (end - t < (uint64_t)timeout)
				timeout = end - t;
		}
		n = lt_ring_poll(ring, timeout);
		flush_out(&s);
		if (n == STOP_SAMPLE || s.write_failed)
			break;
		if (n < 0 && n != -EINTR) {
			err = lt_error(LT_FAIL, "reading the ring: %s", strerror(-n));
			break;
		}
		t = now_ms();
		if (t - last_check >= 1000) {
			last_check = t;
			report_losses(&sr, last);
			if (lt_pinned_gone(h)) {
				lt_error(LT_OK, "the suite was unloaded; stopping");
				break;
			}
		}
	}
	if (own && !err && n != STOP_SAMPLE && !s.write_failed) {
		lt_suite_detach(own);
		lt_ring_poll(ring, 0);
	}
	flush_out(&s);
	report_losses(&sr, last);
	if (s.ds.rejected || s.ds.unknown)
		fprintf(stderr, "lowtrace: %llu malformed and %llu unknown records skipped\n",
			(unsigned long long)s.ds.rejected, (unsigned long long)s.ds.unknown);
	lt_ring_free(ring);
	lt_stats_close(&sr);
	return err;
}

static const int events_allowed[] = { OPT_JSON,	 OPT_TEXT,     OPT_TYPE, OPT_PID,
				      OPT_COUNT, OPT_DURATION, 0 };

static int cmd_events(int argc, char **argv)
{
	struct lt_handles h;
	struct cli c;
	int err;

	cli_defaults(&c);
	err = parse_opts(argc, argv, events_allowed, help_events, &c);
	if (err)
		return err;
	err = lt_open_pinned(&h, true);
	if (err)
		return err;
	err = stream(&h, &c, NULL);
	lt_close_handles(&h);
	return err;
}

static int cmd_run(int argc, char **argv)
{
	static const int allowed[] = { OPT_PROBES, OPT_PID,  OPT_CGROUP, OPT_RINGBUF,  OPT_JSON,
				       OPT_TEXT,   OPT_TYPE, OPT_COUNT,	 OPT_DURATION, 0 };
	struct lt_handles h;
	struct lt_suite *s;
	struct cli c;
	int err;

	cli_defaults(&c);
	err = parse_opts(argc, argv, allowed, help_run, &c);
	if (err)
		return err;
	err = lt_load(&c.load, &s);
	if (err)
		return err;
	lt_suite_handles(s, &h);
	err = stream(&h, &c, s);
	lt_suite_free(s);
	return err;
}

/* ---- hist ---- */

static void help_hist(void)
{
	printf("NAME\n    lowtrace hist - print the latency histograms of an aggregate probe\n\n"
	       "SYNOPSIS\n    lowtrace hist syscalls|runq|bio [--interval S] [--count N] "
	       "[--json]\n\n"
	       "DESCRIPTION\n"
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
	       "EXIT STATUS\n    0 done; 2 usage; 3 not loaded (or the probe not attached); 1 "
	       "failure.\n");
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

static const char *syscall_name(uint32_t nr, char *tmp, size_t len)
{
	if (nr < sizeof(lt_syscall_names) / sizeof(lt_syscall_names[0]) && lt_syscall_names[nr])
		return lt_syscall_names[nr];
	snprintf(tmp, len, "syscall_%u", nr);
	return tmp;
}

static void hist_print(struct hist_view *v, struct lt_buf *b, bool json, struct stream *out)
{
	char title[96];

	if (json) {
		lt_put_s(b, "{\"probe\":\"");
		lt_put_s(b, v->probe->name);
		lt_put_c(b, '"');
		lt_json_u64(b, "ts_ns", now_ms() * 1000000ull);
		lt_json_key(b, "histograms");
		lt_put_c(b, '[');
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct hist_entry *e = &v->e[i];

		if (b->cap - b->len < LT_HIST_ENC_MAX)
			flush_out(out);
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
	flush_out(out);
}

static int cmd_hist(int argc, char **argv)
{
	static const int allowed[] = { OPT_INTERVAL, OPT_COUNT, OPT_JSON, 0 };
	static struct stream out; /* its output buffer and flush */
	static char mem[OUT_BUF_SIZE];
	const struct lt_probe *p = NULL;
	struct hist_view v = {};
	struct lt_agg *a;
	struct cli c = {};
	uint64_t prints = 0;
	int err;

	if (argc >= 2 && !strcmp(argv[1], "-h")) {
		help_hist();
		return LT_OK;
	}
	if (argc < 2 || argv[1][0] == '-')
		return lt_error(LT_USAGE,
				"hist: which probe? (syscalls or runq; see 'lowtrace hist -h')");
	p = lt_probe_by_name(argv[1], strlen(argv[1]));
	if (!p || !p->map)
		return lt_error(LT_USAGE,
				"hist: '%s' is not an aggregate probe (syscalls, runq or bio)",
				argv[1]);
	argv[1] = argv[0];
	err = parse_opts(argc - 1, argv + 1, allowed, help_hist, &c);
	if (err)
		return err;
	if (c.count && !c.interval_s)
		return lt_error(LT_USAGE, "hist: --count needs --interval");
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
	err = lt_agg_open(&a, p->map, p->name);
	if (err)
		return err;
	v.probe = p;
	v.cap = lt_agg_max_entries(a);
	v.e = calloc(v.cap, sizeof(*v.e));
	if (!v.e) {
		lt_agg_close(a);
		return lt_error(LT_FAIL, "out of memory");
	}
	out.out = (struct lt_buf){ mem, 0, sizeof(mem) };
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		v.n = 0;
		err = lt_agg_read(a, hist_collect, &v);
		if (err) {
			err = lt_error(LT_FAIL, "cannot read %s: %s", p->map, strerror(-err));
			break;
		}
		qsort(v.e, v.n, sizeof(*v.e), by_count_desc);
		hist_print(&v, &out.out, c.json_status, &out);
		prints++;
		if (out.write_failed || !c.interval_s || (c.count && prints >= c.count))
			break;
		for (uint64_t t = 0; t < c.interval_s * 10 && !stop_signal; t++)
			usleep(100000);
		if (stop_signal)
			break;
		if (!c.json_status) {
			lt_put_c(&out.out, '\n');
		}
	}
	free(v.e);
	lt_agg_close(a);
	return err;
}

/* ---- top ---- */

#define NSYSCALLS (sizeof(lt_syscall_names) / sizeof(lt_syscall_names[0]))

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
	       "EXIT STATUS\n    0 done (Ctrl-C, --count); 2 usage; 3 not loaded; 1 failure.\n");
}

struct top_state {
	struct lt_hist *cur; /* NSYSCALLS each, allocated once */
	struct lt_hist *prev;
	uint32_t *order;
};

static void top_sum(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct top_state *t = ctx;
	const struct lt_sys_key *k = key;

	if (k->nr < NSYSCALLS)
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

static int cmd_top(int argc, char **argv)
{
	static const int allowed[] = { OPT_INTERVAL, OPT_COUNT, OPT_ROWS, 0 };
	static struct lt_status st;
	static uint64_t last_ev[LT_PROBE_SLOTS], last_dr[LT_PROBE_SLOTS];
	struct top_state t = {};
	struct lt_stats_reader sr = {};
	struct lt_handles h;
	struct lt_agg *sys = NULL;
	struct cli c = {};
	bool tty = isatty(STDOUT_FILENO);
	uint64_t prints = 0, t0, t1;
	int err;

	c.rows = 20;
	err = parse_opts(argc, argv, allowed, help_top, &c);
	if (err)
		return err;
	if (!c.interval_s)
		c.interval_s = 1;
	err = lt_read_status(&st);
	if (err)
		return err;
	err = lt_open_pinned(&h, false);
	if (err)
		return err;
	err = lt_stats_open(&sr, &h);
	if (!err && st.probe[LT_PROBE_SYSCALLS].loaded)
		err = lt_agg_open(&sys, "lt_sys_hist", "syscalls");
	t.cur = calloc(NSYSCALLS, sizeof(*t.cur));
	t.prev = calloc(NSYSCALLS, sizeof(*t.prev));
	t.order = calloc(NSYSCALLS, sizeof(*t.order));
	if (!err && (!t.cur || !t.prev || !t.order))
		err = lt_error(LT_FAIL, "out of memory");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_ms();
	while (!err && !stop_signal) {
		double secs;
		size_t n = 0;

		t1 = now_ms();
		secs = prints ? (t1 - t0) / 1000.0 : 0;
		t0 = t1;
		if (lt_pinned_gone(&h)) {
			printf("the suite was unloaded\n");
			break;
		}
		if (tty)
			printf("\033[H\033[2J");
		printf("lowtrace top: every %llu s, rates over the last interval\n",
		       (unsigned long long)c.interval_s);
		printf("%-12s %12s %12s\n", "PROBE", "EVENTS/S", "DROPS/S");
		for (size_t i = 0; i < lt_nprobes; i++) {
			struct lt_counts s;
			uint32_t id = lt_probes[i].id;

			if (!st.probe[id].loaded || lt_stats_read(&sr, &lt_probes[i], &s))
				continue;
			if (secs > 0)
				printf("%-12s %12.1f %12.1f\n", lt_probes[i].name,
				       (s.events - last_ev[id]) / secs,
				       (s.drops - last_dr[id]) / secs);
			else
				printf("%-12s %12s %12s\n", lt_probes[i].name, "-", "-");
			last_ev[id] = s.events;
			last_dr[id] = s.drops;
		}
		if (!sys) {
			printf("\nsyscalls: not loaded (lowtrace load --probes ...,syscalls)\n");
		} else {
			memset(t.cur, 0, NSYSCALLS * sizeof(*t.cur));
			if (lt_agg_read(sys, top_sum, &t)) {
				err = lt_error(LT_FAIL, "cannot read lt_sys_hist: %s",
					       strerror(errno));
				break;
			}
			for (uint32_t nr = 0; nr < NSYSCALLS; nr++)
				if (t.cur[nr].count)
					t.order[n++] = nr;
			top_hists = t.cur;
			qsort(t.order, n, sizeof(*t.order), by_syscall_count);
			printf("\n%-20s %12s %10s %12s %10s %10s\n", "SYSCALL", "COUNT", "RATE/S",
			       "TOTAL_MS", "P50_US", "P99_US");
			for (size_t k = 0; k < n && k < c.rows; k++) {
				const struct lt_hist *x = &t.cur[t.order[k]];
				char name[32], p50[24], p99[24], rate[24];

				put_us(p50, sizeof(p50), quantile_ns(x, 0.50));
				put_us(p99, sizeof(p99), quantile_ns(x, 0.99));
				if (secs > 0)
					snprintf(rate, sizeof(rate), "%.1f",
						 (x->count - t.prev[t.order[k]].count) / secs);
				else
					snprintf(rate, sizeof(rate), "-");
				printf("%-20s %12llu %10s %12.3f %10s %10s\n",
				       syscall_name(t.order[k], name, sizeof(name)),
				       (unsigned long long)x->count, rate, x->sum_ns / 1e6, p50,
				       p99);
			}
			memcpy(t.prev, t.cur, NSYSCALLS * sizeof(*t.cur));
		}
		if (!tty)
			printf("\n");
		fflush(stdout);
		prints++;
		if (c.count && prints >= c.count)
			break;
		for (uint64_t w = 0; w < c.interval_s * 10 && !stop_signal; w++)
			usleep(100000);
	}
	free(t.cur);
	free(t.prev);
	free(t.order);
	lt_agg_close(sys);
	lt_stats_close(&sr);
	lt_close_handles(&h);
	return err;
}

/* ---- metrics ---- */

static void help_metrics(void)
{
	printf("NAME\n    lowtrace metrics - serve Prometheus metrics of the pinned suite\n\n"
	       "SYNOPSIS\n    lowtrace metrics [--listen HOST:PORT] [--per-syscall-latency]\n\n"
	       "DESCRIPTION\n"
	       "    Answers HTTP GET (and HEAD) /metrics with the text exposition format 0.0.4,\n"
	       "    read from the pinned maps at each scrape: lowtrace_events_total{probe},\n"
	       "    lowtrace_drops_total{probe}, lowtrace_missed_total{probe} (events the\n"
	       "    kernel skipped the probe for), and for the aggregate probes that are loaded\n"
	       "    lowtrace_syscalls_total{name}, lowtrace_syscall_latency_seconds,\n"
	       "    lowtrace_runq_latency_seconds, lowtrace_bio_latency_seconds{device,op}\n"
	       "    (histograms: cumulative _bucket{le}, _sum, _count). Other paths get 404,\n"
	       "    other methods 405, malformed requests 400; one connection at a time, 2 s\n"
	       "    timeouts. Runs until Ctrl-C or SIGTERM; answers 503 once the suite is\n"
	       "    unloaded.\n\n"
	       "OPTIONS\n"
	       "    --listen HOST:PORT   numeric address to bind (default 127.0.0.1:9464, "
	       "loopback\n"
	       "                         only); [::1]:9464 for IPv6, 0.0.0.0:9464 for all\n"
	       "    --per-syscall-latency  one latency histogram per syscall (label name)\n\n"
	       "EXIT STATUS\n    0 stopped by a signal; 2 usage; 3 not loaded; 1 failure (e.g. "
	       "the\n"
	       "    address is in use).\n");
}

static int cmd_metrics(int argc, char **argv)
{
	static const int allowed[] = { OPT_LISTEN, OPT_PER_SYS_LAT, 0 };
	struct metrics_opts o = { .listen = "127.0.0.1:9464" };
	struct cli c = {};
	int err = parse_opts(argc, argv, allowed, help_metrics, &c);

	if (err)
		return err;
	if (c.listen)
		o.listen = c.listen;
	o.per_syscall_latency = c.per_syscall_latency;
	return lt_metrics_serve(&o);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "load", cmd_load },	  { "unload", cmd_unload },   { "status", cmd_status },
		{ "events", cmd_events }, { "run", cmd_run },	      { "hist", cmd_hist },
		{ "top", cmd_top },	  { "metrics", cmd_metrics }, { "profile", cmd_profile },
		{ "alloc", cmd_alloc },
	};
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			lt_verbose = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(main_help, stdout);
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
		fputs(main_help, stdout);
		return LT_OK;
	}
	return lt_error(LT_USAGE, "unknown command '%s' (see 'lowtrace -h')", argv[i]);
}
