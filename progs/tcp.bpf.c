// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tcp: one record per closed TCP connection, from sock:inet_sock_set_state
 * (tp_btf); tcp_retrans: one record per retransmitted segment, from
 * tcp:tcp_retransmit_skb (tp_btf). No kprobes: they work on locked-down
 * kernels.
 *
 * A connection is tracked from SYN_SENT (connect) or SYN_RECV (accept) to
 * CLOSE in per-socket state (lt_tcp_conns). State changes often run in softirq
 * context, where the current task is unrelated: the owner is taken in
 * process context only (connect's SYN_SENT; the close() of an accepted
 * socket, FIN_WAIT1 or LAST_ACK), and the filters are applied to it.
 * Listening sockets have an entry too (no record): every change of a socket
 * opened since the load then leaves a trace, by which lt_tcp_nest and
 * lt_tcp_tp (below) take over exactly the changes the kernel skipped lt_tcp for.
 */
#include "lt_common.bpf.h"
#include "lt_cgroup.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_record.bpf.h"
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
	TCP_LISTEN_ = 10,
	TCP_CLOSING_ = 11,
};

/*
 * Socket-local storage where tracing programs have it: one entry per tracked
 * socket, freed with it. Elsewhere the loader replaces it with a preallocated
 * hash keyed by the socket's address, of --max-conns entries; a connection
 * that finds it full is counted as a drop (its record is lost).
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_tcp_conn);
} lt_tcp_conns SEC(".maps");

/* The socket's entry, a closed one too (start_ns 0), or NULL. */
static __always_inline struct lt_tcp_conn *conn_entry(const struct sock *sk)
{
	__u64 key = (__u64)sk;

	if (lt_cfg_local & LT_LOCAL_SK)
		return bpf_sk_storage_get(&lt_tcp_conns, (void *)sk, NULL, 0);
	return bpf_map_lookup_elem(&lt_tcp_conns, &key);
}

/* The socket's live connection, or NULL (none, or closed: start_ns 0). */
static __always_inline struct lt_tcp_conn *conn_get(const struct sock *sk)
{
	struct lt_tcp_conn *c = conn_entry(sk);

	return c && c->start_ns ? c : NULL;
}

/* The netns of the loader: socket storage's sweep counts the connections of this one only. */
const volatile __u32 lt_cfg_netns = 0;

/* The loader's namespace: socket storage's sweep counts only it (lt_tcp_sweep). */
static __always_inline struct lt_stat *conn_stat_here(const struct sock *sk)
{
	if (!(lt_cfg_local & LT_LOCAL_SK) ||
	    BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum) != lt_cfg_netns)
		return NULL;
	return lt_stat_slot(LT_PROBE_TCP);
}

/*
 * A tracked connection began (`opened`) or a program saw it end: the balance
 * the sweep of socket storage keeps (lt_tcp_sweep).
 */
static __always_inline void conn_count(const struct sock *sk, bool opened)
{
	struct lt_stat *st = conn_stat_here(sk);

	if (!st)
		return;
	if (opened)
		st->opened++;
	else
		st->closed++;
}

/*
 * A close of a socket no program tracked: opened before the load, or opened with no
 * program run (a kernel that runs no BPF for a task: docs/design.md), whose record is
 * then missing. Counted for the sweep's balance of unseen opens (lt_tcp_sweep), once the
 * socket carries an empty entry: the walk counts a socket without one as untracked and
 * live, so a socket is never both.
 */
static __always_inline void conn_untracked_close(const struct sock *sk)
{
	struct lt_stat *st = conn_stat_here(sk);

	if (st && bpf_sk_storage_get(&lt_tcp_conns, (void *)sk, NULL,
				     BPF_LOCAL_STORAGE_GET_F_CREATE))
		st->uclosed++;
}

/* An open that found no room for its entry: a drop, and untracked (not unseen) */
static __always_inline void conn_open_failed(const struct sock *sk)
{
	struct lt_stat *st = conn_stat_here(sk);

	if (st)
		st->open_failed++;
}

/* A tracked connection ended with no program seeing its close: its record is missing. */
static __always_inline void conn_unseen(const struct lt_tcp_conn *c)
{
	struct lt_stat *st;

	if (!c->start_ns || c->listener || !c->keep)
		return; /* closed already, or no record was due */
	st = lt_stat_slot(LT_PROBE_TCP);
	if (st)
		st->unseen++;
}

