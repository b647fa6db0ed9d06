// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tcp: one record per closed TCP connection, from sock:inet_sock_set_state
 * (tp_btf); tcp_retrans: one record per retransmitted segment, from
 * tcp:tcp_retransmit_skb (tp_btf). No kprobes: they work on locked-down
 * kernels.
 *
 * A connection is tracked from SYN_SENT (connect) or SYN_RECV (accept) to
 * CLOSE in a hash keyed by the socket. State changes often run in softirq
 * context, where the current task is unrelated: the owner is taken in
 * process context only (connect's SYN_SENT; the close() of an accepted
 * socket, FIN_WAIT1 or LAST_ACK), and the filters are applied to it.
 * lt_tcp_nest (below) takes over the changes the kernel skipped lt_tcp for.
 */
#include "lt_common.bpf.h"
#include <bpf/bpf_endian.h>

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6

enum {
	TCP_ESTABLISHED_ = 1,
	TCP_SYN_SENT_ = 2,
	TCP_SYN_RECV_ = 3,
	TCP_FIN_WAIT1_ = 4,
	TCP_FIN_WAIT2_ = 5,
	TCP_CLOSE_ = 7,
	TCP_LAST_ACK_ = 9,
	TCP_CLOSING_ = 11,
};

struct conn {
	__u64 start_ns;
	__u32 pid;
	__u32 tid;
	__u8 direction;
	__u8 owner_known; /* pid/tid/comm were taken in process context */
	__u8 keep; /* the owner passed the filters */
	__u8 syn_acked; /* connect side, established: bytes_acked counted our SYN */
	__u8 last; /* the last state lt_tcp saw: lt_tcp_nest compares */
	__u8 _pad[7];
	char comm[LT_COMM_LEN];
	struct lt_tcp_addr addr; /* taken at ESTABLISHED: by CLOSE the port may be released */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct sock * */
	__type(value, struct conn);
} lt_tcp_conns SEC(".maps");

static __always_inline void own(struct conn *c)
{
	__u64 id = bpf_get_current_pid_tgid();

	c->pid = id >> 32;
	c->tid = (__u32)id;
	c->owner_known = 1;
	c->keep = !lt_skip_current();
	bpf_get_current_comm(c->comm, sizeof(c->comm));
}

static __always_inline int fill_addr(struct lt_tcp_addr *a, const struct sock *sk)
{
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);

	__builtin_memset(a, 0, sizeof(*a));
	if (family == AF_INET) {
		a->family = 4;
		bpf_core_read(a->saddr, 4, &sk->__sk_common.skc_rcv_saddr);
		bpf_core_read(a->daddr, 4, &sk->__sk_common.skc_daddr);
	} else if (family == AF_INET6) {
		a->family = 6;
		bpf_core_read(a->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_core_read(a->daddr, 16, &sk->__sk_common.skc_v6_daddr);
	} else {
		return -1;
	}
	a->sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	a->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	return 0;
}

