/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every layer of the loader shares: exit codes, error and info lines,
 * number parsing, the stop signals and the clock. No libbpf here.
 *
 * Two conventions hold across the loader:
 * - Commands, and the functions that print their own error, return an enum
 *   lt_exit_code: the error line is already on stderr, the caller passes the
 *   code up unchanged.
 * - Readers (functions that read maps, files or the ring and print nothing)
 *   return 0 or -errno; callers print strerror(-ret) and never read `errno`
 *   after them.
 */
#ifndef LOWTRACE_H
#define LOWTRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define LT_PIN_ROOT "/sys/fs/bpf"
#define LT_PIN_DIR LT_PIN_ROOT "/lowtrace"
#define LT_TRACEFS "/sys/kernel/tracing"

/* Exit codes, documented in `lowtrace -h`. */
enum lt_exit_code {
	LT_OK = 0,
	LT_FAIL = 1, /* runtime failure: verifier, attach, I/O */
	LT_USAGE = 2, /* bad command line */
	LT_NOT_LOADED = 3,
	LT_ALREADY_LOADED = 4,
	LT_ENV = 5, /* no privileges, no BTF, no bpffs, unsupported kernel */
	LT_GONE = 6, /* the pinned suite was unloaded or replaced while a command read it */
	LT_OWNER_GONE = 7, /* events as a subscriber: the owner of the ring stopped */
};

/* Print "lowtrace: <message>" as one line on stderr; returns `code`. */
int lt_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same line for news that is not an error (the suite was unloaded, ...). */
void lt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* When set, every error and info line names it after "lowtrace: " (a config file's FILE:LINE). */
extern const char *lt_err_where;

/* -v: libbpf's messages, including the verifier log */
extern int lt_verbose;

/* "OPT VALUE" as an unsigned number <= max (K/M/G suffixes if `suffix`); prints the error */
int lt_parse_u64(const char *opt, const char *s, bool suffix, uint64_t max, uint64_t *out);

/* SIGINT and SIGTERM set lt_stop (no SA_RESTART: a blocked poll or read returns EINTR). */
extern volatile sig_atomic_t lt_stop;
void lt_catch_stop(void);
/* Sleep `secs` seconds in 100 ms steps; false when a stop signal came first. */
bool lt_sleep_s(uint64_t secs);

/*
 * Reader: what /proc says of task `pid`: its thread group (a thread's id gives its
 * process) and whether it is a kernel thread (no user memory). 0, or -ESRCH when there is
 * no such task, or -errno.
 */
int lt_proc_task(uint32_t pid, uint32_t *tgid, bool *kthread);

uint64_t lt_now_ns(clockid_t clock);
static inline uint64_t lt_now_ms(void)
{
	return lt_now_ns(CLOCK_MONOTONIC) / 1000000;
}

#endif
