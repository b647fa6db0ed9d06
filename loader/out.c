// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _GNU_SOURCE /* memrchr */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lowtrace.h"
#include "out.h"

/*
 * Why the file `st` describes may not be written, NULL when it may: lowtrace runs as root, so a
 * link planted at the name, a file someone else owns or can write (they would read what we
 * append, or choose where it goes), a hard link to another name or anything but a regular file
 * (a FIFO would block) is never written. dev_ok: a device node root made (/dev/null) is.
 */
static const char *refuse(const struct stat *st, bool dev_ok, char *buf, size_t len)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link (never followed)";
	if (dev_ok && S_ISCHR(st->st_mode) && st->st_uid == 0)
		return NULL;
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != geteuid()) {
		snprintf(buf, len, "owned by uid %u, not by this user (uid %u)",
			 (unsigned int)st->st_uid, (unsigned int)geteuid());
		return buf;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(buf, len, "writable by group or others (mode %04o)",
			 (unsigned int)(st->st_mode & 07777));
		return buf;
	}
	if (st->st_nlink > 1) {
		snprintf(buf, len, "has %lu hard links", (unsigned long)st->st_nlink);
		return buf;
	}
	return NULL;
}

const char *lt_out_refused(const char *path, bool dev_ok, char *buf, size_t len)
{
	struct stat st;

	if (lstat(path, &st))
		return NULL; /* nothing there (or not reachable): the open says what fails */
	return refuse(&st, dev_ok, buf, len);
}

int lt_out_check(const char *opt, const char *path, bool dev_ok)
{
	char buf[96];
	const char *why = lt_out_refused(path, dev_ok, buf, sizeof(buf));

	if (why)
		return lt_error(LT_USAGE, "%s %s: %s: refused", opt, path, why);
	return LT_OK;
}

int lt_out_open(const char *path, int flags, bool dev_ok, const char **why, char *buf, size_t len)
{
	struct stat st;
	int fd, e;

	/* O_NONBLOCK: a FIFO that slipped in after the check must not hang the open */
	fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0) {
		e = errno;
		/* ELOOP: a link (O_NOFOLLOW); ENXIO: a FIFO without reader; say which */
		*why = lt_out_refused(path, dev_ok, buf, len);
		if (!*why)
			*why = strerror(e);
		errno = e;
		return -1;
	}
	/* what was opened, not what the name showed a moment ago */
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		*why = strerror(e);
		errno = e;
		return -1;
	}
	*why = refuse(&st, dev_ok, buf, len);
	if (*why) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

void lt_out_init(struct lt_out *o, char *mem, size_t size)
{
	*o = (struct lt_out){ .b = { mem, 0, size }, .fd = STDOUT_FILENO };
	/* a closed reader is a write error here (EPIPE), not a signal that kills */
	signal(SIGPIPE, SIG_IGN);
}

/* the first failure of an episode is reported; the rest only counted */
static void file_error(struct lt_out *o, const char *what, const char *path, const char *why)
{
	o->write_errors++;
	if (!o->blocked)
		lt_error(LT_FAIL, "%s %s: %s (holding the ring position until it works again)",
			 what, path, why);
	o->blocked = true;
}

static bool file_open(struct lt_out *o)
{
	struct stat st;
	const char *why;
	char buf[96];

	if (o->fd >= 0)
		return true;
	o->fd = lt_out_open(o->path, O_WRONLY | O_CREAT | O_APPEND, false, &why, buf, sizeof(buf));
	if (o->fd < 0) {
		file_error(o, "opening", o->path, why);
		return false;
	}
	o->written = fstat(o->fd, &st) ? 0 : st.st_size;
	return true;
}

void lt_out_file(struct lt_out *o, const char *path, uint64_t rotate_size, unsigned int keep)
{
	o->path = path;
	o->rotate_size = rotate_size;
	o->rotate_keep = keep;
	o->fd = -1;
	file_open(o);
}

/*
 * A write to the file stopped after `off` bytes, inside a line: cut the file back to the end
 * of the last whole line, so the next write (or the next consumer, which reads the records
 * again from the ring) starts a line. The new `off`.
 */
