/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tables the commands print (status, top): rows are kept until printed, so
 * each column is as wide as its widest cell, whatever the values are.
 */
#ifndef LT_TABLE_H
#define LT_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define LT_TABLE_COLS 8

struct lt_col {
	const char *head; /* "": none (a trailing column of notes) */
	int min; /* at least this wide, the width it had when fixed; < 0: left-aligned */
};

struct lt_table {
	const struct lt_col *cols;
	unsigned int ncols;
	char *text; /* the cells, each NUL-terminated, row after row */
	size_t len, cap;
	unsigned char *row; /* cells of each row (a row may end early) */
	size_t nrows, rcap;
	unsigned int cells; /* of the row being written */
	int err; /* 0, or -ENOMEM: a cell was lost */
};

void lt_table_init(struct lt_table *t, const struct lt_col *cols, unsigned int ncols);
/* The next cell of the current row (past the last column: ignored). */
void lt_table_cell(struct lt_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lt_table_end_row(struct lt_table *t);
/*
 * The header and the rows to f, a space between columns and none at a line's end;
 * the rows are then dropped (the memory is kept for the next print). An exit code:
 * a table that lost a cell prints nothing but the error.
 */
int lt_table_print(struct lt_table *t, FILE *f);
void lt_table_free(struct lt_table *t);

#endif
