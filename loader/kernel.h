/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The only layer that talks to libbpf and the bpf() syscall: loading,
 * attaching, pinning, unloading, reading the ring and the counters.
 * Functions returning int return an enum lt_exit_code and have already
 * printed the one-line error.
 */
#ifndef LT_KERNEL_H
#define LT_KERNEL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "lt_abi.h"
#include "lt_hist.h"
#include "records.h"

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
/* After load: lt_uw_rows mapped writable, *cap rows; NULL and errno */
struct lt_uw_row *lt_suite_unwind_rows(struct lt_suite *s, uint32_t *cap);
/* Set (p NULL: remove) the unwind view of a process. 0 or -errno */
struct lt_uw_proc;
int lt_suite_unwind_proc(struct lt_suite *s, uint32_t tgid, const struct lt_uw_proc *p);
int lt_suite_load(struct lt_suite *s);
/* open and load with the object's defaults; *out only on success */
int lt_load(const struct lt_load_opts *o, struct lt_suite **out);
void lt_suite_detach(struct lt_suite *s); /* closes links: unpinned ones detach */
void lt_suite_free(struct lt_suite *s);
int lt_unload(void);
/*
 * What a loader killed while pinning, replacing or unloading left beside the
 * pin directory (lowtrace-tmp-PID, -new-PID, -old-PID). load and unload finish
 * it under the pin lock; lt_pins_tidy does it for readers when no loader holds
 * the lock (0 or -errno), lt_pins_leftovers lists what is still there.
 */
#define LT_LEFTOVER_LEN 40
int lt_pins_tidy(void);
int lt_pins_leftovers(char names[][LT_LEFTOVER_LEN], int max);

/*
 * Programs that a section cannot attach (perf_event, uprobes) are loaded but
 * left for these. Each returns an enum lt_exit_code after printing the error.
 * lt_attach_perf opens one sampling event per online CPU at `freq` Hz:
 * hardware cycles where the kernel has them, else the software cpu-clock;
 * *event names the one used.
 */
int lt_attach_perf(struct lt_suite *s, const char *prog, unsigned int freq, const char **event);
int lt_attach_uprobe(struct lt_suite *s, const char *prog, int pid, const char *path, uint64_t off,
		     bool ret);
/* A map of the suite by name (-1 when it was not created). */
int lt_suite_map_fd(struct lt_suite *s, const char *name);

/*
 * Plain map reads for the profiles' aggregates, read once at the end. Keys
 * and values go through the caller's buffers; `cb` returns < 0 to stop.
 */
typedef int (*lt_map_fn)(void *ctx, const void *key, const void *val);
int lt_map_each(int fd, void *key, void *next, void *val, lt_map_fn cb, void *ctx);
int lt_map_lookup(int fd, const void *key, void *val); /* 0 or -errno */
/* Sum over CPUs of slot `key` of a per-CPU array of __u64 into *sum. */
int lt_percpu_u64(int fd, uint32_t key, uint64_t *sum);

/* The fds a consumer needs, from an in-process suite or from the pins. */
struct lt_handles {
	int ring_fd;
	int stats_fd;
	int seen_fd; /* lt_seen, -1: a suite loaded by a lowtrace without it */
	int flush_fd; /* lt_lost_flush, -1: a suite loaded by a lowtrace without it */
	int flush_err; /* why flush_fd is -1 when the suite has it (EACCES: not the pins' group) */
	int dir_fd; /* pin directory (locked by the consumer), -1 in-process */
	struct lt_suite *suite; /* in-process; NULL for the pins */
};
void lt_suite_handles(struct lt_suite *s, struct lt_handles *h);
int lt_open_pinned(struct lt_handles *h, bool lock_consumer);
void lt_close_handles(struct lt_handles *h);
/* The pinned suite of `h` was unloaded or replaced (the pin path names another one, or none). */
bool lt_pinned_gone(const struct lt_handles *h);
/* ... and its links are gone too: nothing writes to its ring any more */
bool lt_pinned_removed(const struct lt_handles *h);
/* The consumer's position in the loss counters (struct lt_seen per probe id): 0 or -errno. */
int lt_seen_read(const struct lt_handles *h, uint32_t probe, struct lt_seen *v);
int lt_seen_write(const struct lt_handles *h, uint32_t probe, const struct lt_seen *v);

