// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Every option of every command, described once, and the one parser. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

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
	OPT("identity-cgroup", LT_O_IDENT_CGROUP, STR),
	OPT_NUM("cgroup-grace", LT_O_CG_GRACE, 86400, false, ZERO_OK),
	OPT_NUM("cgroup-cap", LT_O_CG_CAP, 1u << 20, true, ZERO_AT_LEAST_1),
	OPT_NUM("ancestors", LT_O_ANCESTORS, LT_ANC_MAX, false, ZERO_OK),
	OPT_NUM("max-procs", LT_O_MAX_PROCS, 1u << 22, true, ZERO_AT_LEAST_1),
	OPT("json", LT_O_JSON, FLAG),
	OPT("text", LT_O_TEXT, FLAG),
	OPT("type", LT_O_TYPE, STR),
	OPT_NUM("count", LT_O_COUNT, ~0ull, false, ZERO_AT_LEAST_1),
	OPT_NUM("duration", LT_O_DURATION, 86400 * 365, false, ZERO_AT_LEAST_1),
	OPT("follow", LT_O_FOLLOW, FLAG),
	OPT("container", LT_O_CONTAINER, STR),
	OPT("container-name", LT_O_CONTAINER_NAME, STR),
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
	OPT("socket", LT_O_SOCKET, STR),
	OPT_NUM("max-subscribers", LT_O_MAX_SUBS, 1024, false, ZERO_OK),
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

static int parse_rate_limit(struct lt_load_opts *o, const char *s);

static int parse_state(const char *arg, enum lt_state_mode *state)
{
	if (!strcmp(arg, "auto"))
		*state = LT_STATE_AUTO;
	else if (!strcmp(arg, "local"))
		*state = LT_STATE_LOCAL;
	else if (!strcmp(arg, "hash"))
		*state = LT_STATE_HASH;
	else
		return lt_error(LT_USAGE, "--state: '%s' is not auto, local or hash", arg);
	return LT_OK;
}

/*
 * What a value must be, whichever command or config section it is given to (so `events` refuses
 * a bad [load] value as `load` does). Only the value itself: what names something on this
 * machine (--pid, --cgroup, -o) is checked by the command that uses it.
 */
static int check_value(int key, const char *arg, uint64_t num)
{
	struct sockaddr_storage ss;
	struct lt_load_opts lo;
	enum lt_state_mode state;
	socklen_t sl;
	uint64_t mask;

	switch (key) {
	case LT_O_PROBES:
		return lt_parse_probe_list(arg, false, &mask);
	case LT_O_TYPE:
		return lt_parse_probe_list(arg, true, &mask);
	case LT_O_RINGBUF:
		if (num < 4096 || (num & (num - 1)))
			return lt_error(
				LT_USAGE,
				"--ringbuf-size: %s is not a power of two between 4096 and 1G",
				arg);
		return LT_OK;
	case LT_O_STATE:
		return parse_state(arg, &state);
	case LT_O_IDENT_CGROUP:
		for (int i = 0; i < LT_CTRL_N; i++)
			if (!strcmp(arg, lt_ident_ctrl_name(i)))
				return LT_OK;
		if (!strcmp(arg, "auto") || !strcmp(arg, "v2"))
			return LT_OK;
		return lt_error(LT_USAGE,
				"--identity-cgroup: '%s' is not auto, cgroup2 or one of pids, "
				"memory, cpu, cpuacct, blkio, devices, freezer, cpuset",
				arg);
	case LT_O_RATE_LIMIT:
		return parse_rate_limit(&lo, arg);
	case LT_O_CONTAINER:
		return lt_check_container_arg(arg);
	case LT_O_UNIT:
		return lt_check_unit_arg(arg);
	case LT_O_BY:
		if (strcmp(arg, "unit") && strcmp(arg, "container") && strcmp(arg, "pod"))
			return lt_error(LT_USAGE, "--by: '%s' is not unit, container or pod", arg);
		return LT_OK;
	case LT_O_SOCKET:
		/* a unix socket's path: sun_path's 108 bytes with the NUL */
		if (arg[0] != '/' || strlen(arg) > 107 || arg[strlen(arg) - 1] == '/')
			return lt_error(LT_USAGE,
					"--socket %s: want an absolute file name of at most 107 "
					"bytes",
					arg);
		return LT_OK;
	case LT_O_LISTEN:
		if (lt_parse_listen(arg, &ss, &sl))
			return lt_error(LT_USAGE,
					"--listen %s: want HOST:PORT or [V6]:PORT with a numeric "
					"address",
					arg);
		return LT_OK;
	}
	return LT_OK;
}

