// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What belongs to the whole object rather than to a probe: the record layouts and the license. */
#include "lt_common.bpf.h"
#include "lt_record.bpf.h"
#include "lt_abi.h"
#include "lt_hist.h"
#include "lt_prof.h"
#include "lt_unwind.h"

/* lt_common.bpf.h: whether the suite writes; pinned as maps/live */
volatile __u32 lt_live SEC(".data.live") = 0;

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

/*
 * One probe's pending loss window on this CPU, announced as a lost record: 0 done (or
 * none), 1 the ring is full. Global, so the verifier checks it once on its own: inside
 * lt_lost_flush's loop over the probe slots it then walks one call per slot instead of
 * this code 32 times (that walk was 37 of the 170 ms a default load spent verifying).
 */
__noinline int lt_lost_one(__u32 probe)
{
	struct lt_stat *st = lt_stat_slot(probe);
	struct lt_lost *lost;
	__u64 n, t;

	if (!st || !st->lost_count)
		return 0;
	lost = bpf_ringbuf_reserve(&lt_events, sizeof(*lost), 0);
	if (!lost)
		return 1;
	n = st->lost_count;
	t = st->lost_throttled;
	lt_lost_fill(lost, st, probe, n, t);
	/* no task wrote it: not the one this interrupt happened to stop */
	lost->hdr.pid = lost->hdr.tid = 0;
	lost->hdr.cgroup_id = 0;
	bpf_ringbuf_submit(lost, 0);
	st->lost_count -= n;
	st->lost_throttled -= t;
	return 0;
}

/*
 * Not attached: the consumer's claim of this CPU's loss windows (a test run on each CPU in
 * turn, at least once a second and at its stop): each pending window announced now as a
 * lost record, so none waits for the CPU's next record of its probe. It runs with
 * preemption disabled, in an interrupt when on another CPU than the caller's: no program
 * of this CPU moves while it runs, and it leaves the windows alone while one is inside a
 * change (lt_busy): they are claimed exactly once, by it or by the record that would carry
 * them. 0: all claimed; 1: try again (busy, or the ring was full).
 */
SEC("raw_tp")
int lt_lost_flush(void *ctx)
{
	__u32 zero = 0, *b = bpf_map_lookup_elem(&lt_lost_busy, &zero);
	int ret = 0;

	if (!b || *b)
		return 1;
	__sync_fetch_and_add(b, 1);
	for (__u32 probe = 0; probe < LT_PROBE_SLOTS; probe++) {
		if (lt_lost_one(probe)) {
			ret = 1;
			break;
		}
	}
	__sync_fetch_and_add(b, -1);
	return ret;
}
