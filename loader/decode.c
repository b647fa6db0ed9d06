// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stddef.h>
#include <string.h>

#include "records.h"

/*
 * A record of the 24-byte header (no cgroup id, flags 0): its body moves up
 * by 8 bytes to where this layout has it, then it is an older or newer
 * record like any other. Exec carried the cgroup id in its body: the header
 * gets it from there.
 */
static const struct lt_probe *decode_v0(const unsigned char *data, size_t avail, struct lt_rec *out,
					struct lt_decode_stats *st, const struct lt_hdr *h0)
{
	const size_t grow = sizeof(struct lt_hdr) - LT_HDR_V0_SIZE;
	const struct lt_probe *p;
	size_t body, want;

	if (h0->size < LT_HDR_V0_SIZE || h0->size > avail) {
		st->rejected++;
		return NULL;
	}
	p = lt_probe_by_type(h0->type);
	if (!p) {
		st->unknown++;
		return NULL;
	}
	body = h0->size - LT_HDR_V0_SIZE;
	want = p->rec_size - sizeof(struct lt_hdr);
	memcpy(out->raw, data, LT_HDR_V0_SIZE);
	out->hdr.cgroup_id = 0;
	memcpy(out->raw + sizeof(struct lt_hdr), data + LT_HDR_V0_SIZE, body < want ? body : want);
	if (body < want)
		memset(out->raw + sizeof(struct lt_hdr) + body, 0, want - body);
	/* what the header says of the record as it is now */
	out->hdr.size = h0->size + grow;
	if (h0->type == LT_TYPE_EXEC)
		memcpy(&out->hdr.cgroup_id, out->raw + offsetof(struct lt_exec, cgroup_id),
		       sizeof(out->hdr.cgroup_id));
	st->v0++;
	return p;
}

/*
 * An unpacked exec shorter than this layout: a shed one (LT_EXEC_ARGS_SHED) or one of
 * 1 KiB args (LT_EXEC_V1_SIZE) ends with its namespace fields; they go back where this
 * layout has them.
 */
static void unshed_exec(struct lt_rec *out, size_t size)
{
	struct lt_exec *e = (struct lt_exec *)out->raw;
	unsigned char *tail = out->raw + size - LT_EXEC_NS_SIZE;

	if (!(e->flags & LT_EXEC_ARGS_SHED) && size != LT_EXEC_V1_SIZE)
		return;
	if (size < LT_EXEC_SHED_SIZE || size > offsetof(struct lt_exec, pid_ns))
		return;
	memcpy(&e->pid_ns, tail, LT_EXEC_NS_SIZE);
	memset(tail, 0, LT_EXEC_NS_SIZE);
}

/*
 * The ancestors of an LT_EXEC_ANC exec: anc_len bytes ending at `end`, after the args (which
 * end at `args_end`, then zeros to 8). Each to its anc[] slot; a block that does not parse
 * whole (counts, lengths, sizes) rejects the record.
 */
static bool unpack_anc(struct lt_exec *e, const unsigned char *data, size_t end, size_t args_end)
{
	size_t pos, len = e->anc_len;

	if (e->n_anc > LT_ANC_MAX || len > end || end - len < args_end)
		return false;
	pos = end - len;
	for (unsigned int i = 0; i < e->n_anc; i++) {
		struct lt_anc *a = &e->anc[i];
		size_t step;

		if (end - pos < LT_ANC_HEAD)
			return false;
		memcpy(a, data + pos, LT_ANC_HEAD);
		if (a->name_len >= LT_ANC_NAME)
			return false;
		step = LT_ANC_HEAD + ((a->name_len + 8u) & ~7u);
		if (end - pos < step)
			return false;
		memcpy(a->name, data + pos + LT_ANC_HEAD, a->name_len);
		a->name[a->name_len] = 0;
		pos += step;
	}
	return pos == end;
}

/*
 * A packed exec (LT_EXEC_PACKED): filename, args and the namespace fields to their
 * places. Only the bytes the length fields cover are written (the rest of `out` is
 * whatever the last record left, and no encoder reads past a length); a record whose
 * lengths do not fit its size is rejected.
 */
static bool unpack_exec(const unsigned char *data, size_t size, struct lt_rec *out)
{
	struct lt_exec *e = (struct lt_exec *)out->raw;
	const size_t fixed = offsetof(struct lt_exec, filename);
	size_t fn, args, tail;

	if (size < fixed)
		return false;
	memcpy(out->raw, data, fixed);
	/* with ancestry the tail has the identity fields too; an older one namespaces only */
	tail = e->flags & LT_EXEC_ANC ? LT_EXEC_TAIL_SIZE : LT_EXEC_NS_SIZE;
	fn = e->filename_len;
	args = e->args_len;
	if (fn >= LT_FILENAME_MAX || args > LT_ARGS_MAX || fixed + fn + 1 + args + tail > size)
		return false;
	memcpy(e->filename, data + fixed, fn);
	e->filename[fn] = 0;
	memcpy(e->args, data + fixed + fn + 1, args);
	memcpy(&e->pid_ns, data + size - tail, tail);
	if (tail == LT_EXEC_NS_SIZE) {
		memset(&e->exec_id, 0, offsetof(struct lt_exec, anc) - offsetof(struct lt_exec, exec_id));
		return true;
	}
	return unpack_anc(e, data, size - tail, fixed + fn + 1 + args);
}

const struct lt_probe *lt_decode(const void *data_, size_t avail, struct lt_rec *out,
				 struct lt_decode_stats *st)
{
	const unsigned char *data = data_;
	const struct lt_probe *p;
	struct lt_hdr h;

	if (avail < LT_HDR_V0_SIZE) {
		st->rejected++;
		return NULL;
	}
	memcpy(&h, data, LT_HDR_V0_SIZE);
	if (!(h.flags & LT_HDR_CGROUP))
		return decode_v0(data, avail, out, st, &h);
	if (h.size < sizeof(h) || h.size > avail) {
		st->rejected++;
		return NULL;
	}
	p = lt_probe_by_type(h.type);
	if (!p) {
		st->unknown++;
		return NULL;
	}
	if (h.type == LT_TYPE_EXEC && h.size >= offsetof(struct lt_exec, filename) &&
	    (data[offsetof(struct lt_exec, flags)] & LT_EXEC_PACKED)) {
		if (!unpack_exec(data, h.size, out)) {
			st->rejected++;
			return NULL;
		}
		st->packed++;
	} else if (h.size == p->rec_size) {
		memcpy(out, data, p->rec_size); /* the fast path */
		st->fast++;
	} else if (h.size < p->rec_size) {
		/* older producer, or a packed open (its path is last, the record ends after
		 * the path's NUL): what it did not carry reads as zero */
		memcpy(out, data, h.size);
		memset(out->raw + h.size, 0, p->rec_size - h.size);
		if (h.type == LT_TYPE_EXEC)
			unshed_exec(out, h.size);
		if (h.type == LT_TYPE_OPEN && h.size > offsetof(struct lt_open, rflags) &&
		    (out->raw[offsetof(struct lt_open, rflags)] & LT_OPEN_PACKED))
			st->packed++;
		else
			st->older++;
	} else {
		/* newer producer: keep what we know, skip its additions */
		memcpy(out, data, p->rec_size);
		st->newer++;
	}
	return p;
}
