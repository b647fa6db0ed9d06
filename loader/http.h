/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The HTTP server of lowtrace metrics (http.c): one poll loop over the listening socket and
 * up to 256 non-blocking connections, their deadlines, the scrape bodies they send from, and
 * the request parser. It knows nothing of what a scrape writes: a callback fills the body.
 */
#ifndef LT_HTTP_H
#define LT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "encode.h"

/*
 * The HTTP request parser: a byte-wise state machine that resumes where the
 * last call stopped, so a request that arrives in pieces is checked once per
 * byte. Zero the state for each connection; call lt_http_parse with the whole
 * request so far (n bytes of a cap-byte buffer) after each read.
 *
 * Returns 0 while more bytes are needed (never once n >= cap), else the status
 * to answer, and the same status on every later call:
 *   200 GET or HEAD /metrics[?query]      404 another path
 *   405 another method                    400 malformed: junk, a control byte,
 *   414 the request line fills the buffer     an empty path, no HTTP/1.x version
 *   431 the headers fill the buffer
 * Bytes are checked as they come, so junk gets 400 without waiting for a line end.
 * Lines may end in CRLF or a bare LF; nothing after the blank line is read.
 */
struct lt_http {
	size_t pos; /* bytes of the request checked */
	size_t tlen; /* length of the target (it starts at mlen + 1) */
	int status; /* the answer, once known */
	unsigned char state; /* where pos is (http.c) */
	unsigned char mlen; /* length of the method */
	unsigned char vpos; /* bytes of "HTTP/1.x" matched */
	bool head; /* HEAD: answer without the body */
};

int lt_http_parse(struct lt_http *h, const char *req, size_t n, size_t cap);

/* One-shot form of lt_http_parse: the status, and whether it asks for no body (HEAD). */
int lt_http_status(const char *req, size_t n, size_t cap, bool *head);

/*
 * One scrape for every connection whose request completed in a pass: the whole answer
 * written into b (from b->len = 0), which the callback may grow with realloc (nothing is
 * sent from it meanwhile). Returns the status: 200, else an error answered with its text.
 */
typedef int (*lt_http_scrape_fn)(void *ctx, struct lt_buf *b);

struct lt_http_server;

/*
 * Listen on ss (`spec` names it in the error), with scrape bodies of `body` bytes. An exit
 * code; lt_http_close frees *out either way.
 */
int lt_http_open(struct lt_http_server **out, const char *spec, const struct sockaddr_storage *ss,
		 socklen_t sl, size_t body, lt_http_scrape_fn scrape, void *ctx);
/* One pass: wait for the sockets or the nearest deadline (wait_ms, 500 at most), serve them. */
void lt_http_pass(struct lt_http_server *srv, unsigned int wait_ms);
void lt_http_close(struct lt_http_server *srv);

#endif
