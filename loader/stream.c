// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Streams of records: events (from the pinned ring) and run (an in-process suite). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "kernel_cgroup.h"
#include "kernel_handles.h"
#include "kernel_ring.h"
#include "kernel_stats.h"
#include "kernel_suite.h"
#include "kernel_sweep.h"
#include "lowtrace.h"
#include "opts.h"
#include "out.h"
#include "records.h"
#include "sub.h"

#define STOP_SAMPLE (-ECANCELED) /* returned by the sample callback to end a stream */
#define POLL_MS 100 /* producers wake us only when the ring fills: the latency bound */
#define CLAIM_MS 500 /* loss windows no record carried are announced this often */

static const char events_opts_help[] =
	"    --json               one JSON object per line (default)\n"
	"    --text               one key=value line per record; non-printable bytes as \\xNN\n"
	"    --type LIST          only these record types (the probe names, see load -h)\n"
	"    --count N            stop after N records\n"
	"    --duration SECS      stop after SECS seconds\n"
	"    -o, --output FILE    append to FILE instead of standard output; SIGHUP reopens\n"
	"                         it (after an external logrotate). A failed write, open or\n"
	"                         rotation (full disk, unwritable directory) is reported\n"
	"                         once and retried every second; meanwhile the ring is not\n"
	"                         read, so nothing is skipped (the kernel counts drops once\n"
	"                         the ring is full). A record leaves the ring only once its\n"
	"                         line is written whole: after a stop, the next events\n"
	"                         writes what this one could not\n"
	"    --rotate-size BYTES  with -o: rotate before FILE would pass BYTES (K/M/G\n"
	"                         suffixes): FILE -> FILE.1 -> ... -> FILE.N, whole records\n"
	"                         only; a record larger than BYTES gets a file of its own\n"
	"    --rotate-keep N      the rotated files kept, FILE.1 .. FILE.N (default 5)\n"
	"    --container PREFIX   only records of a container whose id starts with PREFIX\n"
	"    --container-name N   only records of containers the runtime names N (docker,\n"
	"                         podman, containerd, CRI-O: from their files on this node)\n"
	"    --unit NAME          only records of this unit (NAME.service or NAME.scope)\n"
	"    --ident-cap N        cgroups the identity cache keeps (default 16384)\n";

static const char events_sub_help[] =
	"    --socket PATH        the owner's socket for subscribers (default\n"
	"                         " LT_SUB_SOCKET ")\n"
	"    --max-subscribers N  subscribers the owner serves at once (default 64, at most\n"
	"                         1024; 0: no socket)\n";

static void help_events(void)
{
	printf("NAME\n    lowtrace events - stream records from the pinned ring buffer\n\n"
	       "SYNOPSIS\n    lowtrace events [--json|--text] [--type LIST] [--pid PID]"
	       " [--count N] [--duration SECS]\n                    [--follow] [--container "
	       "PREFIX] [--container-name N]"
	       " [--unit NAME] [--ident-cap N]\n"
	       "                    [-o FILE [--rotate-size BYTES] [--rotate-keep N]] [--config "
	       "FILE]\n\n"
	       "DESCRIPTION\n"
	       "    Reads the ring of a suite pinned by 'lowtrace load' until Ctrl-C, --count\n"
	       "    or --duration. The ring has one consumer position: the 'events' that reads\n"
	       "    it (the owner) also serves other 'events' on a unix socket (--socket).\n"
	       "    Another 'events' with the same options connects to the owner and gets\n"
	       "    the records its filters pass, filtered in the owner; a subscriber that\n"
	       "    reads too slowly loses records (its bounded queue is full: lost records,\n"
	       "    and a line on stderr), never the owner. When the owner stops, a\n"
	       "    subscriber exits 7, or with --follow waits for the next owner (it never\n"
	       "    takes the ring itself). Socket and directory: the owner's user and group\n"
	       "    only. When the kernel drops records (ring\n"
	       "    full) or skips a probe (see MISSED in 'status -h'), a line on stderr says\n"
	       "    how many, per probe; at start, what was lost since the last consumer\n"
	       "    stopped (or since load). When the suite is unloaded or replaced, the\n"
	       "    records its ring still holds are printed, then events exits 6, or with\n"
	       "    --follow streams on from the next suite's first record. SIGUSR1 prints\n"
	       "    one line on stderr: the identity cache's cgroups and processes against\n"
	       "    their caps, its evictions and expiries, the walks and rotations, the\n"
	       "    cgroups the kernel named and the /proc reads; an owner's, its\n"
	       "    subscribers, those accepted, refused and dropped, their records sent and\n"
	       "    lost.\n");
	lt_probe_fields_help(stdout);
	printf("    Records of a task also have, when known: cgroup (its path in the identity\n"
	       "    hierarchy, see status), container_id, pod_uid, unit (each absent when the\n"
	       "    path names none), and container_name, image, pod_name, pod_namespace\n"
	       "    from the container runtime's own files on this node.\n");
	printf("    Kernel strings are untrusted: JSON escapes control bytes and invalid\n"
	       "    UTF-8 as \\u00XX; text escapes every non-printable byte.\n\n"
	       "OPTIONS\n%s"
	       "    --pid PID            only records of this thread group (here, not in the "
	       "kernel)\n"
	       "    --follow             after an unload or load --replace, wait for the next\n"
	       "                         suite and stream its records from its first one; as a\n"
	       "                         subscriber: wait for the next owner\n"
	       "%s%s\n"
	       "EXIT STATUS\n    0 done; 2 usage; 3 not loaded; 6 the suite was unloaded or "
	       "replaced\n    (without --follow); 7 a subscriber's owner stopped (without "
	       "--follow);\n"
	       "    1 failure (e.g. another consumer that serves no subscribers).\n",
	       events_opts_help, events_sub_help, lt_config_help);
}

