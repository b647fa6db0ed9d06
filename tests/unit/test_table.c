// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tables of status and top: columns as wide as their widest cell (the fixed
 * width as a minimum), left or right aligned, no trailing spaces, short rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "tap.h"

static char out[4096];

static const char *print(struct lt_table *t)
{
	FILE *f = fmemopen(out, sizeof(out), "w");
	int err = lt_table_print(t, f);

	fclose(f);
	return err ? NULL : out;
}

int main(void)
{
	static const struct lt_col cols[] = {
		{ "PROBE", -6 },
		{ "HOOK", -4 },
		{ "EVENTS", 8 },
		{ "", -1 },
	};
	struct lt_table t;

	lt_table_init(&t, cols, 4);
	lt_table_cell(&t, "exec");
	lt_table_cell(&t, "%s", "fentry");
	lt_table_cell(&t, "%d", 12);
	lt_table_end_row(&t);
	lt_table_cell(&t, "open");
	lt_table_cell(&t, "tracepoint");
	lt_table_cell(&t, "%llu", 18446744073709551615ull);
	lt_table_cell(&t, "per cpu");
	lt_table_end_row(&t);
	lt_table_cell(&t, "oom");
	lt_table_cell(&t, "-");
	lt_table_end_row(&t);
	ok(!strcmp(print(&t), "PROBE  HOOK                     EVENTS\n"
			      "exec   fentry                       12\n"
			      "open   tracepoint 18446744073709551615 per cpu\n"
			      "oom    -\n"),
	   "widths from the widest cell, the fixed ones as minimums; no trailing spaces");

	lt_table_cell(&t, "x");
	lt_table_cell(&t, "y");
	lt_table_cell(&t, "%d", 1);
	lt_table_end_row(&t);
	ok(!strcmp(print(&t), "PROBE  HOOK   EVENTS\n"
			      "x      y           1\n"),
	   "a print drops the rows: the next one is measured afresh");

	lt_table_cell(&t, "a");
	lt_table_cell(&t, "b");
	lt_table_cell(&t, "c");
	lt_table_cell(&t, "d");
	lt_table_cell(&t, "past the last column");
	lt_table_end_row(&t);
	ok(!strcmp(print(&t), "PROBE  HOOK   EVENTS\n"
			      "a      b           c d\n"),
	   "cells past the last column are dropped");
	lt_table_free(&t);
	return tap_done();
}
