/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one option parser. Every option of every command is described once
 * in opts.c (name, short letter, value and its limits); a command lists the
 * keys it takes and gets each parsed value through its callback. -h prints
 * the command's help; unknown options, options of other commands, missing
 * values, bad numbers, stray arguments and options that exclude or need each other (one
 * table, in opts.c) get one line and LT_USAGE.
 */
#ifndef LT_OPTS_H
#define LT_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/socket.h>

#include "kernel_suite.h"

enum lt_opt_key {
	/* short letters are their own keys */
	LT_O_FREQ = 'F',
	LT_O_PID = 'p',
	LT_O_CGROUP = 'c',
	LT_O_DURATION = 'd',
	LT_O_FORMAT = 'f',
	LT_O_OUTPUT = 'o',
	/* long only */
	LT_O_PROBES = 256,
	LT_O_RINGBUF,
	LT_O_REPLACE,
	LT_O_PER_PID,
	LT_O_COUNT_ONLY,
	LT_O_STATE,
	LT_O_MAX_THREADS,
	LT_O_MAX_CONNS,
	LT_O_JSON,
	LT_O_TEXT,
	LT_O_TYPE,
	LT_O_COUNT,
	LT_O_INTERVAL,
	LT_O_LISTEN,
	LT_O_PER_SYS_LAT,
	LT_O_ROWS,
	LT_O_MEASURE,
	LT_O_OFF_CPU,
	LT_O_SAMPLE_BYTES,
	LT_O_LEAKS,
	LT_O_FOLLOW,
	LT_O_CONFIG,
	LT_O_ROTATE_SIZE,
	LT_O_ROTATE_KEEP,
	LT_O_BY,
	LT_O_BY_MAX,
	LT_O_CONTAINER,
	LT_O_UNIT,
	LT_O_IDENT_CAP,
	LT_O_RATE_LIMIT,
	LT_O_NO_SHED,
	LT_O_NO_UNWIND,
	LT_O_PIN_GROUP,
	LT_O_IDENT_CGROUP,
	LT_O_CG_GRACE,
	LT_O_CG_CAP,
	LT_O_ANCESTORS,
	LT_O_MAX_PROCS,
	LT_O_CONTAINER_NAME,
	LT_O_SOCKET,
	LT_O_MAX_SUBS,
};

/*
 * One option found: `arg` is its value as typed (NULL for a flag), `num` the
 * value of a numeric option, already checked against its limits. Returns an
 * exit code; anything but LT_OK stops the parse.
 */
typedef int (*lt_opt_fn)(void *ctx, int key, const char *arg, uint64_t num);

/*
 * argv[0] is the command's name; `keys` ends with 0. A command whose keys hold LT_O_CONFIG
 * takes --config FILE: the options of FILE's [argv[0]] section are applied first, then the
 * command line's (the last value of an option wins). See lt_config_help.
 */
int lt_opts_parse(int argc, char **argv, const int *keys, void (*help)(void), lt_opt_fn fn,
		  void *ctx);

/*
 * The config text buf[0..len) (named `name` in errors, FILE:LINE) for command cmd: its section
 * applied through fn (NULL: only checked), every other section checked as its command checks
 * it. Whence the text came is read_config's business (opts.c); this is what the fuzzer calls.
 */
int lt_config_parse(const char *buf, size_t len, const char *name, const char *cmd, const int *keys,
		    lt_opt_fn fn, void *ctx, uint64_t *seen);
/* The options of the commands with a config section, ending with 0 */
extern const int lt_load_keys[], lt_metrics_keys[], lt_events_keys[];

/* --listen HOST:PORT or [V6]:PORT, numeric: 0, or -1 when it is not that */
struct sockaddr_storage;
int lt_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len);

/*
 * The options `load` and `run` share (--probes --pid --cgroup --ringbuf-size
 * --per-pid --replace) into struct lt_load_opts: LT_OK when `key` was one of
 * them, -1 when it was not.
 */
int lt_load_opt(struct lt_load_opts *o, int key, const char *arg, uint64_t num);
/* What `load` attaches without --probes, and the ring size without --ringbuf-size. */
void lt_load_defaults(struct lt_load_opts *o);
/* After the parse: the load options that need another one's value (--per-pid: syscalls). */
int lt_load_check(const struct lt_load_opts *o);

/*
 * The values that name something on this machine, checked when parsed (before anything is
 * loaded, and before "not loaded" or "already loaded"); they print the error:
 * --pid a process that exists, not one of its threads (the kernel filters compare the
 * thread group), --cgroup a cgroup v2 directory.
 */
int lt_check_pid_arg(uint32_t pid);
int lt_check_cgroup_arg(const char *path);
/* events/run --container (1 to 64 lower-case hex digits), --unit (NAME.service, NAME.scope) */
int lt_check_container_arg(const char *s);
int lt_check_unit_arg(const char *s);

/* --interval S and --count N of the commands that print again (hist, top) */
struct lt_every {
	uint64_t interval_s; /* 0: print once */
	uint64_t count; /* 0: until a signal */
};
/* LT_OK when `key` was one of them, -1 when it was not. */
int lt_every_opt(struct lt_every *e, int key, uint64_t num);

/* Their lines for -h, and the probe list under them. */
extern const char lt_load_opts_help[];
extern const char lt_config_help[];
void lt_print_probes(FILE *f);

/* A comma-separated probe list into a mask: bit i is lt_probes[i], or with `by_type` bit
 * t is record type t (--type). Prints the error. */
int lt_parse_probe_list(const char *s, bool by_type, uint64_t *mask);

#endif
