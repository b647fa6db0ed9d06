/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Exit codes and error reporting shared by every layer of the loader. */
#ifndef LOWTRACE_H
#define LOWTRACE_H

#define LT_PIN_ROOT "/sys/fs/bpf"
#define LT_PIN_DIR LT_PIN_ROOT "/lowtrace"

/* Exit codes, documented in `lowtrace -h`. */
enum lt_exit_code {
	LT_OK = 0,
	LT_FAIL = 1, /* runtime failure: verifier, attach, I/O */
	LT_USAGE = 2, /* bad command line */
	LT_NOT_LOADED = 3,
	LT_ALREADY_LOADED = 4,
	LT_ENV = 5, /* no privileges, no BTF, no bpffs, unsupported kernel */
};

/* Print "lowtrace: <message>" as one line on stderr; returns `code`. */
int lt_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

extern int lt_verbose;

#endif
