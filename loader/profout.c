// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The output file of lowtrace profile and lowtrace alloc: stdout, a device written in place, or
 * FILE.tmp-PID renamed over FILE once complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lowtrace.h"
#include "out.h"
#include "profout.h"

#define OUT_CAP (1024 * 1024)

int lt_pout_open(struct lt_pout *o, const char *path, bool binary)
{
	const char *why;
	struct stat st;
	char buf[96];
	int err;

	memset(o, 0, sizeof(*o));
	/* a closed reader is a write error here (EPIPE), not a signal that kills */
	signal(SIGPIPE, SIG_IGN);
	o->fd = 1;
	o->path = path;
	o->b.cap = OUT_CAP;
	o->b.p = malloc(OUT_CAP);
	if (!o->b.p)
		return lt_error(LT_FAIL, "out of memory");
	if (!path) {
		if (binary && isatty(1))
			return lt_error(LT_USAGE,
					"--format pprof is binary: write it with -o FILE");
		return LT_OK;
	}
	/* the rules of every file lowtrace writes (out.h); a device root made is written in
	 * place (/dev/null, a terminal), a regular file replaced by a new one */
	err = lt_out_check("-o", path, true);
	if (err)
		return err;
	if (lstat(path, &st) == 0 && S_ISCHR(st.st_mode)) {
		o->fd = lt_out_open(path, O_WRONLY, true, &why, buf, sizeof(buf));
		if (o->fd < 0)
			return lt_error(LT_USAGE, "-o %s: cannot write there: %s", path, why);
		o->path = NULL;
		o->own_fd = true;
		/* -o /dev/tty: the terminal all the same */
		if (binary && isatty(o->fd)) {
			close(o->fd);
			return lt_error(LT_USAGE,
					"-o %s: a terminal: --format pprof is binary, write it "
					"to a file",
					path);
		}
		return LT_OK;
	}
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp-%d", path, (int)getpid()) >=
	    (int)sizeof(o->tmp))
		return lt_error(LT_USAGE, "-o %s: path too long", path);
	o->fd = lt_out_open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, false, &why, buf, sizeof(buf));
	if (o->fd >= 0)
		return LT_OK;
	if (lstat(path, &st) == 0)
		/* the file exists: creating its temporary file beside it failed (a read-only
		 * directory, /proc or /sys): say which file, not "no such file" for `path` */
		return lt_error(LT_USAGE, "-o %s: cannot create %s to replace it with: %s", path,
				o->tmp, why);
	return lt_error(LT_USAGE, "-o %s: cannot write there: %s", path, why);
}

void lt_pout_flush(struct lt_pout *o)
{
	size_t done = 0;

	while (done < o->b.len && !o->err) {
		ssize_t n = write(o->fd, o->b.p + done, o->b.len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			done += n;
	}
	o->b.len = 0;
}

void lt_pout_room(struct lt_pout *o, size_t n)
{
	if (o->b.len + n > o->b.cap)
		lt_pout_flush(o);
}

int lt_pout_close(struct lt_pout *o, bool ok)
{
	int ret = LT_OK;

	lt_pout_flush(o);
	free(o->b.p);
	o->b.p = NULL;
	if (!o->path) {
		if (o->own_fd)
			close(o->fd);
		return o->err ? lt_error(LT_FAIL, "write: %s", strerror(o->err)) : LT_OK;
	}
	if (o->err)
		ret = lt_error(LT_FAIL, "%s: %s", o->path, strerror(o->err));
	else if (close(o->fd))
		ret = lt_error(LT_FAIL, "%s: %s", o->path, strerror(errno));
	o->fd = -1;
	/* rename replaces a link rather than following it; still, what was planted at the
	 * name during the run is left alone (checked as at the start) */
	if (ok && ret == LT_OK) {
		char buf[96];
		const char *why = lt_out_refused(o->path, false, buf, sizeof(buf));

		if (why)
			ret = lt_error(LT_FAIL, "-o %s: %s: refused", o->path, why);
	}
	if (ok && ret == LT_OK && rename(o->tmp, o->path))
		ret = lt_error(LT_FAIL, "%s: %s", o->path, strerror(errno));
	if (!ok || ret != LT_OK)
		unlink(o->tmp);
	return ret;
}