/*
 * The tcp sweep (kernel_sweep.c): finds the connections whose close the kernel ran no
 * program for (lt_counts.unseen) and frees their hash slots. NULL from open: nothing to
 * sweep (no tcp probe, or a suite without the sweep). Run returns 0 when it swept, 1 when
 * it did not have to (LT_SWEEP_MS not over; another consumer sweeping),
 * -errno on failure.
 */
struct lt_sweeper;
int lt_sweeper_open(struct lt_sweeper **out, const struct lt_handles *h);
int lt_sweep_run(struct lt_sweeper *w);
void lt_sweeper_close(struct lt_sweeper *w);
/* lt_sweep's value: 0, or -errno (-EPROTO: another lowtrace's layout) */
int lt_sweep_state(int fd, struct lt_sweep *st);

/* A probe's counters: ours summed over CPUs, the kernel's over its programs. */
struct lt_counts {
	uint64_t events; /* records written */
	uint64_t drops; /* records lost: the ring was full */
	uint64_t recovered; /* events a fallback program took over (see progs/tcp.bpf.c) */
	uint64_t cg_full; /* exec, exit, fork: not counted per cgroup, lt_cg_counts full */
	uint64_t throttled; /* events the probe's rate limit held back (load --rate-limit) */
	uint64_t shed; /* records written short: the ring was three quarters full (exec, open) */
	/* events the kernel skipped the probe for (it was already running on that
	 * CPU) and nothing took over: up to this many records may be missing */
	uint64_t missed;
	/* tcp: connections whose close no program saw (the sweep): their records are missing */
	uint64_t unseen;
	/* grow only while kernel.bpf_stats_enabled or an lt_enable_stats() fd is on */
	uint64_t run_cnt;
	uint64_t run_time_ns;
};

/* Reads lt_counts; the per-CPU buffer and the program fds are taken once, at open. */
struct lt_stats_reader {
	int fd;
	int ncpu;
	uint32_t vsize; /* the map's value size: lt_stat of the lowtrace that loaded it */
	int sweep_fd; /* lt_sweep (unseen), -1: none */
	uint32_t stride; /* one CPU's value: vsize rounded up to 8 */
	void *percpu;
	int prog_fd[LT_PROBE_SLOTS][LT_PROBE_PROGS]; /* -1: not attached */
};
int lt_stats_open(struct lt_stats_reader *r, const struct lt_handles *h);
int lt_stats_read(struct lt_stats_reader *r, const struct lt_probe *p, struct lt_counts *sum);
void lt_stats_close(struct lt_stats_reader *r);

/*
 * Aggregates: a pinned per-CPU map of struct lt_hist values (hash or array),
 * read with batch lookups where the kernel has them (one get_next_key +
 * lookup per key where not). Buffers are allocated once, at open: a read
 * allocates nothing. Each value is summed over the CPUs before `cb`.
 */
struct lt_agg;
typedef void (*lt_agg_fn)(void *ctx, const void *key, const struct lt_hist *sum);
/* the pinned histogram maps of aggregate probe `p` (.map, then .map2), read as one */
int lt_agg_open(struct lt_agg **out, const struct lt_probe *p);
int lt_agg_open_fd(struct lt_agg **out, int fd, const char *name); /* takes the fd */
void lt_agg_no_batch(struct lt_agg *a); /* read key by key, as on kernels without batch ops */
int lt_agg_read(struct lt_agg *a, lt_agg_fn cb, void *ctx);
uint32_t lt_agg_max_entries(const struct lt_agg *a);
bool lt_agg_batched(const struct lt_agg *a); /* the last read used batch lookups */
void lt_agg_close(struct lt_agg *a);

/* Ring consumer: `cb` returns 0 to go on, < 0 to stop after this record, LT_RING_AGAIN to
 * stop before it (not taken: handed out again by the next poll). */
#define LT_RING_AGAIN (-EAGAIN)
typedef int (*lt_sample_fn)(void *ctx, void *data, size_t size);
struct lt_ring;
struct lt_ring *lt_ring_open(int fd, lt_sample_fn cb, void *ctx);
/* Wait up to timeout_ms, then drain: records handled, or -errno (-EINTR: signal) */
int lt_ring_poll(struct lt_ring *r, int timeout_ms);
/*
 * Hold mode: records handed out stay in the ring (the kernel cannot reuse their room) until
 * lt_ring_release(r, pos) lets go of those before `pos`, a position lt_ring_pos gave: the
 * end of the records handed out so far (in a callback: of this one). What was never
 * released is read again by the ring's next consumer.
 */
