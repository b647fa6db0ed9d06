// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Every option of every command, described once, and the one parser. */
#include <errno.h>
#include <getopt.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "lowtrace.h"
#include "opts.h"
#include "ident.h"
#include "records.h"

enum kind { FLAG, STR, NUM };
enum zero { ZERO_OK, ZERO_INVALID, ZERO_AT_LEAST_1 };

struct opt_desc {
	const char *name; /* --name */
	int key; /* enum lt_opt_key; a short letter is also the option -k */
	enum kind kind;
	/* NUM: the label its errors name, the largest value, K/M/G suffixes, what 0 means */
	const char *label;
	uint64_t max;
	bool suffix;
	enum zero zero;
};

#define OPT(n, k, t)                           \
	{                                      \
		.name = n, .key = k, .kind = t \
	}
#define OPT_NUM(n, k, m, sfx, z)                                                            \
	{                                                                                   \
		.name = n, .key = k, .kind = NUM, .label = "--" n, .max = m, .suffix = sfx, \
		.zero = z                                                                   \
	}

static const struct opt_desc descs[] = {
	OPT("probes", LT_O_PROBES, STR),
	OPT_NUM("pid", LT_O_PID, 0x3fffffff, false, ZERO_INVALID),
	OPT("cgroup", LT_O_CGROUP, STR),
	OPT_NUM("ringbuf-size", LT_O_RINGBUF, 1u << 30, true, ZERO_OK),
	OPT("replace", LT_O_REPLACE, FLAG),
	OPT("per-pid", LT_O_PER_PID, FLAG),
	OPT("count-only", LT_O_COUNT_ONLY, FLAG),
	OPT("state", LT_O_STATE, STR),
	OPT_NUM("max-threads", LT_O_MAX_THREADS, 1u << 22, true, ZERO_AT_LEAST_1),
	OPT_NUM("max-conns", LT_O_MAX_CONNS, 1u << 24, true, ZERO_AT_LEAST_1),
	OPT("rate-limit", LT_O_RATE_LIMIT, STR),
	OPT("no-shed", LT_O_NO_SHED, FLAG),
	OPT("pin-group", LT_O_PIN_GROUP, STR),
	OPT("json", LT_O_JSON, FLAG),
	OPT("text", LT_O_TEXT, FLAG),
	OPT("type", LT_O_TYPE, STR),
	OPT_NUM("count", LT_O_COUNT, ~0ull, false, ZERO_AT_LEAST_1),
	OPT_NUM("duration", LT_O_DURATION, 86400 * 365, false, ZERO_AT_LEAST_1),
	OPT("follow", LT_O_FOLLOW, FLAG),
	OPT("container", LT_O_CONTAINER, STR),
	OPT("unit", LT_O_UNIT, STR),
	OPT_NUM("ident-cap", LT_O_IDENT_CAP, 1u << 20, true, ZERO_AT_LEAST_1),
	OPT_NUM("interval", LT_O_INTERVAL, 86400, false, ZERO_AT_LEAST_1),
	OPT("listen", LT_O_LISTEN, STR),
	OPT("per-syscall-latency", LT_O_PER_SYS_LAT, FLAG),
	OPT_NUM("rows", LT_O_ROWS, 1000, false, ZERO_AT_LEAST_1),
	OPT_NUM("measure", LT_O_MEASURE, 3600, false, ZERO_AT_LEAST_1),
	/* its errors say -F, the form profile -h shows */
	{ .name = "frequency", .key = LT_O_FREQ, .kind = NUM, .label = "-F", .max = ~0u },
	OPT("off-cpu", LT_O_OFF_CPU, FLAG),
	OPT("format", LT_O_FORMAT, STR),
	OPT("output", LT_O_OUTPUT, STR),
	OPT_NUM("sample-bytes", LT_O_SAMPLE_BYTES, 1ull << 30, true, ZERO_AT_LEAST_1),
	OPT("leaks", LT_O_LEAKS, FLAG),
	OPT("no-unwind", LT_O_NO_UNWIND, FLAG),
	OPT("config", LT_O_CONFIG, STR),
	OPT_NUM("rotate-size", LT_O_ROTATE_SIZE, 1ull << 40, true, ZERO_AT_LEAST_1),
	OPT_NUM("rotate-keep", LT_O_ROTATE_KEEP, 1000, false, ZERO_AT_LEAST_1),
	OPT("by", LT_O_BY, STR),
	OPT_NUM("by-max", LT_O_BY_MAX, 100000, false, ZERO_AT_LEAST_1),
};
#define NDESCS (sizeof(descs) / sizeof(descs[0]))
_Static_assert(NDESCS <= 64, "the parser keeps the options it saw in one u64");

