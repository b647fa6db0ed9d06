// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syscalls: count and log2 latency histogram per syscall, no record per call,
 * no atomics (per-CPU maps). tp_btf on the raw sys_enter/sys_exit
 * tracepoints: a program per syscall entry and exit of every task, so every
 * nanosecond here is paid by every syscall on the machine:
 * - per syscall: a per-CPU array indexed by syscall number (the kernel inlines
 *   its lookup to a bounds check and an add: no hash, no helper call);
 * - per (syscall, process) with load --per-pid: a per-CPU hash;
 * - load --count-only: lt_sys_c alone on sys_exit counts, no entry time.
 * Numbers outside the build's table count as LT_SYS_OTHER ("other").
 */
#include "lt_common.bpf.h"
#include "lt_arch.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_hist.bpf.h"
#include "lt_state.bpf.h"
#include "lt_syscall_nr.h"

const volatile __u8 lt_cfg_sys_per_pid = 0;

/* the syscall a thread is in: its entry time and number (the exit of some
 * rt_sigreturn calls reports no number, -1: seen in a shell's SIGCHLD handler) */
struct lt_sys_entry {
	__u64 start_ns;
	__u32 nr;
	__u32 _pad;
};
LT_TASK_STATE(lt_sys_start, struct lt_sys_entry);

/* per syscall number; the loader shrinks it to 1 entry with --per-pid */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_SYS_SLOTS);
	__type(key, __u32);
	__type(value, struct lt_hist);
} lt_sys_nr SEC(".maps");

/* per (syscall, process) with --per-pid; the loader shrinks it to 1 entry without */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct lt_sys_key);
	__type(value, struct lt_hist);
} lt_sys_hist SEC(".maps");

static __always_inline __u32 sys_slot(long nr)
{
	return nr >= 0 && nr < LT_NSYSCALLS ? nr : LT_SYS_OTHER;
}

/* The histogram of syscall slot `nr` (of this process with --per-pid), or NULL (a drop). */
static __always_inline struct lt_hist *sys_hist(__u32 nr)
{
	struct lt_sys_key key = { .nr = nr };
	struct lt_hist *h;

	if (lt_cfg_sys_per_pid) {
		key.pid = bpf_get_current_pid_tgid() >> 32;
		h = lt_hist_of(&lt_sys_hist, &key);
	} else {
		h = bpf_map_lookup_elem(&lt_sys_nr, &key.nr);
	}
	if (!h)
		lt_count(LT_PROBE_SYSCALLS, true);
	return h;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(lt_sys_e, struct pt_regs *regs, long id)
{
	struct lt_sys_entry e = {};

	/* they never return: on the fallback their entry would hold a slot until the tid is reused */
	if (id == LT_NR_exit || id == LT_NR_exit_group || lt_skip_current())
		return 0;
	e.nr = sys_slot(id);
	e.start_ns = bpf_ktime_get_ns();
	if (!lt_task_put(&lt_sys_start, lt_current(), lt_current_tid(), &e, sizeof(e)))
		lt_count(LT_PROBE_SYSCALLS, true);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(lt_sys_x, struct pt_regs *regs, long ret)
{
	__u32 tid = lt_current_tid();
	struct lt_sys_entry *e = lt_task_get(&lt_sys_start, lt_current(), tid);
	struct lt_hist *h;
	__u64 delta;
	__u32 nr;

	if (!e || !e->start_ns)
		return 0;
	delta = bpf_ktime_get_ns() - e->start_ns;
	nr = e->nr;
	lt_task_done(&lt_sys_start, e, tid);
	if (lt_off())
		return 0;
	h = sys_hist(nr);
	if (!h)
		return 0;
	lt_hist_add(h, delta);
	lt_count(LT_PROBE_SYSCALLS, false);
	return 0;
}

/* load --count-only: counts, no latency (the slots stay empty: readers show counts only) */
SEC("tp_btf/sys_exit")
int BPF_PROG(lt_sys_c, struct pt_regs *regs, long ret)
{
	struct lt_hist *h;

	if (lt_skip_current() || lt_off())
		return 0;
	/* a BTF pointer: a direct load, no probe-read helper (lt_arch.bpf.h) */
	h = sys_hist(sys_slot(LT_SYS_NR(regs)));
	if (!h)
		return 0;
	h->count++;
	lt_count(LT_PROBE_SYSCALLS, false);
	return 0;
}
