// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tcp sweep (kernel_sweep.h; progs/tcp.bpf.c). A close the kernel runs no program for
 * leaves its connection tracked; the consumers find such connections every LT_SWEEP_MS and
 * count them unseen.
 *
 * The hash: its entries older than a sweep go to lt_tcp_reap, which frees and counts
 * those whose socket is gone (lt_stat.unseen). Any network namespace.
 *
 * Socket storage goes with its socket, so there the count is a balance: let O(a) be the
 * connections tracked by time a, E(c) those whose close a program saw by time c, L(b) the
 * tracked connections a walk of the TCP tables (lt_tcp_sweep) found between b0 and b1.
 * Every connection tracked by a and neither seen closed nor gone unseen by c was tracked
 * all of [a, c], hence in the tables during the walk, hence in L(b) when a <= b0 and
 * b1 <= c. So unseen(c) >= O(a) - E(c) - L(b): a sweep keeps O read before its walk and
 * the L it found, and the next one (LT_SWEEP_MS later, so that a close under way during
 * the last walk is over) reads E. unseen only grows (the largest of these bounds); with no
 * connection opening or closing, two sweeps make it exact. The walk sees the sweeper's
 * network namespace: the loader's is counted (lt_cfg_netns), by sweepers in it.
 *
 * An open no program saw leaves its connection untracked, with no entry: its record is
 * missing too. The walk counts those as well, against the load's walk (unseen_opens).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_int.h"
#include "kernel_sweep.h"
#include "lowtrace.h"

/* hash entries read per batch lookup while looking for stale ones */
#define REAP_READ 512

struct lt_sweeper {
	struct lt_suite *suite; /* in-process; NULL: the pins */
	int state_fd; /* lt_sweep */
	int stats_fd; /* lt_stats (not owned) */
	uint32_t stat_size; /* its value size: an older suite's has no balance counters */
	int ncpu;
	uint64_t *percpu; /* one lt_stat per CPU */
	int conns_fd, keys_fd, reap_fd; /* the hash, lt_tcp_reap_keys, lt_tcp_reap; -1: none */
	bool no_batch;
	bool balance; /* socket storage: the walk and the balance; else the hash's reaper */
	uint64_t *rkeys; /* REAP_READ keys */
	struct lt_tcp_conn *rvals; /* REAP_READ values */
	struct lt_tcp_reap reap; /* the candidates sent to lt_tcp_reap */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int pin_get(const char *name, bool ro)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = ro ? BPF_F_RDONLY : 0);
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", LT_PIN_DIR, name);
	return bpf_obj_get_opts(path, &o);
}

static int suite_map(struct lt_suite *s, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, name);
	int fd = m ? bpf_map__fd(m) : -1;

	return fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
}

static uint32_t value_size(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.value_size;
}

void lt_sweeper_close(struct lt_sweeper *w)
{
	if (!w)
		return;
	if (w->state_fd >= 0)
		close(w->state_fd);
	if (w->conns_fd >= 0)
		close(w->conns_fd);
	if (w->keys_fd >= 0)
		close(w->keys_fd);
	if (w->reap_fd >= 0)
		close(w->reap_fd);
	free(w->percpu);
	free(w->rkeys);
	free(w->rvals);
	free(w);
}