/*
 * Options that exclude each other, or one that is meaningless without another: checked once
 * the whole command line is read, for every command that takes both (or only `cmd`).
 */
static const struct opt_rule {
	int a, b;
	bool needs; /* a needs b; otherwise a and b exclude each other */
	const char *cmd; /* NULL: every command */
} rules[] = {
	{ .a = LT_O_JSON, .b = LT_O_TEXT }, /* events, run */
	{ .a = LT_O_JSON, .b = LT_O_MEASURE }, /* status: --measure prints its own table */
	{ .a = LT_O_FREQ, .b = LT_O_OFF_CPU }, /* profile: off-CPU time is taken at each switch */
	{ .a = LT_O_COUNT, .b = LT_O_INTERVAL, .needs = true, .cmd = "hist" }, /* else once */
};

static const struct opt_desc *desc_of(int key)
{
	for (size_t i = 0; i < NDESCS; i++)
		if (descs[i].key == key)
			return &descs[i];
	return NULL;
}

/* how errors name an option: its label (-F), else --name */
static const char *opt_label(const struct opt_desc *d, char *buf, size_t len)
{
	if (d->label)
		return d->label;
	snprintf(buf, len, "--%s", d->name);
	return buf;
}

static int check_rules(const char *cmd, uint64_t seen)
{
	char ba[32], bb[32];

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct opt_rule *r = &rules[i];
		const struct opt_desc *a = desc_of(r->a), *b = desc_of(r->b);
		bool has_a = seen >> (a - descs) & 1, has_b = seen >> (b - descs) & 1;
		const char *la, *lb;

		if ((r->cmd && strcmp(r->cmd, cmd)) || !has_a || has_b == r->needs)
			continue;
		la = opt_label(a, ba, sizeof(ba));
		lb = opt_label(b, bb, sizeof(bb));
		if (r->needs)
			return lt_error(LT_USAGE, "%s: %s needs %s", cmd, la, lb);
		return lt_error(LT_USAGE, "%s: %s and %s cannot be used together", cmd, la, lb);
	}
	return LT_OK;
}

/* One option with its value as typed: checked against the command's keys and its limits, then
 * given to `fn` (when set). Marks it in *seen. */
static int apply(const char *cmd, const int *keys, const struct opt_desc *d, const char *arg,
		 lt_opt_fn fn, void *ctx, uint64_t *seen)
{
	uint64_t num = 0;
	bool ok = false;
	int err;

	for (const int *k = keys; *k; k++)
		ok |= *k == d->key;
	if (!ok)
		return lt_error(LT_USAGE,
				"%s: option '--%s' does not apply here (see 'lowtrace %s -h')", cmd,
				d->name, cmd);
	if (d->kind == NUM) {
		err = lt_parse_u64(d->label, arg, d->suffix, d->max, &num);
		if (err)
			return err;
		if (!num && d->zero == ZERO_INVALID)
			return lt_error(LT_USAGE, "%s: invalid value '0'", d->label);
		if (!num && d->zero == ZERO_AT_LEAST_1)
			return lt_error(LT_USAGE, "%s: must be at least 1", d->label);
	}
	*seen |= 1ull << (d - descs);
	if (!fn || d->key == LT_O_CONFIG)
		return LT_OK;
	return fn(ctx, d->key, d->kind == FLAG ? NULL : arg, num);
}

