// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/bpfstats.c: keeps the kernel's BPF run-time statistics on
 * (BPF_ENABLE_STATS, BPF_STATS_RUN_TIME) for as long as it runs, so that
 * `bpftool prog show` reports run_time_ns and run_cnt of every program.
 * Prints "on" once they are on, then waits for SIGINT or SIGTERM; the kernel
 * turns them off again when the last such file descriptor is closed.
 * Used by bench/profcost. As root.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void on_signal(int sig)
{
	(void)sig;
}

int main(void)
{
	union bpf_attr attr;
	struct sigaction sa;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	fd = syscall(SYS_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
	if (fd < 0) {
		fprintf(stderr, "bpfstats: BPF_ENABLE_STATS: %s\n", strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("on\n");
	fflush(stdout);
	pause();
	close(fd);
	return 0;
}
