/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Subscribers: the process that owns the ring (an `events`) serves other `events` on a local
 * unix socket (sub.c), each with its own filter applied in the owner and a bounded queue; the
 * subscriber's side is subcli.c. The wire protocol, version 1 (docs/design.md, "Subscribers"):
 *
 *   every message is a frame: struct lt_sub_frame, then `len` bytes of payload.
 *   subscriber -> owner, once: HELLO (struct lt_sub_hello, then its strings).
 *   owner -> subscriber: ACK (struct lt_sub_ack) or REFUSE (one line of text, then close);
 *     then REC (one record as the ring held it, the record ABI of lt_abi.h), LOST (a struct
 *     lt_lost the owner made: records this subscriber's queue had no room for), and BYE
 *     (struct lt_sub_bye, then a line of text) when the owner stops.
 *
 * Everything read is checked before use: a frame or hello that breaks a rule ends the
 * connection. Functions print their own errors and return an enum lt_exit_code, unless said.
 */
#ifndef LT_SUB_H
#define LT_SUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ident.h"
#include "records.h"

#define LT_SUB_SOCKET "/run/lowtrace/events.sock" /* --socket's default */
#define LT_SUB_MAX_DEFAULT 64 /* --max-subscribers' default */
#define LT_SUB_MAX 1024 /* its largest value */
#define LT_SUB_QUEUE (256 * 1024) /* bytes of frames queued per subscriber */
#define LT_SUB_VERSION 1
#define LT_SUB_MAGIC "LTSB"
#define LT_SUB_PAYLOAD_MAX 65536 /* the largest frame payload either side accepts */
#define LT_SUB_HELLO_MS 2000 /* a connection that sent no whole hello by then is closed */

enum lt_sub_kind {
	LT_SUB_HELLO = 1,
	LT_SUB_ACK = 2,
	LT_SUB_REFUSE = 3,
	LT_SUB_REC = 4,
	LT_SUB_LOST = 5,
	LT_SUB_BYE = 6,
};

struct lt_sub_frame {
	uint32_t len; /* payload bytes after this header */
	uint8_t kind; /* enum lt_sub_kind */
	uint8_t zero[3];
};

/* A subscriber's filter: what `events` filters on, sent once in the hello. */
struct lt_sub_filter {
	uint64_t types; /* bit per record type, 0: all */
	uint32_t pid; /* 0: all */
	char container[LT_IDENT_CID_LEN + 1]; /* id prefix, "": all */
	char unit[LT_IDENT_UNIT_MAX + 1]; /* "": all */
	char cname[LT_RT_NAME_MAX + 1]; /* container name, "": all */
};

/* The hello's fixed part; then the container prefix, unit and name, not NUL-terminated. */
struct lt_sub_hello {
	char magic[4];
	uint16_t version;
	uint16_t flags; /* 0 */
	uint64_t types;
	uint32_t pid;
	uint8_t container_len, unit_len, cname_len, zero;
};

struct lt_sub_ack {
	uint16_t version;
	uint16_t zero;
	uint32_t owner_pid;
	uint32_t queue; /* bytes */
	uint32_t max_subscribers;
};

struct lt_sub_bye {
	uint32_t code; /* the exit code the subscriber should end with */
};

/* subproto.c: */
/* Does the record pass `f`? A lost record is about its probe: only the types apply. */
bool lt_sub_match(const struct lt_sub_filter *f, const struct lt_probe *p, const struct lt_rec *r,
		  const struct lt_ident *id);
/* Does `f` need the record's identity (a container, unit or name filter)? */
bool lt_sub_needs_ident(const struct lt_sub_filter *f);
/* Reader: the hello payload buf[0..len) into *f: 0, or -EPROTO / -EINVAL with *why set. */
int lt_sub_hello_parse(const void *buf, size_t len, struct lt_sub_filter *f, const char **why);
/* The hello payload of `f` into buf (room for sizeof(hello) + 3 * 255): its length. */
size_t lt_sub_hello_make(const struct lt_sub_filter *f, void *buf);

/* ---- the owner (sub.c) ---- */
struct lt_sub_server;
struct lt_sub_stats {
	uint64_t subscribers; /* now */
	uint64_t accepted, refused, dropped; /* connections; dropped: bad hello, timeout */
	uint64_t sent; /* records queued for subscribers (their filters passed) */
	uint64_t lost; /* records a full queue had no room for */
};
/*
 * Serve up to `max` subscribers at `path`: its directory made if missing (0750, group
 * `lowtrace` when root makes it), never through a symbolic link, refused when another user
 * owns it or others may write it; a socket left by a dead owner replaced only when nobody
 * answers on it. *srv NULL and LT_OK when max is 0. Unless `must`, the error line says that
 * no subscribers are served (the caller goes on without).
 */
int lt_sub_serve(struct lt_sub_server **srv, const char *path, unsigned int max, bool must);
/* Wait up to timeout_ms for the sockets or fd (-1: none; the ring's), then serve them: new
 * connections, hellos, writes. True when fd is readable (or the timeout passed). */
bool lt_sub_wait(struct lt_sub_server *srv, int fd, int timeout_ms);
/* One record the owner read from the ring: queued for every subscriber whose filter passes.
 * `id` is the record's identity (NULL: unknown, or none asked for, see lt_sub_needs_any). */
void lt_sub_record(struct lt_sub_server *srv, const struct lt_probe *p, const struct lt_rec *r,
		   const void *raw, size_t size, const struct lt_ident *id);
/* Does any subscriber filter on identity? */
bool lt_sub_needs_any(const struct lt_sub_server *srv);
/* Send what is queued, without waiting */
void lt_sub_flush(struct lt_sub_server *srv);
void lt_sub_stats(const struct lt_sub_server *srv, struct lt_sub_stats *st);
/* Tell every subscriber why it ends (BYE with `code`, `why`), close them and the socket. */
void lt_sub_close(struct lt_sub_server *srv, int code, const char *why);

/* ---- the subscriber (subcli.c) ---- */
struct lt_sub_client {
	int fd;
	uint32_t owner_pid;
	size_t have; /* bytes in buf */
	int bye_code; /* the owner's BYE, -1: none */
	char bye[256];
	char buf[2 * (sizeof(struct lt_sub_frame) + LT_SUB_PAYLOAD_MAX)];
};
/*
 * Connect to the owner at `path` and send f: LT_OK (subscribed), -ENOENT / -ECONNREFUSED
 * (nobody serves there), -EACCES / -EPERM (this user may not connect), nothing printed; or an
 * exit code with the error printed (refused, a peer that does not speak the protocol).
 */
int lt_sub_connect(struct lt_sub_client *c, const char *path, const struct lt_sub_filter *f);
/* A frame the owner sent: REC or LOST, payload `data` of `len` bytes. Returns 0 to go on,
 * LT_RING_AGAIN-like -EAGAIN to stop before it (kept, handed again), < 0 to stop after it. */
typedef int (*lt_sub_rec_fn)(void *ctx, int kind, const void *data, size_t len);
/*
 * Wait up to timeout_ms for frames, hand each to cb: the frames handled, -EPIPE when the owner
 * went away (c->bye_code and c->bye say why if it said), the callback's stop, or -errno.
 */
int lt_sub_read(struct lt_sub_client *c, int timeout_ms, lt_sub_rec_fn cb, void *ctx);
void lt_sub_disconnect(struct lt_sub_client *c);

#endif
