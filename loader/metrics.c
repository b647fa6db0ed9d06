// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowtrace metrics: a small single-threaded HTTP server that answers
 * GET /metrics with the suite's counters and histograms, read at each scrape
 * from the pinned maps with readers opened once (no allocation per scrape).
 * One connection at a time, with short timeouts, so a slow or hostile client
 * costs at most a few seconds and never the process.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "histfmt.h"
#include "kernel.h"
#include "lowtrace.h"
#include "cmds.h"
#include "opts.h"
#include "prom.h"
#include "records.h"

#define REQ_MAX 8192
#define BODY_MAX (4u << 20)
#define IO_TIMEOUT_S 2

struct metrics_opts {
	const char *listen; /* HOST:PORT or [V6]:PORT */
	bool per_syscall_latency;
};

struct server {
	bool per_syscall_latency;
	struct lt_handles h;
	struct lt_stats_reader sr;
	bool loaded[LT_PROBE_SLOTS];
	struct lt_counts counts[LT_PROBE_SLOTS]; /* per row of lt_probes, this scrape */
	bool have[LT_PROBE_SLOTS];
	struct lt_agg *agg[LT_PROBE_SLOTS];
	struct lt_hist *by_name; /* per name of a probe's keys (syscalls: over processes) */
	unsigned int nnames; /* room in by_name */
	struct lt_hist all; /* every key */
	struct lt_buf body;
	char req[REQ_MAX];
	char labels[96];
	const struct lt_probe *cur; /* the aggregate being written */
};

/* keys summed per name (s->cur->prom->nnames) */
static void on_named(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct server *s = ctx;
	unsigned int i = s->cur->prom->key_name(key);

	if (i < s->cur->prom->nnames)
		lt_hist_merge(&s->by_name[i], sum);
	lt_hist_merge(&s->all, sum);
}

/* one series per key */
static void on_key(void *ctx, const void *key, const struct lt_hist *sum)
{
	struct server *s = ctx;
	const struct lt_prom *m = s->cur->prom;

	if (s->body.cap - s->body.len < 8192)
		return;
	s->labels[0] = 0;
	if (m->labels)
		m->labels(s->labels, sizeof(s->labels), key);
	lt_prom_hist(&s->body, m->hist, s->labels, sum);
}

static void help_type(struct lt_buf *b, const char *name, const char *type, const char *help)
{
	lt_put_s(b, "# HELP ");
	lt_put_s(b, name);
	lt_put_c(b, ' ');
	lt_put_s(b, help);
	lt_put_s(b, "\n# TYPE ");
	lt_put_s(b, name);
	lt_put_c(b, ' ');
	lt_put_s(b, type);
	lt_put_c(b, '\n');
}

/* the whole exposition into s->body; an error status when the suite is gone */
/* One counter family: a sample per loaded probe, from its lt_counts at `off`. */
static void put_counters(struct server *s, const char *metric, const char *help, size_t off)
{
	struct lt_buf *b = &s->body;

	help_type(b, metric, "counter", help);
	for (size_t i = 0; i < lt_nprobes; i++) {
		if (!s->have[i])
			continue;
		lt_put_s(b, metric);
		lt_put_s(b, "{probe=\"");
		lt_put_s(b, lt_probes[i].name);
		lt_put_s(b, "\"} ");
		lt_put_u64(b, *(const uint64_t *)((const char *)&s->counts[i] + off));
		lt_put_c(b, '\n');
	}
}

/* keys summed per name: a counter per name, the histogram per name or in all */
static int put_named(struct server *s, struct lt_agg *a)
{
	const struct lt_prom *m = s->cur->prom;
	struct lt_buf *b = &s->body;

	memset(s->by_name, 0, m->nnames * sizeof(*s->by_name));
	memset(&s->all, 0, sizeof(s->all));
	if (lt_agg_read(a, on_named, s))
		return -1;
	help_type(b, m->count, "counter", m->count_help);
	for (unsigned int i = 0; i < m->nnames; i++) {
		if (!s->by_name[i].count || !m->name(i))
			continue;
		lt_put_s(b, m->count);
		lt_put_c(b, '{');
		lt_put_s(b, m->label);
		lt_put_s(b, "=\"");
		lt_put_s(b, m->name(i));
		lt_put_s(b, "\"} ");
		lt_put_u64(b, s->by_name[i].count);
		lt_put_c(b, '\n');
	}
	help_type(b, m->hist, "histogram", m->hist_help);
	if (!s->per_syscall_latency) {
		lt_prom_hist(b, m->hist, "", &s->all);
		return 0;
	}
	for (unsigned int i = 0; i < m->nnames; i++) {
		if (!s->by_name[i].count || !m->name(i) || b->cap - b->len < 8192)
			continue;
		snprintf(s->labels, sizeof(s->labels), "%s=\"%s\"", m->label, m->name(i));
		lt_prom_hist(b, m->hist, s->labels, &s->by_name[i]);
	}
	return 0;
}