/*
 * Start tracking the socket as `n`; false when there is no room (the caller
 * counts it). In the hash, a live entry under the socket's address is one of a
 * socket freed without a close any program saw (that address is this socket's
 * now): counted unseen, and replaced in place.
 */
static __always_inline bool conn_new(const struct sock *sk, const struct lt_tcp_conn *n)
{
	__u64 key = (__u64)sk;
	struct lt_tcp_conn *c;

	if (lt_cfg_local & LT_LOCAL_SK) {
		c = bpf_sk_storage_get(&lt_tcp_conns, (void *)sk, NULL,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!c)
			return false;
		*c = *n;
		return true;
	}
	c = bpf_map_lookup_elem(&lt_tcp_conns, &key);
	if (c) {
		conn_unseen(c);
		*c = *n;
		return true;
	}
	return bpf_map_update_elem(&lt_tcp_conns, &key, n, BPF_ANY) == 0;
}

/*
 * The connection ended: local storage goes with the socket, the hash slot is
 * freed now; or, `mark`, kept closed (start_ns 0, last CLOSE) for the programs
 * after this one to see the change taken (lt_tcp_tp running first, below).
 */
static __always_inline void conn_done(const struct sock *sk, struct lt_tcp_conn *c, bool mark)
{
	__u64 key = (__u64)sk;

	if (lt_cfg_local & LT_LOCAL_SK || mark)
		c->start_ns = 0;
	else
		bpf_map_delete_elem(&lt_tcp_conns, &key);
}

static __always_inline void own(struct lt_tcp_conn *c)
{
	__u64 id = bpf_get_current_pid_tgid();

	c->pid = id >> 32;
	c->tid = (__u32)id;
	c->owner_known = 1;
	c->cgroup_id = lt_cg_id();
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

enum {
	/* a program that may run after another one (lt_tcp_nest, lt_tcp_tp) */
	LT_TCP_NESTED = 1,
	/* a close leaves the entry closed for the program after this one (conn_done) */
	LT_TCP_MARK = 2,
	/* lt_tcp_tp: noted in the entry (by_tp) for an lt_tcp after it */
	LT_TCP_BY_TP = 4,
};

static __always_inline bool tcp_opens(int newstate)
{
	return newstate == TCP_SYN_SENT_ || newstate == TCP_SYN_RECV_ || newstate == TCP_LISTEN_;
}

/*
 * One state change; `c` is the socket's entry (conn_entry) for a change that is
 * no open. False when nothing could be done about it: a new connection found no
 * room (counted as a drop by the first program to run; a later one, LT_TCP_NESTED,
 * cannot tell whether that one counted it and leaves it to the kernel's miss
 * count), or the socket is not tracked. `how`: LT_TCP_* above.
 */
static __always_inline bool tcp_state(const struct sock *sk, struct lt_tcp_conn *c, int oldstate,
				      int newstate, __u32 how)
{
	bool nested = how & LT_TCP_NESTED;
	struct lt_tcp_conn n = {};
	struct tcp_sock *tp;
	struct lt_tcp *r;

	n.by_tp = !!(how & LT_TCP_BY_TP);

	if (newstate == TCP_LISTEN_) {
		/* no record, but a takeover can then tell a change the kernel skipped
		 * the main program for from one it had nothing to do for */
		n.start_ns = bpf_ktime_get_ns();
		n.last = newstate;
		n.listener = 1;
		n.keep = !lt_filtering();
		return conn_new(sk, &n);
	}
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
		if (conn_new(sk, &n)) {
			conn_count(sk, true);
			return true;
		}
		if (!nested)
			lt_count(LT_PROBE_TCP, true);
		conn_open_failed(sk);
		return false;
	}
	if (!c && newstate == TCP_CLOSE_ && oldstate != TCP_LISTEN_ && !nested)
		conn_untracked_close(sk);
	if (!c || !c->start_ns)
		return false; /* opened before the probe was loaded, or with no program run */
	c->last = newstate;
	c->by_tp = n.by_tp;
	if (newstate == TCP_ESTABLISHED_) {
		fill_addr(&c->addr, sk);
		c->syn_acked = oldstate == TCP_SYN_SENT_;
		return true;
	}
	if (!c->owner_known && (newstate == TCP_FIN_WAIT1_ || newstate == TCP_LAST_ACK_)) {
		own(c); /* close() of an accepted socket */
		return true;
	}
	if (newstate != TCP_CLOSE_)
		return true;
	if (!c->listener)
		conn_count(sk, false);
	if (!c->keep || c->listener)
		goto out;
	r = lt_reserve(LT_PROBE_TCP, LT_TYPE_TCP, sizeof(*r));
	if (!r)
		goto out;
	r->hdr.pid = c->pid;
	r->hdr.tid = c->tid;
	r->hdr.cgroup_id = c->cgroup_id;
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
	conn_done(sk, c, how & LT_TCP_MARK);
	return true;
}

