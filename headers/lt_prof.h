/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Profiles: stacks counted in the kernel. `profile` (on-CPU samples) and
 * `profile --off-cpu` (blocked time) add into lt_prof keyed by process,
 * comm and the two stack ids of lt_stacks; `alloc` adds sampled allocation
 * weights into lt_al_sites and, with --leaks, keeps the sampled blocks not
 * yet freed in lt_al_live. Userspace reads these aggregates once, at the end.
 */
#ifndef LT_PROF_H
#define LT_PROF_H

#include "lt_abi.h"

/* frames per stack: the kernel's PERF_MAX_STACK_DEPTH */
#define LT_STACK_DEPTH 127
/* slots an lt_stacks id may take: a stack whose slots all hold other stacks is lost (counted) */
#define LT_STACK_PROBES 4

/*
 * Value of lt_stacks, a hash map keyed by a 31-bit id made from a hash of the frames (open
 * addressing over LT_STACK_PROBES ids, each compared frame by frame): unlike a stack-trace map,
 * a stack is lost only when the table is full or all its slots hold other stacks. Leaf first;
 * the frames after the last are 0.
 */
struct lt_stack {
	__u64 ip[LT_STACK_DEPTH];
};
/* entries of the exponential interval table of alloc sampling */
#define LT_AL_IVAL_N 1024

/* Key of lt_prof. A stack id < 0 means no such stack (see lt_prof_ctr). */
struct lt_prof_key {
	__u32 tgid;
	__s32 kstack;
	__s32 ustack;
	__u32 _pad0;
	char comm[LT_COMM_LEN];
};

struct lt_prof_val {
	__u64 count; /* samples, or times blocked */
	__u64 ns; /* off-CPU: nanoseconds blocked (on-CPU: 0, the loader multiplies) */
};

/* Slots of the per-CPU lt_prof_err counters: nothing is lost silently. */
enum lt_prof_ctr {
	LT_PC_SAMPLES = 0, /* samples / switches / allocations taken */
	LT_PC_KSTACK_COLL = 1, /* kernel stack lost: every slot of its id held another stack */
	LT_PC_USTACK_COLL = 2, /* user stack lost: every slot of its id held another stack */
	LT_PC_KSTACK_ERR = 3, /* kernel stack lost otherwise (-ENOMEM, ...) */
	LT_PC_USTACK_ERR = 4, /* user stack missing in a user process (-EFAULT, ...) */
	LT_PC_MAP_FULL = 5, /* an aggregate map was full: the sample is lost */
	LT_PC_TASK_DROP = 6, /* a new-process notice was lost (ring full) */
	LT_PC_START_FULL = 7, /* off-CPU: the switch-out table was full */
	LT_PC_LIVE_FULL = 8, /* alloc --leaks: the live-block table was full */
	LT_PC_CALLS = 9, /* alloc: allocator calls seen (sampled or not) */
	LT_PC_STACKS_FULL = 10, /* a stack lost: lt_stacks was full */
	LT_PC_SEEN_FULL = 11, /* a new-process notice not sent: lt_prof_seen was full */
	LT_PC_CD_FULL = 12, /* alloc: a thread's countdown could not be kept, the call unsampled */
	/* user stacks walked with unwind tables (lt_unwind.h), and why walks stopped short */
	LT_PC_UW_WALKS = 13, /* user stacks walked with the tables */
	LT_PC_UW_NOPROC = 14, /* no tables for the process yet: frame pointers (bpf_get_stack) */
	LT_PC_UW_EXPR = 15, /* stopped at a rule the rows cannot express (DWARF expression) */
	LT_PC_UW_SIGNAL = 16, /* stopped at a signal frame */
	LT_PC_UW_READ = 17, /* stopped: a stack read failed or went the wrong way */
	LT_PC_UW_DEPTH = 18, /* cut at LT_STACK_DEPTH frames */
	LT_PC_UW_FP = 19, /* frames stepped by frame pointer: code with no unwind rows (JIT, gaps) */
	LT_PC_SLOTS = 24,
};

/* Key of lt_prof_seen: a process under one comm (a new comm after exec is a new key). */
struct lt_task_key {
	__u32 tgid;
	char comm[LT_COMM_LEN];
};

/* Key of lt_al_sites: allocations summed per process and user stack. */
struct lt_al_key {
	__u32 tgid;
	__s32 ustack;
	/* the return address at the allocator's entry: a frame-pointer walk from a
	 * function's first instruction skips its caller on kernels before 6.12 */
	__u64 caller;
};

/* LT_AL_FP: fixed point of estimated counts (weight / size is fractional) */
#define LT_AL_FP_SHIFT 16

struct lt_al_val {
	__u64 bytes; /* estimated bytes allocated: sum of sample weights */
	__u64 count_fp; /* estimated allocations << LT_AL_FP_SHIFT */
	__u64 samples; /* sampled allocations */
};

/* Value of lt_al_live (key: the block's address). */
struct lt_al_live {
	__u64 size; /* bytes asked for */
	__u64 weight; /* estimated bytes this sample stands for */
	struct lt_al_key site;
};

/* Per-thread state between an allocator's entry and its return. */
struct lt_al_pend {
	__u64 size;
	__u64 weight;
	__u64 memptr; /* posix_memalign's void ** */
	struct lt_al_key site;
};

_Static_assert(sizeof(struct lt_prof_key) == 32, "lt_prof_key size");
LT_ASSERT_OFF(struct lt_prof_key, ustack, 8);
LT_ASSERT_OFF(struct lt_prof_key, comm, 16);
_Static_assert(sizeof(struct lt_prof_val) == 16, "lt_prof_val size");
_Static_assert(sizeof(struct lt_stack) == LT_STACK_DEPTH * 8, "lt_stack size");
_Static_assert(sizeof(struct lt_task_key) == 20, "lt_task_key size");
_Static_assert(sizeof(struct lt_al_key) == 16, "lt_al_key size");
LT_ASSERT_OFF(struct lt_al_key, caller, 8);
_Static_assert(sizeof(struct lt_al_val) == 24, "lt_al_val size");
_Static_assert(sizeof(struct lt_al_live) == 32, "lt_al_live size");
LT_ASSERT_OFF(struct lt_al_live, site, 16);
_Static_assert(sizeof(struct lt_al_pend) == 40, "lt_al_pend size");
LT_ASSERT_OFF(struct lt_al_pend, site, 24);

/* The profiles' shared structs for the ABI test and the BTF anchors (see LT_ABI_RECORDS). */
#define LT_ABI_PROF(S, M)                                                                      \
	S(lt_prof_key) M(lt_prof_key, tgid) M(lt_prof_key, kstack) M(lt_prof_key, ustack)       \
	M(lt_prof_key, _pad0) M(lt_prof_key, comm)                                             \
	S(lt_prof_val) M(lt_prof_val, count) M(lt_prof_val, ns)                                 \
	S(lt_task_key) M(lt_task_key, tgid) M(lt_task_key, comm)                                \
	S(lt_al_key) M(lt_al_key, tgid) M(lt_al_key, ustack) M(lt_al_key, caller)               \
	S(lt_al_val) M(lt_al_val, bytes) M(lt_al_val, count_fp) M(lt_al_val, samples)           \
	S(lt_al_live) M(lt_al_live, size) M(lt_al_live, weight) M(lt_al_live, site)             \
	S(lt_al_pend) M(lt_al_pend, size) M(lt_al_pend, weight) M(lt_al_pend, memptr)           \
	M(lt_al_pend, site)                                                                    \
	S(lt_stack) M(lt_stack, ip)

#endif /* LT_PROF_H */