int lt_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	char *end;
	unsigned long port;
	size_t hl;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port == 0 || port > 65535)
		return -1;
	hl = colon - spec;
	memcpy(host, spec, hl);
	host[hl] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) != 1)
			return -1;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		*len = sizeof(*v6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &v4->sin_addr) != 1)
		return -1;
	v4->sin_family = AF_INET;
	v4->sin_port = htons(port);
	*len = sizeof(*v4);
	return 0;
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
	if (d->kind != FLAG) {
		err = check_value(d->key, arg, num);
		if (err)
			return err;
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

/* the sections a config file may have: the commands that take --config, and their options */
const int lt_load_keys[] = { LT_O_PROBES,     LT_O_PID,	       LT_O_CGROUP,
			     LT_O_RINGBUF,    LT_O_REPLACE,    LT_O_PER_PID,
			     LT_O_COUNT_ONLY, LT_O_STATE,      LT_O_MAX_THREADS,
			     LT_O_MAX_CONNS,  LT_O_RATE_LIMIT, LT_O_NO_SHED,
			     LT_O_PIN_GROUP,  LT_O_CONFIG,     LT_O_IDENT_CGROUP,
			     LT_O_CG_GRACE,   LT_O_CG_CAP,     LT_O_ANCESTORS,
			     LT_O_MAX_PROCS,  0 };
const int lt_metrics_keys[] = {
	LT_O_LISTEN, LT_O_PER_SYS_LAT, LT_O_BY, LT_O_BY_MAX, LT_O_CONFIG, 0
};
const int lt_events_keys[] = { LT_O_JSON,	 LT_O_TEXT,	 LT_O_TYPE,
			       LT_O_PID,	 LT_O_COUNT,	 LT_O_DURATION,
			       LT_O_FOLLOW,	 LT_O_CONTAINER, LT_O_UNIT,
			       LT_O_IDENT_CAP,	 LT_O_OUTPUT,	 LT_O_ROTATE_SIZE,
			       LT_O_ROTATE_KEEP, LT_O_CONFIG,	 LT_O_CONTAINER_NAME,
			       LT_O_SOCKET,	 LT_O_MAX_SUBS,	 0 };

static const struct config_section {
	const char *name;
	const int *keys;
} config_sections[] = {
	{ "load", lt_load_keys },
	{ "metrics", lt_metrics_keys },
	{ "events", lt_events_keys },
};
#define NSECTIONS (sizeof(config_sections) / sizeof(config_sections[0]))

/* where the parse of one file is */
struct config_state {
	const char *cmd;
	const int *keys;
	lt_opt_fn fn;
	void *ctx;
	uint64_t *seen;
	int section; /* index in config_sections, -1 before the first */
	unsigned int line;
	unsigned int set_at[NSECTIONS][NDESCS]; /* the line an option was set on, 0: not yet */
};

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
 * '#' at the start of a line or after a space or tab starts a comment, to the end of the line.
 * A '#' anywhere else would be part of a value, where it more likely is a comment missing its
 * space: refused, so no value can hold '#'.
 */
static int strip_comment(char *line)
{
	for (char *p = line; *p; p++) {
		if (*p != '#')
			continue;
		if (p > line && p[-1] != ' ' && p[-1] != '\t')
			return lt_error(LT_USAGE,
					"'#' inside a value (a comment needs a space before '#'; "
					"values cannot hold '#')");
		*p = 0;
		break;
	}
	return LT_OK;
}

/*
 * One line of the config: a section header, or `name = value` checked for every section as its
 * command would (check_value) and applied when the section is this command's. Errors name
 * FILE:LINE (lt_err_where).
 */
static int config_line(struct config_state *c, char *line)
{
	const struct config_section *sec;
	const struct opt_desc *d = NULL;
	char *eq, *name, *val, *arg;
	uint64_t seen_other = 0;
	unsigned int *at;
	int err;

	line = trim(line);
	if (*line == ';')
		return LT_OK;
	err = strip_comment(line);
	if (err)
		return err;
	line = trim(line);
	if (!*line)
		return LT_OK;
	if (*line == '[') {
		char *end = strchr(line, ']');

		c->section = -1;
		if (end && !trim(end + 1)[0]) {
			*end = 0;
			for (size_t i = 0; i < NSECTIONS; i++)
				if (!strcmp(trim(line + 1), config_sections[i].name))
					c->section = i;
		}
		if (c->section < 0)
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
	if (c->section < 0)
		return lt_error(LT_USAGE, "'%s' before the first [section]", name);
	sec = &config_sections[c->section];
	for (size_t i = 0; i < NDESCS && !d; i++)
		if (!strcmp(descs[i].name, name) && descs[i].key != LT_O_CONFIG)
			d = &descs[i];
	if (!d)
		return lt_error(LT_USAGE, "[%s]: unknown option '%s'", sec->name, name);
	/* the last would win unnoticed: a second one is a mistake, named with both lines */
	at = &c->set_at[c->section][d - descs];
	if (*at)
		return lt_error(LT_USAGE, "[%s]: '%s' given twice (lines %u and %u)", sec->name,
				name, *at, c->line);
	*at = c->line;
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
	/* another command's section: checked as that command checks it, not applied */
	if (strcmp(sec->name, c->cmd))
		return apply(sec->name, sec->keys, d, val, NULL, NULL, &seen_other);
	/* checked before the copy the callbacks may keep (a --listen, --output, --cgroup) */
	err = apply(c->cmd, c->keys, d, val, NULL, NULL, c->seen);
	if (err || !c->fn)
		return err;
	if (d->kind == FLAG)
		return apply(c->cmd, c->keys, d, val, c->fn, c->ctx, c->seen); /* no string kept */
	arg = strdup(val);
	if (!arg)
		return lt_error(LT_FAIL, "out of memory");
	return apply(c->cmd, c->keys, d, arg, c->fn, c->ctx, c->seen);
}

int lt_config_parse(const char *buf, size_t len, const char *name, const char *cmd, const int *keys,
		    lt_opt_fn fn, void *ctx, uint64_t *seen)
{
	static struct config_state c;
	char line[4096], where[4200];
	size_t pos = 0;
	int err = LT_OK;

	c = (struct config_state){
		.cmd = cmd, .keys = keys, .fn = fn, .ctx = ctx, .seen = seen, .section = -1
	};
	while (!err && pos < len) {
		const char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - p) : len - pos;

		c.line++;
		snprintf(where, sizeof(where), "%s:%u", name, c.line);
		lt_err_where = where;
		if (memchr(p, 0, n))
			err = lt_error(LT_USAGE, "NUL byte in line %u", c.line);
		else if (n > sizeof(line) - 2)
			err = lt_error(LT_USAGE, "line longer than %zu bytes", sizeof(line) - 2);
		else {
			memcpy(line, p, n);
			line[n] = 0;
			err = config_line(&c, line);
		}
		lt_err_where = NULL;
		pos += n + (nl ? 1 : 0);
	}
	return err;
}

#define CONFIG_MAX (1024 * 1024)

/*
 * The file first: whoever can write it chooses what root runs and where it writes, so like
 * sshd's StrictModes it must be a regular file owned by root or this user and writable by no one
 * else; never through a link, never blocking (a FIFO).
 */
static int read_config(const char *path, const char *cmd, const int *keys, lt_opt_fn fn, void *ctx,
		       uint64_t *seen)
{
	struct stat st;
	char *buf;
	size_t len = 0;
	int err, fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ELOOP)
		return lt_error(LT_USAGE, "--config %s: a symbolic link (never followed)", path);
	if (fd < 0)
		return lt_error(LT_USAGE, "--config %s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		err = lt_error(LT_FAIL, "--config %s: %s", path, strerror(errno));
		goto out;
	}
	err = LT_USAGE;
	if (S_ISDIR(st.st_mode))
		lt_error(err, "--config %s: a directory", path);
	else if (!S_ISREG(st.st_mode))
		lt_error(err, "--config %s: not a regular file", path);
	else if (st.st_uid != 0 && st.st_uid != geteuid())
		lt_error(err, "--config %s: owned by uid %u, not by root or this user: refused",
			 path, (unsigned int)st.st_uid);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		lt_error(err, "--config %s: writable by group or others (mode %04o): refused", path,
			 (unsigned int)(st.st_mode & 07777));
	else if (st.st_size > CONFIG_MAX)
		lt_error(err, "--config %s: larger than %u bytes", path, CONFIG_MAX);
	else
		err = LT_OK;
	if (err)
		goto out;
	buf = malloc(CONFIG_MAX + 1);
	if (!buf) {
		err = lt_error(LT_FAIL, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, CONFIG_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = lt_error(LT_FAIL, "--config %s: %s", path, strerror(errno));
			break;
		}
		if (!n)
			break;
		len += n;
		if (len > CONFIG_MAX) {
			err = lt_error(LT_USAGE, "--config %s: larger than %u bytes", path,
				       CONFIG_MAX);
			break;
		}
	}
	if (!err)
		err = lt_config_parse(buf, len, path, cmd, keys, fn, ctx, seen);
	free(buf);
out:
	close(fd);
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
	if (!S_ISDIR(st.st_mode) || statfs(path, &fs) ||
	    (fs.f_type != CGROUP2_SUPER_MAGIC && fs.f_type != CGROUP_SUPER_MAGIC))
		return lt_error(LT_USAGE, "--cgroup %s: not a cgroup directory", path);
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
	"    --cgroup PATH        only record tasks in this cgroup directory or below it, in\n"
	"                         the identity hierarchy (--identity-cgroup; v1: 16 levels)\n"
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
	"                         args_shed/path_shed true) so fewer are dropped\n"
	"    --identity-cgroup H  the cgroup hierarchy whose ids records, metrics --by,\n"
	"                         --rate-limit and blame key on: auto (default: a v1\n"
	"                         controller's where one is mounted, pids first, as\n"
	"                         cgroupfs runtimes put containers there; else cgroup2),\n"
	"                         cgroup2, or a controller (pids, memory, cpu, ...)\n"
	"    --cgroup-grace S     a removed cgroup's name and counts stay S seconds for\n"
	"                         late records and metrics --by's next read (default 300)\n"
	"    --cgroup-cap N       cgroups the kernel keeps names of (default 8192)\n"
	"    --ancestors N        exec records name N ancestors, nearest first (0-8,\n"
	"                         default 3)\n"
	"    --max-procs N        processes the kernel keeps the image of, for ancestry (an\n"
	"                         LRU; default 16384): evictions are counted (status)\n";

void lt_print_probes(FILE *f)
{
	int w = 12;

	for (size_t i = 0; i < lt_nprobes; i++)
		if ((int)strlen(lt_probes[i].name) > w)
			w = strlen(lt_probes[i].name); /* a longer name widens the column */
	fprintf(f, "PROBES\n");
	for (size_t i = 0; i < lt_nprobes; i++)
		if (!lt_probes[i].cmd)
			fprintf(f, "    %-*s %s%s\n", w, lt_probes[i].name, lt_probes[i].about,
				lt_probes[i].dflt ? "" : " [opt-in]");
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].cmd)
			fprintf(f, "    %-*s %s [lowtrace %s]\n", w, lt_probes[i].name,
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
	o->ancestors = LT_ANC_DEFAULT;
	o->max_procs = LT_PROCS_DEFAULT;
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
		o->ringbuf_size = num; /* checked by check_value */
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
		return parse_state(arg, &o->state);
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
	case LT_O_IDENT_CGROUP:
		o->ident_cgroup = arg;
		return LT_OK;
	case LT_O_CG_GRACE:
		o->cg_grace_s = num;
		o->cg_grace_set = true;
		return LT_OK;
	case LT_O_ANCESTORS:
		o->ancestors = num;
		return LT_OK;
	case LT_O_MAX_PROCS:
		o->max_procs = num;
		return LT_OK;
	case LT_O_CG_CAP:
		o->cg_cap = num;
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
