// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Tables with their column widths taken from the cells (table.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "lowtrace.h"
#include "table.h"

void lt_table_init(struct lt_table *t, const struct lt_col *cols, unsigned int ncols)
{
	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols < LT_TABLE_COLS ? ncols : LT_TABLE_COLS;
}

void lt_table_cell(struct lt_table *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err || t->cells >= t->ncols)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || LT_GROW(t->text, t->cap, t->len + n + 1)) {
		t->err = -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(t->text + t->len, n + 1, fmt, ap);
	va_end(ap);
	t->len += n + 1;
	t->cells++;
}

void lt_table_end_row(struct lt_table *t)
{
	if (!t->err && LT_GROW(t->row, t->rcap, t->nrows + 1))
		t->err = -ENOMEM;
	if (!t->err)
		t->row[t->nrows++] = t->cells;
	t->cells = 0;
}

/* one line: cells padded to their column's width, the last one as it is */
static void put_row(const struct lt_table *t, const size_t *w, const char *const *cell,
		    unsigned int n, FILE *f)
{
	while (n && !*cell[n - 1])
		n--; /* empty trailing cells: no trailing spaces */
	for (unsigned int c = 0; c < n; c++) {
		size_t len = strlen(cell[c]);
		size_t pad = w[c] > len ? w[c] - len : 0;
		bool left = t->cols[c].min < 0;

		if (c)
			fputc(' ', f);
		if (!left)
			fprintf(f, "%*s", (int)pad, "");
		fputs(cell[c], f);
		if (left && c + 1 < n)
			fprintf(f, "%*s", (int)pad, "");
	}
	fputc('\n', f);
}

int lt_table_print(struct lt_table *t, FILE *f)
{
	size_t w[LT_TABLE_COLS];
	const char *cell[LT_TABLE_COLS];
	const char *s;
	int err = t->err;

	if (err)
		goto out;
	for (unsigned int c = 0; c < t->ncols; c++) {
		size_t len = strlen(t->cols[c].head);
		int min = t->cols[c].min;

		w[c] = (size_t)(min < 0 ? -min : min);
		if (len > w[c])
			w[c] = len;
	}
	s = t->text;
	for (size_t r = 0; r < t->nrows; r++) {
		for (unsigned int c = 0; c < t->row[r]; c++) {
			size_t len = strlen(s);

			if (len > w[c])
				w[c] = len;
			s += len + 1;
		}
	}
	for (unsigned int c = 0; c < t->ncols; c++)
		cell[c] = t->cols[c].head;
	put_row(t, w, cell, t->ncols, f);
	s = t->text;
	for (size_t r = 0; r < t->nrows; r++) {
		for (unsigned int c = 0; c < t->row[r]; c++) {
			cell[c] = s;
			s += strlen(s) + 1;
		}
		put_row(t, w, cell, t->row[r], f);
	}
out:
	t->len = 0;
	t->nrows = 0;
	t->cells = 0;
	t->err = 0;
	return err ? lt_error(LT_FAIL, "cannot print a table: %s", strerror(-err)) : LT_OK;
}

void lt_table_free(struct lt_table *t)
{
	free(t->text);
	free(t->row);
	lt_table_init(t, t->cols, t->ncols);
}
