/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The profiles' stack buffer, loss counters and the user-stack walker's maps and state: what the
 * walker's step (unwind.bpf.c) and the profiles (lt_prof.bpf.h) both use. Weak like the maps of
 * lt_common.bpf.h; created only when a profile is loaded, sized by the loader.
 */
#ifndef LT_STACK_BPF_H
#define LT_STACK_BPF_H

#include "lt_common.bpf.h"
#include "lt_prof.h"
#include "lt_unwind.h"

/* one stack being hashed (too big for the BPF stack); one program family runs per object */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_stack);
} lt_stack_buf __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_PC_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lt_prof_err __weak SEC(".maps");

static __always_inline void lt_prof_inc(__u32 ctr)
{
	__u64 *c = bpf_map_lookup_elem(&lt_prof_err, &ctr);

	if (c)
		(*c)++;
}

/* ---- user stacks by unwind tables (lt_unwind.h) ---- */

/* set by the loader when it fills the tables: walk user stacks with them */
const volatile bool lt_cfg_unwind __weak = false;

/* sized by the loader (one unused entry when the tables are off); mmapable: the loader writes
 * rows by the megabyte */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lt_uw_row);
} lt_uw_rows __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_uw_proc);
} lt_uw_procs __weak SEC(".maps");

/* the walk in progress: registers of the frame being unwound (bp: rbp, arm64's x29) */
struct lt_uw_state {
	__u64 ip, sp, bp;
	__u32 tgid, n;
	__u32 miss; /* a pc of the walk lay in none of the process's mappings */
	__u32 _pad0;
#ifdef LT_UW_ARM64
	__u64 lr; /* x30 of the interrupted frame: a return address only before it is saved */
#endif
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_uw_state);
} lt_uw_st __weak SEC(".maps");

/* lt_uw_step's answers: go on, or why the walk ended */
enum {
	LT_UW_GO = 0,
	LT_UW_DONE, /* the outermost frame, or a zero return address */
	LT_UW_STOP_NOPROC, /* no tables for this process */
	LT_UW_STOP_EXPR,
	LT_UW_STOP_SIGNAL,
	LT_UW_STOP_READ,
	LT_UW_STOP_DEPTH,
};

#endif /* LT_STACK_BPF_H */
