/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The load-time filters (--pid, --cgroup): tested in lt_skip and nowhere else. */
#ifndef LT_FILTER_BPF_H
#define LT_FILTER_BPF_H

#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"

/* the --cgroup directory (cgroup2), for bpf_current_task_under_cgroup */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} lt_cgroup __weak SEC(".maps");

#define LT_CG_DEPTH 16 /* --cgroup in a v1 hierarchy: ancestors looked at (k8s nests 5) */

/* --cgroup: is the current task in lt_cfg_cgroup_id or below it, in the identity hierarchy? */
static __always_inline bool lt_cg_under(void)
{
	struct cgroup_subsys_state *css;

	if (lt_cfg_cg_ctrl == LT_CTRL_V2)
		return bpf_current_task_under_cgroup(&lt_cgroup, 0) == 1;
	css = lt_cg_css();
	for (int d = 0; d < LT_CG_DEPTH && css; d++) {
		if (BPF_CORE_READ(css, cgroup, kn, id) == lt_cfg_cgroup_id)
			return true;
		css = BPF_CORE_READ(css, parent);
	}
	return false;
}

/* True when a load-time filter is set: an event whose process is unknown is then skipped. */
static __always_inline bool lt_filtering(void)
{
	return lt_cfg_tgid || lt_cfg_cgroup_id;
}

/* What an event is tested against: lt_skip's flags. */
#define LT_SKIP_CURRENT (1u << 0) /* the event is the current task's, not `task`'s */
#define LT_SKIP_CGROUP (1u << 1) /* --cgroup applies: it can only test the current task */

/*
 * The load-time filters, tested here and nowhere else: true when an event is
 * skipped. --pid keeps the thread group of the current task or `task` (flags)
 * and `also`, another process the event is about (a signal's target, an OOM
 * victim; 0: none). A new filter goes here and in lt_filtering.
 */
static __always_inline bool lt_skip(struct task_struct *task, __u32 also, unsigned int flags)
{
	if (lt_cfg_tgid) {
		/* read only with --pid: these probes run on every event */
		__u32 tgid = flags & LT_SKIP_CURRENT ? bpf_get_current_pid_tgid() >> 32
						     : BPF_CORE_READ(task, tgid);

		if (tgid != lt_cfg_tgid && (!also || also != lt_cfg_tgid))
			return true;
	}
	return flags & LT_SKIP_CGROUP && lt_cfg_cgroup_id && !lt_cg_under();
}

/* The usual case: the event is the current task's, every filter applies. */
static __always_inline bool lt_skip_current(void)
{
	return lt_skip(NULL, 0, LT_SKIP_CURRENT | LT_SKIP_CGROUP);
}

#endif /* LT_FILTER_BPF_H */