int lt_sweeper_open(struct lt_sweeper **out, const struct lt_handles *h)
{
	struct lt_sweeper *w = calloc(1, sizeof(*w));
	const char *reap = NULL;

	*out = NULL;
	if (!w)
		return lt_error(LT_FAIL, "out of memory");
	w->suite = h->suite;
	w->stats_fd = h->stats_fd;
	w->conns_fd = w->keys_fd = w->reap_fd = -1;
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].id == LT_PROBE_TCP)
			reap = lt_probes[i].reap;
	if (h->suite) {
		struct bpf_program *p =
			reap ? bpf_object__find_program_by_name(h->suite->skel->obj, reap) : NULL;

		w->balance = h->suite->iters[LT_PROBE_TCP][0];
		w->state_fd = suite_map(h->suite, "lt_sweep");
		if (p && bpf_program__fd(p) >= 0) {
			w->reap_fd = fcntl(bpf_program__fd(p), F_DUPFD_CLOEXEC, 0);
			w->conns_fd = suite_map(h->suite, "lt_tcp_conns");
			w->keys_fd = suite_map(h->suite, "lt_tcp_reap_keys");
		}
	} else {
		char name[64];

		/* -1: a suite without the tcp probe, or loaded by a lowtrace without the sweep */
		w->state_fd = pin_get("maps/lt_sweep", false);
		w->balance = !faccessat(AT_FDCWD, LT_PIN_DIR "/links/tcp_sweep", F_OK,
					AT_SYMLINK_NOFOLLOW);
		snprintf(name, sizeof(name), "%s", reap ? lt_link_name(reap) : "");
		if (w->state_fd >= 0 && reap && (w->reap_fd = pin_get(name, false)) >= 0) {
			w->conns_fd = pin_get("maps/lt_tcp_conns", true);
			w->keys_fd = pin_get("maps/lt_tcp_reap_keys", false);
		}
	}
	if (w->state_fd >= 0 && value_size(w->state_fd) != sizeof(struct lt_sweep)) {
		close(w->state_fd); /* another lowtrace's layout */
		w->state_fd = -1;
	}
	if (w->conns_fd >= 0 && value_size(w->conns_fd) != sizeof(struct lt_tcp_conn)) {
		close(w->conns_fd);
		w->conns_fd = -1;
	}
	w->stat_size = value_size(w->stats_fd);
	w->ncpu = libbpf_num_possible_cpus();
	if (w->state_fd < 0 || w->ncpu <= 0 || (!w->balance && w->reap_fd < 0) ||
	    w->stat_size < sizeof(struct lt_stat)) {
		lt_sweeper_close(w);
		return LT_OK; /* nothing to sweep: *out stays NULL */
	}
	w->percpu = calloc(w->ncpu, (w->stat_size + 7) & ~7u);
	if (!w->balance) { /* the hash's read buffers: 52 KiB */
		w->rkeys = calloc(REAP_READ, sizeof(*w->rkeys));
		w->rvals = calloc(REAP_READ, sizeof(*w->rvals));
	}
	if (!w->percpu || (!w->balance && (!w->rkeys || !w->rvals))) {
		lt_sweeper_close(w);
		return lt_error(LT_FAIL, "out of memory");
	}
	*out = w;
	return LT_OK;
}

/* The tcp probe's lt_stat counters the balances use, summed over the CPUs */
struct tcp_sums {
	uint64_t opened, closed, uclosed, failed;
};

static int tcp_balance(struct lt_sweeper *w, struct tcp_sums *t)
{
	__u32 key = LT_PROBE_TCP;
	size_t stride = (w->stat_size + 7) & ~7u;

	memset(t, 0, sizeof(*t));
	if (bpf_map_lookup_elem(w->stats_fd, &key, w->percpu))
		return -errno;
	for (int c = 0; c < w->ncpu; c++) {
		const struct lt_stat *v = (const void *)((char *)w->percpu + (size_t)c * stride);

		t->opened += v->opened;
		t->closed += v->closed;
		t->uclosed += v->uclosed;
		t->failed += v->open_failed;
	}
	return 0;
}

/* Hand the candidates to lt_tcp_reap, which frees those still stale. */
static int reap_send(struct lt_sweeper *w, uint64_t *freed)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	__u32 zero = 0;

	if (!w->reap.n)
		return 0;
	if (bpf_map_update_elem(w->keys_fd, &zero, &w->reap, BPF_ANY) ||
	    bpf_prog_test_run_opts(w->reap_fd, &o))
		return -errno;
	*freed += o.retval;
	w->reap.n = 0;
	return 0;
}

/* An entry older than a sweep (or one left closed) is checked by lt_tcp_reap. */
static int reap_add(struct lt_sweeper *w, uint64_t before, uint64_t key,
		    const struct lt_tcp_conn *c, uint64_t *freed)
{
	if (c->start_ns >= before)
		return 0;
	w->reap.keys[w->reap.n++] = key;
	return w->reap.n == LT_REAP_BATCH ? reap_send(w, freed) : 0;
}

/*
 * Hand the hash's older entries to lt_tcp_reap: batch lookups where the kernel has them,
 * a key at a time where not. Returns the entries freed, or -errno.
 */
