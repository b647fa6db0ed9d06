// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The subscriber's side (sub.h): connect, send the filter, read the owner's frames. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lowtrace.h"
#include "sub.h"

#define ACK_MS 5000 /* an owner that says nothing by then is not one */

/* Read until n bytes are in c->buf or the deadline; 0, or -errno (-EPIPE: closed) */
static int read_full(struct lt_sub_client *c, size_t n, uint64_t until)
{
	while (c->have < n) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		uint64_t now = lt_now_ms();
		ssize_t r;

		if (now >= until)
			return -ETIMEDOUT;
		if (poll(&p, 1, until - now) < 0 && errno != EINTR)
			return -errno;
		if (lt_stop)
			return -EINTR;
		r = recv(c->fd, c->buf + c->have, n - c->have, MSG_DONTWAIT);
		if (r == 0)
			return -EPIPE;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (r > 0)
			c->have += r;
	}
	return 0;
}

/* The owner's first frame: ACK, or REFUSE and its line */
static int read_ack(struct lt_sub_client *c, const char *path)
{
	struct lt_sub_frame fr;
	struct lt_sub_ack ack;
	int err = read_full(c, sizeof(fr), lt_now_ms() + ACK_MS);

	if (!err) {
		memcpy(&fr, c->buf, sizeof(fr));
		if (fr.len > sizeof(c->bye) - 1 ||
		    (fr.kind != LT_SUB_ACK && fr.kind != LT_SUB_REFUSE) ||
		    (fr.kind == LT_SUB_ACK && fr.len != sizeof(ack)))
			return lt_error(LT_FAIL,
					"%s: the peer does not speak lowtrace's subscriber "
					"protocol",
					path);
		err = read_full(c, sizeof(fr) + fr.len, lt_now_ms() + ACK_MS);
	}
	if (err == -EINTR)
		return LT_OK; /* a stop: the stream ends at once */
	/* an owner that closed before it answered (it was stopping): as if none served */
	if (err == -EPIPE || err == -ECONNRESET)
		return -ECONNREFUSED;
	if (err)
		return lt_error(LT_FAIL, "%s: no answer from the owner: %s", path, strerror(-err));
	if (fr.kind == LT_SUB_REFUSE) {
		char line[256];

		/* the owner's text: printable bytes only reach the terminal */
		for (size_t i = 0; i < fr.len; i++) {
			char ch = c->buf[sizeof(fr) + i];

			line[i] = ch >= ' ' && ch < 0x7f ? ch : '?';
		}
		line[fr.len] = 0;
		return lt_error(LT_FAIL, "the owner of the ring refused this subscriber: %s", line);
	}
	memcpy(&ack, c->buf + sizeof(fr), sizeof(ack));
	if (ack.version != LT_SUB_VERSION)
		return lt_error(LT_FAIL, "%s: the owner speaks protocol version %u, not %u", path,
				ack.version, LT_SUB_VERSION);
	c->owner_pid = ack.owner_pid;
	c->have = 0;
	return LT_OK;
}

int lt_sub_connect(struct lt_sub_client *c, const char *path, const struct lt_sub_filter *f)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char hello[sizeof(struct lt_sub_frame) + sizeof(struct lt_sub_hello) + 3 * 255];
	struct lt_sub_frame fr = { .kind = LT_SUB_HELLO };
	int err;

	c->have = 0;
	c->bye_code = -1;
	c->bye[0] = 0;
	if (strlen(path) >= sizeof(a.sun_path))
		return lt_error(LT_USAGE, "--socket %s: too long", path);
	strcpy(a.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return lt_error(LT_FAIL, "socket: %s", strerror(errno));
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a))) {
		err = errno;
		lt_sub_disconnect(c);
		/* nobody serves, or this user may not know: the caller decides */
		if (err == ENOENT || err == ECONNREFUSED || err == EACCES || err == EPERM)
			return -err;
		return lt_error(LT_FAIL, "%s: %s", path, strerror(err));
	}
	fr.len = lt_sub_hello_make(f, hello + sizeof(fr));
	memcpy(hello, &fr, sizeof(fr));
	/* an owner that refuses at once closes first: its line is read all the same */
	if (send(c->fd, hello, sizeof(fr) + fr.len, MSG_NOSIGNAL) !=
		    (ssize_t)(sizeof(fr) + fr.len) &&
	    errno != EPIPE && errno != ECONNRESET)
		err = lt_error(LT_FAIL, "%s: cannot send the filter: %s", path, strerror(errno));
	else
		err = read_ack(c, path);
	if (err)
		lt_sub_disconnect(c);
	return err;
}

/* A BYE: the owner's exit code for us and its line (printable bytes only) */
static void take_bye(struct lt_sub_client *c, const char *p, size_t len)
{
	struct lt_sub_bye bye;
	size_t n = 0;

	if (len < sizeof(bye))
		return;
	memcpy(&bye, p, sizeof(bye));
	c->bye_code = bye.code > 0 && bye.code < 64 ? (int)bye.code : LT_OWNER_GONE;
	for (size_t i = sizeof(bye); i < len && n < sizeof(c->bye) - 1; i++)
		c->bye[n++] = p[i] >= ' ' && p[i] < 0x7f ? p[i] : '?';
	c->bye[n] = 0;
}

/* The whole frames in buf, handed out; the rest moved to the front */
static int take_frames(struct lt_sub_client *c, lt_sub_rec_fn cb, void *ctx)
{
	size_t at = 0;
	int n = 0, err = 0;

	while (!err && c->have - at >= sizeof(struct lt_sub_frame)) {
		struct lt_sub_frame fr;
		const char *p = c->buf + at + sizeof(fr);

		memcpy(&fr, c->buf + at, sizeof(fr));
		if (fr.len > LT_SUB_PAYLOAD_MAX ||
		    (fr.kind != LT_SUB_REC && fr.kind != LT_SUB_LOST && fr.kind != LT_SUB_BYE)) {
			err = -EPROTO;
			break;
		}
		if (c->have - at < sizeof(fr) + fr.len)
			break;
		if (fr.kind == LT_SUB_BYE) {
			take_bye(c, p, fr.len);
			err = -EPIPE;
		} else {
			err = cb(ctx, fr.kind, p, fr.len);
			if (err == -EAGAIN) {
				err = 0;
				break; /* kept for the next read */
			}
			n++;
		}
		at += sizeof(fr) + fr.len;
	}
	memmove(c->buf, c->buf + at, c->have - at);
	c->have -= at;
	return err ? err : n;
}

int lt_sub_read(struct lt_sub_client *c, int timeout_ms, lt_sub_rec_fn cb, void *ctx)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	ssize_t r;
	int n = take_frames(c, cb, ctx);

	if (n)
		return n;
	if (poll(&p, 1, timeout_ms) < 0)
		return errno == EINTR ? -EINTR : -errno;
	if (!p.revents || c->have == sizeof(c->buf))
		return 0;
	r = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, MSG_DONTWAIT);
	if (r == 0)
		return -EPIPE;
	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	c->have += r;
	return take_frames(c, cb, ctx);
}

void lt_sub_disconnect(struct lt_sub_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
