// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "lowtrace.h"
#include "out.h"

void lt_out_init(struct lt_out *o, char *mem, size_t size)
{
	o->b = (struct lt_buf){ mem, 0, size };
	o->failed = false;
	/* a closed reader is a write error here (EPIPE), not a signal that kills */
	signal(SIGPIPE, SIG_IGN);
}

void lt_out_flush(struct lt_out *o)
{
	size_t off = 0;

	while (off < o->b.len && !o->failed) {
		ssize_t n = write(STDOUT_FILENO, o->b.p + off, o->b.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (errno != EPIPE)
				lt_error(LT_FAIL, "write: %s", strerror(errno));
			o->failed = true;
			break;
		}
		off += n;
	}
	o->b.len = 0;
}