static int64_t reap(struct lt_sweeper *w, uint64_t before)
{
	uint64_t freed = 0, in = 0, outk = 0, key, next;
	bool first = true;
	int err = 0;

	while (!w->no_batch) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		__u32 n = REAP_READ;
		int got = bpf_map_lookup_batch(w->conns_fd, first ? NULL : &in, &outk, w->rkeys,
					       w->rvals, &n, &o)
				  ? -errno
				  : 0;

		/* -ENOENT: the last batch (n may still be > 0) */
		if (got && got != -ENOENT) {
			if (!first || (got != -EINVAL && got != -ENOTSUP && got != -EOPNOTSUPP))
				return got;
			w->no_batch = true; /* an older kernel: one key at a time */
			break;
		}
		for (__u32 i = 0; i < n; i++)
			if ((err = reap_add(w, before, w->rkeys[i], &w->rvals[i], &freed)))
				return err;
		if (got == -ENOENT || !n)
			return (err = reap_send(w, &freed)) ? err : (int64_t)freed;
		in = outk;
		first = false;
	}
	for (int r = bpf_map_get_next_key(w->conns_fd, NULL, &key); !r; key = next) {
		bool have = !bpf_map_lookup_elem(w->conns_fd, &key, w->rvals);

		/* the next key before a reap can free this one (a freed key restarts the walk) */
		r = bpf_map_get_next_key(w->conns_fd, &key, &next);
		if (have && (err = reap_add(w, before, key, w->rvals, &freed)))
			return err;
	}
	return (err = reap_send(w, &freed)) ? err : (int64_t)freed;
}

/*
 * At most every LT_SWEEP_MS across consumers, and no more often than LT_SWEEP_COST times
 * the last one's own time (a walk of 100 000 sockets took 0.12 s here: every 12 s).
 */
static bool sweep_due(const struct lt_sweep *st, uint64_t t)
{
	uint64_t every = LT_SWEEP_MS * 1000000ull;

	if (st->cost_ns < UINT64_MAX / LT_SWEEP_COST && st->cost_ns * LT_SWEEP_COST > every)
		every = st->cost_ns * LT_SWEEP_COST;
	return !st->last_ns || t < st->last_ns || t - st->last_ns >= every;
}

/*
 * The hash: no lock (two reapers count each entry once, by the delete that succeeds);
 * a concurrent sweeper's state write may undo this one's time: one more sweep.
 */
static int sweep_hash(struct lt_sweeper *w)
{
	struct lt_sweep st;
	uint64_t t = now_ns();
	__u32 zero = 0;
	int64_t r;

	if (bpf_map_lookup_elem(w->state_fd, &zero, &st))
		return -errno;
	if (!sweep_due(&st, t))
		return 1;
	st.last_ns = t;
	st.sweeps++;
	if (bpf_map_update_elem(w->state_fd, &zero, &st, BPF_ANY))
		return -errno;
	r = reap(w, t - LT_SWEEP_MS * 1000000ull);
	st.cost_ns = now_ns() - t;
	if (bpf_map_update_elem(w->state_fd, &zero, &st, BPF_ANY) && r >= 0)
		r = -errno;
	return r < 0 ? (int)r : 0;
}

/*
 * One walk of the TCP tables (lt_tcp_sweep): live[0] tracked connections, live[1] untracked
 * ones. 1: another walk began during this one (someone else read the pin: the iterator then
 * writes a byte), nothing counted. A namespace without sockets still runs the program at the
 * walk's stop; nothing read at all (no run) is taken as no socket.
 */
static int walk(int fd, uint64_t live[2])
{
	char buf[64];
	ssize_t n, got = 0;

	/* the iterator writes the counts at its end */
	while ((n = read(fd, buf + (got < 48 ? got : 48), 16)) > 0)
		got += n;
	if (n < 0)
		return -errno;
	if (!got) {
		live[0] = live[1] = 0;
		return 0;
	}
	if (got != 2 * sizeof(uint64_t))
		return 1;
	memcpy(live, buf, 2 * sizeof(uint64_t));
	return 0;
}

