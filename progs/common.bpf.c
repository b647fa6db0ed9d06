// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What belongs to the whole object rather than to a probe: the record layouts and the license. */
#include "lt_common.bpf.h"
#include "lt_record.bpf.h"
#include "lt_abi.h"
#include "lt_hist.h"
#include "lt_prof.h"
#include "lt_unwind.h"

/*
 * The loader decodes these structs; naming each here keeps its layout in the
 * object's BTF for the ABI test, at the cost of 8 bytes of .rodata each.
 */
#define LT_BTF_ANCHOR(s) const struct s *const s##_btf = 0;
#define LT_NO_MEMBER(s, m)
LT_ABI_RECORDS(LT_BTF_ANCHOR, LT_NO_MEMBER)
LT_ABI_HIST(LT_BTF_ANCHOR, LT_NO_MEMBER)
LT_ABI_PROF(LT_BTF_ANCHOR, LT_NO_MEMBER)
LT_ABI_UNWIND(LT_BTF_ANCHOR, LT_NO_MEMBER)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Not attached: the consumer runs it on each CPU (test run on a CPU) to claim the loss windows. */
SEC("raw_tp")
int lt_lost_flush(void *ctx)
{
	return lt_lost_claim();
}