/*
 * The levels. The kernel skips a program that fires while it is still running
 * on the same CPU, and only counts it (a recursion miss): a softirq's state
 * change inside a process-context one, or, on kernels whose tracepoints are
 * preemptible, another task's. That change would be lost. lt_tcp_nest, a
 * second program on the same hook, runs after lt_tcp for every change and
 * takes over the ones lt_tcp did not see. A socket's changes are serialized
 * by its lock, so the `last` state in the socket's entry tells exactly
 * whether a program already handled this one (conn_taken).
 *
 * Where tracepoints are preemptible, two tasks preempted inside lt_tcp and
 * lt_tcp_nest on one CPU hold both; lt_tcp_tp, on the classic tracepoint,
 * is run by perf with preemption disabled and takes over what both missed
 * (the loader attaches it there, with the sockets in the hash: a classic
 * tracepoint program cannot reach socket storage). Perf keeps its place on
 * the tracepoint from its first user, so after load --replace (or beside
 * another perf user) lt_tcp_tp runs FIRST. Who counts then follows from who
 * took the change, not from a guess at the order: lt_tcp_nest and lt_tcp_tp
 * count each change they take as recovered and lt_tcp_tp notes it in the entry
 * (by_tp); lt_tcp, which only lt_tcp_tp can run before, gives the count back
 * when it finds its change taken that way. So recovered is what the kernel
 * skipped lt_tcp for, in either order and from the first change on (a per-CPU
 * note of the order, taken from the first program to run, was wrong for good
 * when that one was skipped, or when lt_tcp was attached before lt_tcp_tp).
 * A close lt_tcp_tp takes is left closed (start_ns 0, last CLOSE) for the
 * lt_tcp after it, which frees it, unless lt_tcp_tp is known to run last
 * (lt_tcp_tp_last); the tp_btf programs free a close they take at once.
 */

/* lt_tcp_tp is attached: the loader attaches it where it keeps sockets in the hash */
static __always_inline bool tcp_tp_level(void)
{
	return lt_cfg_claims && !(lt_cfg_local & LT_LOCAL_SK);
}

/* Did a program before this one handle the change? Entry `c` from conn_entry. */
static __always_inline bool conn_taken(const struct lt_tcp_conn *c, int newstate)
{
	if (!c)
		return false;
	if (tcp_opens(newstate))
		return c->start_ns && c->last == newstate;
	return c->last == newstate; /* a close: the entry left closed */
}

/*
 * lt_tcp_tp runs after the tp_btf programs: set when it finds a change they took (a
 * proof, not a guess: a change no open, whose state a socket takes once, taken by
 * no lt_tcp_tp; so on a fresh load, whose lt_tcp is attached first). Until then
 * lt_tcp_tp leaves a close it takes closed for an lt_tcp after it; from then on it
 * frees it, as the last program to run. The order stays for the suite's life: perf
 * keeps its place on the tracepoint while the suite's event holds it.
 */
__u32 lt_tcp_tp_last;

/* A closed entry a program before left: this one, after it, frees it. */
static __always_inline void conn_free_closed(const struct sock *sk, const struct lt_tcp_conn *c)
{
	__u64 key = (__u64)sk;

	if (!c->start_ns && !(lt_cfg_local & LT_LOCAL_SK))
		bpf_map_delete_elem(&lt_tcp_conns, &key);
}

