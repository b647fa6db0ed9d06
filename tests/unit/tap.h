/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A minimal TAP producer for the C unit tests. */
#ifndef LT_TAP_H
#define LT_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                                   \
	do {                                                                            \
		int _c = !!(cond);                                                      \
		printf("%sok %d - ", _c ? "" : "not ", ++tap_n);                        \
		printf(__VA_ARGS__);                                                    \
		printf("\n");                                                           \
		if (!_c) {                                                              \
			tap_failed++;                                                   \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                       \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif
