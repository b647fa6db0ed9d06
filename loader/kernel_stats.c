// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A probe's counters (kernel_stats.h): lt_stats summed over CPUs at the value size of the
 * lowtrace that loaded it, the kernel's run statistics and recursion misses of its programs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_int.h"
#include "kernel_stats.h"
#include "kernel_sweep.h"
#include "lowtrace.h"

/* A fd of the program behind a pinned link of probe r, or -1. */
static int pinned_prog_fd(const struct lt_probe *r, const char *prog)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	char path[PATH_MAX];
	int lfd, pfd = -1, e = EPERM;

	snprintf(path, sizeof(path), "%s/links/%s", LT_PIN_DIR, lt_link_name(prog));
	lfd = bpf_obj_get(path);
	/* a syscall-set program's links are one per syscall */
	for (int n = 0; lfd < 0 && n < LT_PROBE_NSYS && r->syscalls[n]; n++) {
		snprintf(path, sizeof(path), "%s/links/%s-%s", LT_PIN_DIR, lt_link_name(prog),
			 r->syscalls[n]);
		lfd = bpf_obj_get(path);
	}
	if (lfd < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(lfd, &li, &len) == 0) {
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		e = errno;
	}
	close(lfd);
	if (pfd >= 0 || e != EPERM)
		return pfd;
	/* by id needs CAP_SYS_ADMIN: a --pin-group suite pins its programs for its readers */
	snprintf(path, sizeof(path), "%s/progs/%s", LT_PIN_DIR, prog);
	return bpf_obj_get(path);
}

int lt_stats_open(struct lt_stats_reader *r, const struct lt_handles *h)
{
	struct bpf_map_info mi = {};
	__u32 mlen = sizeof(mi);

	memset(r->prog_fd, -1, sizeof(r->prog_fd));
	r->percpu = NULL;
	if (h->suite) {
		r->sweep_fd = bpf_map__fd(h->suite->skel->maps.lt_sweep);
		r->sweep_fd = r->sweep_fd >= 0 ? fcntl(r->sweep_fd, F_DUPFD_CLOEXEC, 0) : -1;
	} else {
		r->sweep_fd = pin_get_ro(LT_PIN_DIR "/maps/lt_sweep"); /* -1: no tcp, or older */
	}
	/* the syscall-set probes' counts per op, where one is loaded */
	if (h->suite) {
		r->ops_fd = bpf_map__fd(h->suite->skel->maps.lt_op_counts);
		r->ops_fd = r->ops_fd >= 0 ? fcntl(r->ops_fd, F_DUPFD_CLOEXEC, 0) : -1;
	} else {
		r->ops_fd = pin_get_ro(LT_PIN_DIR "/maps/lt_op_counts");
	}
	r->ops = NULL;
	r->fd = h->stats_fd;
	r->ncpu = libbpf_num_possible_cpus();
	if (r->ncpu <= 0)
		return lt_error(LT_FAIL, "cannot count possible CPUs");
	/* the suite may come from another lowtrace: its lt_stat may be smaller
	 * (older) or larger (newer); read what both know, per CPU */
	r->vsize = sizeof(struct lt_stat);
	if (bpf_obj_get_info_by_fd(r->fd, &mi, &mlen) == 0 && mi.value_size)
		r->vsize = mi.value_size;
	r->stride = (r->vsize + 7) & ~7u;
	r->percpu = calloc(r->ncpu, r->stride);
	if (r->ops_fd >= 0)
		r->ops = calloc(r->ncpu, sizeof(*r->ops));
	if (!r->percpu || (r->ops_fd >= 0 && !r->ops))
		return lt_error(LT_FAIL, "out of memory");
	for (size_t i = 0; i < lt_nprobes; i++) {
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			int *fd = &r->prog_fd[lt_probes[i].id][k];

			if (!h->suite) {
				*fd = pinned_prog_fd(&lt_probes[i], lt_probes[i].progs[k]);
			} else if (h->suite->links[lt_probes[i].id][k]) {
				struct bpf_program *p = bpf_object__find_program_by_name(
					h->suite->skel->obj, lt_probes[i].progs[k]);

				*fd = p ? fcntl(bpf_program__fd(p), F_DUPFD_CLOEXEC, 0) : -1;
			}
		}
	}
	return LT_OK;
}

int lt_stats_read(struct lt_stats_reader *r, const struct lt_probe *p, struct lt_counts *sum)
{
	__u32 key = p->id;
	uint64_t skipped = 0;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(r->fd, &key, r->percpu))
		return -errno;
	for (int c = 0; c < r->ncpu; c++) {
		struct lt_stat v = {};

		memcpy(&v, (char *)r->percpu + (size_t)c * r->stride,
		       r->vsize < sizeof(v) ? r->vsize : sizeof(v));
		sum->events += v.events;
		sum->drops += v.drops;
		sum->recovered += v.recovered;
		sum->cg_full += v.cg_full;
		sum->throttled += v.throttled;
		sum->shed += v.shed;
		sum->unseen += v.unseen; /* the hash's reaper */
	}
	for (int k = 0; k < LT_PROBE_PROGS && p->progs[k]; k++) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);
		int fd = r->prog_fd[p->id][k];

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &pi, &len))
			continue;
		sum->run_cnt += pi.run_cnt;
		sum->run_time_ns += pi.run_time_ns;
		/* a fallback is skipped only while it runs already: its main program
		 * handles those events; exec's ancestry bookkeeping writes no record (a skip
		 * of it shows as an ancestor missing) */
		if (!lt_prog_is_fallback(p->progs[k]) && !lt_prog_writes_no_record(p, p->progs[k]))
			skipped += pi.recursion_misses;
	}
	sum->missed = skipped > sum->recovered ? skipped - sum->recovered : 0;
	if (p->id >= LT_PROBE_FILE && p->id < LT_PROBE_FILE + LT_OP_PROBES && r->ops &&
	    bpf_map_lookup_elem(r->ops_fd, &(__u32){ 0 }, r->ops) == 0)
		for (int c = 0; c < r->ncpu; c++)
			for (int o = 0; o < LT_OP_SLOTS; o++)
				sum->ops[o] += r->ops[c].n[p->id - LT_PROBE_FILE][o];
	if (p->id == LT_PROBE_TCP && r->sweep_fd >= 0) {
		struct lt_sweep st;

		if (lt_sweep_state(r->sweep_fd, &st) == 0)
			sum->unseen += st.unseen; /* socket storage's balance */
	}
	return 0;
}

void lt_stats_close(struct lt_stats_reader *r)
{
	free(r->percpu);
	r->percpu = NULL;
	free(r->ops);
	r->ops = NULL;
	if (r->ops_fd >= 0)
		close(r->ops_fd);
	r->ops_fd = -1;
	if (r->sweep_fd >= 0)
		close(r->sweep_fd);
	r->sweep_fd = -1;
	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		for (int k = 0; k < LT_PROBE_PROGS; k++)
			if (r->prog_fd[i][k] >= 0) {
				close(r->prog_fd[i][k]);
				r->prog_fd[i][k] = -1;
			}
}

int lt_enable_stats(int *fd)
{
	*fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (*fd < 0)
		return lt_error(errno == EPERM ? LT_ENV : LT_FAIL,
				"cannot enable BPF run-time statistics: %s", strerror(errno));
	return LT_OK;
}
