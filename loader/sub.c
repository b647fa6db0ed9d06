// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The owner's side of subscribers (sub.h): the unix socket, each subscriber's filter and
 * bounded queue (the filter and the hello: subproto.c).
 */
#define _GNU_SOURCE /* accept4, struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "lowtrace.h"
#include "sub.h"

/* ---- the owner ---- */

#define HELLO_ROOM (sizeof(struct lt_sub_frame) + sizeof(struct lt_sub_hello) + 3 * 255)
#define ACCEPTS_PER_WAKE 32 /* then the ring again */

struct sub {
	int fd; /* -1: a free slot */
	bool ready; /* its hello was taken: records are queued for it */
	bool full; /* its socket took nothing at the last try: none until it is writable */
	uint64_t deadline_ms; /* for its hello */
	struct lt_sub_filter f;
	size_t hlen;
	char hbuf[HELLO_ROOM];
	/* the queue: frames in a circle of LT_SUB_QUEUE bytes from head, len bytes */
	char *q;
	size_t head, len;
	/* records its queue had no room for, per probe, not yet told in a LOST frame */
	bool lost_pending;
	uint64_t lost[LT_PROBE_SLOTS];
	uint64_t lost_first[LT_PROBE_SLOTS], lost_last[LT_PROBE_SLOTS];
};

struct lt_sub_server {
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;
	ino_t ino; /* the socket's inode: unlinked at close only if still ours */
	gid_t gid; /* the socket's group: its members may subscribe */
	unsigned int max, n, nident; /* slots, ready ones, ready ones that filter on identity */
	struct lt_sub_stats st;
	struct pollfd pfd[LT_SUB_MAX + 2];
	struct sub subs[];
};

static bool serve_must; /* lt_sub_serve's: the owner cannot go on without the socket */