static size_t cut_back(struct lt_out *o, size_t off)
{
	const char *nl = memrchr(o->b.p, '\n', off);
	size_t keep = nl ? (size_t)(nl - o->b.p) + 1 : 0;
	struct stat st;

	if (keep == off)
		return off;
	if (fstat(o->fd, &st) || (uint64_t)st.st_size < off - keep ||
	    ftruncate(o->fd, st.st_size - (off - keep))) {
		lt_error(LT_FAIL, "cannot cut %s back to its last whole line: %s", o->path,
			 strerror(errno));
		return off;
	}
	o->written -= off - keep;
	o->truncations++;
	return keep;
}

/* The first `off` bytes of the buffer left: the records they end are done. */
static void marks_written(struct lt_out *o, size_t off)
{
	size_t i = 0;

	while (i < o->nmarks && o->marks[i].end <= off)
		o->done = o->marks[i++].tag;
	o->nmarks -= i;
	for (size_t j = 0; j < o->nmarks; j++) {
		o->marks[j] = o->marks[i + j];
		o->marks[j].end -= off;
	}
}

void lt_out_mark(struct lt_out *o, uint64_t tag)
{
	if (o->nmarks < LT_OUT_MARKS)
		o->marks[o->nmarks++] = (struct lt_out_mark){ o->b.len, tag };
}

bool lt_out_full(const struct lt_out *o)
{
	return o->b.cap - o->b.len < LT_ENC_MAX || o->nmarks == LT_OUT_MARKS;
}

/* write b.p[0..n) and move the rest down; false when something is left unwritten */
static bool write_out(struct lt_out *o, size_t n)
{
	size_t off = 0;

	if (o->path && !file_open(o))
		return false;
	while (off < n && !o->failed) {
		ssize_t w = write(o->fd, o->b.p + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int err = w < 0 ? errno : ENOSPC;

			if (o->path) {
				file_error(o, "writing", o->path, strerror(err));
				break;
			}
			if (err != EPIPE)
				lt_error(LT_FAIL, "write: %s", strerror(err));
			o->failed = true;
			break;
		}
		off += w;
		o->written += w;
	}
	if (o->path && off < n && off)
		off = cut_back(o, off);
	marks_written(o, off);
	if (o->path && off == n && o->blocked) {
		o->blocked = false;
		lt_info("writing %s again", o->path);
	}
	memmove(o->b.p, o->b.p + off, o->b.len - off);
	o->b.len -= off;
	return off == n;
}

void lt_out_flush(struct lt_out *o)
{
	if (!write_out(o, o->b.len) && !o->path) {
		o->b.len = 0; /* stdout: failed for good */
		o->nmarks = 0;
	}
}

/* FILE.N-1 -> FILE.N ... FILE -> FILE.1, then a new FILE */
static bool rotate(struct lt_out *o)
{
	char from[4096], to[4096], buf[96];
	const char *why;

	for (unsigned int i = o->rotate_keep; i > 0; i--) {
		if (i > 1)
			snprintf(from, sizeof(from), "%s.%u", o->path, i - 1);
		else
			snprintf(from, sizeof(from), "%s", o->path);
		snprintf(to, sizeof(to), "%s.%u", o->path, i);
		/* rename never follows a link, but a planted name is not ours to move or replace */
		why = lt_out_refused(to, false, buf, sizeof(buf));
		if (why) {
			file_error(o, "rotating to", to, why);
			return false;
		}
		why = lt_out_refused(from, false, buf, sizeof(buf));
		if (why) {
			file_error(o, "rotating", from, why);
			return false;
		}
		if (rename(from, to) && errno != ENOENT) {
			file_error(o, "rotating", from, strerror(errno));
			return false;
		}
	}
	close(o->fd);
	o->fd = -1;
	o->written = 0;
	o->rotations++;
	return file_open(o);
}

void lt_out_record(struct lt_out *o, size_t start)
{
	if (!o->rotate_size || o->blocked || o->written + o->b.len <= o->rotate_size)
		return;
	/* what precedes the record goes to the current file, unless that is empty */
	if (o->written + start > 0) {
		if (!write_out(o, start))
			return;
		if (!rotate(o))
			return;
	}
	if (o->b.len > o->rotate_size && write_out(o, o->b.len))
		rotate(o); /* one record bigger than a file: alone in it */
}

void lt_out_reopen(struct lt_out *o)
{
	if (!o->path)
		return;
	if (!write_out(o, o->b.len))
		return; /* the next flush reopens once it can */
	close(o->fd);
	o->fd = -1;
	file_open(o);
}
