// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "records.h"

const struct lt_probe *lt_decode(const void *data, size_t avail, struct lt_rec *out,
				 struct lt_decode_stats *st)
{
	const struct lt_probe *p;
	struct lt_hdr h;

	if (avail < sizeof(h)) {
		st->rejected++;
		return NULL;
	}
	memcpy(&h, data, sizeof(h));
	if (h.size < sizeof(h) || h.size > avail) {
		st->rejected++;
		return NULL;
	}
	p = lt_probe_by_type(h.type);
	if (!p) {
		st->unknown++;
		return NULL;
	}
	if (h.size == p->rec_size) {
		memcpy(out, data, p->rec_size); /* the fast path */
		st->fast++;
	} else if (h.size < p->rec_size) {
		/* older producer: what it did not know reads as zero */
		memcpy(out, data, h.size);
		memset(out->raw + h.size, 0, p->rec_size - h.size);
		st->older++;
	} else {
		/* newer producer: keep what we know, skip its additions */
		memcpy(out, data, p->rec_size);
		st->newer++;
	}
	return p;
}
