// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/peerwork.c: the units of work bench/peers times tracers on, N of one
 * kind, one after the other; prints "n=N ns_per_unit=X".
 *
 *   peerwork exec N          fork + exec /bin/true + wait
 *   peerwork open N PATH     open + close of PATH
 *   peerwork getppid N       one getppid syscall
 *   peerwork kill N          kill(self, SIGUSR1), ignored
 *   peerwork yield N         sched_yield ping-pong of two threads on one CPU
 *   peerwork dwrite N PATH   one 4 KiB O_DIRECT write (and its completion)
 *   peerwork connect N       one loopback TCP connection, 10 bytes each way
 *   peerwork cgroup N DIR    mkdir + rmdir of a cgroup below DIR
 *   peerwork chmod N PATH    fchmodat of PATH, 0600 and 0644 in turn (file)
 *   peerwork setresuid N     setresuid(-1, -1, -1): a credential call that changes nothing (cred)
 *   peerwork setns N         setns into this process's own UTS namespace (priv)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long n_yield;

static void *yielder(void *arg)
{
	(void)arg;
	for (long i = 0; i < n_yield; i++)
		sched_yield();
	return NULL;
}

static void pin_cpu0(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(0, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		die("sched_setaffinity");
}

static void one_connect(int l, struct sockaddr_in *a)
{
	char buf[10];
	int c = socket(AF_INET, SOCK_STREAM, 0), s;

	if (c < 0 || connect(c, (struct sockaddr *)a, sizeof(*a)))
		die("connect");
	s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept");
	memset(buf, 'x', sizeof(buf));
	if (write(c, buf, 10) != 10 || read(s, buf, 10) != 10 || write(s, buf, 10) != 10 ||
	    read(c, buf, 10) != 10)
		die("transfer");
	close(c);
	close(s);
}

/* spin: every CPU busy in user space for n milliseconds (the profilers' samples) */
static void spin_all(long ms)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	for (long c = 0; c < ncpu; c++) {
		pid_t p = fork();

		if (p == 0) {
			unsigned long long end = now_ns() + (unsigned long long)ms * 1000000;
			volatile unsigned long x = 0;

			while (now_ns() < end)
				for (int k = 0; k < 10000; k++)
					x += k;
			_exit(0);
		}
		if (p < 0)
			die("fork");
	}
	while (wait(NULL) > 0)
		;
}

int main(int argc, char **argv)
{
	unsigned long long t0, t1;
	const char *mode;
	long n, i;

	if (argc < 3) {
		fprintf(stderr, "usage: peerwork MODE N [PATH]\n");
		return 2;
	}
	mode = argv[1];
	n = atol(argv[2]);
	if (!strcmp(mode, "kill"))
		signal(SIGUSR1, SIG_IGN);
	t0 = now_ns();
	if (!strcmp(mode, "exec")) {
		for (i = 0; i < n; i++) {
			pid_t p = fork();

			if (p == 0) {
				char *const av[] = { "true", NULL }, *const env[] = { NULL };

				execve("/bin/true", av, env);
				_exit(127);
			}
			if (p < 0 || waitpid(p, NULL, 0) < 0)
				die("fork");
		}
	} else if (!strcmp(mode, "open") && argc > 3) {
		for (i = 0; i < n; i++) {
			int fd = open(argv[3], O_RDONLY);

			if (fd < 0)
				die("open");
			close(fd);
		}
	} else if (!strcmp(mode, "getppid")) {
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else if (!strcmp(mode, "kill")) {
		for (i = 0; i < n; i++)
			kill(getpid(), SIGUSR1);
	} else if (!strcmp(mode, "yield")) {
		pthread_t t;

		pin_cpu0();
		n_yield = n / 2;
		t0 = now_ns();
		if (pthread_create(&t, NULL, yielder, NULL))
			die("pthread_create");
		yielder(NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "dwrite") && argc > 3) {
		void *buf;
		int fd = open(argv[3], O_WRONLY | O_CREAT | O_DIRECT | O_TRUNC, 0600);

		if (fd < 0 || posix_memalign(&buf, 4096, 4096))
			die("open O_DIRECT");
		memset(buf, 'x', 4096);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			if (pwrite(fd, buf, 4096, (i % 256) * 4096) != 4096)
				die("pwrite");
		close(fd);
	} else if (!strcmp(mode, "cgroup") && argc > 3) {
		char d[4096];

		snprintf(d, sizeof(d), "%s/lt-peerwork-%d", argv[3], (int)getpid());
		t0 = now_ns();
		for (i = 0; i < n; i++)
			if (mkdir(d, 0755) || rmdir(d))
				die("mkdir/rmdir");
	} else if (!strcmp(mode, "chmod") && argc > 3) {
		for (i = 0; i < n; i++)
			if (fchmodat(AT_FDCWD, argv[3], i & 1 ? 0644 : 0600, 0))
				die("fchmodat");
	} else if (!strcmp(mode, "setresuid")) {
		for (i = 0; i < n; i++)
			if (syscall(SYS_setresuid, -1, -1, -1))
				die("setresuid");
	} else if (!strcmp(mode, "setns")) {
		int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die("open /proc/self/ns/uts");
		t0 = now_ns();
		for (i = 0; i < n; i++)
			if (setns(fd, CLONE_NEWUTS))
				die("setns");
		close(fd);
	} else if (!strcmp(mode, "spin")) {
		spin_all(n);
	} else if (!strcmp(mode, "connect")) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t len = sizeof(a);
		int l = socket(AF_INET, SOCK_STREAM, 0);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 8) ||
		    getsockname(l, (struct sockaddr *)&a, &len))
			die("listen");
		t0 = now_ns();
		for (i = 0; i < n; i++)
			one_connect(l, &a);
		close(l);
	} else {
		fprintf(stderr, "peerwork: unknown mode '%s' (or a PATH missing)\n", mode);
		return 2;
	}
	t1 = now_ns();
	printf("n=%ld ns_per_unit=%.0f\n", n, n ? (double)(t1 - t0) / n : 0.0);
	return 0;
}
