/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Inside the kernel layer (kernel_*.c): what a suite holds, and what the files share. */
#ifndef LT_KERNEL_INT_H
#define LT_KERNEL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kernel_suite.h"
#include "lowtrace.skel.h"
#include "records.h"

/* links of programs attached by hand: perf events (one per CPU) and uprobes */
#define LT_EXTRA_LINKS 1024

struct lt_suite {
	struct lowtrace *skel;
	/* from lt_suite_open until lt_suite_load */
	int cg_fd; /* --cgroup, -1: none */
	int lock_fd; /* the pin lock (pinned loads), -1: none */
	uint64_t probes;
	bool pin, replace, al_leaks;
	bool pin_group; /* pins for pin_gid: dirs 0750, pins 0640 or 0660 (kernel_pin.c) */
	unsigned int pin_gid;
	bool tp_level; /* the *_tp programs are attached (tracepoints are preemptible) */
	uint64_t tp_probes; /* the probes whose *_tp program is */
	bool sk_hash; /* sockets in the hash: a *_tp program needs them there */
	/* a program's link; a syscall-set probe's classic programs: their first one (in sys_links) */
	struct bpf_link *links[LT_PROBE_SLOTS][LT_PROBE_PROGS];
	/* a syscall-set probe's classic programs: one link per syscall of the row (NULL where the
	 * kernel has no such tracepoint) */
	struct bpf_link *sys_links[LT_PROBE_SLOTS][LT_PROBE_PROGS][LT_PROBE_NSYS];
	struct bpf_link *iters[LT_PROBE_SLOTS][LT_PROBE_ITERS];
	struct bpf_link *extra[LT_EXTRA_LINKS];
	int nextra;
	int cg_ctrl; /* the identity hierarchy (enum lt_cg_ctrl) */
	char cg_mnt[512]; /* where it is mounted: the seed walks it ("" none) */
	struct bpf_link *cg_links[3]; /* lt_cg_mkdir, lt_cg_rmdir, lt_cg_rename */
	void *uw_rows; /* lt_uw_rows mapped (lt_suite_unwind_rows), uw_len bytes */
	size_t uw_len;
};

/* the cgroup tracker's programs (progs/cgroup.bpf.c), i < 3 */
static inline struct bpf_program *cg_prog(struct lt_suite *s, int i)
{
	struct bpf_program *p[3] = { s->skel->progs.lt_cg_mkdir, s->skel->progs.lt_cg_rmdir,
				     s->skel->progs.lt_cg_rename };

	return p[i];
}

/* a program on a classic syscall tracepoint (open's, a syscall-set probe's) */
static inline bool lt_prog_on_syscall_tp(const struct bpf_program *p)
{
	return p && !strncmp(bpf_program__section_name(p), "tracepoint/syscalls/", 20);
}

/* ancestry's seed: an lt_procs entry for each process running (kernel_procs.c) */
int lt_seed_procs(struct lt_suite *s);

/* ---- what the machine has (kernel_env.c): exit codes, the error printed ---- */
int check_privileges(void);
int check_env(void);
int ensure_bpffs(void);
int ensure_tracefs(void);
bool tp_preemptible(void);
bool perf_links(void);
bool bpf_atomics(void);

/* ---- the pin directory (kernel_pin.c): exit codes, the error printed ---- */
/* Take the pin lock and finish what killed loaders left; *fd holds the lock. */
int pin_begin(int *fd);
/* Pin `s` as LT_PIN_DIR (replacing the suite there with s->replace). */
int pin_suite(struct lt_suite *s);

/* ---- readers' helpers ---- */
/* a pin opened read-only (kernel_handles.c): the fd, or -1 and errno */
int pin_get_ro(const char *path);
/* the pinned rodata into st: filters, rate limits, state modes, identity (kernel_status.c) */
struct lt_status;
void read_rodata(struct lt_status *st);

#endif