static int scrape(struct server *s)
{
	struct lt_buf *b = &s->body;

	b->len = 0;
	if (lt_pinned_gone(&s->h))
		return 503;
	for (size_t i = 0; i < lt_nprobes; i++)
		s->have[i] = s->loaded[lt_probes[i].id] &&
			     !lt_stats_read(&s->sr, &lt_probes[i], &s->counts[i]);
	put_counters(s, "lowtrace_events_total",
		     "Records written to the ring (record probes) or histogram updates (aggregate "
		     "probes), per probe.",
		     offsetof(struct lt_counts, events));
	put_counters(s, "lowtrace_drops_total",
		     "Records the kernel could not write (ring full) or updates it could not make "
		     "(map full), per probe.",
		     offsetof(struct lt_counts, drops));
	put_counters(s, "lowtrace_missed_total",
		     "Events the kernel skipped the probe for (it was already running on that CPU) "
		     "and no fallback took over, per probe.",
		     offsetof(struct lt_counts, missed));
	for (size_t i = 0; i < lt_nprobes; i++) {
		const struct lt_prom *m = lt_probes[i].prom;

		if (!m || !s->agg[lt_probes[i].id])
			continue;
		s->cur = &lt_probes[i];
		if (m->nnames) {
			if (put_named(s, s->agg[lt_probes[i].id]))
				return 500;
			continue;
		}
		help_type(b, m->hist, "histogram", m->hist_help);
		if (lt_agg_read(s->agg[lt_probes[i].id], on_key, s))
			return 500;
	}
	return 200;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the client went away or stalled past the timeout */
		p += w;
		n -= w;
	}
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	default:
		return "Internal Server Error";
	}
}

static void serve_one(struct server *s, int fd)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	char hdr[256];
	size_t n = 0;
	bool head = false;
	int status = 0, len;
	const char *body;
	size_t blen;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (!status) {
		ssize_t r = recv(fd, s->req + n, sizeof(s->req) - n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			status = r < 0 ? 408 : 400;
			break;
		}
		n += r;
		status = lt_http_status(s->req, n, sizeof(s->req), &head);
	}
	if (status == 200)
		status = scrape(s);
	if (status == 200) {
		body = s->body.p;
		blen = s->body.len;
	} else {
		snprintf(s->labels, sizeof(s->labels), "%d %s\n", status, reason(status));
		body = s->labels;
		blen = strlen(s->labels);
	}
	len = snprintf(hdr, sizeof(hdr),
		       "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		       "Connection: close\r\n\r\n",
		       status, reason(status),
		       status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain",
		       blen);
	send_all(fd, hdr, len);
	if (!head)
		send_all(fd, body, blen);
}

static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	char *end;
	unsigned long port;
	size_t hl;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port == 0 || port > 65535)
		return -1;
	hl = colon - spec;
	memcpy(host, spec, hl);
	host[hl] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) != 1)
			return -1;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		*len = sizeof(*v6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &v4->sin_addr) != 1)
		return -1;
	v4->sin_family = AF_INET;
	v4->sin_port = htons(port);
	*len = sizeof(*v4);
	return 0;
}

