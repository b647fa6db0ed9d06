/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Workload identity: the current task's cgroup id in the identity hierarchy, per-cgroup counts. */
#ifndef LT_CGROUP_BPF_H
#define LT_CGROUP_BPF_H

#include "lt_common.bpf.h"

/* per-cgroup lifecycle counts (metrics --by); preallocated, full: lt_stat.cg_full */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, LT_CG_MAX);
	__type(key, __u64);
	__type(value, struct lt_cg_count);
} lt_cg_counts __weak SEC(".maps");

/* The kernel's index of the identity hierarchy's controller (enum cgroup_subsys_id); -1: none */
static __always_inline int lt_cg_ssid(void)
{
#define LT_SSID(c, e)                                                               \
	case c:                                                                     \
		return bpf_core_enum_value_exists(enum cgroup_subsys_id, e)         \
			       ? (int)bpf_core_enum_value(enum cgroup_subsys_id, e) \
			       : -1
	switch (lt_cfg_cg_ctrl) {
		LT_SSID(LT_CTRL_PIDS, pids_cgrp_id);
		LT_SSID(LT_CTRL_MEMORY, memory_cgrp_id);
		LT_SSID(LT_CTRL_CPU, cpu_cgrp_id);
		LT_SSID(LT_CTRL_CPUACCT, cpuacct_cgrp_id);
		LT_SSID(LT_CTRL_BLKIO, io_cgrp_id);
		LT_SSID(LT_CTRL_DEVICES, devices_cgrp_id);
		LT_SSID(LT_CTRL_FREEZER, freezer_cgrp_id);
		LT_SSID(LT_CTRL_CPUSET, cpuset_cgrp_id);
	}
#undef LT_SSID
	return -1;
}

/*
 * The current task's cgroup id in the identity hierarchy. cgroup2: the helper.
 * A v1 controller's: css_set -> its css -> cgroup -> kernfs id, read each time
 * (a task that moved and then execs is named from the exec on). The branch not
 * taken is pruned at load: a cgroup2 node pays nothing for it.
 */
/* Where the kernel has it (5.11+), the current task as a BTF pointer: plain loads, no helper. */
#define LT_TASK_BTF bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)

static __always_inline struct cgroup_subsys_state *lt_cg_css(void)
{
	struct task_struct *t;
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cs;
	int i = lt_cg_ssid();

	if (i < 0 || i >= (int)(bpf_core_field_size(struct css_set, subsys) / sizeof(void *)))
		return NULL;
	if (LT_TASK_BTF) {
		/* i is a constant to the verifier (rodata, CO-RE): a fixed offset */
		cs = bpf_get_current_task_btf()->cgroups;
		return cs ? cs->subsys[i] : NULL;
	}
	t = (struct task_struct *)bpf_get_current_task();
	cs = BPF_CORE_READ(t, cgroups);
	if (!cs || bpf_core_read(&css, sizeof(css), &cs->subsys[i]))
		return NULL;
	return css;
}

static __always_inline __u64 lt_cg_id(void)
{
	struct cgroup_subsys_state *css;
	struct cgroup *cg;
	struct kernfs_node *kn;

	if (lt_cfg_cg_ctrl == LT_CTRL_V2)
		return bpf_get_current_cgroup_id();
	css = lt_cg_css();
	if (!css)
		return 0;
	if (LT_TASK_BTF) {
		cg = css->cgroup;
		kn = cg ? cg->kn : NULL;
		return kn ? kn->id : 0;
	}
	return BPF_CORE_READ(css, cgroup, kn, id);
}

/* One exec, exit or fork of the current task's cgroup, in lt_cg_counts; returns that cgroup. */
static __always_inline __u64 lt_cg_count(__u32 probe, enum lt_cg_kind kind)
{
	static const struct lt_cg_count zero;
	__u64 id = lt_cg_id();
	struct lt_cg_count *c = lt_lookup_or_add(&lt_cg_counts, &id, &zero);

	if (c && kind < LT_CG_KINDS) {
		c->n[kind]++; /* per CPU: no other writer */
	} else {
		struct lt_stat *st = lt_stat_slot(probe);

		if (st)
			st->cg_full++;
	}
	return id;
}

#endif /* LT_CGROUP_BPF_H */
