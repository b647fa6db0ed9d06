/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The syscall tracepoints' registers per architecture (the Makefile's
 * -D__TARGET_ARCH_$(TARGET_ARCH)): what sys_enter and sys_exit hand a tp_btf
 * program is the task's struct pt_regs, a BTF pointer, so these are direct
 * loads (CO-RE relocated), no probe-read helper. A raw_tp program would need
 * bpf_probe_read_kernel of the same fields.
 *   LT_SYS_NR(regs)      the syscall's number (-1: none, e.g. some rt_sigreturn exits)
 *   LT_SYS_ARG0..4(regs) its first five arguments, valid at entry and at exit
 *   LT_PE_USER(ctx)      a perf_event sample interrupted user mode (no kernel stack to walk)
 */
#ifndef LT_ARCH_BPF_H
#define LT_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
/* x86-64: the number in orig_ax (ax becomes the return value), arguments di si dx r10 r8 */
#define LT_SYS_NR(regs) ((long)(regs)->orig_ax)
#define LT_SYS_ARG0(regs) ((regs)->di)
#define LT_SYS_ARG1(regs) ((regs)->si)
#define LT_SYS_ARG2(regs) ((regs)->dx)
#define LT_SYS_ARG3(regs) ((regs)->r10)
#define LT_SYS_ARG4(regs) ((regs)->r8)
/* cs read whole: the context allows 8-byte loads only (newer headers make it a u16 of a union) */
#define LT_PE_USER(ctx) \
	(((const __u64 *)&(ctx)->regs)[__builtin_offsetof(struct pt_regs, cs) / 8] & 3)
#elif defined(__TARGET_ARCH_arm64)
/* arm64: the number in syscallno (an s32), arguments x0..x3; x0 becomes the return
 * value, so the first argument is read from orig_x0, its copy made at entry; x1..x4 stay */
#define LT_SYS_NR(regs) ((long)(regs)->syscallno)
#define LT_SYS_ARG0(regs) ((regs)->orig_x0)
#define LT_SYS_ARG1(regs) ((regs)->regs[1])
#define LT_SYS_ARG2(regs) ((regs)->regs[2])
#define LT_SYS_ARG3(regs) ((regs)->regs[3])
#define LT_SYS_ARG4(regs) ((regs)->regs[4])
/* EL0, AArch64 or AArch32 (the kernel's user_mode) */
#define LT_PE_USER(ctx) (((ctx)->regs.pstate & 0xf) == 0)
#else
#error "lowtrace's BPF programs are built for x86 or arm64 (-D__TARGET_ARCH_x86 or _arm64)"
#endif

#endif /* LT_ARCH_BPF_H */
