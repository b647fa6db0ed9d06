// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syscalls: count and log2 latency histogram per syscall (per process with
 * load --per-pid), in a per-CPU hash: no record per call, no atomics.
 * tp_btf on the raw sys_enter/sys_exit tracepoints: one program per syscall
 * entry and exit of every task.
 */
#include "lt_common.bpf.h"

const volatile __u8 lt_cfg_sys_per_pid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, __u64); /* entry time */
} lt_sys_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct lt_sys_key);
	__type(value, struct lt_hist);
} lt_sys_hist SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(lt_sys_e, struct pt_regs *regs, long id)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();

	if (lt_skip_current())
		return 0;
	if (bpf_map_update_elem(&lt_sys_start, &tid, &now, BPF_ANY))
		lt_count(LT_PROBE_SYSCALLS, true);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(lt_sys_x, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct lt_sys_key key = {};
	struct lt_hist *h;
	__u64 *start, delta;

	start = bpf_map_lookup_elem(&lt_sys_start, &tid);
	if (!start)
		return 0;
	delta = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(&lt_sys_start, &tid);
	key.nr = BPF_CORE_READ(regs, orig_ax);
	if (lt_cfg_sys_per_pid)
		key.pid = id >> 32;
	h = lt_hist_of(&lt_sys_hist, &key);
	if (!h) {
		lt_count(LT_PROBE_SYSCALLS, true);
		return 0;
	}
	lt_hist_add(h, delta);
	lt_count(LT_PROBE_SYSCALLS, false);
	return 0;
}
