// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HTTP server of lowtrace metrics, and its request parser. No libbpf: what a
 * scrape writes is the caller's callback (metrics_scrape.c).
 *
 * The event loop: one poll over the listening socket and up to CONN_MAX
 * non-blocking connections, each with its own request buffer, parser state,
 * unsent tail and deadline (the headers within REQ_MS of the accept, else 408;
 * the answer within SEND_MS; then a short bounded drain). When all slots are
 * taken, the oldest connection still sending its request makes room. So no
 * client, slow or idle or many, holds up another: each costs one slot and at
 * most its deadlines. Nothing is allocated after the start.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "http.h"
#include "lowtrace.h"

#define REQ_MAX 8192 /* request line and headers */
#define BODIES 2 /* scrape buffers: one can serve a slow reader while the other serves the rest */
#define CONN_MAX 256 /* open connections */
#define BACKLOG 1024 /* the kernel caps it at net.core.somaxconn */
#define REQ_MS 2000 /* from accept to the end of the headers */
#define SEND_MS 10000 /* from the first byte of the answer to the last */
#define DRAIN_MS 500 /* after the answer, what the client still sends is read and dropped */
#define DRAIN_MAX (64u << 10)
#define ACCEPT_BATCH 64 /* accepts per pass: the open connections get their turn too */

enum conn_state {
	C_FREE,
	C_READ, /* reading the request */
	C_WAIT, /* asked for a scrape: answered at the end of this pass */
	C_SEND, /* the answer, as the socket takes it */
	C_DRAIN, /* answered and shut down for writing: reading until EOF, briefly */
};

struct conn {
	int fd;
	enum conn_state state;
	int body; /* the bodies[] slot this answer sends from, or -1 */
	uint64_t seq; /* accept order: the oldest incomplete request is closed first */
	uint64_t deadline; /* ms: of the state */
	size_t n; /* request bytes read (C_DRAIN: bytes dropped) */
	size_t own_off, own_len; /* own[] sent, to send */
	size_t body_off, body_len; /* of the shared body, sent and to send */
	struct lt_http http;
	char own[224]; /* status line and headers, and the whole answer if not a scrape */
	char req[REQ_MAX];
};

/*
 * Scrape bodies: a scrape is written once per loop pass for every connection
 * whose request completed before it, into a slot no connection is sending
 * from, and each of them sends from it at its own pace (an offset of its own).
 * A slot is written again only when its last reader is done, so a slow reader
 * never sees its bytes change and never holds up a new scrape while another
 * slot is free. When every slot has readers, the readers of the oldest are
 * closed: they are the slowest, and their send deadline was coming anyway.
 */
struct body {
	struct lt_buf b;
	unsigned int users; /* connections sending from it */
	uint64_t gen; /* scrape number */
};

struct lt_http_server {
	int lfd; /* the listening socket */
	lt_http_scrape_fn scrape;
	void *ctx;
	struct body bodies[BODIES];
	uint64_t gen; /* scrapes so far */
	unsigned int nconn; /* connections open */
	uint64_t accepted; /* connections so far */
	struct conn conn[CONN_MAX];
	struct pollfd pfd[CONN_MAX + 1];
	unsigned short pconn[CONN_MAX + 1]; /* the conn[] of each pfd[] (0 is the listener) */
};

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
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	default:
		return "Internal Server Error";
	}
}

static void conn_close(struct lt_http_server *s, struct conn *c)
{
	if (c->body >= 0)
		s->bodies[c->body].users--;
	close(c->fd);
	c->state = C_FREE;
	c->body = -1;
	s->nconn--;
}

/* the status line and headers into own[]; for an error, its short text too */
static void answer_head(struct conn *c, int status, size_t blen)
{
	int len;

	if (status != 200)
		blen = strlen(reason(status)) + 5; /* "404 " ... "\n" */
	len = snprintf(c->own, sizeof(c->own),
		       "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		       "Connection: close\r\n\r\n",
		       status, reason(status),
		       status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain",
		       blen);
	if (status != 200 && !c->http.head)
		len += snprintf(c->own + len, sizeof(c->own) - len, "%d %s\n", status,
				reason(status));
	c->own_off = 0;
	c->own_len = len;
	c->body_off = c->body_len = 0;
}