void lt_ring_hold(struct lt_ring *r);
uint64_t lt_ring_pos(const struct lt_ring *r);
void lt_ring_release(struct lt_ring *r, uint64_t pos);
void lt_ring_free(struct lt_ring *r);
/*
 * Announce every CPU's pending loss windows now: lost records into the ring (lt_lost_flush
 * run on each CPU). The CPUs whose windows must wait (a program on it was changing one, or
 * the ring was full): try again later. -errno when it cannot run at all.
 */
int lt_lost_flush(const struct lt_handles *h);

/*
 * The map audit: how full a loaded probe's stateful maps are (its row's .own maps and its
 * .map), so an operator sees one near its limit before it loses anything. Hash maps are
 * counted with batch lookups where the kernel has them (else get_next_key); arrays are full
 * by construction; task and socket local storage grow and shrink with the tasks and sockets
 * and the kernel cannot count them cheaply: unknown (-1). Buffers are allocated by
 * lt_maps_add: a read allocates nothing.
 */
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

/*
 * The identity of a suite's records: its hierarchy, and the kernel's names of cgroups
 * (lt_cg_names) for lt_ident_cfg.kname. Pinned (h->suite NULL) or in-process. A suite of a
 * lowtrace before them: cgroup2, no names (names_fd -1).
 */
struct lt_identity {
	int ctrl; /* enum lt_cg_ctrl */
	bool tracked;
	uint64_t grace_ns;
	int names_fd;
};
int lt_identity_open(struct lt_identity *id, struct lt_handles *h);
int lt_identity_kname(void *ctx, uint64_t cgroup_id, char *buf, size_t cap);
/* lt_cg_stat, and lt_cg_names' entries and cap (pinned suites): 0 or -errno */
int lt_identity_stat(const struct lt_identity *id, struct lt_cg_stat *cs, uint64_t *entries,
		     uint64_t *cap);
void lt_identity_close(struct lt_identity *id);

/*
 * lt_cg_counts: each cgroup's exec, exit and fork counts (summed over CPUs) for metrics --by.
 * The per-CPU buffer is allocated at open: a read allocates nothing. Open: 0 or -errno
 * (-ENOENT: a suite of a lowtrace without the map).
 */
struct lt_cg_reader;
typedef void (*lt_cg_fn)(void *ctx, uint64_t cgroup_id, const uint64_t n[LT_CG_KINDS]);
int lt_cg_open(struct lt_cg_reader **out);
int lt_cg_read(struct lt_cg_reader *r, lt_cg_fn cb, void *ctx); /* 0 or -errno */
void lt_cg_delete(struct lt_cg_reader *r, uint64_t cgroup_id);
void lt_cg_close(struct lt_cg_reader *r);

/*
 * lt_drop_cg: records lost per (probe, cgroup of the writing task), dropped or held back by a
 * rate limit. Fills `out` with up to `max` entries that lost something, most lost first;
 * returns how many, or -errno (-ENOENT: a suite of a lowtrace without the map).
 */
struct lt_blame {
	uint64_t cgroup_id;
	uint64_t drops;
	uint64_t throttled;
	uint32_t probe; /* enum lt_probe_id */
};
int lt_blame_read(struct lt_blame *out, int max);

/* What `status` shows, read from the pins and the kernel. */
struct lt_probe_status {
	bool loaded;
	const char *hook;
	uint32_t prog_id;
	uint32_t rate; /* load --rate-limit: events/s per cgroup; 0: none */
	struct lt_counts stat;
};
/* where per-object state lives (the pinned rodata's lt_cfg_local) */
enum lt_state_kind {
	LT_KIND_UNKNOWN, /* a suite loaded by a lowtrace without lt_cfg_local */
	LT_KIND_LOCAL, /* task or socket local storage */
	LT_KIND_HASH, /* the bounded hash */
};
#define LT_STATUS_MAPS 64
struct lt_status {
	uint32_t ringbuf_size;
	uint32_t filter_pid;
	uint64_t filter_cgroup_id;
	enum lt_state_kind state_task, state_sk;
	int cg_ctrl; /* the identity hierarchy, enum lt_cg_ctrl */
	bool cg_tracked; /* the suite has the cgroup tracker (lt_cg_names) */
	uint64_t cg_grace_ns;
	struct lt_probe_status probe[LT_PROBE_SLOTS];
	size_t nmaps; /* the loaded probes' stateful maps, in table order */
	struct lt_map_use maps[LT_STATUS_MAPS];
};
int lt_read_status(struct lt_status *st);
/* Turn on the kernel's BPF run-time statistics while the returned fd is open. */
int lt_enable_stats(int *fd);

#endif
