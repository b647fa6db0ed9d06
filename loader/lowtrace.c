// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Error lines, number parsing, stop signals, the clock and /proc task facts, for every layer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lowtrace.h"

int lt_verbose;
const char *lt_err_where;
volatile sig_atomic_t lt_stop;

/*
 * Messages quote what came from files, the kernel and other processes: bytes outside printable
 * ASCII are written as \xNN (never raw to a terminal), and the line is at most 512 bytes before
 * that.
 */
static void vline(const char *fmt, va_list ap)
{
	char msg[512], out[4 * sizeof(msg)];
	size_t n = 0;
	int len = 0;

	if (lt_err_where)
		len = snprintf(msg, sizeof(msg), "%s: ", lt_err_where);
	if (len < 0 || (size_t)len >= sizeof(msg))
		len = 0;
	vsnprintf(msg + len, sizeof(msg) - len, fmt, ap);
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f)
			out[n++] = *p;
		else
			n += snprintf(out + n, sizeof(out) - n, "\\x%02x", *p);
	}
	out[n] = 0;
	fprintf(stderr, "lowtrace: %s\n", out);
}

int lt_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(fmt, ap);
	va_end(ap);
	return code;
}

void lt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(fmt, ap);
	va_end(ap);
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

static void on_stop(int sig)
{
	lt_stop = sig;
}

void lt_catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	lt_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool lt_sleep_s(uint64_t secs)
{
	for (uint64_t t = 0; t < secs * 10 && !lt_stop; t++)
		usleep(100000);
	return !lt_stop;
}

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: a kernel thread */

int lt_proc_task(uint32_t pid, uint32_t *tgid, bool *kthread)
{
	char path[64], line[256], *p;
	unsigned long flags = 0;
	bool have_tgid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!have_tgid && fgets(line, sizeof(line), f))
		have_tgid = sscanf(line, "Tgid: %u", tgid) == 1;
	fclose(f);
	if (!have_tgid)
		return -ESRCH; /* gone while read */
	/* the flags are the 9th field of stat; the comm before them may hold anything */
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p, ") %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return -ESRCH;
	*kthread = flags & PF_KTHREAD;
	return 0;
}

uint64_t lt_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