static void help_run(void)
{
	printf("NAME\n    lowtrace run - load, stream, and clean up\n\n"
	       "SYNOPSIS\n    lowtrace run [load options] [events options]\n\n"
	       "DESCRIPTION\n"
	       "    Loads the suite in this process without pinning, streams its records like\n"
	       "    'events', and detaches everything on Ctrl-C, SIGTERM, --count or --duration.\n"
	       "    Independent of a pinned suite.\n\n"
	       "OPTIONS\n%s%s\n",
	       lt_load_opts_help, events_opts_help);
	lt_print_probes(stdout);
}

/* One probe's growth of a counter into a " name=+N" list. */
struct growth {
	char list[256];
	size_t len;
	uint64_t total;
};

/* What a stream prints, and the options that choose it. */
struct stream {
	struct lt_out out;
	bool text;
	bool follow; /* events --follow: on to the next suite after an unload or replace */
	bool flush_warned; /* lt_lost_flush cannot run: said once */
	bool sweep_warned; /* the tcp sweep cannot run: said once */
	uint64_t types; /* bit per record type, 0: all */
	uint32_t pid; /* 0: all */
	uint64_t count; /* 0: no limit */
	uint64_t duration_s; /* 0: no limit */
	uint64_t emitted;
	const char *output; /* -o FILE, NULL: stdout */
	uint64_t rotate_size;
	unsigned int rotate_keep;
	const char *container; /* id prefix, NULL: all */
	const char *cname; /* --container-name, NULL: all */
	size_t container_len;
	const char *unit; /* NULL: all */
	uint32_t ident_cap;
	struct lt_ident_cache ident;
	struct lt_identity idn; /* the suite's hierarchy and names (kname) */
	struct lt_rec rec;
	struct lt_decode_stats ds;
	struct lt_ring *ring; /* the ring read, in hold mode */
	/* subscribers: served as the owner, or this one's filter and owner */
	const char *socket;
	bool socket_set; /* --socket given: no socket is an error */
	unsigned int max_subs;
	struct lt_sub_server *srv;
	struct lt_sub_filter filt;
	struct lt_sub_client *cli;
	struct growth sub_lost; /* LOST frames not yet said on stderr */
};

/*
 * Write what the buffer holds, and let the ring reuse the room of the records
 * written whole: all read so far once the buffer is empty (records filtered out
 * too), else up to the last whole one. The others stay in the ring, so a stop
 * while writes fail leaves them to the next consumer.
 */
static void settle(struct stream *s)
{
	lt_out_flush(&s->out);
	if (!s->ring)
		return;
	if (!s->out.b.len && !s->out.failed)
		lt_ring_release(s->ring, lt_ring_pos(s->ring));
	else if (lt_out_done(&s->out))
		lt_ring_release(s->ring, lt_out_done(&s->out));
}

/* Does the record pass --container, --unit and --container-name? */
static bool ident_match(const struct stream *s, const struct lt_ident *id)
{
	if (s->container && (!id || id->cid_len < s->container_len ||
			     memcmp(id->container_id, s->container, s->container_len)))
		return false;
	if (s->unit && (!id || strcmp(id->unit, s->unit)))
		return false;
	if (s->cname && (!id || !id->meta || strcmp(id->meta->name, s->cname)))
		return false;
	return true;
}

/* Encode the record, its identity `id`; the stream's stop when it is the last one */
static int put_record(struct stream *s, const struct lt_probe *p, const struct lt_ident *id)
{
	size_t start = s->out.b.len;

	if (s->text)
		lt_encode_text_id(&s->out.b, p, &s->rec, id);
	else
		lt_encode_json_id(&s->out.b, p, &s->rec, id);
	if (p->type == LT_TYPE_EXIT)
		lt_ident_exit(&s->ident, s->rec.hdr.pid);
	lt_out_mark(&s->out, s->ring ? lt_ring_pos(s->ring) : 0);
	lt_out_record(&s->out, start);
	if (lt_out_full(&s->out))
		settle(s);
	if (s->out.failed || (s->count && ++s->emitted >= s->count))
		return STOP_SAMPLE;
	return 0;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct stream *s = ctx;
	const struct lt_probe *p;
	const struct lt_ident *id;
	bool lost;

	/* no room, or the output takes nothing: the record stays in the ring, unread */
	if (s->out.blocked || lt_out_full(&s->out))
		return LT_RING_AGAIN;
	p = lt_decode(data, size, &s->rec, &s->ds);
	if (!p)
		return 0;
	/* the subscribers' filters, before this stream's own */
	if (s->srv)
		lt_sub_record(s->srv, p, &s->rec, data, size,
			      lt_sub_needs_any(s->srv)
				      ? lt_ident_get(&s->ident, s->rec.hdr.cgroup_id,
						     s->rec.hdr.pid, s->rec.hdr.ts_ns)
				      : NULL);
	if (s->types && !((s->types >> lt_rec_probe_type(p, &s->rec)) & 1))
		return 0;
	/* a lost record is about its probe, not the task that wrote it: only --type applies */
	lost = p->type == LT_TYPE_LOST;
	if (!lost && s->pid && s->rec.hdr.pid != s->pid)
		return 0;
	id = lt_ident_get(&s->ident, s->rec.hdr.cgroup_id, s->rec.hdr.pid, s->rec.hdr.ts_ns);
	if (!lost && !ident_match(s, id)) {
		/* its v1 entry is not needed past the process's last record */
		if (p->type == LT_TYPE_EXIT)
			lt_ident_exit(&s->ident, s->rec.hdr.pid);
		return 0;
	}
	return put_record(s, p, id);
}

