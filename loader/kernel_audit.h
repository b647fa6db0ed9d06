/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The map audit (kernel_audit.c): how full a loaded probe's stateful maps are (its row's
 * .own maps and its .map), so an operator sees one near its limit before it loses anything.
 * Hash maps are counted with batch lookups where the kernel has them (else get_next_key);
 * arrays are full by construction; task and socket local storage grow and shrink with the
 * tasks and sockets and the kernel cannot count them cheaply: unknown (-1). Buffers are
 * allocated by lt_maps_add: a read allocates nothing. lt_maps_open returns an enum
 * lt_exit_code with the error printed; lt_maps_new (NULL), lt_maps_add and lt_maps_read
 * (0 or -errno) print nothing.
 */
#ifndef LT_KERNEL_AUDIT_H
#define LT_KERNEL_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_abi.h"

struct lt_map_use {
	const char *probe; /* the probe's row name */
	const char *name; /* the map's name in the object */
	const char *type; /* the kernel's type name: hash, percpu_array, task_storage, ... */
	const char *per; /* local storage: "task" or "socket" (one entry per object), else NULL */
	int64_t entries; /* -1: unknown */
	int64_t max_entries; /* -1: unknown */
	int64_t memlock; /* bytes of kernel memory (fdinfo), -1: not reported or not read */
};
struct lt_maps;
struct lt_maps *lt_maps_new(void);
/* one map of `probe`, by fd (taken); 0 or -errno */
int lt_maps_add(struct lt_maps *m, const char *probe, const char *name, int fd);
/*
 * The stateful maps of the probes `loaded` (indexed by probe id) from the pins; a map whose
 * pin is missing (a suite of another lowtrace) is left out. An exit code.
 */
int lt_maps_open(struct lt_maps **out, const bool loaded[LT_PROBE_SLOTS]);
/* read every map's entries (and memlock if asked): 0 or -errno */
int lt_maps_read(struct lt_maps *m, bool memlock);
size_t lt_maps_count(const struct lt_maps *m);
const struct lt_map_use *lt_maps_at(const struct lt_maps *m, size_t i);
void lt_maps_no_batch(struct lt_maps *m); /* count key by key, as on kernels before 5.6 */
bool lt_maps_batched(const struct lt_maps *m); /* the last read used batch lookups */
void lt_maps_close(struct lt_maps *m);

#endif
