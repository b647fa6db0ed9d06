// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/connhold.c: N live loopback TCP connections, then a fixed workload
 * beside them, in a network namespace of its own. For bench/growth.
 *
 *   connhold -n CONNS [-m WORK_CONNS] [-s BYTES]
 *
 * Enters a new network namespace (needs root) and brings lo up. Holder
 * processes of at most PER_PROC connections each (both ends: two fds per
 * connection, so under 20 000 fds a process) connect to their own listener
 * and keep every connection open. When all hold theirs it prints
 * "held=N ms=T" and waits for a line on stdin; then it runs the workload,
 * WORK_CONNS times connect, accept, send BYTES, receive them, close both
 * ends, prints "work=M ns_per_conn=X" and waits for end of input or another
 * line; then the holders are killed (they also die with it: PDEATHSIG).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PER_PROC 8000
#define MAX_PROCS 64

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "connhold: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)a, sizeof(*a)) || listen(l, 4096) ||
	    getsockname(l, (struct sockaddr *)a, &len))
		die("listener");
	return l;
}

/* one connection to l's address; *srv gets the accepted end */
static int conn(int l, const struct sockaddr_in *a, int *srv)
{
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0 || connect(c, (const struct sockaddr *)a, sizeof(*a)))
		die("connect");
	*srv = accept(l, NULL, NULL);
	if (*srv < 0)
		die("accept");
	return c;
}

static void hold(int n, int ready)
{
	struct sockaddr_in a;
	int l = listener(&a), s;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0; i < n; i++)
		conn(l, &a, &s);
	if (write(ready, "r", 1) != 1)
		die("ready pipe");
	for (;;)
		pause();
}

static void work(int m, size_t bytes)
{
	char *buf = calloc(1, bytes ? bytes : 1);
	unsigned long long t0 = now_ns();
	struct sockaddr_in a;
	int l = listener(&a), c, s;

	for (int i = 0; i < m; i++) {
		size_t got = 0;
		ssize_t r;

		c = conn(l, &a, &s);
		if (bytes && write(c, buf, bytes) != (ssize_t)bytes)
			die("send");
		while (got < bytes && (r = read(s, buf, bytes - got)) > 0)
			got += r;
		close(c);
		close(s);
	}
	close(l);
	printf("work=%d ns_per_conn=%.0f\n", m, (double)(now_ns() - t0) / (m ? m : 1));
	fflush(stdout);
	free(buf);
}

int main(int argc, char **argv)
{
	int n = 0, m = 2000, nprocs, fds[2], ready[MAX_PROCS], opt, sk, ok = 1;
	pid_t pids[MAX_PROCS];
	size_t bytes = 1000;
	struct ifreq ifr;
	unsigned long long t0;
	char line[64], r;

	while ((opt = getopt(argc, argv, "n:m:s:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'm')
			m = atoi(optarg);
		else if (opt == 's')
			bytes = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	nprocs = (n + PER_PROC - 1) / PER_PROC;
	if (n < 0 || nprocs > MAX_PROCS || m < 0) {
		fprintf(stderr, "connhold: -n 0..%d\n", PER_PROC * MAX_PROCS);
		return 2;
	}
	if (unshare(CLONE_NEWNET))
		die("unshare(CLONE_NEWNET)");
	sk = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (sk < 0 || ioctl(sk, SIOCGIFFLAGS, &ifr))
		die("lo flags");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr))
		die("lo up");
	close(sk);
	t0 = now_ns();
	/* a pipe each: a holder that dies closes the only write end of its pipe */
	for (int i = 0; i < nprocs; i++) {
		int share = i < nprocs - 1 ? PER_PROC : n - PER_PROC * (nprocs - 1);

		if (pipe(fds))
			die("pipe");
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (!pids[i]) {
			close(fds[0]);
			hold(share, fds[1]);
		}
		close(fds[1]);
		ready[i] = fds[0];
	}
	for (int i = 0; i < nprocs; i++)
		ok &= read(ready[i], &r, 1) == 1;
	if (ok) {
		printf("held=%d procs=%d ms=%.0f\n", n, nprocs, (now_ns() - t0) / 1e6);
		fflush(stdout);
		/* a line: run the workload; the next line or end of input: stop */
		if (fgets(line, sizeof(line), stdin)) {
			work(m, bytes);
			ok = fgets(line, sizeof(line), stdin) || feof(stdin);
		}
	} else {
		fprintf(stderr, "connhold: a holder failed\n");
	}
	for (int i = 0; i < nprocs; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < nprocs; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < nprocs; i++)
		waitpid(pids[i], NULL, 0);
	return ok ? 0 : 1;
}