static void grew(struct growth *g, const char *probe, uint64_t now, uint64_t before)
{
	if (now <= before)
		return;
	g->total += now - before;
	g->len += snprintf(g->list + g->len, sizeof(g->list) - g->len, " %s=+%llu", probe,
			   (unsigned long long)(now - before));
	if (g->len >= sizeof(g->list))
		g->len = sizeof(g->list) - 1;
}

/*
 * Announce the loss windows no record carried yet (lt_lost_flush), then read
 * their lost records; a CPU that was busy is asked again a few times. Not
 * while the output refuses bytes: the ring is not read then.
 */
static void claim_windows(struct stream *s, const struct lt_handles *h, struct lt_ring *ring)
{
	for (int i = 0; i < 5 && !s->out.blocked && !s->out.failed; i++) {
		int left = lt_lost_flush(h);

		if (left < 0) {
			if (!s->flush_warned)
				lt_info("cannot claim loss windows (%s): each comes with its CPU's "
					"next record of its probe",
					strerror(-left));
			s->flush_warned = true;
			return;
		}
		lt_ring_poll(ring, 0);
		settle(s);
		if (!left)
			break;
		usleep(1000);
	}
}

/* What a stream reads: one suite's ring and counters. */
struct source {
	const struct lt_handles *h;
	struct lt_stats_reader sr;
	struct lt_ring *ring;
	struct lt_sweeper *sw; /* NULL: nothing to sweep */
	struct stream *s;
	uint64_t unseen_ns; /* CLOCK_MONOTONIC of the last unseen report (its window's start) */
	struct lt_counts last[LT_PROBE_SLOTS]; /* the losses reported so far */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * `n` more events of probe `p` no program ran for (the tcp sweep found them): a lost
 * record in the stream like the kernel's, so the stream itself accounts for them.
 * False when the output takes nothing now: reported again at the next look.
 */
static bool emit_unseen(struct source *src, const struct lt_probe *p, uint64_t n)
{
	struct lt_lost r = {};
	uint64_t t = mono_ns();

	if (!src->ring)
		return false;
	r.hdr.type = LT_TYPE_LOST;
	r.hdr.size = sizeof(r);
	r.hdr.flags = LT_HDR_CGROUP; /* today's header */
	r.hdr.ts_ns = t;
	r.probe = p->id;
	r.first_ts_ns = src->unseen_ns ? src->unseen_ns : t;
	r.last_ts_ns = t;
	r.unseen = n;
	if (on_sample(src->s, &r, sizeof(r)) == LT_RING_AGAIN)
		return false;
	src->unseen_ns = t;
	return true;
}

/*
 * Report drops and misses that grew since the last look: nothing is lost
 * silently. What was reported is kept in the suite (lt_seen), so the next
 * consumer reports what happened while none ran, and only that.
 */
static void report_losses(struct source *src, const char *when)
{
	struct growth drops = {}, missed = {}, throttled = {}, unseen = {};

	for (size_t i = 0; i < lt_nprobes; i++) {
		struct lt_counts st;
		struct lt_counts *l = &src->last[lt_probes[i].id];

		if (lt_stats_read(&src->sr, &lt_probes[i], &st))
			continue;
		grew(&drops, lt_probes[i].name, st.drops, l->drops);
		grew(&missed, lt_probes[i].name, st.missed, l->missed);
		grew(&throttled, lt_probes[i].name, st.throttled, l->throttled);
		if (st.unseen > l->unseen &&
		    !emit_unseen(src, &lt_probes[i], st.unseen - l->unseen))
			st.unseen = l->unseen; /* not in the stream yet */
		grew(&unseen, lt_probes[i].name, st.unseen, l->unseen);
		if (st.drops != l->drops || st.missed != l->missed ||
		    st.throttled != l->throttled || st.unseen != l->unseen) {
			struct lt_seen seen = { st.drops, st.missed, st.throttled, st.unseen };

			lt_seen_write(src->h, lt_probes[i].id, &seen);
		}
		*l = st;
	}
	if (drops.total)
		fprintf(stderr,
			"lowtrace: kernel dropped %llu records (ring or state map full)%s:%s\n",
			(unsigned long long)drops.total, when, drops.list);
	if (missed.total)
		fprintf(stderr,
			"lowtrace: kernel skipped probes %llu times%s (already running on that "
			"CPU; records may be missing):%s\n",
			(unsigned long long)missed.total, when, missed.list);
	if (throttled.total)
		fprintf(stderr, "lowtrace: rate limits held back %llu events%s:%s\n",
			(unsigned long long)throttled.total, when, throttled.list);
	if (unseen.total)
		fprintf(stderr,
			"lowtrace: the kernel ran no program for %llu events%s (their records are "
			"missing):%s\n",
			(unsigned long long)unseen.total, when, unseen.list);
}

static void source_close(struct stream *s, struct source *src)
{
	s->ring = NULL;
	lt_ring_free(src->ring);
	src->ring = NULL;
	lt_stats_close(&src->sr);
	lt_sweeper_close(src->sw);
	src->sw = NULL;
}

static int source_open(struct source *src, const struct lt_handles *h, struct stream *s)
{
	int err;

	src->h = h;
	src->ring = NULL;
	src->s = s;
	src->unseen_ns = 0;
	err = lt_stats_open(&src->sr, h);
	if (!err)
		err = lt_sweeper_open(&src->sw, h);
	if (err) {
		lt_stats_close(&src->sr);
		return err;
	}
	/* from what the last consumer reported: losses while none ran are news */
	for (size_t i = 0; i < lt_nprobes; i++) {
		struct lt_seen seen;

		lt_seen_read(h, lt_probes[i].id, &seen);
		memset(&src->last[lt_probes[i].id], 0, sizeof(src->last[0]));
		src->last[lt_probes[i].id].drops = seen.drops;
		src->last[lt_probes[i].id].missed = seen.missed;
		src->last[lt_probes[i].id].throttled = seen.throttled;
		src->last[lt_probes[i].id].unseen = seen.unseen;
	}
	src->ring = lt_ring_open(h->ring_fd, on_sample, s);
	if (!src->ring) {
		lt_stats_close(&src->sr);
		lt_sweeper_close(src->sw);
		src->sw = NULL;
		return LT_FAIL;
	}
	lt_ring_hold(src->ring);
	s->ring = src->ring;
	report_losses(src, " before this consumer started");
	return LT_OK;
}

#define IDENT_REFRESH_MS 10000 /* a walk of the identity hierarchy at least this often */

/* The tcp sweep (every LT_SWEEP_MS, across consumers); one that cannot run is said once. */
static void sweep(struct stream *s, struct source *src)
{
	int err = lt_sweep_run(src->sw);

	/* (an unload under way removes the pins first: that is said when it is seen) */
	if (err < 0 && !s->sweep_warned && !lt_pinned_gone(src->h))
		lt_info("cannot sweep tcp (%s): closes the kernel ran no program for are not "
			"counted",
			strerror(-err));
	s->sweep_warned |= err < 0;
}

static volatile sig_atomic_t hup, usr1;

static void on_hup(int sig)
{
	hup = sig;
}

static void on_usr1(int sig)
{
	usr1 = sig;
}

/* SIGUSR1: one line of the caches' sizes against their caps (bench/soak reads it) */
static void print_stats(struct stream *s)
{
	struct lt_ident_stats st;
	struct lt_sub_stats ss;

	lt_ident_stats(&s->ident, &st);
	lt_sub_stats(s->srv, &ss);
	fprintf(stderr,
		"lowtrace: stats: ident_cgroups=%llu/%llu ident_pids=%llu/%llu evicted=%llu "
		"expired=%llu pids_evicted=%llu pids_expired=%llu rescans=%llu rotations=%llu "
		"kernel_named=%llu proc_reads=%llu containers=%llu/%llu names_found=%llu "
		"names_skipped=%llu subscribers=%llu sub_accepted=%llu sub_refused=%llu "
		"sub_dropped=%llu sub_sent=%llu sub_lost=%llu\n",
		(unsigned long long)st.entries, (unsigned long long)st.cap,
		(unsigned long long)st.v1_entries, (unsigned long long)st.v1_cap,
		(unsigned long long)st.evictions, (unsigned long long)st.expired,
		(unsigned long long)st.v1_evictions, (unsigned long long)st.v1_expired,
		(unsigned long long)st.rescans, (unsigned long long)s->out.rotations,
		(unsigned long long)st.knamed, (unsigned long long)st.v1_lookups,
		(unsigned long long)st.rt.entries, (unsigned long long)st.rt.cap,
		(unsigned long long)st.rt.found,
		(unsigned long long)(st.rt.skipped_big + st.rt.skipped_malformed +
				     st.rt.skipped_link + st.rt.skipped_type + st.rt.skipped_error),
		(unsigned long long)ss.subscribers, (unsigned long long)ss.accepted,
		(unsigned long long)ss.refused, (unsigned long long)ss.dropped,
		(unsigned long long)ss.sent, (unsigned long long)ss.lost);
}

/* ms left of --duration (~0 without one), 0 when it is over */
static uint64_t time_left(const struct stream *s, uint64_t start)
{
	uint64_t t = lt_now_ms(), end = start + s->duration_s * 1000;

	if (!s->duration_s)
		return ~0ull;
	return t >= end ? 0 : end - t;
}

/*
 * Read one suite's ring until a stop (LT_OK), an error, or the suite going
 * away (LT_GONE, nothing printed yet). *n: the last poll's result.
 */
/*
 * One turn of an owner's or a subscriber's loop: the poll timeout, 0 when --duration is over,
 * and the signals' work (SIGHUP reopens -o, SIGUSR1 prints the counts).
 */
static int loop_turn(struct stream *s, uint64_t start)
{
	uint64_t left = time_left(s, start);

	if (hup) {
		hup = 0;
		lt_out_reopen(&s->out);
		settle(s);
	}
	if (usr1) {
		usr1 = 0;
		print_stats(s);
	}
	return left < POLL_MS ? (int)left : POLL_MS;
}

static int pump(struct stream *s, struct source *src, uint64_t start, int *n)
{
	uint64_t last_check = lt_now_ms(), last_claim = last_check, last_refresh = last_check;

	while (!lt_stop) {
		uint64_t t;
		int timeout = loop_turn(s, start);

		if (!timeout)
			break;
		if (s->out.blocked) {
			/* the ring keeps its position until the output takes more */
			if (s->srv)
				lt_sub_wait(s->srv, -1, timeout);
			else
				usleep(timeout * 1000);
			if (lt_now_ms() - last_check >= 1000 - POLL_MS)
				settle(s);
			*n = 0;
		} else if (s->srv) {
			/* the ring and the subscribers' sockets: whichever comes first */
			int fd = lt_ring_wait_fd(src->ring, &timeout);

			lt_sub_wait(s->srv, fd, timeout);
			*n = lt_ring_poll(src->ring, 0);
			settle(s);
			lt_sub_flush(s->srv);
		} else {
			*n = lt_ring_poll(src->ring, timeout);
			settle(s);
		}
		if (*n == STOP_SAMPLE || s->out.failed)
			break;
		if (*n < 0 && *n != -EINTR && *n != LT_RING_AGAIN)
			return lt_error(LT_FAIL, "reading the ring: %s", strerror(-*n));
		t = lt_now_ms();
		if (t - last_claim >= CLAIM_MS) {
			last_claim = t;
			claim_windows(s, src->h, src->ring);
			if (*n == STOP_SAMPLE || s->out.failed ||
			    (s->count && s->emitted >= s->count))
				break;
		}
		if (t - last_check >= 1000) {
			last_check = t;
			sweep(s, src);
			/* the kernel names misses, so no walk would ever drop the entries of
			 * cgroups since removed: one every IDENT_REFRESH_MS does */
			if (t - last_refresh >= IDENT_REFRESH_MS) {
				last_refresh = t;
				lt_ident_refresh(&s->ident, lt_now_ns(CLOCK_MONOTONIC));
			}
			report_losses(src, "");
			if (lt_pinned_gone(src->h))
				return LT_GONE;
		}
	}
	return LT_OK;
}

/*
 * The pinned suite went away: print what its ring still holds once its
 * programs are detached (unload and replace remove the links before the
 * maps), then say why the stream ends, or wait for the next suite (--follow).
 * LT_OK: `h` holds the next suite; STOP_SAMPLE: a stop came while waiting;
 * else the exit code.
 */
static int suite_gone(struct stream *s, struct source *src, struct lt_handles *h, uint64_t start)
{
	struct stat st;
	int err;

	for (int i = 0; i < 20 && !lt_pinned_removed(h); i++)
		usleep(100 * 1000);
	lt_ring_poll(src->ring, 0);
	settle(s);
	claim_windows(s, src->h, src->ring);
	report_losses(src, "");
	source_close(s, src);
	lt_close_handles(h);
	if (!s->follow) {
		if (stat(LT_PIN_DIR, &st) == 0)
			return lt_error(LT_GONE, "the suite was replaced by another load; "
						 "'events --follow' streams on across replaces");
		return lt_error(LT_GONE, "the suite was unloaded");
	}
	lt_info("the suite was unloaded or replaced; following the next one (--follow)");
	while (!lt_stop && time_left(s, start) && !s->out.failed) {
		/* unloaded between the stat and the open: wait on; another consumer: fail */
		if (stat(LT_PIN_DIR, &st) == 0) {
			err = lt_open_pinned(h, true);
			if (err != LT_NOT_LOADED)
				return err;
		}
		/* the subscribers stay, and new ones are taken */
		if (s->srv)
			lt_sub_wait(s->srv, -1, 100);
		else
			usleep(100 * 1000);
	}
	return STOP_SAMPLE;
}

/* What every stream sets up: the output, the signals, the identity cache */
static int stream_begin(struct stream *s, struct lt_handles *h)
{
	static char outbuf[LT_OUT_SIZE];
	struct sigaction usr = { .sa_handler = on_usr1 };
	struct lt_ident_cfg cfg = {};

	lt_out_init(&s->out, outbuf, sizeof(outbuf));
	if (s->output) {
		struct sigaction sa = { .sa_handler = on_hup };

		sigaction(SIGHUP, &sa, NULL);
		lt_out_file(&s->out, s->output, s->rotate_size, s->rotate_keep);
	}
	lt_catch_stop();
	sigaction(SIGUSR1, &usr, NULL);
	cfg.cap = s->ident_cap;
	cfg.runtime = true;
	/* the suite's identity hierarchy, and the kernel's names of its cgroups */
	lt_identity_open(&s->idn, h);
	cfg.ctrl = s->idn.ctrl;
	if (s->idn.names_fd >= 0) {
		cfg.kname = lt_identity_kname;
		cfg.kctx = &s->idn;
	}
	if (lt_ident_open(&s->ident, &cfg)) {
		lt_identity_close(&s->idn);
		return lt_error(LT_FAIL, "cannot allocate the identity cache (--ident-cap %u)",
				cfg.cap ? cfg.cap : 16384);
	}
	return LT_OK;
}

/* The stream's last lines: what went wrong on the way, and the cache's cap if it mattered */
static int stream_end(struct stream *s, int err)
{
	struct lt_ident_stats ist;

	lt_out_flush(&s->out);
	if (s->ds.rejected || s->ds.unknown)
		fprintf(stderr, "lowtrace: %llu malformed and %llu unknown records skipped\n",
			(unsigned long long)s->ds.rejected, (unsigned long long)s->ds.unknown);
	if (s->out.write_errors)
		fprintf(stderr, "lowtrace: %s: %llu failed writes, opens or rotations%s\n",
			s->output, (unsigned long long)s->out.write_errors,
			s->out.blocked ? (!s->cli ? "; records still in the ring were not written"
						  : "; records not yet written were lost")
				       : "");
	lt_ident_stats(&s->ident, &ist);
	/* the cap mattered: say so (records of unknown cgroups alone are normal: short-lived ones) */
	if (ist.evictions || ist.v1_evictions)
		fprintf(stderr,
			"lowtrace: identity: %llu cgroups cached (cap %llu), %llu evicted, %llu "
			"records of unknown cgroups, %llu rescans, %llu /proc reads (%llu "
			"evicted)\n",
			(unsigned long long)ist.entries, (unsigned long long)ist.cap,
			(unsigned long long)ist.evictions, (unsigned long long)ist.unknown,
			(unsigned long long)ist.rescans, (unsigned long long)ist.v1_lookups,
			(unsigned long long)ist.v1_evictions);
	lt_ident_close(&s->ident);
	lt_identity_close(&s->idn);
	return err;
}

/*
 * Stream records until a signal, --count, --duration or unload. `own` is the
 * in-process suite of `run`: on a stop it is detached first and the ring
 * drained, so records already written are printed, not freed with the ring.
 */
static int stream(struct stream *s, struct lt_handles *h, struct lt_suite *own)
{
	static struct source src;
	uint64_t start = lt_now_ms();
	int err, n = 0;

	err = stream_begin(s, h);
	if (err)
		return err;
	err = source_open(&src, h, s);
	if (err)
		return stream_end(s, err);
	for (;;) {
		err = pump(s, &src, start, &n);
		if (err != LT_GONE)
			break;
		err = suite_gone(s, &src, h, start);
		if (err) {
			if (err == STOP_SAMPLE)
				err = LT_OK; /* --duration or a signal while waiting */
			return stream_end(s, err); /* the source is closed */
		}
		err = source_open(&src, h, s);
		if (err)
			return stream_end(s, err);
		lt_info("following the new suite");
	}
	if (own && !err && n != STOP_SAMPLE && !s->out.failed) {
		lt_suite_detach(own);
		lt_ring_poll(src.ring, 0);
	}
	settle(s);
	/* at the stop: the windows still open, unless a --count is complete */
	if (!err && n != STOP_SAMPLE)
		claim_windows(s, h, src.ring);
	report_losses(&src, "");
	source_close(s, &src);
	return stream_end(s, err);
}

/* A frame from the owner: a record its filter passed, or a lost record of our queue */
static int on_frame(void *ctx, int kind, const void *data, size_t len)
{
	struct stream *s = ctx;
	const struct lt_probe *p;
	const struct lt_probe *lp;

	if (s->out.blocked || lt_out_full(&s->out))
		return -EAGAIN; /* kept until the output takes more */
	p = lt_decode(data, len, &s->rec, &s->ds);
	if (!p)
		return 0;
	if (kind == LT_SUB_LOST && p->type == LT_TYPE_LOST) {
		const struct lt_lost *l = (const struct lt_lost *)s->rec.raw;

		lp = lt_probe_by_id(l->probe);
		grew(&s->sub_lost, lp ? lp->name : "?", l->count, 0);
	}
	/* filtered in the owner: the record's identity is only written */
	return put_record(
		s, p,
		lt_ident_get(&s->ident, s->rec.hdr.cgroup_id, s->rec.hdr.pid, s->rec.hdr.ts_ns));
}

static void report_sub_lost(struct stream *s)
{
	if (!s->sub_lost.total)
		return;
	fprintf(stderr,
		"lowtrace: the owner dropped %llu records for this subscriber (its queue was "
		"full: it read too slowly):%s\n",
		(unsigned long long)s->sub_lost.total, s->sub_lost.list);
	memset(&s->sub_lost, 0, sizeof(s->sub_lost));
}

/*
 * The owner went away (`proto`: it broke the protocol): say why and end with its code, or
 * with --follow wait for the next owner (LT_OK: c is connected to it; STOP_SAMPLE: a stop).
 */
static int owner_gone(struct stream *s, struct lt_sub_client *c, uint64_t start, bool proto)
{
	char why[320];
	int err, code = c->bye_code > 0 ? c->bye_code : LT_OWNER_GONE;

	if (proto)
		snprintf(why, sizeof(why), "the owner of the ring (pid %u) sent a malformed frame",
			 c->owner_pid);
	else if (c->bye[0])
		snprintf(why, sizeof(why), "%s", c->bye);
	else
		snprintf(why, sizeof(why), "the owner of the ring (pid %u) went away",
			 c->owner_pid);
	lt_sub_disconnect(c);
	settle(s);
	report_sub_lost(s);
	if (!s->follow)
		return lt_error(proto ? LT_FAIL : code, "%s", why);
	lt_info("%s; waiting for the next owner (--follow)", why);
	while (!lt_stop && time_left(s, start) && !s->out.failed) {
		err = lt_sub_connect(c, s->socket, &s->filt);
		if (err == LT_OK && c->fd >= 0) {
			lt_info("following the new owner of the ring (pid %u)", c->owner_pid);
			return LT_OK;
		}
		if (err != -ENOENT && err != -ECONNREFUSED && err != LT_OK)
			return err;
		usleep(200 * 1000);
	}
	return STOP_SAMPLE;
}

/* Stream what the owner sends (c connected) until a stop, --count, --duration, its end */
static int subscribed(struct stream *s, struct lt_sub_client *c)
{
	uint64_t start = lt_now_ms(), last = start, last_refresh = start;
	struct lt_handles none = {
		.ring_fd = -1, .stats_fd = -1, .seen_fd = -1, .flush_fd = -1, .dir_fd = -1
	};
	int n, err;

	/* the hierarchy the pins name when this user may read them, else cgroup2's */
	err = stream_begin(s, &none);
	if (err) {
		lt_sub_disconnect(c);
		return err;
	}
	while (!err && !lt_stop) {
		uint64_t t;
		int timeout = loop_turn(s, start);

		if (!timeout)
			break;
		n = 0;
		if (s->out.blocked)
			usleep(timeout * 1000); /* the owner's queue holds, then loses */
		else
			n = lt_sub_read(c, timeout, on_frame, s);
		settle(s);
		if (n == STOP_SAMPLE || s->out.failed)
			break;
		if (n == -EPIPE || n == -EPROTO || n == -ECONNRESET) {
			err = owner_gone(s, c, start, n == -EPROTO);
			if (err == STOP_SAMPLE)
				err = LT_OK;
			if (err || c->fd < 0)
				break;
		} else if (n < 0 && n != -EINTR) {
			err = lt_error(LT_FAIL, "reading from the owner: %s", strerror(-n));
		}
		t = lt_now_ms();
		if (t - last >= 1000) {
			last = t;
			report_sub_lost(s);
			if (t - last_refresh >= IDENT_REFRESH_MS) {
				last_refresh = t;
				lt_ident_refresh(&s->ident, lt_now_ns(CLOCK_MONOTONIC));
			}
		}
	}
	settle(s);
	report_sub_lost(s);
	lt_sub_disconnect(c);
	return stream_end(s, err);
}

/* events' options; run takes these and the load options */
static int stream_opt(struct stream *s, int key, const char *arg, uint64_t num)
{
	switch (key) {
	case LT_O_JSON:
		s->text = false;
		return LT_OK;
	case LT_O_TEXT:
		s->text = true;
		return LT_OK;
	case LT_O_TYPE:
		return lt_parse_probe_list(arg, true, &s->types);
	case LT_O_PID:
		s->pid = num;
		return LT_OK;
	case LT_O_COUNT:
		s->count = num;
		return LT_OK;
	case LT_O_DURATION:
		s->duration_s = num;
		return LT_OK;
	case LT_O_FOLLOW:
		s->follow = true;
		return LT_OK;
	case LT_O_OUTPUT:
		s->output = arg;
		return lt_out_check("-o", arg, false);
	case LT_O_ROTATE_SIZE:
		s->rotate_size = num;
		return LT_OK;
	case LT_O_ROTATE_KEEP:
		s->rotate_keep = num;
		return LT_OK;
	case LT_O_CONTAINER:
		s->container = arg;
		s->container_len = strlen(arg);
		return LT_OK; /* the value checked by the parser (opts.c) */
	case LT_O_UNIT:
		s->unit = arg;
		return LT_OK;
	case LT_O_CONTAINER_NAME:
		s->cname = arg;
		return LT_OK;
	case LT_O_IDENT_CAP:
		s->ident_cap = num;
		return LT_OK;
	case LT_O_SOCKET:
		s->socket = arg;
		s->socket_set = true;
		return LT_OK;
	case LT_O_MAX_SUBS:
		s->max_subs = num;
		return LT_OK;
	}
	return -1;
}

static int rotate_check(const struct stream *s, const char *cmd)
{
	char name[4096];
	int err = LT_OK;

	if ((s->rotate_size || s->rotate_keep != 5) && !s->output)
		return lt_error(LT_USAGE, "%s: --rotate-size and --rotate-keep need -o FILE", cmd);
	/* the names rotation renames to are checked as -o is, before anything starts */
	for (unsigned int i = 1; s->rotate_size && i <= s->rotate_keep && !err; i++) {
		snprintf(name, sizeof(name), "%s.%u", s->output, i);
		err = lt_out_check("-o", name, false);
	}
	return err;
}

static int events_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	return stream_opt(ctx, key, arg, num);
}