/* The command line, once to find --config (fn NULL), once to apply it. */
static int parse_argv(int argc, char **argv, const int *keys, void (*help)(void), lt_opt_fn fn,
		      void *ctx, uint64_t *seen, const char **config)
{
	/* every option is known to getopt, so one of another command is named as such */
	static struct option longs[NDESCS + 2];
	static char shorts[3 * NDESCS + 4];
	const char *cmd = argv[0];
	int o, err;

	if (!longs[0].name) {
		size_t n = 0;

		strcpy(shorts, ":h");
		n = strlen(shorts);
		for (size_t i = 0; i < NDESCS; i++) {
			longs[i] = (struct option){ descs[i].name,
						    descs[i].kind == FLAG ? no_argument
									  : required_argument,
						    NULL, descs[i].key };
			if (descs[i].key < 256) {
				shorts[n++] = descs[i].key;
				if (descs[i].kind != FLAG)
					shorts[n++] = ':';
			}
		}
		longs[NDESCS] = (struct option){ "help", no_argument, NULL, 'h' };
		shorts[n] = 0;
	}
	optind = 0; /* glibc: start over (the second pass) */
	opterr = 0;
	while ((o = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt_desc *d;

		if (o == 'h') {
			help();
			exit(LT_OK);
		}
		if (o == '?')
			return lt_error(LT_USAGE, "%s: unknown option '%s' (see 'lowtrace %s -h')",
					cmd, argv[optind - 1], cmd);
		if (o == ':')
			return lt_error(LT_USAGE, "%s: option '%s' needs a value", cmd,
					argv[optind - 1]);
		d = desc_of(o);
		if (!d)
			return lt_error(LT_USAGE, "%s: option '?' does not apply here", cmd);
		err = apply(cmd, keys, d, optarg, fn, ctx, seen);
		if (err)
			return err;
		if (o == LT_O_CONFIG)
			*config = optarg;
	}
	if (optind < argc)
		return lt_error(LT_USAGE, "%s: unexpected argument '%s' (see 'lowtrace %s -h')",
				cmd, argv[optind], cmd);
	return LT_OK;
}

/* the sections a config file may have: the commands that take --config */
static const char *const config_sections[] = { "load", "metrics", "events" };

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/*
 * One line of the config: a section header, or `name = value` checked for every section and
 * applied when the section is this command's. Errors name FILE:LINE (lt_err_where).
 */
static int config_line(const char *cmd, const int *keys, char *line, const char **section,
		       lt_opt_fn fn, void *ctx, uint64_t *seen)
{
	const struct opt_desc *d = NULL;
	char *eq, *name, *val, *arg;

	line = trim(line);
	if (!*line || *line == '#' || *line == ';')
		return LT_OK;
	if (*line == '[') {
		char *end = strchr(line, ']');

		*section = NULL;
		if (end && !trim(end + 1)[0]) {
			*end = 0;
			for (size_t i = 0; i < sizeof(config_sections) / sizeof(config_sections[0]);
			     i++)
				if (!strcmp(trim(line + 1), config_sections[i]))
					*section = config_sections[i];
		}
		if (!*section)
			return lt_error(LT_USAGE,
					"unknown section '%s%s' (known: [load], [metrics], "
					"[events])",
					line, end ? "]" : "");
		return LT_OK;
	}
	eq = strchr(line, '=');
	if (!eq)
		return lt_error(LT_USAGE, "'%s' is not 'option = value'", line);
	*eq = 0;
	name = trim(line);
	val = trim(eq + 1);
	if (!*section)
		return lt_error(LT_USAGE, "'%s' before the first [section]", name);
	for (size_t i = 0; i < NDESCS && !d; i++)
		if (!strcmp(descs[i].name, name) && descs[i].key != LT_O_CONFIG)
			d = &descs[i];
	if (!d)
		return lt_error(LT_USAGE, "[%s]: unknown option '%s'", *section, name);
	if (!*val)
		return lt_error(LT_USAGE, "%s: no value", name);
	arg = val;
	if (d->kind == FLAG) {
		bool on = !strcmp(val, "true") || !strcmp(val, "yes") || !strcmp(val, "1");

		if (!on && strcmp(val, "false") && strcmp(val, "no") && strcmp(val, "0"))
			return lt_error(LT_USAGE, "%s: '%s' is not true or false", name, val);
		if (!on)
			return LT_OK;
	}
	if (strcmp(*section, cmd)) {
		/* another command's section: its values are checked when it runs */
		if (d->kind == NUM) {
			uint64_t num;

			return lt_parse_u64(d->label, val, d->suffix, d->max, &num);
		}
		return LT_OK;
	}
	/* the callbacks may keep the string (a --listen, --output, --cgroup) */
	arg = strdup(val);
	if (!arg)
		return lt_error(LT_FAIL, "out of memory");
	return apply(cmd, keys, d, arg, fn, ctx, seen);
}

static int read_config(const char *path, const char *cmd, const int *keys, lt_opt_fn fn, void *ctx,
		       uint64_t *seen)
{
	const char *section = NULL;
	char line[4096], where[4200];
	unsigned int n = 0;
	int err = LT_OK;
	FILE *f = fopen(path, "r");

	if (!f)
		return lt_error(LT_USAGE, "--config %s: %s", path, strerror(errno));
	while (!err && fgets(line, sizeof(line), f)) {
		n++;
		snprintf(where, sizeof(where), "%s:%u", path, n);
		lt_err_where = where;
		if (!strchr(line, '\n') && !feof(f))
			err = lt_error(LT_USAGE, "line longer than %zu bytes", sizeof(line) - 2);
		else
			err = config_line(cmd, keys, line, &section, fn, ctx, seen);
		lt_err_where = NULL;
	}
	if (!err && ferror(f))
		err = lt_error(LT_FAIL, "--config %s: %s", path, strerror(errno));
	fclose(f);
	return err;
}

int lt_opts_parse(int argc, char **argv, const int *keys, void (*help)(void), lt_opt_fn fn,
		  void *ctx)
{
	const char *config = NULL;
	uint64_t seen_file = 0, seen_cli = 0;
	int err;

	/* the file first, so the command line overrides it */
	err = parse_argv(argc, argv, keys, help, NULL, NULL, &seen_cli, &config);
	if (!err && config)
		err = read_config(config, argv[0], keys, fn, ctx, &seen_file);
	seen_cli = 0;
	if (!err)
		err = parse_argv(argc, argv, keys, help, fn, ctx, &seen_cli, &config);
	/* exclusions within each source: the command line's --text overrides the file's json */
	if (!err)
		err = check_rules(argv[0], seen_file);
	if (!err)
		err = check_rules(argv[0], seen_cli);
	return err;
}

const char lt_config_help[] =
	"    --config FILE        options from FILE's [COMMAND] section first, then the\n"
	"                         command line's (see CONFIGURATION in lowtrace -h)\n";

int lt_check_pid_arg(uint32_t pid)
{
	uint32_t tgid;
	bool kthread;
	int err = lt_proc_task(pid, &tgid, &kthread);

	if (err == -ESRCH)
		return lt_error(LT_USAGE, "--pid %u: no such process", pid);
	if (err)
		return lt_error(LT_FAIL, "--pid %u: %s", pid, strerror(-err));
	if (tgid != pid)
		return lt_error(LT_USAGE,
				"--pid %u: a thread of process %u (--pid takes the process id)",
				pid, tgid);
	return LT_OK;
}

int lt_check_container_arg(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > LT_IDENT_CID_LEN)
		return lt_error(LT_USAGE,
				"--container '%s': want 1 to %d hex digits of a container id", s,
				LT_IDENT_CID_LEN);
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return lt_error(LT_USAGE,
					"--container '%s': not lower-case hex (a container id "
					"prefix)",
					s);
	return LT_OK;
}

