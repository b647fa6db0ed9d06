// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * startcost: start a tracer and measure what it costs to get going.
 *
 *   startcost [-s STRING] [-m MARKER] [-t TIMEOUT_MS] -- COMMAND [ARGS...]
 *
 * COMMAND runs in its own process group with a pseudo-terminal as stdout and
 * stderr, so stdio is line-buffered as in an interactive shell and every line
 * reaches us as soon as it is printed.
 *
 *   -s STRING  "ready" is the first time STRING appears in the output
 *   -m MARKER  also exec MARKER every 10 ms (from a child of ours, not of
 *              COMMAND) and report when its path first appears in the output:
 *              the time until the tracer really reports an exec
 *   neither    "ready" is COMMAND's exit (for a loader that attaches and exits)
 *
 * Output, one line on stdout:
 *   ready_ms=W1 ready_cpu_ms=C1 first_ms=W2 first_cpu_ms=C2 hwm_kb=K status=S
 * W: wall time since fork; C: CPU time (user+sys) of COMMAND's threads at that
 * moment, from /proc/PID/task/TID/schedstat (ns resolution), or from wait4's
 * rusage when COMMAND has exited; K: peak RSS (VmHWM, or ru_maxrss after an
 * exit); -1 when not measured.
 * Then COMMAND's process group gets SIGINT, and SIGKILL 3 s later.
 * Exit status: 0 when everything asked for was seen, 1 otherwise (COMMAND's
 * output is then copied to stderr), 128+SIG when we got SIGINT, SIGTERM or
 * SIGHUP (COMMAND's group is stopped first: it does not see the terminal's ^C).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX (1 << 20)

static char out[OUT_MAX + 1];
static size_t out_len;
static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of every live thread of pid, in ms; -1 if unreadable. */
static double task_cpu_ms(pid_t pid)
{
	char path[64];
	unsigned long long sum = 0, ns;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char p[320];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		fclose(f);
	}
	closedir(d);
	return sum / 1e6;
}

static long hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static pid_t spawn_marker(const char *marker)
{
	pid_t p = fork();

	if (p == 0) {
		char *const argv[] = { (char *)marker, NULL };
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(marker, argv);
		_exit(127);
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *ready = NULL, *marker = NULL;
	double timeout_ms = 30000, t0, ready_ms = -1, ready_cpu = -1, first_ms = -1, first_cpu = -1,
	       last_mark = 0;
	long hwm = -1;
	int o, master, status = 0, exited = 0, ok;
	pid_t pid;
	struct rusage ru;

	while ((o = getopt(argc, argv, "+s:m:t:")) != -1) {
		switch (o) {
		case 's':
			ready = optarg;
			break;
		case 'm':
			marker = optarg;
			break;
		case 't':
			timeout_ms = atof(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		perror("startcost: pty");
		return 2;
	}
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		perror("startcost: fork");
		return 2;
	}
	if (pid == 0) {
		int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
		int nul = open("/dev/null", O_RDONLY);
		struct termios tio;

		setpgid(0, 0);
		if (slave < 0)
			_exit(126);
		if (!tcgetattr(slave, &tio)) {
			cfmakeraw(&tio); /* no echo, no CR/LF translation */
			tcsetattr(slave, TCSANOW, &tio);
		}
		dup2(nul, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		close(master);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	setpgid(pid, pid);
	{
		/* on Ctrl-C or a timeout, stop COMMAND's group too: it has its own */
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}

	for (;;) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };
		double t = now_ms();
		int want_ready = ready && ready_ms < 0;
		int want_first = marker && first_ms < 0;

		if (!ready && !marker && exited)
			break;
		if (!want_ready && !want_first && (ready || marker))
			break;
		if (exited && (want_ready || want_first))
			break;
		if (t - t0 > timeout_ms || stop_sig)
			break;
		if (marker && want_first && t - last_mark >= 10) {
			pid_t m = spawn_marker(marker);

			if (m > 0)
				waitpid(m, NULL, 0);
			last_mark = now_ms();
		}
		if (poll(&pfd, 1, 2) > 0) {
			ssize_t n = read(master, out + out_len, OUT_MAX - out_len);

			if (n > 0) {
				out_len += n;
				out[out_len] = 0;
				t = now_ms();
				if (ready && ready_ms < 0 && strstr(out, ready)) {
					ready_ms = t - t0;
					ready_cpu = task_cpu_ms(pid);
				}
				if (marker && first_ms < 0 && strstr(out, marker)) {
					first_ms = t - t0;
					first_cpu = task_cpu_ms(pid);
				}
				if (out_len == OUT_MAX) /* keep the tail */
					out_len = 0;
			}
		}
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			/* drain what it printed last */
			for (;;) {
				struct pollfd d = { .fd = master, .events = POLLIN };
				ssize_t n;

				if (poll(&d, 1, 50) <= 0)
					break;
				n = read(master, out + out_len, OUT_MAX - out_len);
				if (n <= 0)
					break;
				out_len += n;
				out[out_len] = 0;
			}
			if (!ready && !marker) {
				ready_ms = now_ms() - t0;
				getrusage(RUSAGE_CHILDREN, &ru);
				hwm = ru.ru_maxrss;
				ready_cpu = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
					    ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
			}
		}
	}
	if (!exited) {
		hwm = hwm_kb(pid);
		int reaped = 0;

		kill(-pid, SIGINT);
		for (double t = now_ms(); now_ms() - t < 3000;) {
			if (!reaped && waitpid(pid, &status, WNOHANG) == pid)
				reaped = 1;
			if (reaped && kill(-pid, 0))
				break;
			usleep(10000);
		}
		kill(-pid, SIGKILL); /* whatever of the group is left */
		if (!reaped)
			waitpid(pid, &status, 0);
	}
	if (stop_sig)
		return 128 + stop_sig;
	ok = (!ready || ready_ms >= 0) && (!marker || first_ms >= 0) &&
	     (ready || marker || (WIFEXITED(status) && WEXITSTATUS(status) == 0));
	printf("ready_ms=%.1f ready_cpu_ms=%.1f first_ms=%.1f first_cpu_ms=%.1f hwm_kb=%ld "
	       "status=%d\n",
	       ready_ms, ready_cpu, first_ms, first_cpu, hwm,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	if (!ok)
		fprintf(stderr, "startcost: %s: not ready; its output:\n%.*s\n", argv[optind],
			(int)(out_len > 4000 ? 4000 : out_len),
			out + (out_len > 4000 ? out_len - 4000 : 0));
	return ok ? 0 : 1;
usage:
	fprintf(stderr, "usage: startcost [-s STRING] [-m MARKER] [-t TIMEOUT_MS] -- COMMAND...\n");
	return 2;
}
