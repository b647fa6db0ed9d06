// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bio: block I/O latency, issue to completion, as log2 histograms per device
 * and operation (read, write, flush, discard) in a per-CPU hash.
 * tp_btf on block_rq_issue and block_rq_complete.
 *
 * block_rq_issue lost its request_queue argument in 5.11: bpf_core_type_matches
 * on the tracepoint's prototype picks the argument that holds the request.
 * The disk is rq->rq_disk before 5.18 and rq->q->disk since (field existence).
 * --pid/--cgroup do not apply: completions run in interrupt context.
 */
#include "lt_common.bpf.h"
#include "lt_hist.bpf.h"
#include "lt_state.bpf.h"

typedef void (*btf_trace_block_rq_issue___q)(void *, struct request_queue *, struct request *);

struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct request * */
	__type(value, __u64); /* issue time */
} lt_bio_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct lt_bio_key);
	__type(value, struct lt_hist);
} lt_bio_hist SEC(".maps");

SEC("tp_btf/block_rq_issue")
int lt_bio_issue(__u64 *ctx)
{
	__u64 key;

	/* (q, rq) before 5.11, (rq) since */
	if (bpf_core_type_matches(btf_trace_block_rq_issue___q))
		key = ctx[1];
	else
		key = ctx[0];
	lt_key_start(LT_PROBE_BIO, &lt_bio_start, &key);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(lt_bio_done, struct request *rq)
{
	__u64 key = (__u64)rq, delta;
	struct lt_bio_key k = {};
	struct gendisk *disk;
	__u32 op;

	if (!lt_key_elapsed(&lt_bio_start, &key, &delta))
		return 0; /* issued before the probe was loaded */
	/* rq is a BTF pointer: direct loads (a NULL on the way reads 0), no probe-read
	 * helper calls; the old layout's cast is no BTF pointer, so it reads by helper */
	if (bpf_core_field_exists(((struct request___old *)rq)->rq_disk)) {
		disk = BPF_CORE_READ((struct request___old *)rq, rq_disk);
		if (disk)
			k.dev = BPF_CORE_READ(disk, major) << 20 | BPF_CORE_READ(disk, first_minor);
	} else {
		disk = rq->q->disk;
		if (disk)
			k.dev = disk->major << 20 | disk->first_minor;
	}
	op = rq->cmd_flags & 0xff; /* REQ_OP_MASK */
	k.op = op <= LT_BIO_DISCARD ? op : LT_BIO_OTHER;
	lt_hist_count(LT_PROBE_BIO, &lt_bio_hist, &k, delta);
	return 0;
}