static int iter_open(struct lt_sweeper *w)
{
	if (w->suite)
		return bpf_iter_create(bpf_link__fd(w->suite->iters[LT_PROBE_TCP][0]));
	return open(LT_PIN_DIR "/links/tcp_sweep", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

/*
 * Unseen opens: a socket no program tracked is, at a walk, found (live[1]), or was seen
 * closed (uclosed: each such close leaves an empty entry first, so never both), or closed
 * unseen too. So untracked(walk) + uclosed(before it) - uclosed(after the load's walk)
 * counts each untracked socket of the load's walk at most once, each open unseen since
 * then at most once, and the open failures (counted as drops) at most once each: less
 * those two, the rest are opens no program saw.
 */
static void unseen_opens(struct lt_sweep *st, const struct tcp_sums *t, uint64_t untracked)
{
	uint64_t plus = untracked + (t->uclosed - st->base_uclosed);
	uint64_t minus = st->base_untracked + (t->failed - st->base_failed);

	if (st->based && plus > minus && plus - minus > st->unseen_opens)
		st->unseen_opens = plus - minus;
}

/* Socket storage: the walk and the balance, one sweeper at a time (flock on the walk's pin). */
static int sweep_balance(struct lt_sweeper *w)
{
	struct lt_sweep st = {};
	struct tcp_sums sums;
	uint64_t live[2];
	uint64_t t = now_ns();
	struct stat ns;
	__u32 zero = 0;
	int fd, err = 0;

	fd = iter_open(w);
	if (fd < 0)
		return -errno;
	if (!w->suite && flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return 1; /* another consumer sweeps: as good as ours */
	}
	if (bpf_map_lookup_elem(w->state_fd, &zero, &st) || tcp_balance(w, &sums)) {
		err = -errno;
		goto out;
	}
	/* the walk sees our namespace: only the loader's is counted */
	if (!sweep_due(&st, t) || stat("/proc/self/ns/net", &ns) ||
	    (uint32_t)ns.st_ino != st.netns) {
		err = 1;
		goto out;
	}
	if (st.sweeps && st.opened_at > sums.closed + st.live_at &&
	    st.opened_at - sums.closed - st.live_at > st.unseen_closes)
		st.unseen_closes = st.opened_at - sums.closed - st.live_at;
	err = walk(fd, live);
	if (err < 0)
		goto out;
	st.last_ns = t;
	st.cost_ns = now_ns() - t;
	if (!err) {
		st.opened_at = sums.opened;
		st.live_at = live[0];
		unseen_opens(&st, &sums, live[1]);
		st.sweeps++;
	}
	st.unseen = st.unseen_closes + st.unseen_opens;
	err = 0;
	if (bpf_map_update_elem(w->state_fd, &zero, &st, BPF_ANY))
		err = -errno;
out:
	close(fd);
	return err;
}

/*
 * The load's walk, right after the attach: the untracked connections then (opened before
 * the load, or in the instants before the attach), the base of unseen_opens.
 */
int lt_sweep_base(struct lt_suite *s, int stats_fd)
{
	struct lt_handles h = { .stats_fd = stats_fd, .suite = s };
	struct lt_sweeper *w;
	struct lt_sweep st;
	struct tcp_sums sums;
	uint64_t live[2];
	__u32 zero = 0;
	int fd, err;

	if (!s->iters[LT_PROBE_TCP][0])
		return LT_OK; /* the hash: its reaper */
	err = lt_sweeper_open(&w, &h);
	if (err || !w)
		return err;
	fd = iter_open(w);
	err = fd < 0 ? -errno : walk(fd, live);
	if (!err && !bpf_map_lookup_elem(w->state_fd, &zero, &st) && !tcp_balance(w, &sums)) {
		st.base_untracked = live[1];
		st.base_uclosed = sums.uclosed;
		st.base_failed = sums.failed;
		st.based = 1;
		err = bpf_map_update_elem(w->state_fd, &zero, &st, BPF_ANY) ? -errno : 0;
	} else if (!err) {
		err = -errno;
	}
	if (fd >= 0)
		close(fd);
	lt_sweeper_close(w);
	if (err)
		return lt_error(LT_FAIL, "cannot walk the TCP tables: %s",
				err > 0 ? "another walk ran" : strerror(-err));
	return LT_OK;
}

int lt_sweep_run(struct lt_sweeper *w)
{
	if (!w)
		return 1;
	return w->balance ? sweep_balance(w) : sweep_hash(w);
}

int lt_sweep_state(int fd, struct lt_sweep *st)
{
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	if (value_size(fd) != sizeof(*st))
		return -EPROTO;
	return bpf_map_lookup_elem(fd, &zero, st) ? -errno : 0;
}
