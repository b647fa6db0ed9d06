// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bio: block I/O latency, issue to completion, as log2 histograms per device
 * and operation (read, write, flush, discard) in a per-CPU hash.
 * tp_btf on block_rq_issue and block_rq_complete: lt_bio_issue and lt_bio_done
 * where the kernel has BPF atomics (5.12+), the *_h pair before.
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

/*
 * In-flight requests, where the kernel has atomics (5.12+): a slot per request by a hash of
 * its identity, claimed with a compare-and-swap at issue and freed at completion: an array
 * lookup and plain loads where a hash costs a locked insert and a delete. A request whose
 * slot another holds goes to lt_bio_start, as every request does before 5.12.
 */
#define LT_BIO_SLOTS 8192

struct lt_bio_slot {
	__u64 id; /* the request's (bio_id); 0: free */
	__u64 ts; /* issue time */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_BIO_SLOTS);
	__type(key, __u32);
	__type(value, struct lt_bio_slot);
} lt_bio_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct request * */
	__type(value, __u64); /* issue time */
} lt_bio_start SEC(".maps");

/* the histograms of the *_h pair (before 5.12): a per-CPU hash by (device, op) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, LT_BIO_KEYS);
	__type(key, struct lt_bio_key);
	__type(value, struct lt_hist);
} lt_bio_hist SEC(".maps");

/*
 * The histograms of the atomic pair: a per-CPU array, each (device, op) resolved once to an
 * index (lt_bio_idx; lt_bio_keys says whose each index is) and each CPU's last one kept in
 * lt_bio_cache: an I/O costs an array access where a hash lookup was.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_BIO_KEYS);
	__type(key, __u32);
	__type(value, struct lt_hist);
} lt_bio_ahist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_BIO_KEYS);
	__type(key, __u32);
	__type(value, struct lt_bio_key);
} lt_bio_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_BIO_KEYS);
	__type(key, struct lt_bio_key);
	__type(value, __u32);
} lt_bio_idx SEC(".maps");

struct lt_bio_last {
	struct lt_bio_key key;
	__u32 idx; /* index + 1; 0: none yet */
	__u32 _pad0;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_bio_last);
} lt_bio_cache SEC(".maps");

__u64 lt_bio_nkeys; /* indexes handed out (64 bits: the ISA's compare-and-swap) */

/*
 * An in-flight request's identity without its address (a BTF pointer takes no arithmetic):
 * its queue's id, hardware queue and driver tag, unique among requests in flight; 0 when it
 * has no driver tag (the hash then). A requeued request's old slot is taken back by the
 * next request with its tag.
 */
static __always_inline __u64 bio_id(const struct request *rq)
{
	int tag = rq->tag;

	if (tag < 0)
		return 0;
	return (__u64)(__u32)rq->q->id << 32 | (__u64)(rq->mq_hctx->queue_num & 0xffff) << 16 |
	       (tag & 0xffff);
}

static __always_inline struct lt_bio_slot *bio_slot(__u64 id)
{
	/* Fibonacci hashing spreads the queues' tags */
	__u32 i = (id * 0x9E3779B97F4A7C15ull) >> (64 - 13);

	return bpf_map_lookup_elem(&lt_bio_slots, &i);
}

/* (q, rq) before 5.11, (rq) since */
static __always_inline __u64 issued_rq(__u64 *ctx)
{
	if (bpf_core_type_matches(btf_trace_block_rq_issue___q))
		return ctx[1];
	return ctx[0];
}

SEC("tp_btf/block_rq_issue")
int lt_bio_issue(__u64 *ctx)
{
	__u64 key = issued_rq(ctx), id, old;
	struct lt_bio_slot *s;

	id = bio_id((const struct request *)key);
	s = id ? bio_slot(id) : NULL;
	if (s) {
		old = __sync_val_compare_and_swap(&s->id, 0, id);
		/* free, or this tag's own (a requeued request's, or this one issued again) */
		if (!old || old == id) {
			s->ts = bpf_ktime_get_ns();
			return 0;
		}
	}
	lt_key_start(LT_PROBE_BIO, &lt_bio_start, &key);
	return 0;
}

/* Before 5.12 (no atomics): the hash alone */
SEC("tp_btf/block_rq_issue")
int lt_bio_issue_h(__u64 *ctx)
{
	__u64 key = issued_rq(ctx);

	lt_key_start(LT_PROBE_BIO, &lt_bio_start, &key);
	return 0;
}