int lt_check_unit_arg(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > LT_IDENT_UNIT_MAX || strchr(s, '/') ||
	    !((n > 8 && !strcmp(s + n - 8, ".service")) || (n > 6 && !strcmp(s + n - 6, ".scope"))))
		return lt_error(LT_USAGE, "--unit '%s': want a systemd NAME.service or NAME.scope",
				s);
	return LT_OK;
}

int lt_check_cgroup_arg(const char *path)
{
	struct statfs fs;
	struct stat st;

	if (stat(path, &st))
		return lt_error(LT_USAGE, "--cgroup %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode) || statfs(path, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
		return lt_error(LT_USAGE, "--cgroup %s: not a cgroup v2 directory", path);
	return LT_OK;
}

int lt_parse_probe_list(const char *s, bool by_type, uint64_t *mask)
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
	return LT_OK;
}

int lt_every_opt(struct lt_every *e, int key, uint64_t num)
{
	if (key == LT_O_INTERVAL)
		e->interval_s = num;
	else if (key == LT_O_COUNT)
		e->count = num;
	else
		return -1;
	return LT_OK;
}

/* ---- what load and run share ---- */

const char lt_load_opts_help[] =
	"    --probes LIST        comma-separated probes to attach (default: all default probes)\n"
	"    --pid PID            only record processes of this thread group (kernel-side;\n"
	"                         signal and oom also keep signals to it and its OOM kill);\n"
	"                         the process must exist (a process id, not a thread's)\n"
	"    --cgroup PATH        only record tasks in this cgroup v2 directory or below it\n"
	"    --ringbuf-size BYTES ring buffer size: a power of two >= 4096, K/M suffixes allowed\n"
	"                         (default 1M)\n"
	"    --state MODE         where probes keep per-thread and per-socket state: auto\n"
	"                         (default: task- and socket-local storage where the kernel\n"
	"                         lets tracing programs use it, 5.11+; else bounded hashes;\n"
	"                         sockets in the hash where tcp's classic-tracepoint takeover\n"
	"                         is attached, 7.x), local (fail without it; no such\n"
	"                         takeover) or hash (the bounded hashes)\n"
	"    --max-threads N      bounded hashes: threads in a syscall, open or run queue at\n"
	"                         once (default: kernel.threads-max, at most 65536)\n"
	"    --max-conns N        bounded hashes: TCP sockets tracked at once; a loopback\n"
	"                         connection is two (default 65536). A full hash is counted\n"
	"                         as drops\n"
	"    --rate-limit LIST    per-cgroup rate limits of record probes, e.g.\n"
	"                         exec=2000/s,open=50000/s: each cgroup may have that many\n"
	"                         records of the probe per second (bursts up to a second's\n"
	"                         worth); the rest are counted as throttled, never silent\n"
	"    --no-shed            drop exec and open records whole when the ring is full;\n"
	"                         by default, once it is three quarters full they are\n"
	"                         written short (argv cut at 128 bytes, the path at 64,\n"
	"                         args_shed/path_shed true) so fewer are dropped\n";

