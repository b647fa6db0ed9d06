/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The probe table, and decoding/encoding of the records the probes write. */
#ifndef LT_RECORDS_H
#define LT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lt_abi.h"
#include "encode.h"
#include "ident.h"

/* Largest record this loader knows; a decoded record always fits. */
#define LT_RECORD_MAX 6144

/* One decoded record: raw bytes, aligned for any record struct. */
struct lt_rec {
	union {
		struct lt_hdr hdr;
		__u64 _align;
		unsigned char raw[LT_RECORD_MAX];
	};
};

/* How a record field is written (struct lt_field.kind). */
enum lt_fkind {
	LT_F_INT, /* integer of 1, 2, 4 or 8 bytes, signed as its member */
	LT_F_STR, /* char array: NUL-terminated or full, cut at the length field if any */
	LT_F_ARGV, /* NUL-separated strings, the length field says how many bytes: JSON array */
	LT_F_FLAG, /* .bit of the integer, any bit when 0: JSON true/false */
	LT_F_ENUM, /* .names[value], else .unknown (then the number with .unknown_num) */
	LT_F_ADDR, /* IP address bytes; the length field is the family (6: IPv6, else IPv4) */
	LT_F_FMT, /* .put writes the value from the integer */
	LT_F_REC, /* .put_rec writes the value from the whole record */
};

/* How text shows a field (struct lt_field.text); JSON always has "name":value. */
enum lt_ftext {
	LT_T_KV, /* " name=value" (the text key may differ from the name) */
	LT_T_NONE, /* JSON only */
	LT_T_WORD, /* FLAG: the text key alone when set (" core_dumped", "..." after a path) */
	LT_T_OCTAL, /* INT: the text key then the octal digits (key " mode=0") */
};

#define LT_KEY_ROOM 32

/* One field of a record: the one description JSON, text and -h are made from. */
struct lt_field {
	const char *name; /* NULL ends a list */
	/* in arrays of fixed size, so the encoders copy them whole and advance by the length */
	char jkey[LT_KEY_ROOM]; /* ,"name": */
	char tkey[LT_KEY_ROOM]; /* " name=" or what LT_T_WORD prints */
	__u8 jlen, tlen;
	__u8 kind; /* enum lt_fkind */
	__u8 text; /* enum lt_ftext */
	__u16 off; /* offsetof the member in the record */
	__u16 size; /* its sizeof */
	__u16 len_off; /* STR, ARGV: the length member; ADDR: the family member */
	__u8 len_size; /* 0: no length member */
	bool sgn; /* INT, ENUM, FMT: the member is signed */
	bool unknown_num; /* ENUM: the number follows .unknown */
	__u32 bit; /* FLAG */
	__u32 nnames; /* ENUM */
	const char *const *names; /* ENUM: may have NULL holes */
	const char *unknown; /* ENUM: for a value without a name */
	/* FMT: the whole value, JSON (quotes included) or text */
	void (*put)(struct lt_buf *b, int64_t v, bool json);
	/* REC: the whole value, from the record */
	void (*put_rec)(struct lt_buf *b, const unsigned char *r, bool json);
	/* a field of some ops only: written when bit (the record's byte at op_off) of ops
	 * is set; ops 0: always */
	__u32 ops;
	__u16 op_off;
};

/* Bytes of an aggregate map's key the key writers read at most. */
#define LT_AGG_KEY_MAX 8

/* What the metrics endpoint makes of an aggregate probe's map. */
struct lt_prom {
	const char *hist; /* histogram family */
	const char *hist_help;
	/* one series per key: its labels (NULL: none) */
	void (*labels)(char *s, size_t n, const void *key);
	/* or keys summed per name (nnames > 0): a counter family and, per name or in
	 * all, the histogram; the label is label="NAME" */
	unsigned int nnames;
	unsigned int (*key_name)(const void *key); /* index of the key's name, or >= nnames */
	const char *(*name)(unsigned int i); /* NULL: no name, no series */
	const char *label;
	const char *count; /* counter family */
	const char *count_help;
};

/* Most BPF programs one probe attaches. */
#define LT_PROBE_PROGS 8
/* Most maps one probe owns. */
#define LT_PROBE_OWN 12
/* Most iterators one probe has. */
#define LT_PROBE_ITERS 2
/* Most syscalls one syscall-set probe watches. */
#define LT_PROBE_NSYS 24