/* The filter a subscriber sends: this stream's (checked by the parser) */
static void sub_filter(struct stream *s)
{
	s->filt.types = s->types;
	s->filt.pid = s->pid;
	snprintf(s->filt.container, sizeof(s->filt.container), "%s",
		 s->container ? s->container : "");
	snprintf(s->filt.unit, sizeof(s->filt.unit), "%s", s->unit ? s->unit : "");
	snprintf(s->filt.cname, sizeof(s->filt.cname), "%s", s->cname ? s->cname : "");
}

/*
 * A subscriber of the ring's owner when one serves (LT_OK with *sub set), else the ring with
 * the consumer's lock in h. An owner that is starting (it has the ring, not yet its socket)
 * is waited for a moment.
 */
static int own_or_subscribe(struct stream *s, struct lt_handles *h, bool *sub)
{
	static struct lt_sub_client cli;
	int err, conn;

	*sub = false;
	for (int tries = 0;; tries++) {
		conn = lt_sub_connect(&cli, s->socket, &s->filt);
		if (conn == LT_OK) {
			s->cli = &cli;
			*sub = true;
			return LT_OK;
		}
		if (conn > 0)
			return conn;
		/* whether an owner serves there or not, a free ring is ours */
		err = lt_open_pinned_try(h);
		if (err != -EBUSY)
			return err;
		if (conn == -EACCES || conn == -EPERM)
			return lt_error(LT_ENV,
					"another 'lowtrace events' is reading the ring; %s: %s "
					"(subscribing takes root, the owner's user or its group)",
					s->socket, strerror(-conn));
		if (tries == 10 || lt_stop)
			return lt_error(LT_FAIL,
					"another 'lowtrace events' is reading the ring; "
					"only one consumer at a time (it serves no "
					"subscribers at %s)",
					s->socket);
		usleep(100 * 1000);
	}
}

