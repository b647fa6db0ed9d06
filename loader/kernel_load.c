// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A suite loaded, attached (by the table, or by hand: perf events, uprobes) and pinned;
 * detached and freed (kernel_suite.h). On failure nothing stays attached or pinned.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ident.h"
#include "kernel_int.h"
#include "kernel_sweep.h"
#include "kernel_suite.h"
#include "lowtrace.h"
#include "lt_unwind.h"

struct lt_uw_row *lt_suite_unwind_rows(struct lt_suite *s, uint32_t *cap)
{
	struct bpf_map *m = s->skel->maps.lt_uw_rows;
	size_t len = (size_t)bpf_map__max_entries(m) * sizeof(struct lt_uw_row);
	void *p;

	if (!s->uw_rows) {
		/* the kernel maps whole pages of an mmapable array */
		len = (len + 4095) & ~(size_t)4095;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
		if (p == MAP_FAILED)
			return NULL;
		s->uw_rows = p;
		s->uw_len = len;
	}
	*cap = bpf_map__max_entries(m);
	return s->uw_rows;
}

int lt_suite_unwind_proc(struct lt_suite *s, uint32_t tgid, const struct lt_uw_proc *p)
{
	int fd = bpf_map__fd(s->skel->maps.lt_uw_procs);

	if (!p)
		return bpf_map_delete_elem(fd, &tgid) ? -errno : 0;
	return bpf_map_update_elem(fd, &tgid, p, BPF_ANY) ? -errno : 0;
}

struct seed {
	int fd;
	uint64_t seeded, full;
};

static void seed_one(void *ctx, uint64_t id, const char *path, size_t len)
{
	struct seed *sd = ctx;
	struct lt_cg_name n = { .flags = LT_CGN_SEEDED };

	if (!len) {
		path = "/";
		len = 1;
	}
	if (len >= LT_CG_PATH) {
		len = LT_CG_PATH - 1;
		n.flags |= LT_CGN_CUT;
	}
	memcpy(n.path, path, len);
	n.path_len = len;
	for (size_t i = 1; i < len; i++)
		n.level += path[i] == '/';
	n.level += len > 1;
	/* NOEXIST: a mkdir's own entry, made since the attach, is the better one */
	if (!bpf_map_update_elem(sd->fd, &id, &n, BPF_NOEXIST))
		sd->seeded++;
	else if (errno == E2BIG)
		sd->full++;
}

/*
 * The cgroup tracker first, then the names of the cgroups that were there before it (one
 * walk): in that order no cgroup made meanwhile goes unnamed.
 */
static int attach_cgroups(struct lt_suite *s)
{
	struct seed sd = { .fd = bpf_map__fd(s->skel->maps.lt_cg_names) };
	struct lt_cg_stat cs = {};
	__u32 one = 1;

	for (int i = 0; i < 3; i++) {
		s->cg_links[i] = bpf_program__attach(cg_prog(s, i));
		if (!s->cg_links[i])
			return lt_error(LT_FAIL, "cannot attach the cgroup tracker (%s): %s",
					bpf_program__name(cg_prog(s, i)), strerror(errno));
	}
	if (!s->cg_mnt[0])
		return LT_OK;
	lt_ident_walk(s->cg_mnt, seed_one, &sd);
	cs.seeded = sd.seeded;
	cs.full = sd.full;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lt_cg_stat), &one, &cs, 0))
		return lt_error(LT_FAIL, "cannot count the cgroup seed: %s", strerror(errno));
	return LT_OK;
}

