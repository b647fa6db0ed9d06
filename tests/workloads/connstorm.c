// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `connstorm N WORKERS` holds N TCP connections over 127.0.0.1 live at the same time, then
 * closes them all. Run it in a network namespace of its own with the whole port range
 * (net.ipv4.ip_local_port_range "1024 65535"): one worker's connections share one listener,
 * so each needs an ephemeral port of its own.
 *
 * WORKERS processes each listen, connect their share one at a time (connect, accept, 10 bytes
 * each way), report ready and wait; when all are ready the parent releases them and they close
 * everything. Exit 0 and one line on stdout only when every connection succeeded.
 *
 * `connstorm N WORKERS FIFO`: once all are live (the line is out), the release waits for a
 * writer of FIFO to close it: a test changes something while they are live.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAYLOAD 10
#define FDS_SPARE 16 /* stdio, pipes, listener */

static const char *me = "connstorm";

static int rw_all(int fd, char *buf, int n, int writing)
{
	int done = 0, r;

	while (done < n) {
		r = writing ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

/* one connection: connect, accept, PAYLOAD bytes each way, both ends checked */
static int one(int lfd, const struct sockaddr_in *a, int *cfd, int *sfd, long i)
{
	char out[PAYLOAD + 1], in[PAYLOAD];

	snprintf(out, sizeof(out), "%010ld", i);
	*cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (*cfd < 0) {
		fprintf(stderr, "%s: socket: %s\n", me, strerror(errno));
		return -1;
	}
	/* blocking: on loopback the handshake is done when connect returns */
	if (connect(*cfd, (const struct sockaddr *)a, sizeof(*a))) {
		fprintf(stderr, "%s: connect #%ld: %s\n", me, i, strerror(errno));
		return -1;
	}
	*sfd = accept(lfd, NULL, NULL);
	if (*sfd < 0) {
		fprintf(stderr, "%s: accept #%ld: %s\n", me, i, strerror(errno));
		return -1;
	}
	if (rw_all(*cfd, out, PAYLOAD, 1) || rw_all(*sfd, in, PAYLOAD, 0) ||
	    memcmp(in, out, PAYLOAD) || rw_all(*sfd, in, PAYLOAD, 1) ||
	    rw_all(*cfd, out, PAYLOAD, 0) || memcmp(in, out, PAYLOAD)) {
		fprintf(stderr, "%s: connection #%ld: transfer failed\n", me, i);
		return -1;
	}
	return 0;
}

/* a worker: n connections, 'R' (or 'E') on `ready`, then waits for EOF on `go` */
static int worker(long n, int ready, int go)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lfd, *fds, rc = 0;
	char c = 'R';
	long i;

	fds = calloc(2 * n, sizeof(*fds));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!fds || lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		fprintf(stderr, "%s: listener: %s\n", me, strerror(errno));
		c = 'E';
		n = 0;
	}
	for (i = 0; i < n; i++) {
		fds[2 * i] = fds[2 * i + 1] = -1;
		if (one(lfd, &a, &fds[2 * i], &fds[2 * i + 1], i)) {
			c = 'E';
			n = i + 1;
			break;
		}
	}
	if (write(ready, &c, 1) != 1)
		c = 'E';
	close(ready);
	/* EOF: the parent has seen every worker ready (or one fail) */
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	for (i = 0; i < 2 * n; i++) {
		if (fds[i] >= 0 && close(fds[i]))
			rc = 1;
	}
	return rc || c == 'E';
}

/* soft to hard, and hard up to `need` where privileges allow (a guest's default hard is 4096) */
static int raise_nofile(rlim_t need)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return -1;
	if (r.rlim_max < need) {
		struct rlimit up = { need, need };

		if (!setrlimit(RLIMIT_NOFILE, &up))
			return 0;
	}
	r.rlim_cur = r.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &r))
		return -1;
	return r.rlim_cur >= need ? 0 : -1;
}

int main(int argc, char **argv)
{
	int ready[2], go[2], fail = 0, st;
	long n, w, i, share, got = 0;
	char c;
	pid_t *pids;

	if ((argc != 3 && argc != 4) || (n = atol(argv[1])) < 1 || (w = atol(argv[2])) < 1 ||
	    w > n) {
		fprintf(stderr, "usage: %s N WORKERS [FIFO] (1 <= WORKERS <= N)\n", me);
		return 2;
	}
	share = (n + w - 1) / w;
	if (raise_nofile(2 * share + FDS_SPARE)) {
		fprintf(stderr, "%s: %ld connections per worker need %ld fds: more workers\n", me,
			share, 2 * share + FDS_SPARE);
		return 2;
	}
	pids = calloc(w, sizeof(*pids));
	if (!pids || pipe(ready) || pipe(go))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < w; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "%s: fork: %s\n", me, strerror(errno));
			fail = 1;
			w = i;
			break;
		}
		if (!pids[i]) {
			close(ready[0]);
			close(go[1]);
			_exit(worker(n / w + (i < n % w), ready[1], go[0]));
		}
	}
	close(ready[1]);
	close(go[0]);
	/* every worker writes one byte then closes: EOF early means one died */
	while (got < w) {
		ssize_t r = read(ready[0], &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1) {
			fail = 1;
			break;
		}
		got++;
		if (c != 'R')
			fail = 1;
	}
	if (!fail)
		printf("%s: %ld connections live at once\n", me, n);
	fflush(stdout);
	if (!fail && argc == 4) {
		int fd = open(argv[3], O_RDONLY);

		for (ssize_t r = 1; fd >= 0 && (r > 0 || (r < 0 && errno == EINTR));)
			r = read(fd, &c, 1);
		if (fd < 0)
			fail = 1;
		else
			close(fd);
	}
	close(go[1]);
	for (i = 0; i < w; i++) {
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			fail = 1;
	}
	return fail;
}
