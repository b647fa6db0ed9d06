/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Output through one reused buffer: encoders append whole records, one write() per flush.
 * To standard output, or to a file (events -o) with size-based rotation: FILE -> FILE.1 ->
 * ... FILE.N, a record never split across files, and a failed write holding the bytes (the
 * caller stops reading until writes work again) instead of dropping them.
 */
#ifndef LT_OUT_H
#define LT_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "encode.h"

#define LT_OUT_SIZE (256 * 1024)
#define LT_OUT_MARKS 4096 /* records in the buffer whose end is remembered */

/* Where a record ends in the buffer, and the caller's tag for it (its ring position). */
struct lt_out_mark {
	size_t end;
	uint64_t tag;
};

struct lt_out {
	struct lt_buf b;
	bool failed; /* stdout: a write failed, the stream should end */
	/* a file (-o): */
	int fd; /* STDOUT_FILENO, or the file; -1 while it cannot be opened */
	const char *path;
	uint64_t rotate_size; /* 0: no rotation */
	unsigned int rotate_keep;
	uint64_t written; /* bytes in the current file */
	bool blocked; /* a write, open or rotation failed: the buffer holds what is unwritten */
	uint64_t write_errors; /* failed writes, opens and rotations */
	uint64_t rotations;
	uint64_t truncations; /* partial lines cut back after a failed write */
	/* the records in the buffer (lt_out_mark), and the tag of the last one written whole */
	struct lt_out_mark marks[LT_OUT_MARKS];
	size_t nmarks;
	uint64_t done;
};

/*
 * Every file lowtrace writes (events -o and its rotation, profile and alloc -o) is opened by
 * lt_out_open: never through a symbolic link (O_NOFOLLOW), never blocking (a FIFO), created
 * 0600, and refused unless it is a regular file this user owns, not writable by group or
 * others and with one link; dev_ok also lets a device node root owns be written (/dev/null).
 * Checked on the open descriptor (fstat), not only the name. Returns the descriptor, or -1
 * with *why the reason (buf holds it when it is built).
 */
int lt_out_open(const char *path, int flags, bool dev_ok, const char **why, char *buf, size_t len);
/* The same rules on what is at `path` now (lstat; NULL when nothing is): the reason, or NULL */
const char *lt_out_refused(const char *path, bool dev_ok, char *buf, size_t len);
/* Before anything starts: "lowtrace: OPT PATH: reason: refused" and LT_USAGE, or LT_OK */
int lt_out_check(const char *opt, const char *path, bool dev_ok);

/* b over the caller's memory (static: nothing is allocated); ignores SIGPIPE */
void lt_out_init(struct lt_out *o, char *mem, size_t size);
/* After lt_out_init: write to `path` (appended to), rotated at `rotate_size` bytes (0: never)
 * keeping `keep` old files. A failure to open is reported and retried like a failed write. */
void lt_out_file(struct lt_out *o, const char *path, uint64_t rotate_size, unsigned int keep);
/* Write and empty the buffer. stdout: a closed reader (EPIPE) ends the output quietly,
 * another error prints one line; either sets o->failed. A file: an error prints one line
 * (once until writes work again), keeps what is unwritten and sets o->blocked. */
void lt_out_flush(struct lt_out *o);
/* A record ends at b.len and began at `start`: rotate first if it would take the file past
 * the rotation size (the file before it is flushed and rotated, the record opens the next). */
void lt_out_record(struct lt_out *o, size_t start);
/* The record just encoded ends at b.len; `tag` is what lt_out_done gives back once it is
 * written whole. */
void lt_out_mark(struct lt_out *o, uint64_t tag);
/* Take no more records before a flush: too little room for one, or no mark left. */
bool lt_out_full(const struct lt_out *o);
/* The tag of the last record whose bytes all reached the output (0: none yet). A write that
 * fails part way is cut back (ftruncate) to the last whole line, the rest kept to retry. */
static inline uint64_t lt_out_done(const struct lt_out *o)
{
	return o->done;
}
/* SIGHUP: flush, close and open the path again (after an external rotation). */
void lt_out_reopen(struct lt_out *o);

#endif