int cmd_events(int argc, char **argv)
{
	static struct stream s = { .rotate_keep = 5, .max_subs = LT_SUB_MAX_DEFAULT };
	struct lt_handles h;
	char why[160];
	bool sub;
	int err;

	/* LOWTRACE_SOCKET (tests): the default, so the tests' owners stay out of /run */
	s.socket = getenv("LOWTRACE_SOCKET");
	if (!s.socket || s.socket[0] != '/' || strlen(s.socket) > 107)
		s.socket = LT_SUB_SOCKET;
	err = lt_opts_parse(argc, argv, lt_events_keys, help_events, events_opt, &s);
	if (err)
		return err;
	err = rotate_check(&s, "events");
	if (err)
		return err;
	sub_filter(&s);
	err = own_or_subscribe(&s, &h, &sub);
	if (err)
		return err;
	if (sub)
		return subscribed(&s, s.cli);
	/* the owner: without its socket, with the default one, it streams on alone */
	err = lt_sub_serve(&s.srv, s.socket, s.max_subs, s.socket_set);
	if (err && s.socket_set) {
		lt_close_handles(&h);
		return err;
	}
	err = stream(&s, &h, NULL);
	lt_close_handles(&h);
	if (err == LT_GONE)
		snprintf(why, sizeof(why),
			 "the suite was unloaded or replaced; the owner of the ring (pid %d) "
			 "stopped",
			 (int)getpid());
	else
		snprintf(why, sizeof(why),
			 "the owner of the ring (pid %d) stopped; 'events --follow' waits for the "
			 "next one",
			 (int)getpid());
	lt_sub_close(s.srv, err == LT_GONE ? LT_GONE : LT_OWNER_GONE, why);
	return err;
}

