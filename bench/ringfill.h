/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bench/ringfill: the state bench/ringfill.c shares with bench/ringfill.bpf.c (its .bss) */
#ifndef LT_BENCH_RINGFILL_H
#define LT_BENCH_RINGFILL_H

#define RF_TEMPLATES 4
#define RF_MIX 16
#define RF_MAX 1024

struct rf_tpl {
	__u32 size;
	__u32 _pad0;
	__u8 bytes[RF_MAX];
};

struct rf_state {
	__u32 n; /* records per run */
	__u32 mix[RF_MIX]; /* the template of each record, in turn */
	__u32 _pad0;
	struct rf_tpl tpl[RF_TEMPLATES];
	__u64 written; /* into the ring */
	__u64 failed; /* the ring was full: lost */
};

#endif
