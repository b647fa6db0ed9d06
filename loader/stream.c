// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Streams of records: events (from the pinned ring) and run (an in-process suite). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "kernel.h"
#include "lowtrace.h"
#include "opts.h"
#include "out.h"
#include "records.h"

#define STOP_SAMPLE (-ECANCELED) /* returned by the sample callback to end a stream */
#define POLL_MS 100 /* producers wake us only when the ring fills: the latency bound */

static const char events_opts_help[] =
	"    --json               one JSON object per line (default)\n"
	"    --text               one key=value line per record; non-printable bytes as \\xNN\n"
	"    --type LIST          only these record types (the probe names, see load -h)\n"
	"    --count N            stop after N records\n"
	"    --duration SECS      stop after SECS seconds\n";

static void help_events(void)
{
	printf("NAME\n    lowtrace events - stream records from the pinned ring buffer\n\n"
	       "SYNOPSIS\n    lowtrace events [--json|--text] [--type LIST] [--pid PID]"
	       " [--count N] [--duration SECS]\n\n"
	       "DESCRIPTION\n"
	       "    Reads the ring of a suite pinned by 'lowtrace load' until Ctrl-C, --count\n"
	       "    or --duration. The ring has one consumer position, so a second 'events'\n"
	       "    fails instead of splitting records. When the kernel drops records (ring\n"
	       "    full) or skips a probe (see MISSED in 'status -h'), a line on stderr says\n"
	       "    how many, per probe.\n");
	lt_probe_fields_help(stdout);
	printf("    Kernel strings are untrusted: JSON escapes control bytes and invalid\n"
	       "    UTF-8 as \\u00XX; text escapes every non-printable byte.\n\n"
	       "OPTIONS\n%s"
	       "    --pid PID            only records of this thread group (here, not in the "
	       "kernel)\n\n"
	       "EXIT STATUS\n    0 done; 2 usage; 3 not loaded; 1 failure (e.g. another "
	       "consumer).\n",
	       events_opts_help);
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

/* What a stream prints, and the options that choose it. */
struct stream {
	struct lt_out out;
	bool text;
	uint64_t types; /* bit per record type, 0: all */
	uint32_t pid; /* 0: all */
	uint64_t count; /* 0: no limit */
	uint64_t duration_s; /* 0: no limit */
	uint64_t emitted;
	struct lt_rec rec;
	struct lt_decode_stats ds;
};

static int on_sample(void *ctx, void *data, size_t size)
{
	struct stream *s = ctx;
	const struct lt_probe *p = lt_decode(data, size, &s->rec, &s->ds);

	if (!p || (s->types && !((s->types >> p->type) & 1)) ||
	    (s->pid && s->rec.hdr.pid != s->pid))
		return 0;
	if (s->out.b.cap - s->out.b.len < LT_ENC_MAX)
		lt_out_flush(&s->out);
	if (s->text)
		lt_encode_text(&s->out.b, p, &s->rec);
	else
		lt_encode_json(&s->out.b, p, &s->rec);
	if (s->out.failed || (s->count && ++s->emitted >= s->count))
		return STOP_SAMPLE;
	return 0;
}

/* One probe's growth of a counter into a " name=+N" list. */
struct growth {
	char list[256];
	size_t len;
	uint64_t total;
};

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

/* Report drops and misses that grew since the last look: nothing is lost silently. */
static void report_losses(struct lt_stats_reader *sr, struct lt_counts *last)
{
	struct growth drops = {}, missed = {};

	for (size_t i = 0; i < lt_nprobes; i++) {
		struct lt_counts st;
		struct lt_counts *l = &last[lt_probes[i].id];

		if (lt_stats_read(sr, &lt_probes[i], &st))
			continue;
		grew(&drops, lt_probes[i].name, st.drops, l->drops);
		grew(&missed, lt_probes[i].name, st.missed, l->missed);
		*l = st;
	}
	if (drops.total)
		fprintf(stderr, "lowtrace: kernel dropped %llu records (ring full):%s\n",
			(unsigned long long)drops.total, drops.list);
	if (missed.total)
		fprintf(stderr,
			"lowtrace: kernel skipped probes %llu times (already running on that CPU; "
			"records may be missing):%s\n",
			(unsigned long long)missed.total, missed.list);
}

/*
 * Stream records until a signal, --count, --duration or unload. `own` is the
 * in-process suite of `run`: on a stop it is detached first and the ring
 * drained, so records already written are printed, not freed with the ring.
 */
static int stream(struct stream *s, const struct lt_handles *h, struct lt_suite *own)
{
	static char outbuf[LT_OUT_SIZE];
	static struct lt_counts last[LT_PROBE_SLOTS];
	struct lt_stats_reader sr;
	uint64_t start = lt_now_ms(), last_check = start;
	struct lt_ring *ring;
	int err = LT_OK, n = 0;

	lt_out_init(&s->out, outbuf, sizeof(outbuf));
	lt_catch_stop();
	err = lt_stats_open(&sr, h);
	if (err) {
		lt_stats_close(&sr);
		return err;
	}
	for (size_t i = 0; i < lt_nprobes; i++)
		lt_stats_read(&sr, &lt_probes[i], &last[lt_probes[i].id]);
	ring = lt_ring_open(h->ring_fd, on_sample, s);
	if (!ring) {
		lt_stats_close(&sr);
		return LT_FAIL;
	}
	while (!lt_stop) {
		uint64_t t;
		int timeout = POLL_MS;

		if (s->duration_s) {
			uint64_t end = start + s->duration_s * 1000;

			t = lt_now_ms();
			if (t >= end)
				break;
			if (end - t < (uint64_t)timeout)
				timeout = end - t;
		}
		n = lt_ring_poll(ring, timeout);
		lt_out_flush(&s->out);
		if (n == STOP_SAMPLE || s->out.failed)
			break;
		if (n < 0 && n != -EINTR) {
			err = lt_error(LT_FAIL, "reading the ring: %s", strerror(-n));
			break;
		}
		t = lt_now_ms();
		if (t - last_check >= 1000) {
			last_check = t;
			report_losses(&sr, last);
			if (lt_pinned_gone(h)) {
				lt_info("the suite was unloaded; stopping");
				break;
			}
		}
	}
	if (own && !err && n != STOP_SAMPLE && !s->out.failed) {
		lt_suite_detach(own);
		lt_ring_poll(ring, 0);
	}
	lt_out_flush(&s->out);
	report_losses(&sr, last);
	if (s->ds.rejected || s->ds.unknown)
		fprintf(stderr, "lowtrace: %llu malformed and %llu unknown records skipped\n",
			(unsigned long long)s->ds.rejected, (unsigned long long)s->ds.unknown);
	lt_ring_free(ring);
	lt_stats_close(&sr);
	return err;
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
	}
	return -1;
}

static int events_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	return stream_opt(ctx, key, arg, num);
}

int cmd_events(int argc, char **argv)
{
	static const int keys[] = { LT_O_JSON,	LT_O_TEXT,     LT_O_TYPE, LT_O_PID,
				    LT_O_COUNT, LT_O_DURATION, 0 };
	static struct stream s;
	struct lt_handles h;
	int err;

	err = lt_opts_parse(argc, argv, keys, help_events, events_opt, &s);
	if (err)
		return err;
	err = lt_open_pinned(&h, true);
	if (err)
		return err;
	err = stream(&s, &h, NULL);
	lt_close_handles(&h);
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
	static const int keys[] = { LT_O_PROBES, LT_O_PID,  LT_O_CGROUP, LT_O_RINGBUF,	LT_O_JSON,
				    LT_O_TEXT,	 LT_O_TYPE, LT_O_COUNT,	 LT_O_DURATION, 0 };
	static struct stream s;
	struct run_cli c = { .s = &s };
	struct lt_handles h;
	struct lt_suite *suite;
	int err;

	lt_load_defaults(&c.load);
	err = lt_opts_parse(argc, argv, keys, help_run, run_opt, &c);
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