void lt_print_probes(FILE *f)
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

void lt_load_defaults(struct lt_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].dflt)
			o->probes |= 1ull << i;
	o->ringbuf_size = LT_RINGBUF_DEFAULT;
	o->state = LT_STATE_AUTO;
	o->max_threads = 0; /* lt_default_max_threads(), at load */
	o->max_conns = LT_MAX_CONNS_DEFAULT;
}

#define LT_RATE_MAX 1000000000u

/* --rate-limit exec=2000/s,open=50000/s into o->rate (by probe id); prints the error */
static int parse_rate_limit(struct lt_load_opts *o, const char *s)
{
	memset(o->rate, 0, sizeof(o->rate));
	while (*s) {
		size_t n = strcspn(s, ","), name_len = strcspn(s, "=,");
		const struct lt_probe *p = lt_probe_by_name(s, name_len);
		const char *num = s + name_len + 1, *end = s + n;
		unsigned long long rate = 0;
		const char *q = num;

		if (name_len >= n)
			return lt_error(LT_USAGE, "--rate-limit: '%.*s' is not PROBE=N/s", (int)n,
					s);
		if (!p || p->cmd)
			return lt_error(LT_USAGE, "--rate-limit: unknown probe '%.*s'",
					(int)name_len, s);
		if (!p->type)
			return lt_error(LT_USAGE,
					"--rate-limit: %s writes no records (an aggregate probe: "
					"nothing to hold back)",
					p->name);
		for (; q < end && *q >= '0' && *q <= '9'; q++)
			if (rate <= LT_RATE_MAX) /* past it: an error below, whatever follows */
				rate = rate * 10 + (unsigned long long)(*q - '0');
		if (q == num || (q < end && !(end - q == 2 && !strncmp(q, "/s", 2))))
			return lt_error(LT_USAGE, "--rate-limit: '%.*s' is not PROBE=N/s", (int)n,
					s);
		if (!rate || rate > LT_RATE_MAX)
			return lt_error(LT_USAGE,
					"--rate-limit: %s: the rate must be 1 to %u events/s per "
					"cgroup",
					p->name, LT_RATE_MAX);
		if (o->rate[p->id])
			return lt_error(LT_USAGE, "--rate-limit: %s given twice", p->name);
		o->rate[p->id] = rate;
		s = end;
		if (*s == ',' && *++s == 0)
			break;
	}
	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		if (o->rate[i])
			return LT_OK;
	return lt_error(LT_USAGE, "--rate-limit: empty list");
}