struct run_cli {
	struct lt_load_opts load;
	struct stream *s;
};

static int run_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct run_cli *c = ctx;
	int err = lt_load_opt(&c->load, key, arg, num);

	/* --pid filters in the kernel (load) and here (the stream) */
	if (err == -1 || (key == LT_O_PID && err == LT_OK))
		err = stream_opt(c->s, key, arg, num);
	return err;
}

int cmd_run(int argc, char **argv)
{
	static const int keys[] = { LT_O_PROBES,
				    LT_O_PID,
				    LT_O_CGROUP,
				    LT_O_RINGBUF,
				    LT_O_JSON,
				    LT_O_TEXT,
				    LT_O_TYPE,
				    LT_O_COUNT,
				    LT_O_DURATION,
				    LT_O_STATE,
				    LT_O_MAX_THREADS,
				    LT_O_MAX_CONNS,
				    LT_O_RATE_LIMIT,
				    LT_O_NO_SHED,
				    LT_O_CONTAINER,
				    LT_O_UNIT,
				    LT_O_IDENT_CAP,
				    LT_O_OUTPUT,
				    LT_O_CONTAINER_NAME,
				    LT_O_IDENT_CGROUP,
				    LT_O_CG_GRACE,
				    LT_O_CG_CAP,
				    LT_O_ANCESTORS,
				    LT_O_MAX_PROCS,
				    LT_O_ROTATE_SIZE,
				    LT_O_ROTATE_KEEP,
				    0 };
	static struct stream s = { .rotate_keep = 5 };
	struct run_cli c = { .s = &s };
	struct lt_handles h;
	struct lt_suite *suite;
	int err;

	lt_load_defaults(&c.load);
	err = lt_opts_parse(argc, argv, keys, help_run, run_opt, &c);
	if (!err)
		err = lt_load_check(&c.load);
	if (!err)
		err = rotate_check(&s, "run");
	if (err)
		return err;
	err = lt_load(&c.load, &suite);
	if (err)
		return err;
	lt_suite_handles(suite, &h);
	err = stream(&s, &h, suite);
	lt_suite_free(suite);
	return err;
}