/* Has the kernel the classic tracepoint syscalls/NAME (tracefs is mounted: choose_programs)? */
static bool syscall_tp_exists(const char *name)
{
	static const char *const roots[] = { "/sys/kernel/debug/tracing", LT_TRACEFS };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/syscalls/%s/id", roots[i], name);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/*
 * Program k of syscall-set probe i, on a classic syscall tracepoint: attached to that
 * tracepoint of each syscall of the row the kernel has (an architecture or an older kernel
 * lacks some); at least one, or the probe would watch nothing.
 */
static int attach_syscalls(struct lt_suite *s, size_t i, int k, struct bpf_program *p)
{
	const struct lt_probe *r = &lt_probes[i];
	const char *sec = bpf_program__section_name(p) + strlen("tracepoint/syscalls/");
	const char *dir = strncmp(sec, "sys_enter_", 10) ? "sys_exit_" : "sys_enter_";
	struct bpf_link **first = &s->links[r->id][k];
	char tp[64];

	for (int n = 0; n < LT_PROBE_NSYS && r->syscalls[n]; n++) {
		struct bpf_link *l;

		snprintf(tp, sizeof(tp), "%s%s", dir, r->syscalls[n]);
		if (!syscall_tp_exists(tp))
			continue;
		l = bpf_program__attach_tracepoint(p, "syscalls", tp);
		if (!l)
			return lt_error(LT_FAIL, "cannot attach probe %s (%s) to %s: %s", r->name,
					r->progs[k], tp, strerror(errno));
		s->sys_links[r->id][k][n] = l;
		if (!*first)
			*first = l;
	}
	if (!*first)
		return lt_error(LT_ENV, "probe %s: the kernel has none of its syscalls' tracepoints",
				r->name);
	return LT_OK;
}

/* exec's ancestry: processes started from now on have an entry (progs/exec.bpf.c) */
static void set_anc_since(struct lt_suite *s)
{
	struct timespec ts;

	if (s->skel->bss && clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
		s->skel->bss->lt_anc_since = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int load_attach(struct lt_suite *s)
{
	struct bpf_program *p;
	int err;

	if (!s->al_leaks) {
		/* preallocated, and unused without --leaks */
		bpf_map__set_max_entries(s->skel->maps.lt_al_live, 1);
		bpf_map__set_max_entries(s->skel->maps.lt_al_pend, 1);
	}
	err = lowtrace__load(s->skel);
	if (err)
		return lt_error(err == -EPERM ? LT_ENV : LT_FAIL,
				"cannot load the BPF programs: %s%s", strerror(-err),
				lt_verbose ? "" : " (rerun with -v for the verifier log)");
	if (bpf_map__fd(s->skel->maps.lt_sweep) >= 0) {
		struct lt_sweep w = { .netns = s->skel->rodata->lt_cfg_netns };
		__u32 key = 0;

		/* whose namespace socket storage's sweep counts: sweepers elsewhere do not */
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lt_sweep), &key, &w, 0))
			return lt_error(LT_FAIL, "cannot set the tcp sweep: %s", strerror(errno));
	}
	if (s->cg_fd >= 0 && s->cg_ctrl == LT_CTRL_V2) {
		/* a v1 one is tested by id (lt_cg_under): no cgroup array */
		__u32 key = 0, val = s->cg_fd;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lt_cgroup), &key, &val, 0))
			return lt_error(LT_FAIL, "cannot set the cgroup filter: %s",
					strerror(errno));
	}
	err = attach_cgroups(s);
	if (err)
		return err;
	/*
	 * Before the probes' attach: with --replace the old and the new suite both record from
	 * the attach until the old one goes, and the walk of /proc would widen that window. A
	 * process that forks or execs between the seed and the attach has no entry: its
	 * children's execs count it unknown.
	 */
	err = lt_seed_procs(s);
	if (err)
		return err;
	for (size_t i = 0; i < lt_nprobes; i++) {
		if (!((s->probes >> i) & 1))
			continue;
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			struct bpf_link **l = &s->links[lt_probes[i].id][k];
			enum bpf_prog_type t;

			p = bpf_object__find_program_by_name(s->skel->obj, lt_probes[i].progs[k]);
			t = bpf_program__type(p);
			if (!bpf_program__autoload(p))
				continue; /* a *_tp program where tracepoints are not preemptible */
			if (t == BPF_PROG_TYPE_PERF_EVENT || t == BPF_PROG_TYPE_KPROBE)
				continue; /* lt_attach_perf, lt_attach_uprobe */
			if (lt_probes[i].syscalls[0] && lt_prog_on_syscall_tp(p)) {
				if ((err = attach_syscalls(s, i, k, p)))
					return err;
				continue;
			}
			*l = bpf_program__attach(p);
			if (*l)
				continue;
			return lt_error(LT_FAIL, "cannot attach probe %s (%s): %s",
					lt_probes[i].name, lt_probes[i].progs[k], strerror(errno));
		}
		for (int k = 0; k < LT_PROBE_ITERS && lt_probes[i].iters[k]; k++) {
			p = bpf_object__find_program_by_name(s->skel->obj, lt_probes[i].iters[k]);
			if (!bpf_program__autoload(p))
				continue; /* the hash's reaper sweeps instead */
			s->iters[lt_probes[i].id][k] = bpf_program__attach_iter(p, NULL);
			if (!s->iters[lt_probes[i].id][k])
				return lt_error(LT_FAIL, "cannot attach probe %s (%s): %s",
						lt_probes[i].name, lt_probes[i].iters[k],
						strerror(errno));
		}
	}
	set_anc_since(s);
	err = lt_sweep_base(s, bpf_map__fd(s->skel->maps.lt_stats));
	if (err)
		return err;
	return s->pin ? pin_suite(s) : LT_OK;
}

int lt_suite_load(struct lt_suite *s)
{
	int ret = load_attach(s);

	/* nothing stays attached; the programs and maps go with lt_suite_free */
	if (ret)
		lt_suite_detach(s);
	if (s->cg_fd >= 0) {
		close(s->cg_fd);
		s->cg_fd = -1;
	}
	if (s->lock_fd >= 0) {
		close(s->lock_fd);
		s->lock_fd = -1;
	}
	return ret;
}

static int add_extra(struct lt_suite *s, struct bpf_link *l)
{
	if (s->nextra == LT_EXTRA_LINKS) {
		bpf_link__destroy(l);
		return -E2BIG;
	}
	s->extra[s->nextra++] = l;
	return 0;
}

/* A per-CPU sampling event at freq Hz: the fd, or -errno. */
static int open_sampler(int cpu, uint32_t type, uint64_t config, unsigned int freq)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = type,
		.config = config,
		.freq = 1,
		.sample_freq = freq,
	};
	int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int lt_attach_perf(struct lt_suite *s, const char *prog, unsigned int freq, const char **event)
{
	struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, prog);
	uint32_t type = PERF_TYPE_HARDWARE;
	uint64_t config = PERF_COUNT_HW_CPU_CYCLES;
	int ncpu = libbpf_num_possible_cpus();
	bool any = false;

	if (!p || ncpu <= 0)
		return lt_error(LT_FAIL, "program %s missing from the object", prog);
	*event = "cycles";
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct bpf_link *l;
		int fd = open_sampler(cpu, type, config, freq);

		if (fd == -ENOENT || fd == -EOPNOTSUPP) {
			if (type == PERF_TYPE_HARDWARE) {
				/* no hardware counters (a VM): the software clock */
				type = PERF_TYPE_SOFTWARE;
				config = PERF_COUNT_SW_CPU_CLOCK;
				*event = "cpu-clock";
				cpu--;
			}
			continue;
		}
		if (fd == -ENODEV)
			continue; /* a possible CPU that is not online */
		if (fd < 0)
			return lt_error(fd == -EACCES || fd == -EPERM ? LT_ENV : LT_FAIL,
					"cannot open a perf event on CPU %d: %s", cpu,
					strerror(-fd));
		l = bpf_program__attach_perf_event(p, fd);
		if (!l) {
			int e = errno;

			close(fd);
			return lt_error(LT_FAIL, "cannot attach %s to CPU %d: %s", prog, cpu,
					strerror(e));
		}
		if (add_extra(s, l))
			return lt_error(LT_FAIL, "too many links");
		any = true;
	}
	if (!any)
		return lt_error(LT_ENV, "no CPU has a %s event", *event);
	return LT_OK;
}

int lt_attach_uprobe(struct lt_suite *s, const char *prog, int pid, const char *path, uint64_t off,
		     bool ret)
{
	struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, prog);
	struct bpf_link *l;

	if (!p)
		return lt_error(LT_FAIL, "program %s missing from the object", prog);
	l = bpf_program__attach_uprobe(p, ret, pid, path, off);
	if (!l)
		return lt_error(LT_FAIL, "cannot attach a %s at %s+0x%llx: %s",
				ret ? "uretprobe" : "uprobe", path, (unsigned long long)off,
				strerror(errno));
	if (add_extra(s, l))
		return lt_error(LT_FAIL, "too many links");
	return LT_OK;
}

int lt_suite_map_fd(struct lt_suite *s, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, name);

	return m ? bpf_map__fd(m) : -1;
}

void lt_suite_detach(struct lt_suite *s)
{
	for (int i = 0; i < s->nextra; i++)
		bpf_link__destroy(s->extra[i]);
	s->nextra = 0;
	for (int i = 0; i < 3; i++) {
		bpf_link__destroy(s->cg_links[i]);
		s->cg_links[i] = NULL;
	}
	for (int i = 0; i < LT_PROBE_SLOTS; i++) {
		for (int k = 0; k < LT_PROBE_PROGS; k++) {
			/* a syscall-set program's first link is in both */
			bool set = false;

			for (int n = 0; n < LT_PROBE_NSYS; n++) {
				set |= s->sys_links[i][k][n] != NULL;
				bpf_link__destroy(s->sys_links[i][k][n]);
				s->sys_links[i][k][n] = NULL;
			}
			if (!set)
				bpf_link__destroy(s->links[i][k]); /* a pinned link stays attached */
			s->links[i][k] = NULL;
		}
		for (int k = 0; k < LT_PROBE_ITERS; k++) {
			bpf_link__destroy(s->iters[i][k]);
			s->iters[i][k] = NULL;
		}
	}
}

void lt_suite_free(struct lt_suite *s)
{
	if (!s)
		return;
	lt_suite_detach(s);
	if (s->uw_rows)
		munmap(s->uw_rows, s->uw_len);
	lowtrace__destroy(s->skel);
	if (s->cg_fd >= 0)
		close(s->cg_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s);
}