static int serve(const struct metrics_opts *o)
{
	static struct server s;
	struct sockaddr_storage ss;
	struct lt_status st;
	socklen_t sl;
	int lfd, one = 1, err;

	if (parse_listen(o->listen, &ss, &sl))
		return lt_error(LT_USAGE,
				"--listen %s: want HOST:PORT or [V6]:PORT with a numeric "
				"address",
				o->listen);
	err = lt_read_status(&st);
	if (err)
		return err;
	s.per_syscall_latency = o->per_syscall_latency;
	err = lt_open_pinned(&s.h, false);
	if (err)
		return err;
	err = lt_stats_open(&s.sr, &s.h);
	for (size_t i = 0; !err && i < lt_nprobes; i++) {
		s.loaded[lt_probes[i].id] = st.probe[lt_probes[i].id].loaded;
		if (lt_probes[i].map && s.loaded[lt_probes[i].id])
			err = lt_agg_open(&s.agg[lt_probes[i].id], lt_probes[i].map,
					  lt_probes[i].name);
	}
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].prom && lt_probes[i].prom->nnames > s.nnames)
			s.nnames = lt_probes[i].prom->nnames;
	s.by_name = calloc(s.nnames ? s.nnames : 1, sizeof(*s.by_name));
	s.body.p = malloc(BODY_MAX);
	s.body.cap = BODY_MAX;
	if (!err && (!s.by_name || !s.body.p))
		err = lt_error(LT_FAIL, "out of memory");
	lfd = -1;
	if (!err) {
		lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lfd, (struct sockaddr *)&ss, sl) || listen(lfd, 16))
			err = lt_error(LT_FAIL, "--listen %s: %s", o->listen, strerror(errno));
	}
	if (!err) {
		lt_catch_stop();
		signal(SIGPIPE, SIG_IGN); /* a client that hangs up is its own problem */
		printf("serving http://%s/metrics\n", o->listen);
		fflush(stdout);
	}
	while (!err && !lt_stop) {
		struct pollfd p = { lfd, POLLIN, 0 };
		int fd;

		if (poll(&p, 1, 500) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_one(&s, fd);
		close(fd);
	}
	if (lfd >= 0)
		close(lfd);
	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		lt_agg_close(s.agg[i]);
	lt_stats_close(&s.sr);
	lt_close_handles(&s.h);
	free(s.by_name);
	free(s.body.p);
	return err;
}

/* ---- the command ---- */

static void help_metrics(void)
{
	printf("NAME\n    lowtrace metrics - serve Prometheus metrics of the pinned suite\n\n"
	       "SYNOPSIS\n    lowtrace metrics [--listen HOST:PORT] [--per-syscall-latency]\n\n"
	       "DESCRIPTION\n"
	       "    Answers HTTP GET (and HEAD) /metrics with the text exposition format 0.0.4,\n"
	       "    read from the pinned maps at each scrape: lowtrace_events_total{probe},\n"
	       "    lowtrace_drops_total{probe}, lowtrace_missed_total{probe} (events the\n"
	       "    kernel skipped the probe for), and for the aggregate probes that are loaded\n"
	       "    lowtrace_syscalls_total{name}, lowtrace_syscall_latency_seconds,\n"
	       "    lowtrace_runq_latency_seconds, lowtrace_bio_latency_seconds{device,op}\n"
	       "    (histograms: cumulative _bucket{le}, _sum, _count). Other paths get 404,\n"
	       "    other methods 405, malformed requests 400; one connection at a time, 2 s\n"
	       "    timeouts. Runs until Ctrl-C or SIGTERM; answers 503 once the suite is\n"
	       "    unloaded.\n\n"
	       "OPTIONS\n"
	       "    --listen HOST:PORT   numeric address to bind (default 127.0.0.1:9464, "
	       "loopback\n"
	       "                         only); [::1]:9464 for IPv6, 0.0.0.0:9464 for all\n"
	       "    --per-syscall-latency  one latency histogram per syscall (label name)\n\n"
	       "EXIT STATUS\n    0 stopped by a signal; 2 usage; 3 not loaded; 1 failure (e.g. "
	       "the\n"
	       "    address is in use).\n");
}

static int metrics_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct metrics_opts *o = ctx;

	(void)num;
	if (key == LT_O_LISTEN)
		o->listen = arg;
	else
		o->per_syscall_latency = true;
	return LT_OK;
}

int cmd_metrics(int argc, char **argv)
{
	static const int keys[] = { LT_O_LISTEN, LT_O_PER_SYS_LAT, 0 };
	struct metrics_opts o = { .listen = "127.0.0.1:9464" };
	int err = lt_opts_parse(argc, argv, keys, help_metrics, metrics_opt, &o);

	if (err)
		return err;
	return serve(&o);
}
