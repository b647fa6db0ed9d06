// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `threadstorm N FIFO` prints its pid, waits for SIGUSR1 (so a test can load a tracer for this
 * pid first), then starts N threads (64 KiB stacks) that each open FIFO read-only, which blocks
 * until a writer comes. Once /proc shows every one of them blocked in openat, the main thread
 * opens FIFO for writing and all N return. Exit 0 when all N got a valid fd.
 *
 * Every openat of this program after the signal is its own, through syscall(2) (no libc call
 * that may open a file): it prints their number, "openat calls M", for an exact count.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STACK (64 * 1024)

static const char *fifo;
static long opens; /* openat calls of the main thread */

struct slot {
	pthread_t t;
	int tid; /* set by the thread before its open */
	int fd;
};

static int sys_openat(const char *path, int flags)
{
	return syscall(SYS_openat, AT_FDCWD, path, flags, 0);
}

static void *opener(void *arg)
{
	struct slot *s = arg;

	__atomic_store_n(&s->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	s->fd = sys_openat(fifo, O_RDONLY);
	return NULL;
}

/* the syscall `tid` is blocked in (/proc/self/task/TID/syscall), -1 if it runs or on error */
static long blocked_in(int tid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	opens++;
	fd = sys_openat(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1; /* "running" */
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

static void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct rlimit r;
	pthread_attr_t attr;
	struct slot *s;
	sigset_t usr1;
	long n, i, started, ok = 0;
	int sig, wfd, err;

	if (argc != 3 || (n = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: threadstorm N FIFO\n");
		return 2;
	}
	fifo = argv[2];
	s = calloc(n, sizeof(*s));
	if (!s)
		return 1;
	/* N read ends and a write end: hard up to that where privileges allow, soft to hard */
	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_max < (rlim_t)n + 16) {
		struct rlimit up = { n + 16, n + 16 };

		if (!setrlimit(RLIMIT_NOFILE, &up))
			r = up;
	}
	r.rlim_cur = r.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur < (rlim_t)n + 16) {
		fprintf(stderr, "threadstorm: %ld threads need %ld fds\n", n, n + 16);
		return 2;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	printf("%d\n", getpid());
	fflush(stdout);
	sigwait(&usr1, &sig);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK);
	for (started = 0; started < n; started++) {
		s[started].fd = -1;
		err = pthread_create(&s[started].t, &attr, opener, &s[started]);
		if (err) {
			fprintf(stderr, "threadstorm: thread %ld: %s\n", started, strerror(err));
			break;
		}
	}
	/* a thread seen blocked in openat stays there until the FIFO has a writer */
	for (i = 0; i < started; i++) {
		while (!__atomic_load_n(&s[i].tid, __ATOMIC_ACQUIRE))
			nap();
		while (blocked_in(s[i].tid) != SYS_openat)
			nap();
	}
	if (started == n)
		printf("threadstorm: %ld threads blocked in openat at once\n", n);
	opens++;
	wfd = sys_openat(fifo, O_WRONLY);
	if (wfd < 0) {
		/* the threads stay blocked: exit kills them */
		fprintf(stderr, "threadstorm: open %s for writing: %s\n", fifo, strerror(errno));
		return 1;
	}
	for (i = 0; i < started; i++) {
		pthread_join(s[i].t, NULL);
		if (s[i].fd >= 0) {
			ok++;
			close(s[i].fd);
		}
	}
	printf("threadstorm: %ld opens returned an fd; openat calls %ld\n", ok, opens + started);
	return ok == n ? 0 : 1;
}