/* A takeover (lt_tcp_nest; lt_tcp_tp): handles the change if no program before it did. */
static __always_inline void tcp_takeover(const struct sock *sk, int oldstate, int newstate, bool tp)
{
	struct lt_tcp_conn *c = conn_entry(sk);
	__u32 how = LT_TCP_NESTED;

	if (conn_taken(c, newstate)) {
		if (tp && !c->by_tp && !tcp_opens(newstate) && !lt_tcp_tp_last)
			lt_tcp_tp_last = 1;
		conn_free_closed(sk, c);
		return;
	}
	if (!tcp_opens(newstate) && !(c && c->start_ns))
		return; /* nothing to do: a socket opened before the probe was loaded */
	if (tp)
		how |= LT_TCP_BY_TP | (lt_cfg_tp_only || lt_tcp_tp_last ? 0 : LT_TCP_MARK);
	if (tcp_state(sk, c, oldstate, newstate, how))
		lt_count_recovered(LT_PROBE_TCP);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(lt_tcp, const struct sock *sk, int oldstate, int newstate)
{
	struct lt_tcp_conn *c = NULL;
	struct lt_stat *st;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	if (tcp_tp_level()) {
		if (lt_cfg_tp_only)
			return 0;
		c = conn_entry(sk);
		/* (only lt_tcp_tp runs before: a taken entry it did not note is a stale one,
		 * of a socket freed with no program seeing its close, that conn_new replaces) */
		if (conn_taken(c, newstate) && c->by_tp) {
			/* lt_tcp_tp ran first and took it: not a skip of ours */
			conn_free_closed(sk, c);
			st = lt_stat_slot(LT_PROBE_TCP);
			if (st)
				st->recovered--; /* the sum over CPUs is what counts */
			return 0;
		}
	} else if (!tcp_opens(newstate)) {
		c = conn_entry(sk);
	}
	tcp_state(sk, c, oldstate, newstate, 0);
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(lt_tcp_nest, const struct sock *sk, int oldstate, int newstate)
{
	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	if (tcp_tp_level() && lt_cfg_tp_only)
		return 0;
	tcp_takeover(sk, oldstate, newstate, false);
	return 0;
}

SEC("tracepoint/sock/inet_sock_set_state")
int lt_tcp_tp(struct trace_event_raw_inet_sock_set_state *e)
{
	if (BPF_CORE_READ(e, protocol) != IPPROTO_TCP)
		return 0;
	tcp_takeover(BPF_CORE_READ(e, skaddr), BPF_CORE_READ(e, oldstate),
		     BPF_CORE_READ(e, newstate), true);
	return 0;
}

/*
 * Closes the kernel ran no program for (docs/design.md: a kernel that runs no
 * BPF for a task) leave their connection tracked: in the hash, its slot taken
 * for good; in socket storage, gone with no trace. The consumers look for them
 * every LT_SWEEP_MS (loader/kernel_sweep.c lt_sweep_run).
 *
 * The hash: lt_tcp_reap, run (test run) with the keys of entries older than a
 * sweep, reads each socket where it was: freed and reused (another local or
 * remote port) or CLOSE means its close went unseen (a close a program sees
 * frees the entry before the kernel stores CLOSE). Such an entry is freed and
 * counted unseen, once: the delete that succeeds counts, and conn_new counts
 * the ones whose address a new socket takes first. Any socket in any network
 * namespace.
 *
 * Socket storage goes with its socket: lt_tcp_sweep (iter/tcp, the sweeper's
 * network namespace) counts the live tracked connections, and the sweeper
 * keeps the balance of lt_stat.opened and .closed against it (lt_sweep). It
 * counts the untracked ones too (no entry; listeners aside): against the load's
 * walk and lt_stat.uclosed, those are the opens no program saw. The
 * sweeper's namespace only, the loader's (lt_cfg_netns).
 */
__u64 lt_sweep_session; /* the iterator session counting now: a concurrent one says nothing */
__u64 lt_sweep_voided; /* the last session told another began */
__u64 lt_sweep_live[2]; /* tracked connections; untracked ones (no entry), listeners aside */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_sweep);
} lt_sweep SEC(".maps");

