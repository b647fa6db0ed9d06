// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target: any bytes as the config file (lt_config_parse, what --config reads) of each
 * command that takes one: load, metrics and events, every section checked as its command would.
 *
 * Checked, besides the sanitizers: the result is LT_OK or LT_USAGE; an error is exactly one
 * line "lowtrace: ...\n" of printable ASCII (the file's bytes escaped, never raw) and a success
 * prints nothing; the values handed to the command are the file's bytes without a NUL, '#' or
 * surrounding blanks. The callback frees each copy, so a copy not handed over is a leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowtrace.h"
#include "opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *s, size_t n)
{
	fprintf(stderr, "fuzz_config: %s (%zu bytes):\n", what, n);
	fwrite(s, 1, n, stderr);
	fputc('\n', stderr);
	abort();
}

/* a value as a command receives it */
static int take(void *ctx, int key, const char *arg, uint64_t num)
{
	size_t n;

	(void)ctx;
	(void)key;
	(void)num;
	if (!arg)
		return LT_OK; /* a flag set to true */
	n = strlen(arg);
	if (!n || strchr(arg, '#') || strchr(arg, '\n') || arg[0] == ' ' || arg[0] == '\t' ||
	    arg[n - 1] == ' ' || arg[n - 1] == '\t')
		fail("a value with a comment, newline or blanks left in", arg, n);
	free((void *)arg);
	return LT_OK;
}

static void one(const char *buf, size_t size, const char *cmd, const int *keys)
{
	FILE *err, *saved = stderr;
	char *out = NULL;
	size_t len = 0;
	uint64_t seen = 0;
	int rc;

	err = open_memstream(&out, &len);
	if (!err)
		abort();
	stderr = err;
	rc = lt_config_parse(buf, size, "fuzz.conf", cmd, keys, take, NULL, &seen);
	fclose(err);
	stderr = saved;
	if (rc != LT_OK && rc != LT_USAGE)
		fail("neither LT_OK nor LT_USAGE", out, len);
	if (rc == LT_OK && len)
		fail("a success printed something", out, len);
	if (rc != LT_OK) {
		if (len < 11 || strncmp(out, "lowtrace: ", 10) || out[len - 1] != '\n' ||
		    memchr(out, '\n', len - 1))
			fail("an error that is not one 'lowtrace: ' line", out, len);
		for (size_t i = 0; i + 1 < len; i++)
			if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7f)
				fail("a raw byte in the error", out, len);
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;

	one(p, size, "load", lt_load_keys);
	one(p, size, "metrics", lt_metrics_keys);
	one(p, size, "events", lt_events_keys);
	return 0;
}