/*
 * Send what the socket takes; when all is sent, shut down for writing and
 * drain: closing with unread bytes would reset the connection, and the
 * client could lose the answer.
 */
static void conn_send(struct lt_http_server *s, struct conn *c, uint64_t now)
{
	while (c->own_off < c->own_len || c->body_off < c->body_len) {
		struct iovec iov[2];
		struct msghdr mh = { .msg_iov = iov };
		ssize_t w;

		if (c->own_off < c->own_len)
			iov[mh.msg_iovlen++] =
				(struct iovec){ c->own + c->own_off, c->own_len - c->own_off };
		if (c->body_off < c->body_len)
			iov[mh.msg_iovlen++] = (struct iovec){ s->bodies[c->body].b.p + c->body_off,
							       c->body_len - c->body_off };
		w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w < 0) {
			conn_close(s, c);
			return;
		}
		if ((size_t)w <= c->own_len - c->own_off) {
			c->own_off += w;
		} else {
			c->body_off += w - (c->own_len - c->own_off);
			c->own_off = c->own_len;
		}
	}
	if (c->body >= 0)
		s->bodies[c->body].users--;
	c->body = -1;
	shutdown(c->fd, SHUT_WR);
	c->state = C_DRAIN;
	c->deadline = now + DRAIN_MS;
	c->n = 0;
}

/* an answer that needs no scrape */
static void conn_answer(struct lt_http_server *s, struct conn *c, int status, uint64_t now)
{
	answer_head(c, status, 0);
	c->state = C_SEND;
	c->deadline = now + SEND_MS;
	conn_send(s, c, now);
}

static void conn_read(struct lt_http_server *s, struct conn *c, uint64_t now)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->req + c->n, sizeof(c->req) - c->n, MSG_DONTWAIT);
		int status;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r < 0) {
			conn_close(s, c);
			return;
		}
		if (r == 0) { /* the client stopped sending before the end of the headers */
			conn_answer(s, c, 400, now);
			return;
		}
		c->n += r;
		status = lt_http_parse(&c->http, c->req, c->n, sizeof(c->req));
		if (status == 200) {
			c->state = C_WAIT;
			return;
		}
		if (status) {
			conn_answer(s, c, status, now);
			return;
		}
	}
}

/* read and drop what the client still sends, up to DRAIN_MAX bytes, until it closes */
static void conn_drain(struct lt_http_server *s, struct conn *c)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->req, sizeof(c->req), MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		c->n += r > 0 ? r : 0;
		if (r <= 0 || c->n >= DRAIN_MAX) {
			conn_close(s, c);
			return;
		}
	}
}

/*
 * A free slot for a new connection: when all are taken, close the connection
 * that has waited longest for its request to complete, else the one that has
 * drained longest; none when all are answering (the new one waits in the
 * backlog).
 */
static struct conn *conn_slot(struct lt_http_server *s)
{
	struct conn *victim = NULL;

	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state == C_FREE)
			return c;
		if ((c->state == C_READ || c->state == C_DRAIN) &&
		    (!victim || (c->state == C_READ && victim->state == C_DRAIN) ||
		     (c->state == victim->state && c->seq < victim->seq)))
			victim = c;
	}
	if (victim)
		conn_close(s, victim);
	return victim;
}

static bool slot_evictable(struct lt_http_server *s)
{
	if (s->nconn < CONN_MAX)
		return true;
	for (int i = 0; i < CONN_MAX; i++)
		if (s->conn[i].state == C_READ || s->conn[i].state == C_DRAIN)
			return true;
	return false;
}

static void accept_some(struct lt_http_server *s, int lfd, uint64_t now)
{
	for (int k = 0; k < ACCEPT_BATCH && slot_evictable(s); k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct conn *c;

		if (fd < 0)
			return; /* EAGAIN, or an error of that one connection (or EMFILE: next pass) */
		c = conn_slot(s);
		if (!c) { /* not after slot_evictable */
			close(fd);
			return;
		}
		memset(&c->http, 0, sizeof(c->http));
		c->fd = fd;
		c->state = C_READ;
		c->body = -1;
		c->n = 0;
		c->seq = ++s->accepted;
		c->deadline = now + REQ_MS;
		s->nconn++;
	}
}