static __always_inline void tcp_state(const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk;
	struct conn *c, n = {};
	struct tcp_sock *tp;
	struct lt_tcp *r;

	if (newstate == TCP_SYN_SENT_ || newstate == TCP_SYN_RECV_) {
		n.start_ns = bpf_ktime_get_ns();
		n.last = newstate;
		if (newstate == TCP_SYN_SENT_) {
			n.direction = LT_TCP_CONNECT;
			own(&n); /* connect(): process context */
		} else {
			n.direction = LT_TCP_ACCEPT;
			n.keep = !lt_filtering(); /* until the owner is seen */
		}
		bpf_map_update_elem(&lt_tcp_conns, &key, &n, BPF_ANY);
		return;
	}
	c = bpf_map_lookup_elem(&lt_tcp_conns, &key);
	if (!c)
		return; /* opened before the probe was loaded */
	c->last = newstate;
	if (newstate == TCP_ESTABLISHED_) {
		fill_addr(&c->addr, sk);
		c->syn_acked = oldstate == TCP_SYN_SENT_;
		return;
	}
	if (!c->owner_known && (newstate == TCP_FIN_WAIT1_ || newstate == TCP_LAST_ACK_)) {
		own(c); /* close() of an accepted socket */
		return;
	}
	if (newstate != TCP_CLOSE_)
		return;
	if (!c->keep)
		goto out;
	r = lt_reserve(LT_PROBE_TCP, LT_TYPE_TCP, sizeof(*r));
	if (!r)
		goto out;
	r->hdr.pid = c->pid;
	r->hdr.tid = c->tid;
	if (c->addr.family) {
		__builtin_memcpy(&r->addr, &c->addr, sizeof(r->addr));
	} else if (fill_addr(&r->addr, sk)) {
		bpf_ringbuf_discard(r, 0);
		goto out;
	}
	tp = (struct tcp_sock *)sk;
	r->duration_ns = r->hdr.ts_ns - c->start_ns;
	/*
	 * The kernel counts sequence space: SYN and FIN take one each. Payload is
	 * what remains without our SYN (connect side), our FIN if the peer acked it
	 * (everything up to write_seq, which includes it, acknowledged) and the
	 * peer's FIN if it came (SOCK_DONE is set by its arrival only).
	 */
	r->tx_bytes = BPF_CORE_READ(tp, bytes_acked) - c->syn_acked;
	if ((oldstate == TCP_FIN_WAIT1_ || oldstate == TCP_FIN_WAIT2_ || oldstate == TCP_CLOSING_ ||
	     oldstate == TCP_LAST_ACK_) &&
	    BPF_CORE_READ(tp, snd_una) == BPF_CORE_READ(tp, write_seq) && r->tx_bytes)
		r->tx_bytes--;
	r->rx_bytes = BPF_CORE_READ(tp, bytes_received);
	if ((BPF_CORE_READ(sk, __sk_common.skc_flags) >>
	     bpf_core_enum_value(enum sock_flags, SOCK_DONE)) &
		    1 &&
	    r->rx_bytes)
		r->rx_bytes--;
	r->direction = c->direction;
	__builtin_memset(r->_pad0, 0, sizeof(r->_pad0));
	__builtin_memcpy(r->comm, c->comm, sizeof(r->comm));
	lt_submit(LT_PROBE_TCP, r);
out:
	bpf_map_delete_elem(&lt_tcp_conns, &key);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(lt_tcp, const struct sock *sk, int oldstate, int newstate)
{
	if (BPF_CORE_READ(sk, sk_protocol) == IPPROTO_TCP)
		tcp_state(sk, oldstate, newstate);
	return 0;
}

/*
 * The kernel skips a program that fires while it is still running on the same
 * CPU, and only counts it (a recursion miss): a softirq's state change inside a
 * process-context one, or, on kernels whose tracepoints are preemptible, another
 * task's. That event would be lost. This second program on the same hook runs
 * after lt_tcp for every change and takes over the ones lt_tcp did not see. A
 * socket's changes are serialized by its lock, so the `last` state lt_tcp left
 * in the socket's entry tells exactly whether lt_tcp ran for this one.
 */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(lt_tcp_nest, const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk;
	struct conn *c;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	c = bpf_map_lookup_elem(&lt_tcp_conns, &key);
	if (newstate == TCP_SYN_SENT_ || newstate == TCP_SYN_RECV_) {
		if (c && c->last == newstate)
			return 0;
	} else if (!c || c->last == newstate) {
		return 0; /* lt_tcp saw it, or there is nothing to do */
	}
	tcp_state(sk, oldstate, newstate);
	lt_count_recovered(LT_PROBE_TCP);
	return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(lt_tcp_retrans, const struct sock *sk, const struct sk_buff *skb)
{
	__u64 key = (__u64)sk;
	struct lt_tcp_retrans *r;
	struct conn *c;

	c = bpf_map_lookup_elem(&lt_tcp_conns, &key);
	if (c ? !c->keep : lt_filtering())
		return 0;
	r = lt_reserve(LT_PROBE_TCP_RETRANS, LT_TYPE_TCP_RETRANS, sizeof(*r));
	if (!r)
		return 0;
	if (fill_addr(&r->addr, sk)) {
		bpf_ringbuf_discard(r, 0);
		return 0;
	}
	r->state = BPF_CORE_READ(sk, __sk_common.skc_state);
	__builtin_memset(r->_pad0, 0, sizeof(r->_pad0));
	__builtin_memset(r->comm, 0, sizeof(r->comm));
	r->hdr.pid = 0;
	r->hdr.tid = 0;
	if (c && c->owner_known) {
		r->hdr.pid = c->pid;
		r->hdr.tid = c->tid;
		__builtin_memcpy(r->comm, c->comm, sizeof(r->comm));
	}
	lt_submit(LT_PROBE_TCP_RETRANS, r);
	return 0;
}