int lt_load_opt(struct lt_load_opts *o, int key, const char *arg, uint64_t num)
{
	switch (key) {
	case LT_O_PROBES:
		return lt_parse_probe_list(arg, false, &o->probes);
	case LT_O_PID:
		o->pid = num;
		return lt_check_pid_arg(o->pid);
	case LT_O_CGROUP:
		o->cgroup = arg;
		return lt_check_cgroup_arg(arg);
	case LT_O_RINGBUF:
		if (num < 4096 || (num & (num - 1)))
			return lt_error(
				LT_USAGE,
				"--ringbuf-size: %s is not a power of two between 4096 and 1G",
				arg);
		o->ringbuf_size = num;
		return LT_OK;
	case LT_O_REPLACE:
		o->replace = true;
		return LT_OK;
	case LT_O_PER_PID:
		o->sys_per_pid = true;
		return LT_OK;
	case LT_O_COUNT_ONLY:
		o->sys_count = true;
		return LT_OK;
	case LT_O_STATE:
		if (!strcmp(arg, "auto"))
			o->state = LT_STATE_AUTO;
		else if (!strcmp(arg, "local"))
			o->state = LT_STATE_LOCAL;
		else if (!strcmp(arg, "hash"))
			o->state = LT_STATE_HASH;
		else
			return lt_error(LT_USAGE, "--state: '%s' is not auto, local or hash", arg);
		return LT_OK;
	case LT_O_MAX_THREADS:
		o->max_threads = num;
		return LT_OK;
	case LT_O_MAX_CONNS:
		o->max_conns = num;
		return LT_OK;
	case LT_O_RATE_LIMIT:
		return parse_rate_limit(o, arg);
	case LT_O_NO_SHED:
		o->no_shed = true;
		return LT_OK;
	}
	return -1;
}

int lt_load_check(const struct lt_load_opts *o)
{
	const struct lt_probe *sys = lt_probe_by_name("syscalls", 8);

	if (o->sys_per_pid && sys && !(o->probes >> (sys - lt_probes) & 1))
		return lt_error(LT_USAGE, "load: --per-pid needs --probes with syscalls (it splits "
					  "the syscalls histograms per process)");
	if (o->sys_count && sys && !(o->probes >> (sys - lt_probes) & 1))
		return lt_error(LT_USAGE, "load: --count-only needs --probes with syscalls (it "
					  "counts syscalls without their latency)");
	for (size_t i = 0; i < lt_nprobes; i++)
		if (o->rate[lt_probes[i].id] && !(o->probes >> i & 1))
			return lt_error(LT_USAGE,
					"--rate-limit: %s is not loaded (add it to --probes)",
					lt_probes[i].name);
	return LT_OK;
}
