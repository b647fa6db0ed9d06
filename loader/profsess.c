// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The profile session of lowtrace profile and lowtrace alloc (profsess.h): the steps both run,
 * from opening the output to closing it, around what each command attaches and reads.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lowtrace.h"
#include "opts.h"
#include "profsess.h"
#include "profstack.h"

#define STACK_ENTRIES 16384 /* lt_stacks for profile and alloc */

int lt_check_pid(uint32_t pid, char *comm, size_t len)
{
	char path[64];
	int err = lt_check_pid_arg(pid);
	FILE *f;

	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return lt_error(LT_USAGE, "--pid %u: no such process", pid);
	if (!fgets(comm, len, f))
		comm[0] = 0;
	comm[strcspn(comm, "\n")] = 0;
	fclose(f);
	return LT_OK;
}

int lt_psess_open(struct lt_psess *s, const struct lt_psess_opts *o)
{
	const struct lt_probe *row = lt_probe_by_name(o->probe, strlen(o->probe));
	struct lt_load_opts lo = { .ringbuf_size = o->ringbuf_size };
	int ret;

	s->o = *o;
	s->pidfd = -1;
	ret = lt_pout_open(&s->out, o->out, o->fmt->binary);
	if (ret) {
		/* nothing to rename or remove */
		free(s->out.b.p);
		s->out.b.p = NULL;
		return ret;
	}
	s->sy = lt_syms_new();
	if (!s->sy)
		return lt_error(LT_FAIL, "out of memory");
	lo.probes = 1ull << (row - lt_probes);
	lo.pid = o->pid;
	lo.cgroup = o->cgroup;
	ret = lt_suite_open(&lo, &s->suite);
	if (ret)
		return ret;
	lt_suite_set_stacks(s->suite, STACK_ENTRIES);
	return LT_OK;
}

int lt_psess_load(struct lt_psess *s)
{
	int ret;

	lt_prof_uw_size(&s->uw, s->suite, s->sy, s->o.pid, s->o.no_unwind);
	ret = lt_suite_load(s->suite);
	if (ret)
		return ret;
	return lt_prof_uw_start(&s->uw);
}

/* A process first seen by the profile: its maps are read now, while it lives. */
static int on_task(void *ctx, void *data, size_t size)
{
	struct lt_psess *s = ctx;
	const struct lt_probe *p = lt_decode(data, size, &s->rec, &s->ds);
	char comm[LT_COMM_LEN + 1];

	if (!p || s->rec.hdr.type != LT_TYPE_TASK)
		return 0;
	lt_comm_str(comm, ((const struct lt_task *)&s->rec)->comm);
	if (lt_syms_snapshot(s->sy, s->rec.hdr.pid, comm))
		s->snapshots_failed++;
	lt_prof_uw_add(&s->uw, s->rec.hdr.pid);
	return 0;
}

/* A pidfd of the process, -1 without --pid; -2 when it is already gone. */
static int pidfd_of(uint32_t pid)
{
	int fd;

	if (!pid)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno == ESRCH)
		return -2;
	return fd;
}

int lt_psess_start(struct lt_psess *s)
{
	struct lt_handles h;

	if (s->o.notices) {
		lt_suite_handles(s->suite, &h);
		s->ring = lt_ring_open(h.ring_fd, on_task, s);
		if (!s->ring)
			return LT_FAIL;
	}
	if (s->o.pid) {
		s->pidfd = pidfd_of(s->o.pid);
		lt_syms_snapshot(s->sy, s->o.pid, s->comm);
	}
	lt_catch_stop();
	s->t0 = lt_now_ns(CLOCK_MONOTONIC);
	s->t0_real = lt_now_ns(CLOCK_REALTIME);
	return LT_OK;
}

/* readable once the process has exited (zombie or reaped) */
static bool pid_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd == -2 || (pidfd >= 0 && poll(&p, 1, 0) == 1);
}

/* Until --duration, a signal or the end of process --pid (s->exited) */
static int run_loop(struct lt_psess *s)
{
	uint64_t end =
		s->o.duration_s ? lt_now_ns(CLOCK_MONOTONIC) + s->o.duration_s * 1000000000ull : 0;

	while (!lt_stop) {
		int n;

		if (end && lt_now_ns(CLOCK_MONOTONIC) >= end)
			break;
		if (pid_exited(s->pidfd)) {
			s->exited = true;
			break;
		}
		lt_syms_tick(s->sy);
		lt_prof_uw_tick(&s->uw);
		if (!s->ring) {
			usleep(100000);
			continue;
		}
		n = lt_ring_poll(s->ring, 100);
		if (n < 0 && n != -EINTR)
			return lt_error(LT_FAIL, "ring buffer: %s", strerror(-n));
	}
	return LT_OK;
}

int lt_psess_run(struct lt_psess *s)
{
	int ret = run_loop(s);

	s->dur = lt_now_ns(CLOCK_MONOTONIC) - s->t0;
	/* stop counting, then read what is left of the ring (late new processes) */
	lt_suite_detach(s->suite);
	if (s->ring)
		lt_ring_poll(s->ring, 0);
	return ret;
}

static void read_counts(struct lt_suite *s, struct lt_prof_counts *c)
{
	int fd = lt_suite_map_fd(s, "lt_prof_err");

	for (uint32_t i = 0; i < LT_PC_SLOTS; i++)
		if (fd < 0 || lt_percpu_u64(fd, i, &c->c[i]))
			c->c[i] = 0;
}

struct stack_ctx {
	struct lt_syms *sy;
	int fd;
};

static void stack_of(void *ctx, const struct lt_psample *smp, struct lt_sstack *ss)
{
	struct stack_ctx *c = ctx;

	lt_symbolize(c->sy, c->fd, smp->tgid, smp->comm, smp->kstack, smp->ustack, smp->caller, ss);
}

int lt_psess_write(struct lt_psess *s, const struct lt_pkind *kind, const struct lt_psample *smp,
		   size_t n)
{
	struct stack_ctx sc = { s->sy, lt_suite_map_fd(s->suite, "lt_stacks") };
	struct lt_pwriter w = {
		.fmt = s->o.fmt,
		.kind = kind,
		.out = &s->out,
		.stack = stack_of,
		.stack_ctx = &sc,
		.t0_real = s->t0_real,
		.dur = s->dur,
		.ctr = &s->ctr,
		.uw = &s->uw,
	};
	int ret;

	read_counts(s->suite, &s->ctr);
	ret = lt_pwrite(&w, smp, n);
	s->st = w.st;
	return ret;
}

void lt_psess_summary(const struct lt_psess *s, const char *tail)
{
	lt_prof_print_losses(stderr, &s->ctr);
	fprintf(stderr, "%s\n", tail);
	lt_prof_uw_print(stderr, &s->uw, s->ctr.c);
}

int lt_psess_close(struct lt_psess *s, int ret)
{
	if (s->out.b.p)
		ret = lt_pout_close(&s->out, ret == LT_OK) ?: ret;
	lt_ring_free(s->ring);
	lt_suite_free(s->suite);
	lt_prof_uw_free(&s->uw);
	lt_syms_free(s->sy);
	if (s->pidfd >= 0)
		close(s->pidfd);
	return ret;
}