static int serve_err(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int serve_err(const char *path, const char *fmt, ...)
{
	int e = errno;
	char msg[512];
	va_list ap;

	/* the default place, and this user may not serve there (not root, not the unit's
	 * user): nothing to say, it streams alone */
	if (!serve_must && (e == EACCES || e == EPERM || e == EROFS))
		return LT_FAIL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return lt_error(LT_FAIL, "--socket %s: %s%s", path, msg,
			serve_must ? "" : "; serving no subscribers");
}

/* The socket's directory: made if missing; a directory this user or root owns, not a link,
 * that no one else may write. Its group in *gid. */
static int check_dir(const char *path, const char *dir, gid_t *gid)
{
	struct stat st;

	if (lstat(dir, &st) && errno == ENOENT) {
		struct group *g = geteuid() ? NULL : getgrnam("lowtrace");

		if (mkdir(dir, 0750) && errno != EEXIST)
			return serve_err(path, "cannot make %s: %s", dir, strerror(errno));
		/* the service group may reach the socket */
		if (g && !lstat(dir, &st) && S_ISDIR(st.st_mode) && st.st_uid == 0)
			(void)!lchown(dir, 0, g->gr_gid);
	}
	if (lstat(dir, &st))
		return serve_err(path, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return serve_err(path, "%s is not a directory (a link is never followed): refused",
				 dir);
	errno = EPERM;
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return serve_err(path, "%s is owned by uid %u, another user: refused", dir,
				 st.st_uid);
	errno = 0;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return serve_err(path, "%s is writable by group or others: refused", dir);
	*gid = st.st_gid;
	return LT_OK;
}

/* What is at `path` already: nothing, or a socket of ours nobody answers on (removed). */
static int clear_stale(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (lstat(path, &st))
		return errno == ENOENT ? LT_OK : serve_err(path, "%s", strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return serve_err(path, "not a socket (a link is never followed): refused");
	errno = EPERM;
	if (st.st_uid != geteuid())
		return serve_err(path, "owned by uid %u, another user: refused", st.st_uid);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return serve_err(path, "socket: %s", strerror(errno));
	strcpy(a.sun_path, path);
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	if (!r)
		return serve_err(path, "another owner answers there: refused");
	if (errno != ECONNREFUSED)
		return serve_err(path, "%s", strerror(errno));
	/* a dead owner's */
	if (unlink(path) && errno != ENOENT)
		return serve_err(path, "cannot remove the stale socket: %s", strerror(errno));
	return LT_OK;
}

static int bind_socket(struct lt_sub_server *srv, gid_t gid)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int r;

	srv->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (srv->lfd < 0)
		return serve_err(srv->path, "socket: %s", strerror(errno));
	strcpy(a.sun_path, srv->path);
	old = umask(0117); /* 0660: the owner and the group */
	r = bind(srv->lfd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r)
		return serve_err(srv->path, "bind: %s", strerror(errno));
	/* the directory's group (lowtrace) may subscribe; not a member: ours stays */
	(void)!fchownat(AT_FDCWD, srv->path, -1, gid, AT_SYMLINK_NOFOLLOW);
	if (lstat(srv->path, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return serve_err(srv->path, "changed under us: refused");
	srv->dev = st.st_dev;
	srv->ino = st.st_ino;
	srv->gid = st.st_gid;
	if (listen(srv->lfd, 128))
		return serve_err(srv->path, "listen: %s", strerror(errno));
	return LT_OK;
}

int lt_sub_serve(struct lt_sub_server **out, const char *path, unsigned int max, bool must)
{
	struct lt_sub_server *srv;
	char dir[sizeof(srv->path)];
	char *slash;
	gid_t gid = getegid();
	int err;

	*out = NULL;
	serve_must = must;
	if (!max)
		return LT_OK;
	if (path[0] != '/' || strlen(path) >= sizeof(dir))
		return serve_err(path, "want an absolute path of at most %zu bytes",
				 sizeof(dir) - 1);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash[1])
		return serve_err(path, "names a directory");
	*slash = 0;
	err = check_dir(path, slash == dir ? "/" : dir, &gid);
	if (!err)
		err = clear_stale(path);
	if (err)
		return err;
	srv = calloc(1, sizeof(*srv) + max * sizeof(srv->subs[0]));
	if (!srv)
		return lt_error(LT_FAIL, "out of memory");
	strcpy(srv->path, path);
	srv->lfd = -1;
	srv->max = max;
	for (unsigned int i = 0; i < max; i++)
		srv->subs[i].fd = -1;
	err = bind_socket(srv, gid);
	if (err) {
		lt_sub_close(srv, 0, NULL);
		return err;
	}
	*out = srv;
	return LT_OK;
}

/* Copy n bytes to the tail of the queue (room checked) */
static void q_copy(struct sub *s, const void *p, size_t n)
{
	size_t at = (s->head + s->len) % LT_SUB_QUEUE, first = LT_SUB_QUEUE - at;

	if (first > n)
		first = n;
	memcpy(s->q + at, p, first);
	memcpy(s->q, (const char *)p + first, n - first);
	s->len += n;
}

static bool q_put(struct sub *s, int kind, const void *p, size_t n, const void *p2, size_t n2)
{
	struct lt_sub_frame fr = { .len = n + n2, .kind = kind };

	if (LT_SUB_QUEUE - s->len < sizeof(fr) + n + n2)
		return false;
	q_copy(s, &fr, sizeof(fr));
	q_copy(s, p, n);
	if (n2)
		q_copy(s, p2, n2);
	return true;
}

static void sub_drop(struct lt_sub_server *srv, struct sub *s)
{
	if (s->ready) {
		srv->n--;
		srv->nident -= lt_sub_needs_ident(&s->f);
	}
	close(s->fd);
	free(s->q);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	srv->st.subscribers = srv->n;
}

/* Send what is queued, without waiting: false when the subscriber is gone (dropped) */
static bool sub_send(struct lt_sub_server *srv, struct sub *s)
{
	while (s->len) {
		size_t first = LT_SUB_QUEUE - s->head;
		struct iovec iov[2] = { { s->q + s->head, first < s->len ? first : s->len },
					{ s->q, first < s->len ? s->len - first : 0 } };
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
		ssize_t w = sendmsg(s->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			s->full = true;
			return true;
		}
		if (w <= 0) {
			sub_drop(srv, s);
			return false;
		}
		s->head = (s->head + w) % LT_SUB_QUEUE;
		s->len -= w;
	}
	return true;
}

/* The losses not yet told, as lost records (struct lt_lost of the record ABI) */
static bool tell_lost(struct sub *s)
{
	for (unsigned int i = 0; i < LT_PROBE_SLOTS; i++) {
		struct lt_lost r = {};

		if (!s->lost[i])
			continue;
		r.hdr.type = LT_TYPE_LOST;
		r.hdr.size = sizeof(r);
		r.hdr.flags = LT_HDR_CGROUP;
		r.hdr.ts_ns = lt_now_ns(CLOCK_MONOTONIC);
		r.probe = i;
		r.count = s->lost[i];
		r.first_ts_ns = s->lost_first[i];
		r.last_ts_ns = s->lost_last[i];
		if (!q_put(s, LT_SUB_LOST, &r, sizeof(r), NULL, 0))
			return false;
		s->lost[i] = 0;
	}
	s->lost_pending = false;
	return true;
}

static void lose(struct lt_sub_server *srv, struct sub *s, const struct lt_probe *p,
		 const struct lt_rec *r)
{
	unsigned int id = p->type == LT_TYPE_LOST ? ((const struct lt_lost *)r)->probe : p->id;

	srv->st.lost++;
	if (id >= LT_PROBE_SLOTS)
		return;
	if (!s->lost[id])
		s->lost_first[id] = r->hdr.ts_ns;
	s->lost[id]++;
	s->lost_last[id] = r->hdr.ts_ns;
	s->lost_pending = true;
}

void lt_sub_record(struct lt_sub_server *srv, const struct lt_probe *p, const struct lt_rec *r,
		   const void *raw, size_t size, const struct lt_ident *id)
{
	if (!srv || !srv->n)
		return;
	if (size > LT_SUB_PAYLOAD_MAX)
		size = LT_SUB_PAYLOAD_MAX; /* a newer producer's tail: the decoder skips it */
	for (unsigned int i = 0; i < srv->max; i++) {
		struct sub *s = &srv->subs[i];

		if (!s->ready || !lt_sub_match(&s->f, p, r, id))
			continue;
		/* full: what the socket takes makes room (not a syscall per record while it
		 * takes nothing); a subscriber that reads not loses */
		if (LT_SUB_QUEUE - s->len < sizeof(struct lt_sub_frame) + size + 512 && !s->full &&
		    !sub_send(srv, s))
			continue;
		if ((s->lost_pending && !tell_lost(s)) ||
		    !q_put(s, LT_SUB_REC, raw, size, NULL, 0)) {
			lose(srv, s, p, r);
			continue;
		}
		srv->st.sent++;
	}
}

bool lt_sub_needs_any(const struct lt_sub_server *srv)
{
	return srv && srv->nident;
}

void lt_sub_flush(struct lt_sub_server *srv)
{
	if (!srv)
		return;
	for (unsigned int i = 0; i < srv->max; i++) {
		struct sub *s = &srv->subs[i];

		s->full = false; /* once per drain of the ring: one try */
		if (s->ready && s->len && sub_send(srv, s) && s->lost_pending)
			tell_lost(s);
	}
}

/* One line to a connection that is not served, then close it */
static void refuse(int fd, const char *why)
{
	struct lt_sub_frame fr = { .len = strlen(why), .kind = LT_SUB_REFUSE };
	struct iovec iov[2] = { { &fr, sizeof(fr) }, { (void *)why, fr.len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };

	(void)!sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

/* root, the socket's user, or a member of its group (primary or supplementary) */
static bool peer_allowed(const struct lt_sub_server *srv, int fd)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	gid_t groups[256];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len))
		return false;
	if (uc.uid == 0 || uc.uid == geteuid() || uc.gid == srv->gid)
		return true;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == srv->gid)
			return true;
	return false;
}

static void accept_some(struct lt_sub_server *srv)
{
	char why[96];

	for (int k = 0; k < ACCEPTS_PER_WAKE; k++) {
		int fd = accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		unsigned int i;

		if (fd < 0)
			return; /* EAGAIN, or EMFILE: the next wake tries again */
		if (!peer_allowed(srv, fd)) {
			srv->st.refused++;
			refuse(fd, "permission denied: not root, the owner's user or a member of "
				   "the socket's group");
			continue;
		}
		for (i = 0; i < srv->max && srv->subs[i].fd >= 0; i++)
			;
		if (i == srv->max) {
			srv->st.refused++;
			snprintf(why, sizeof(why), "too many subscribers (this owner serves %u)",
				 srv->max);
			refuse(fd, why);
			continue;
		}
		srv->subs[i].fd = fd;
		srv->subs[i].deadline_ms = lt_now_ms() + LT_SUB_HELLO_MS;
		srv->st.accepted++;
	}
}

/* The hello is whole in s->hbuf: the filter, the queue, the ACK */
static void take_hello(struct lt_sub_server *srv, struct sub *s)
{
	struct lt_sub_ack ack = { .version = LT_SUB_VERSION,
				  .owner_pid = getpid(),
				  .queue = LT_SUB_QUEUE,
				  .max_subscribers = srv->max };
	const char *why;
	int fd = s->fd;

	if (lt_sub_hello_parse(s->hbuf + sizeof(struct lt_sub_frame),
			       s->hlen - sizeof(struct lt_sub_frame), &s->f, &why)) {
		s->fd = -1;
		sub_drop(srv, s);
		srv->st.dropped++;
		refuse(fd, why);
		return;
	}
	s->q = malloc(LT_SUB_QUEUE);
	if (!s->q) {
		s->fd = -1;
		sub_drop(srv, s);
		refuse(fd, "out of memory");
		return;
	}
	s->ready = true;
	srv->n++;
	srv->nident += lt_sub_needs_ident(&s->f);
	srv->st.subscribers = srv->n;
	q_put(s, LT_SUB_ACK, &ack, sizeof(ack), NULL, 0);
	sub_send(srv, s);
}

/* Readable: the hello's bytes; once ready, nothing may come but the end */
static void sub_read(struct lt_sub_server *srv, struct sub *s)
{
	const struct lt_sub_frame *fr = (const struct lt_sub_frame *)s->hbuf;
	size_t want = sizeof(*fr);
	ssize_t n;

	if (s->ready) {
		char junk[64];

		n = recv(s->fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			sub_drop(srv, s);
		else if (n > 0) {
			srv->st.dropped++; /* the protocol has nothing for it to say */
			sub_drop(srv, s);
		}
		return;
	}
	if (s->hlen >= sizeof(*fr)) {
		if (fr->kind != LT_SUB_HELLO || fr->zero[0] || fr->zero[1] || fr->zero[2] ||
		    fr->len > HELLO_ROOM - sizeof(*fr)) {
			int fd = s->fd;

			s->fd = -1;
			sub_drop(srv, s);
			srv->st.dropped++;
			refuse(fd, "not a lowtrace subscriber's hello");
			return;
		}
		want += fr->len;
	}
	n = recv(s->fd, s->hbuf + s->hlen, want - s->hlen, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		srv->st.dropped++;
		sub_drop(srv, s);
		return;
	}
	if (n > 0)
		s->hlen += n;
	if (s->hlen == want && want > sizeof(*fr))
		take_hello(srv, s);
	else if (s->hlen == want && n > 0)
		sub_read(srv, s); /* the header is whole: on to the payload */
}

bool lt_sub_wait(struct lt_sub_server *srv, int fd, int timeout_ms)
{
	uint64_t now = lt_now_ms();
	unsigned int np = 0, at[LT_SUB_MAX];
	bool ready = false;

	srv->pfd[np++] = (struct pollfd){ .fd = srv->lfd, .events = POLLIN };
	srv->pfd[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	for (unsigned int i = 0; i < srv->max; i++) {
		struct sub *s = &srv->subs[i];

		if (s->fd < 0)
			continue;
		/* what came while the owner was busy elsewhere counts: read, then expire */
		if (!s->ready && now >= s->deadline_ms && (sub_read(srv, s), s->fd >= 0) &&
		    !s->ready) {
			srv->st.dropped++;
			sub_drop(srv, s);
		}
		if (s->fd < 0)
			continue;
		if (!s->ready && s->deadline_ms - now < (uint64_t)timeout_ms)
			timeout_ms = s->deadline_ms - now;
		at[np - 2] = i;
		srv->pfd[np++] =
			(struct pollfd){ .fd = s->fd, .events = POLLIN | (s->len ? POLLOUT : 0) };
	}
	if (poll(srv->pfd, np, timeout_ms) <= 0)
		return true;
	ready = srv->pfd[1].revents != 0;
	for (unsigned int k = 2; k < np; k++) {
		struct sub *s = &srv->subs[at[k - 2]];
		short rev = srv->pfd[k].revents;

		if (rev & (POLLERR | POLLHUP | POLLNVAL))
			sub_drop(srv, s);
		else if ((rev & POLLIN) && (sub_read(srv, s), s->fd < 0))
			continue;
		else if (rev & POLLOUT && (s->full = false, sub_send(srv, s)) && s->lost_pending)
			tell_lost(s);
	}
	if (srv->pfd[0].revents & POLLIN)
		accept_some(srv);
	return ready;
}

void lt_sub_stats(const struct lt_sub_server *srv, struct lt_sub_stats *st)
{
	if (!srv) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = srv->st;
}

void lt_sub_close(struct lt_sub_server *srv, int code, const char *why)
{
	struct lt_sub_bye bye = { .code = code };
	struct stat st;
	uint64_t until = lt_now_ms() + 200;
	bool left = true;

	if (!srv)
		return;
	/* no one new: the name goes first (ours still: another owner's is not removed) */
	if (srv->lfd >= 0) {
		close(srv->lfd);
		if (srv->ino && !lstat(srv->path, &st) && st.st_ino == srv->ino &&
		    st.st_dev == srv->dev)
			unlink(srv->path);
	}
	for (unsigned int i = 0; why && i < srv->max; i++)
		if (srv->subs[i].ready)
			q_put(&srv->subs[i], LT_SUB_BYE, &bye, sizeof(bye), why, strlen(why));
	/* a little while for the subscribers that read; a stopped one gets the end alone */
	while (why && left && lt_now_ms() < until) {
		left = false;
		for (unsigned int i = 0; i < srv->max; i++)
			if (srv->subs[i].ready && srv->subs[i].len && sub_send(srv, &srv->subs[i]))
				left |= srv->subs[i].len != 0;
		if (left)
			usleep(10 * 1000);
	}
	for (unsigned int i = 0; i < srv->max; i++)
		if (srv->subs[i].fd >= 0)
			sub_drop(srv, &srv->subs[i]);
	free(srv);
}
