/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The probe table, and decoding/encoding of the records the probes write. */
#ifndef LT_RECORDS_H
#define LT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_abi.h"
#include "encode.h"

/* Largest record this loader knows; a decoded record always fits. */
#define LT_RECORD_MAX 2048

/* One decoded record: raw bytes, aligned for any record struct. */
struct lt_rec {
	union {
		struct lt_hdr hdr;
		__u64 _align;
		unsigned char raw[LT_RECORD_MAX];
	};
};

typedef void (*lt_enc_fn)(struct lt_buf *b, const struct lt_rec *r);

/* Most BPF programs one probe attaches. */
#define LT_PROBE_PROGS 8

/* One row per probe: everything the loader needs to know about it. */
struct lt_probe {
	const char *name; /* CLI name */
	/* its BPF programs in the object, the main one first; each link is pinned as
	 * links/NAME, NAME = the program's name without "lt_". One named *_nest is
	 * attached after the main one and takes over the events the kernel skipped
	 * the main one for (it counts them as lt_stat.recovered). */
	const char *progs[LT_PROBE_PROGS];
	enum lt_probe_id id; /* slot in lt_stats */
	enum lt_type type; /* record type it writes; 0: an aggregate probe (no records) */
	const char *map; /* aggregate probes: the per-CPU histogram map (lowtrace hist) */
	/* maps only its programs use: created only when it is loaded */
	const char *own[LT_PROBE_PROGS];
	/* loaded on demand by this command (profile, alloc), never by `load` */
	const char *cmd;
	__u16 rec_size; /* sizeof its record */
	bool dflt; /* attached by `load` without --probes */
	lt_enc_fn json; /* appends the record's own JSON fields */
	lt_enc_fn text; /* appends the record's own text fields */
	const char *about; /* one line for -h */
};

extern const struct lt_probe lt_probes[];
extern const size_t lt_nprobes;

const struct lt_probe *lt_probe_by_name(const char *name, size_t len);
const struct lt_probe *lt_probe_by_type(unsigned int type);
/* The pin name of a program's link: its name without the "lt_" prefix. */
const char *lt_link_name(const char *prog);
/* Is it a *_nest fallback program? */
bool lt_prog_is_fallback(const char *prog);

/* Decoder counters: nothing is rejected silently. */
struct lt_decode_stats {
	uint64_t fast; /* size matched: one memcpy */
	uint64_t older; /* smaller producer record: zero-filled */
	uint64_t newer; /* larger producer record: tail skipped */
	uint64_t rejected; /* below header size, past the buffer */
	uint64_t unknown; /* type this loader does not know */
};

/*
 * Decode one ring sample of `avail` bytes into `out`.
 * Returns the probe of the record, or NULL when it was rejected or unknown
 * (and counted in `st`).
 */
const struct lt_probe *lt_decode(const void *data, size_t avail, struct lt_rec *out,
				 struct lt_decode_stats *st);

/* Encode one decoded record as one JSON line / one text line. */
void lt_encode_json(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r);
void lt_encode_text(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r);

#endif
