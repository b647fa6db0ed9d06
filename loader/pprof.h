/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pprof profiles (perftools.profiles.Profile, gzip'd) for lowtrace profile and alloc.
 *
 * Samples are encoded as they arrive into one growing buffer; strings, functions, mappings
 * and locations are deduplicated in hash tables and encoded behind the samples on write.
 * The bytes are canonical protobuf: fields in number order, minimal varints, proto3
 * defaults omitted, repeated scalars packed.
 *
 * Call order: lt_pprof_sample_type() before the first sample (it fixes the number of
 * values per sample); a sample type after samples is -EINVAL. Every allocation failure and
 * that -EINVAL are remembered: lt_pprof_write() and lt_pprof_raw() then fail rather than
 * output a profile missing data. The calls that fail also say so themselves (0 id, -errno).
 *
 * Strings are bytes from the kernel or from ELF files: invalid UTF-8 is replaced with
 * U+FFFD, as proto3 string fields must be UTF-8.
 */
#ifndef LT_PPROF_H
#define LT_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct lt_pprof;

/* NULL on allocation failure */
struct lt_pprof *lt_pprof_new(void);
void lt_pprof_free(struct lt_pprof *p);

/* value columns, in order, e.g. ("samples","count"), ("cpu","nanoseconds") */
void lt_pprof_sample_type(struct lt_pprof *p, const char *type, const char *unit);
void lt_pprof_period(struct lt_pprof *p, const char *type, const char *unit, int64_t period);
void lt_pprof_times(struct lt_pprof *p, int64_t time_nanos, int64_t duration_nanos);
void lt_pprof_comment(struct lt_pprof *p, const char *text);

/*
 * The mapping id (>0), the same for the same (start, limit, offset, file); 0 on allocation
 * failure. file and build_id may be NULL; build_id is text (hex).
 */
uint64_t lt_pprof_mapping(struct lt_pprof *p, uint64_t start, uint64_t limit, uint64_t offset,
			  const char *file, const char *build_id);

/*
 * The location id (>0), the same for the same (mapping_id, address); 0 on allocation
 * failure or an unknown mapping_id. mapping_id 0: no mapping (kernel frames). func NULL: no
 * function (pprof shows the address); a later call with a func names an unnamed location.
 */
uint64_t lt_pprof_location(struct lt_pprof *p, uint64_t mapping_id, uint64_t address,
			   const char *func);

/*
 * One sample: nloc location ids leaf first, one value per sample type. Labels: comm (if not
 * NULL or "") as a string, pid (if >= 0) as a number. 0, -EINVAL (no sample types, an
 * unknown location id) or -ENOMEM.
 */
int lt_pprof_sample(struct lt_pprof *p, const uint64_t *loc, size_t nloc, const int64_t *values,
		    const char *comm, int64_t pid);

/* serialize + gzip; 0 or -errno (a write error, or a remembered failure) */
int lt_pprof_write(struct lt_pprof *p, int fd);
/* the same into a stdio stream, flushed */
int lt_pprof_write_file(struct lt_pprof *p, FILE *f);

/*
 * For tests: the raw (uncompressed) protobuf bytes, valid until the next call on p; NULL
 * after a remembered failure or on allocation failure.
 */
const void *lt_pprof_raw(struct lt_pprof *p, size_t *len);

#endif
