/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What `status` shows, read from the pins and the kernel (kernel_status.c). lt_read_status
 * returns an enum lt_exit_code with the error printed.
 */
#ifndef LT_KERNEL_STATUS_H
#define LT_KERNEL_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel_audit.h"
#include "kernel_stats.h"
#include "lt_abi.h"

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
	/* exec's ancestry (lt_anc_stat summed; its LRU's entries and cap), when exec is loaded */
	bool anc_known;
	struct lt_anc_stat anc;
	uint64_t procs, procs_cap;
	size_t nmaps; /* the loaded probes' stateful maps, in table order */
	struct lt_map_use maps[LT_STATUS_MAPS];
};
int lt_read_status(struct lt_status *st);

#endif