SEC("iter/tcp")
int lt_tcp_sweep(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	__u64 sid = ctx->meta->session_id;
	struct lt_tcp_conn *c;
	struct tcp_sock *tp;

	/* session ids grow: a newer one takes over (its first call may be the stop alone: no
	 * socket in the namespace), an older one is voided */
	if (sid > lt_sweep_session) {
		lt_sweep_session = sid;
		lt_sweep_live[0] = lt_sweep_live[1] = 0;
	}
	if (lt_sweep_session != sid) {
		/* another session began: this one's reader is told so, by a length not its counts' */
		if (lt_sweep_voided != sid) {
			lt_sweep_voided = sid;
			bpf_seq_write(ctx->meta->seq, &lt_sweep_voided, 1);
		}
		return 0;
	}
	if (!skc) {
		bpf_seq_write(ctx->meta->seq, lt_sweep_live, sizeof(lt_sweep_live));
		return 0;
	}
	if (!(lt_cfg_local & LT_LOCAL_SK))
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp || BPF_CORE_READ(skc, skc_net.net, ns.inum) != lt_cfg_netns)
		return 0; /* a time-wait or request socket (never tracked), or not counted */
	c = bpf_sk_storage_get(&lt_tcp_conns, tp, NULL, 0);
	if (c && c->start_ns && !c->listener)
		lt_sweep_live[0]++;
	else if (!c && skc->skc_state != TCP_LISTEN_)
		lt_sweep_live[1]++;
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_tcp_reap);
} lt_tcp_reap_keys SEC(".maps");

/* The hash entry's socket is gone: freed, reused by another, or closed. */
static __always_inline bool conn_gone(const struct sock *sk, const struct lt_tcp_conn *c)
{
	unsigned char state;
	__u16 num, dport;

	if (bpf_core_read(&state, sizeof(state), &sk->__sk_common.skc_state))
		return true;
	if (state == TCP_CLOSE_)
		return true;
	if (!c->addr.family)
		return false; /* ports not taken yet: the state says */
	if (bpf_core_read(&num, sizeof(num), &sk->__sk_common.skc_num) ||
	    bpf_core_read(&dport, sizeof(dport), &sk->__sk_common.skc_dport))
		return true;
	return num != c->addr.sport || bpf_ntohs(dport) != c->addr.dport;
}

/*
 * One of the hash's older keys: 1 when its entry was freed (counted unseen). Global, so the
 * verifier checks it once on its own: inside lt_tcp_reap's loop it then walks one call per
 * key instead of this code LT_REAP_BATCH times (0.5 s of every load in a TCG guest; 23 ms
 * here). Socket storage has no keys to reap: the frozen lt_cfg_local prunes the rest.
 */
__noinline int lt_tcp_reap_one(__u64 key)
{
	struct lt_tcp_conn *c, old;
	__u64 start;

	if (lt_cfg_local & LT_LOCAL_SK)
		return 0;
	c = bpf_map_lookup_elem(&lt_tcp_conns, &key);
	if (!c)
		return 0;
	old = *c;
	start = old.start_ns;
	/* a closed entry (start_ns 0) is one whose next program never ran */
	if (start && !conn_gone((const struct sock *)key, &old))
		return 0;
	/* not taken by a new socket meanwhile; the delete that succeeds counts */
	if (c->start_ns != start || bpf_map_delete_elem(&lt_tcp_conns, &key))
		return 0;
	conn_unseen(&old);
	return 1;
}

/* Not attached: the sweeping consumer runs it (test run) with the hash's older keys. */
SEC("raw_tp")
int lt_tcp_reap(void *ctx)
{
	struct lt_tcp_reap *r;
	__u32 zero = 0, freed = 0;

	r = bpf_map_lookup_elem(&lt_tcp_reap_keys, &zero);
	if (!r || lt_cfg_local & LT_LOCAL_SK)
		return 0;
	for (__u32 i = 0; i < LT_REAP_BATCH && i < r->n; i++)
		freed += lt_tcp_reap_one(r->keys[i]);
	return freed;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(lt_tcp_retrans, const struct sock *sk, const struct sk_buff *skb)
{
	struct lt_tcp_retrans *r;
	struct lt_tcp_conn *c;

	c = conn_get(sk);
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
	r->hdr.cgroup_id = 0;
	if (c && c->owner_known) {
		r->hdr.pid = c->pid;
		r->hdr.tid = c->tid;
		r->hdr.cgroup_id = c->cgroup_id;
		__builtin_memcpy(r->comm, c->comm, sizeof(r->comm));
	}
	lt_submit(LT_PROBE_TCP_RETRANS, r);
	return 0;
}
