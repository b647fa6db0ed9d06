/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A suite's lifetime: open -> configure -> load, attach (by the table, or by hand), free
 * (kernel_open.c, kernel_load.c). Functions returning int return an enum lt_exit_code and
 * have already printed the one-line error, except lt_suite_unwind_proc (a reader: 0 or
 * -errno) and lt_suite_map_fd (a fd or -1).
 */
#ifndef LT_KERNEL_SUITE_H
#define LT_KERNEL_SUITE_H

#include <stdbool.h>
#include <stdint.h>

#include "lt_abi.h"

enum lt_state_mode {
	LT_STATE_AUTO, /* local storage where tracing programs can use it, else hashes */
	LT_STATE_LOCAL, /* local storage or fail */
	LT_STATE_HASH, /* the bounded hashes, whatever the kernel has */
};
#define LT_MAX_THREADS_CAP 65536
#define LT_MAX_CONNS_DEFAULT 65536

struct lt_load_opts {
	uint64_t probes; /* bit i: lt_probes[i] */
	uint32_t pid; /* 0: any */
	const char *cgroup; /* cgroup v2 path, NULL: any */
	uint32_t ringbuf_size;
	bool pin; /* pin under LT_PIN_DIR (load) or keep in-process (run) */
	bool replace; /* unload a pinned suite first */
	bool sys_per_pid; /* syscalls probe: one histogram per (syscall, process) */
	bool sys_count; /* syscalls probe: counts only (lt_sys_c alone, on sys_exit) */
	enum lt_state_mode state; /* where per-thread and per-socket state lives */
	uint32_t max_threads; /* bounded hashes: entries of each per-thread map (0: default) */
	uint32_t max_conns; /* bounded hashes: entries of the tcp map */
	uint32_t ancestors; /* --ancestors: exec records name this many */
	uint32_t max_procs; /* --max-procs: entries of lt_procs (0: LT_PROCS_DEFAULT) */
	uint32_t rate[LT_PROBE_SLOTS]; /* --rate-limit: events/s per cgroup, by probe id; 0: none */
	bool no_shed; /* --no-shed: exec and open records are never written short */
	bool pin_group; /* --pin-group: pins readable by pin_gid (load only) */
	const char *ident_cgroup; /* --identity-cgroup: NULL or "auto", "cgroup2", a controller */
	uint32_t cg_grace_s; /* --cgroup-grace (cg_grace_set), else LT_CG_GRACE_S */
	bool cg_grace_set;
	uint32_t cg_cap; /* --cgroup-cap: lt_cg_names entries, 0: LT_CGN_MAX */
	unsigned int pin_gid;
};

/* --max-threads' default: kernel.threads-max, at most LT_MAX_THREADS_CAP */
uint32_t lt_default_max_threads(void);

struct lt_suite; /* a suite, pinned or in-process */

/*
 * libbpf's open -> configure -> load, for the commands with knobs of their own (profile,
 * alloc). lt_suite_open checks the environment and applies `o`: nothing is in the kernel yet.
 * lt_suite_load loads, attaches and pins (o->pin); on failure nothing stays attached or
 * pinned. Once lt_suite_open succeeded, the caller frees the suite with lt_suite_free.
 */
int lt_suite_open(const struct lt_load_opts *o, struct lt_suite **out);
/* the size of lt_stacks (0: the object's) */
void lt_suite_set_stacks(struct lt_suite *s, uint32_t entries);
/*
 * alloc: the mean sampling interval in bytes (<= 1: every allocation), LT_AL_IVAL_N
 * exponential intervals of that mean (NULL: none), and whether sampled blocks are kept until
 * freed (without, their preallocated tables shrink to one entry).
 */
void lt_suite_set_alloc(struct lt_suite *s, uint64_t mean, const uint64_t *ival, bool leaks);
/* Before load: room for unwind rows and processes (lt_unwind.h); 0: user stacks by frame pointer */
void lt_suite_set_unwind(struct lt_suite *s, uint32_t rows, uint32_t procs);
/* After load: lt_uw_rows mapped writable, *cap rows; NULL and errno (nothing printed) */
struct lt_uw_row *lt_suite_unwind_rows(struct lt_suite *s, uint32_t *cap);
/* Set (p NULL: remove) the unwind view of a process. 0 or -errno */
struct lt_uw_proc;
int lt_suite_unwind_proc(struct lt_suite *s, uint32_t tgid, const struct lt_uw_proc *p);
int lt_suite_load(struct lt_suite *s);
/* open and load with the object's defaults; *out only on success */
int lt_load(const struct lt_load_opts *o, struct lt_suite **out);
void lt_suite_detach(struct lt_suite *s); /* closes links: unpinned ones detach */
void lt_suite_free(struct lt_suite *s);

/*
 * Programs that a section cannot attach (perf_event, uprobes) are loaded but
 * left for these. lt_attach_perf opens one sampling event per online CPU at
 * `freq` Hz: hardware cycles where the kernel has them, else the software
 * cpu-clock; *event names the one used.
 */
int lt_attach_perf(struct lt_suite *s, const char *prog, unsigned int freq, const char **event);
int lt_attach_uprobe(struct lt_suite *s, const char *prog, int pid, const char *path, uint64_t off,
		     bool ret);
/* A map of the suite by name (-1 when it was not created). */
int lt_suite_map_fd(struct lt_suite *s, const char *name);

#endif
