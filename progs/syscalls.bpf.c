// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syscalls: count and log2 latency histogram per syscall (per process with
 * load --per-pid), in a per-CPU hash: no record per call, no atomics.
 * tp_btf on the raw sys_enter/sys_exit tracepoints: one program per syscall
 * entry and exit of every task.
 */
#include "lt_common.bpf.h"
#include "lt_syscall_nr.h"

const volatile __u8 lt_cfg_sys_per_pid = 0;

/* the entry time of the syscall a thread is in (lt_start) */
LT_TASK_STATE(lt_sys_start, __u64);

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

	/* they never return: on the fallback their entry would hold a slot until the tid is reused */
	if (id == LT_NR_exit || id == LT_NR_exit_group || lt_skip_current())
		return 0;
	lt_start(LT_PROBE_SYSCALLS, &lt_sys_start, lt_current(), tid);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(lt_sys_x, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct lt_sys_key key = {};
	__u64 delta;

	if (!lt_elapsed(&lt_sys_start, lt_current(), tid, &delta))
		return 0;
	key.nr = BPF_CORE_READ(regs, orig_ax);
	if (lt_cfg_sys_per_pid)
		key.pid = id >> 32;
	lt_hist_count(LT_PROBE_SYSCALLS, &lt_sys_hist, &key, delta);
	return 0;
}
