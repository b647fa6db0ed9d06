// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/floor.bpf.c: one empty program per hook lowtrace's probes use, so
 * bench/peers can measure the hook floor: what the kernel spends to run a
 * program that does nothing there (BPF statistics count the program only).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define FLOOR(name, hook)    \
	SEC("tp_btf/" #hook) \
	int BPF_PROG(name)   \
	{                    \
		return 0;    \
	}

FLOOR(f_exec, sched_process_exec)
FLOOR(f_exit, sched_process_exit)
FLOOR(f_free, sched_process_free)
FLOOR(f_fork, sched_process_fork)
FLOOR(f_signal, signal_generate)
FLOOR(f_sys_enter, sys_enter)
FLOOR(f_sys_exit, sys_exit)
FLOOR(f_wakeup, sched_wakeup)
FLOOR(f_wakeup_new, sched_wakeup_new)
FLOOR(f_switch, sched_switch)
FLOOR(f_rq_issue, block_rq_issue)
FLOOR(f_rq_complete, block_rq_complete)
FLOOR(f_sk_state, inet_sock_set_state)
FLOOR(f_retrans, tcp_retransmit_skb)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* lowtrace's default ring */
} f_ring SEC(".maps");

static __always_inline void ship(__u32 size)
{
	__u64 *r = bpf_ringbuf_reserve(&f_ring, size, 0);

	if (r) {
		*r = bpf_ktime_get_ns();
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	}
}

/* sizes: struct lt_signal, lt_open, lt_file, lt_cred, lt_priv (headers/lt_abi.h) */
SEC("tp_btf/signal_generate")
int BPF_PROG(r_signal)
{
	ship(88);
	return 0;
}

#define RFLOOR_TP(name, event, size)       \
	SEC("tracepoint/syscalls/" #event) \
	int name(void *ctx)                \
	{                                  \
		ship(size);                \
		return 0;                  \
	}

RFLOOR_TP(r_open_xat, sys_exit_openat, 328)
RFLOOR_TP(r_chmod_x, sys_exit_fchmodat, 608)
RFLOOR_TP(r_setres_x, sys_exit_setresuid, 152)
RFLOOR_TP(r_setns_x, sys_exit_setns, 704)

/* open's hook where perf links exist: the classic per-syscall tracepoints */
#define FLOOR_TP(name, event)              \
	SEC("tracepoint/syscalls/" #event) \
	int name(void *ctx)                \
	{                                  \
		return 0;                  \
	}

/* arm64 has no open(2): only the *at tracepoints exist there */
#ifndef __TARGET_ARCH_arm64
FLOOR_TP(f_open_eo, sys_enter_open)
FLOOR_TP(f_open_xo, sys_exit_open)
#endif
FLOOR_TP(f_open_eat, sys_enter_openat)
FLOOR_TP(f_open_eat2, sys_enter_openat2)
FLOOR_TP(f_open_xat, sys_exit_openat)
FLOOR_TP(f_open_xat2, sys_exit_openat2)

/* file's, cred's and priv's rows: the classic tracepoints of the one syscall each times */
FLOOR_TP(f_chmod_e, sys_enter_fchmodat)
FLOOR_TP(f_chmod_x, sys_exit_fchmodat)
FLOOR_TP(f_setres_e, sys_enter_setresuid)
FLOOR_TP(f_setres_x, sys_exit_setresuid)
FLOOR_TP(f_setns_e, sys_enter_setns)
FLOOR_TP(f_setns_x, sys_exit_setns)

/* the profilers' hook: a sampling perf event (bench/floor.c opens one per CPU at 99 Hz) */
SEC("perf_event")
int f_perf(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