/* one scrape for every connection waiting for one (see struct body) */
static void answer_waiting(struct lt_http_server *s, uint64_t now)
{
	struct body *bd = NULL;
	int status, slot;

	for (int i = 0; i < BODIES; i++)
		if (!s->bodies[i].users && (!bd || s->bodies[i].gen < bd->gen))
			bd = &s->bodies[i];
	if (!bd) {
		bd = &s->bodies[0];
		for (int i = 1; i < BODIES; i++)
			if (s->bodies[i].gen < bd->gen)
				bd = &s->bodies[i];
		for (int i = 0; i < CONN_MAX; i++)
			if (s->conn[i].state == C_SEND && s->conn[i].body == bd - s->bodies)
				conn_close(s, &s->conn[i]);
	}
	slot = bd - s->bodies;
	bd->b.len = 0;
	status = s->scrape(s->ctx, &bd->b);
	bd->gen = ++s->gen;
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state != C_WAIT)
			continue;
		answer_head(c, status, bd->b.len);
		if (status == 200 && !c->http.head) {
			c->body = slot;
			c->body_len = bd->b.len;
			bd->users++;
		}
		c->state = C_SEND;
		c->deadline = now + SEND_MS;
		conn_send(s, c, now);
	}
}

void lt_http_pass(struct lt_http_server *s, unsigned int wait_ms)
{
	int lfd = s->lfd;
	uint64_t now = lt_now_ms(), next = now + (wait_ms < 500 ? wait_ms : 500);
	nfds_t np = 0;
	bool waiting = false;
	int r;

	if (slot_evictable(s)) {
		s->pfd[np] = (struct pollfd){ lfd, POLLIN, 0 };
		s->pconn[np++] = 0;
	}
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state == C_FREE)
			continue;
		if (c->deadline < next)
			next = c->deadline;
		s->pfd[np] = (struct pollfd){ c->fd, c->state == C_SEND ? POLLOUT : POLLIN, 0 };
		s->pconn[np++] = i;
	}
	r = poll(s->pfd, np, next > now ? (int)(next - now) : 0);
	if (r < 0)
		return; /* EINTR: a stop signal, seen by the caller */
	now = lt_now_ms();
	for (nfds_t k = 0; k < np; k++) {
		struct conn *c = &s->conn[s->pconn[k]];

		if (!s->pfd[k].revents || s->pfd[k].fd == lfd)
			continue;
		if (c->state == C_READ)
			conn_read(s, c, now);
		else if (c->state == C_SEND)
			conn_send(s, c, now);
		else if (c->state == C_DRAIN)
			conn_drain(s, c);
	}
	for (int i = 0; i < CONN_MAX; i++) {
		struct conn *c = &s->conn[i];

		if (c->state == C_FREE || c->state == C_WAIT || c->deadline > now)
			continue;
		if (c->state == C_READ)
			conn_answer(s, c, 408, now);
		else /* too slow to take its answer, or to close after it */
			conn_close(s, c);
	}
	if (np && s->pfd[0].fd == lfd && s->pfd[0].revents)
		accept_some(s, lfd, now);
	for (int i = 0; i < CONN_MAX && !waiting; i++)
		waiting = s->conn[i].state == C_WAIT;
	if (waiting)
		answer_waiting(s, now);
}

int lt_http_open(struct lt_http_server **out, const char *spec, const struct sockaddr_storage *ss,
		 socklen_t sl, size_t body, lt_http_scrape_fn scrape, void *ctx)
{
	/* calloc maps it: pages of connections never opened are never touched */
	struct lt_http_server *s = calloc(1, sizeof(*s));
	int one = 1, err = LT_OK;

	*out = s;
	if (!s)
		return lt_error(LT_FAIL, "out of memory");
	s->lfd = -1;
	s->scrape = scrape;
	s->ctx = ctx;
	for (int i = 0; i < BODIES; i++) {
		/* malloc maps it: pages a scrape does not reach are never touched */
		s->bodies[i].b.p = malloc(body);
		s->bodies[i].b.cap = body;
		if (!err && !s->bodies[i].b.p)
			err = lt_error(LT_FAIL, "out of memory");
	}
	if (err)
		return err;
	s->lfd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s->lfd, (const struct sockaddr *)ss, sl) || listen(s->lfd, BACKLOG))
		return lt_error(LT_FAIL, "--listen %s: %s", spec, strerror(errno));
	return LT_OK;
}

