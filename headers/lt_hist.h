/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Log2 latency histograms: the one bucket rule every aggregate probe and
 * every reader uses. Slot i counts values v with 2^i <= v < 2^(i+1)
 * nanoseconds (slot 0 also counts 0); the last slot counts everything from
 * 2^(LT_HIST_SLOTS-1) ns (~4.6 minutes) up.
 */
#ifndef LT_HIST_H
#define LT_HIST_H

#include "lt_abi.h"
#ifndef __bpf__
#include <stdbool.h>
#endif

#define LT_HIST_SLOTS 38

struct lt_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 slot[LT_HIST_SLOTS];
};

/* Key of the syscalls probe's map. */
struct lt_sys_key {
	__u32 nr; /* syscall number */
	__u32 pid; /* thread group with --per-pid, else 0 */
};

/* Key of the bio probe's histograms; LT_BIO_KEYS (device, op) pairs at most. */
#define LT_BIO_KEYS 1024
struct lt_bio_key {
	__u32 dev; /* major << 20 | minor, as the kernel's dev_t */
	__u8 op; /* enum lt_bio_op */
	__u8 _pad0[3];
};

enum lt_bio_op {
	LT_BIO_READ = 0,
	LT_BIO_WRITE = 1,
	LT_BIO_FLUSH = 2,
	LT_BIO_DISCARD = 3,
	LT_BIO_OTHER = 4,
};

#ifdef __bpf__
#define LT_HIST_INLINE static __always_inline
#else
#define LT_HIST_INLINE static inline
#endif

/* floor(log2(v)), 0 for 0, capped at the last slot */
LT_HIST_INLINE __u32 lt_hist_slot(__u64 v)
{
	__u32 s = 0;

	if (v >> 32) {
		v >>= 32;
		s += 32;
	}
	if (v >> 16) {
		v >>= 16;
		s += 16;
	}
	if (v >> 8) {
		v >>= 8;
		s += 8;
	}
	if (v >> 4) {
		v >>= 4;
		s += 4;
	}
	if (v >> 2) {
		v >>= 2;
		s += 2;
	}
	if (v >> 1)
		s += 1;
	return s < LT_HIST_SLOTS ? s : LT_HIST_SLOTS - 1;
}

/*
 * Were the counted events timed? Each timed one adds to exactly one slot; a
 * writer that only counts (syscalls --count-only) leaves the slots empty.
 */
LT_HIST_INLINE bool lt_hist_timed(const struct lt_hist *h)
{
	for (int i = 0; i < LT_HIST_SLOTS; i++)
		if (h->slot[i])
			return true;
	return !h->count;
}

/* Smallest value of slot i, and the smallest value above it. */
LT_HIST_INLINE __u64 lt_hist_lo(__u32 i)
{
	return i ? 1ull << i : 0;
}

LT_HIST_INLINE __u64 lt_hist_hi(__u32 i)
{
	return 1ull << (i + 1);
}

_Static_assert(sizeof(struct lt_hist) == 16 + 8 * LT_HIST_SLOTS, "lt_hist size");
_Static_assert(sizeof(struct lt_sys_key) == 8, "lt_sys_key size");
_Static_assert(sizeof(struct lt_bio_key) == 8, "lt_bio_key size");

/* The aggregates' shared structs for the ABI test and the BTF anchors (see LT_ABI_RECORDS). */
#define LT_ABI_HIST(S, M)                                                                      \
	S(lt_hist) M(lt_hist, count) M(lt_hist, sum_ns) M(lt_hist, slot)                        \
	S(lt_sys_key) M(lt_sys_key, nr) M(lt_sys_key, pid)                                      \
	S(lt_bio_key) M(lt_bio_key, dev) M(lt_bio_key, op) M(lt_bio_key, _pad0)

#endif /* LT_HIST_H */