/* One row per probe: everything the loader needs to know about it. */
struct lt_probe {
	const char *name; /* CLI name */
	/* its BPF programs in the object, the main one first; each link is pinned as
	 * links/NAME, NAME = the program's name without "lt_". One named *_nest is
	 * attached after the main one and takes over the events the kernel skipped
	 * the main one for (it counts them as lt_stat.recovered); one named *_tp,
	 * on the classic tracepoint, takes over what both were skipped for, and is
	 * attached only where tracepoints are preemptible (lt_claim). */
	const char *progs[LT_PROBE_PROGS];
	/* a syscall-set probe (file, cred, priv): each of its programs on a classic syscall
	 * tracepoint (its section names one of the set) is attached to the sys_enter_ or
	 * sys_exit_ tracepoint of each of these that the kernel has, pinned as links/NAME-SYSCALL
	 * (bpffs takes no dots); its tp_btf ones on sys_enter/sys_exit filter by number */
	const char *syscalls[LT_PROBE_NSYS];
	/* of progs, those that keep state and write no record (exec's ancestry): their skips
	 * are not the probe's missed records */
	const char *no_record[LT_PROBE_PROGS];
	/* one of progs, on a tracepoint some kernels lack (priv's module_load: no
	 * CONFIG_MODULES): loaded only where the kernel has it */
	const char *optional;
	/* iterators its consumers run (tcp's sweep, lt_sweep_run), pinned as links/NAME */
	const char *iters[LT_PROBE_ITERS];
	/* never attached: the sweeping consumer runs it (test run) to free the entries
	 * of the probe's first own map it found stale; loaded where that map is a hash,
	 * pinned as NAME */
	const char *reap;
	enum lt_probe_id id; /* slot in lt_stats */
	enum lt_type type; /* record type it writes; 0: an aggregate probe (no records) */
	const char *map; /* aggregate probes: the per-CPU histogram map (lowtrace hist) */
	/* a second map of the same histograms, read after .map (syscalls: by number in an
	 * array; by number and process in a hash with load --per-pid; the other one is empty) */
	const char *map2;
	/* an array of map2's keys by index (map2 an array whose entries are resolved so) */
	const char *map2_keys;
	/* maps only its programs use: created only when it is loaded */
	const char *own[LT_PROBE_OWN];
	/* loaded on demand by this command (profile, alloc), never by `load` */
	const char *cmd;
	__u16 rec_size; /* sizeof its record */
	bool dflt; /* attached by `load` without --probes */
	const struct lt_field *fields; /* its record's fields, after the header's */
	/* aggregate probes: their map's key for `hist` and the metrics */
	__u16 key_size; /* bytes of the key the writers read (<= LT_AGG_KEY_MAX); 0: none */
	/* the first fields of a histogram's JSON object, without a leading comma */
	void (*key_json)(struct lt_buf *b, const void *key);
	/* the title of a histogram in text ("syscall read pid 42") */
	void (*key_title)(char *s, size_t n, const struct lt_probe *p, const void *key);
	const struct lt_prom *prom;
	const char *about; /* one line for -h */
};

extern const struct lt_probe lt_probes[];
extern const size_t lt_nprobes;

/*
 * The record a probe writes before its next one on a CPU where it dropped
 * records (struct lt_lost): described like a probe's record, but no row of
 * lt_probes (no programs, no stats slot: .id is LT_PROBE_SLOTS).
 */
extern const struct lt_probe lt_lost_record;

const struct lt_probe *lt_probe_by_name(const char *name, size_t len);
/* The row that writes records of `type`, or lt_lost_record for LT_TYPE_LOST. */
const struct lt_probe *lt_probe_by_type(unsigned int type);
/* The row of enum lt_probe_id `id`, or NULL. */
const struct lt_probe *lt_probe_by_id(unsigned int id);
/* The record type `events --type` tests: a lost record's is its probe's (0: none). */
unsigned int lt_rec_probe_type(const struct lt_probe *p, const struct lt_rec *r);
/* The pin name of a program's link: its name without the "lt_" prefix. */
const char *lt_link_name(const char *prog);
/* Is it a fallback program (*_nest, *_tp)? */
bool lt_prog_is_fallback(const char *prog);
/* Is it a *_tp program, attached only where tracepoints are preemptible? */
/* program `prog` of probe `p` keeps state only (its .no_record): a skip of it loses no record */
bool lt_prog_writes_no_record(const struct lt_probe *p, const char *prog);
bool lt_prog_is_tp_level(const char *prog);

/* Decoder counters: nothing is rejected silently. */
struct lt_decode_stats {
	uint64_t fast; /* size matched: one memcpy */
	uint64_t packed; /* a packed exec: its parts copied to their places */
	uint64_t older; /* smaller producer record: zero-filled */
	uint64_t newer; /* larger producer record: tail skipped */
	uint64_t v0; /* the 24-byte header before the cgroup id: converted */
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
/* The same with the task's identity (cgroup, container_id, pod_uid, unit) last; id may be NULL. */
void lt_encode_json_id(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r,
		       const struct lt_ident *id);
void lt_encode_text_id(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r,
		       const struct lt_ident *id);

/* The header's fields, first in every record (after "type"). */
extern const struct lt_field lt_hdr_fields[];

/*
 * The JSON field list of `events -h`: "    JSON fields: type ts_ns ...; exec:
 * ppid ...", from the descriptors of the records `events` can stream, in
 * record type order, wrapped at 76 columns.
 */
void lt_probe_fields_help(FILE *f);

#endif