/* The request's (device, op) */
static __always_inline void bio_key(struct request *rq, struct lt_bio_key *k)
{
	struct gendisk *disk;
	__u32 op;

	/* rq is a BTF pointer: direct loads (a NULL on the way reads 0), no probe-read
	 * helper calls; the old layout's cast is no BTF pointer, so it reads by helper */
	if (bpf_core_field_exists(((struct request___old *)rq)->rq_disk)) {
		disk = BPF_CORE_READ((struct request___old *)rq, rq_disk);
		if (disk)
			k->dev = BPF_CORE_READ(disk, major) << 20 | BPF_CORE_READ(disk, first_minor);
	} else {
		disk = rq->q->disk;
		if (disk)
			k->dev = disk->major << 20 | disk->first_minor;
	}
	op = rq->cmd_flags & 0xff; /* REQ_OP_MASK */
	k->op = op <= LT_BIO_DISCARD ? op : LT_BIO_OTHER;
}

static __always_inline bool key_eq(const struct lt_bio_key *a, const struct lt_bio_key *b)
{
	return a->dev == b->dev && a->op == b->op;
}

/* A new index (compare-and-swap: the suite is built for BPF ISA v2, without fetch-add) */
static __always_inline __u32 bio_next_index(void)
{
	for (int t = 0; t < 8; t++) {
		__u64 n = lt_bio_nkeys;

		if (n >= LT_BIO_KEYS || __sync_val_compare_and_swap(&lt_bio_nkeys, n, n + 1) == n)
			return n;
	}
	return LT_BIO_KEYS; /* eight CPUs in a row took one first: this one is a drop */
}

/*
 * The histogram of `k` in lt_bio_ahist: this CPU's last key, or the index lt_bio_idx has,
 * or a new one (its key written before the index is published, so a histogram that counts
 * has its key). NULL when LT_BIO_KEYS are taken (a drop).
 */
static __always_inline struct lt_hist *bio_ahist(const struct lt_bio_key *k)
{
	__u32 zero = 0, i, *ip;
	struct lt_bio_last *c = bpf_map_lookup_elem(&lt_bio_cache, &zero);
	struct lt_bio_key *kp;

	if (!c)
		return NULL;
	if (c->idx && key_eq(&c->key, k)) {
		i = c->idx - 1;
		return bpf_map_lookup_elem(&lt_bio_ahist, &i);
	}
	ip = bpf_map_lookup_elem(&lt_bio_idx, k);
	if (ip) {
		i = *ip;
	} else {
		i = bio_next_index();
		kp = bpf_map_lookup_elem(&lt_bio_keys, &i); /* NULL: all taken */
		if (!kp)
			return NULL;
		*kp = *k;
		/* another CPU published this key first: its index, this one left empty */
		if (bpf_map_update_elem(&lt_bio_idx, k, &i, BPF_NOEXIST)) {
			ip = bpf_map_lookup_elem(&lt_bio_idx, k);
			if (!ip)
				return NULL;
			i = *ip;
		}
	}
	c->key = *k;
	c->idx = i + 1;
	return bpf_map_lookup_elem(&lt_bio_ahist, &i);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(lt_bio_done, struct request *rq)
{
	__u64 key = (__u64)rq, delta, id = bio_id(rq);
	struct lt_bio_slot *s = id ? bio_slot(id) : NULL;
	struct lt_bio_key k = {};
	struct lt_hist *h;

	if (s && s->id == id) {
		delta = bpf_ktime_get_ns() - s->ts;
		/* freed after its time is read: the exchange orders the two (arm64 too) */
		__sync_lock_test_and_set(&s->id, 0);
	} else if (!lt_key_elapsed(&lt_bio_start, &key, &delta)) {
		return 0; /* issued before the probe was loaded */
	}
	if (lt_off())
		return 0;
	bio_key(rq, &k);
	h = bio_ahist(&k);
	if (h)
		lt_hist_add(h, delta);
	lt_count(LT_PROBE_BIO, !h);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(lt_bio_done_h, struct request *rq)
{
	__u64 key = (__u64)rq, delta;
	struct lt_bio_key k = {};

	if (!lt_key_elapsed(&lt_bio_start, &key, &delta))
		return 0; /* issued before the probe was loaded */
	bio_key(rq, &k);
	lt_hist_count(LT_PROBE_BIO, &lt_bio_hist, &k, delta);
	return 0;
}