void lt_http_close(struct lt_http_server *s)
{
	if (!s)
		return;
	for (int i = 0; i < CONN_MAX; i++)
		if (s->conn[i].state != C_FREE)
			conn_close(s, &s->conn[i]);
	if (s->lfd >= 0)
		close(s->lfd);
	for (int i = 0; i < BODIES; i++)
		free(s->bodies[i].b.p);
	free(s);
}

/* ---- the request parser ---- */

/* where the parser is: in the request line, or in the header lines after it */
enum {
	H_METHOD,
	H_TARGET,
	H_VERSION,
	H_LINE_CR, /* CR after the version or a header value: LF must follow */
	H_LINE, /* at the start of a header line (or of the blank line) */
	H_NAME,
	H_VALUE,
	H_END_CR, /* CR of the blank line */
};

#define METHOD_MAX 16 /* longer than any method: junk, not a long method */

/* RFC 9110 tchar: what a method or a header name is made of */
static bool tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* the request line and headers are complete: what was asked for */
static int http_done(struct lt_http *h, const char *req)
{
	const char *t = req + h->mlen + 1;

	if (h->mlen == 3 && !memcmp(req, "GET", 3))
		h->head = false;
	else if (h->mlen == 4 && !memcmp(req, "HEAD", 4))
		h->head = true;
	else
		return 405;
	if ((h->tlen == 8 && !memcmp(t, "/metrics", 8)) ||
	    (h->tlen > 8 && !memcmp(t, "/metrics?", 9)))
		return 200;
	return 404;
}

/* one byte; 0 to go on, else the status */
static int http_byte(struct lt_http *h, const char *req, unsigned char c)
{
	switch (h->state) {
	case H_METHOD:
		if (c == ' ' && h->mlen) {
			h->state = H_TARGET;
			return 0;
		}
		if (!tchar(c) || h->mlen == METHOD_MAX)
			return 400;
		h->mlen++;
		return 0;
	case H_TARGET:
		if (c == ' ' && h->tlen) {
			h->state = H_VERSION;
			return 0;
		}
		if (c <= ' ' || c >= 0x7f) /* an empty path, a control byte, a line end */
			return 400;
		h->tlen++;
		return 0;
	case H_VERSION:
		if (h->vpos < 7) {
			if (c != (unsigned char)"HTTP/1."[h->vpos++])
				return 400;
			return 0;
		}
		if (h->vpos == 7) {
			h->vpos++;
			return c >= '0' && c <= '9' ? 0 : 400;
		}
		if (c == '\r')
			h->state = H_LINE_CR;
		else if (c == '\n')
			h->state = H_LINE;
		else
			return 400;
		return 0;
	case H_LINE_CR:
		if (c != '\n')
			return 400;
		h->state = H_LINE;
		return 0;
	case H_LINE:
		if (c == '\n')
			return http_done(h, req);
		if (c == '\r')
			h->state = H_END_CR;
		else if (tchar(c))
			h->state = H_NAME;
		else /* a folded line (RFC 9112 says reject), junk */
			return 400;
		return 0;
	case H_NAME:
		if (c == ':')
			h->state = H_VALUE;
		else if (!tchar(c)) /* includes a space before the colon */
			return 400;
		return 0;
	case H_VALUE:
		if (c == '\r')
			h->state = H_LINE_CR;
		else if (c == '\n')
			h->state = H_LINE;
		else if ((c < ' ' && c != '\t') || c == 0x7f)
			return 400;
		return 0;
	case H_END_CR:
		return c == '\n' ? http_done(h, req) : 400;
	}
	return 400;
}

int lt_http_parse(struct lt_http *h, const char *req, size_t n, size_t cap)
{
	while (!h->status && h->pos < n)
		h->status = http_byte(h, req, (unsigned char)req[h->pos++]);
	if (!h->status && n >= cap) /* full: which part did not fit */
		h->status = h->state <= H_VERSION ? (h->state == H_METHOD ? 400 : 414) : 431;
	return h->status;
}

int lt_http_status(const char *req, size_t n, size_t cap, bool *head)
{
	struct lt_http h = { 0 };
	int status = lt_http_parse(&h, req, n, cap);

	*head = h.head;
	return status;
}
