// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowtrace profile: load the profile (or offcpu) probe of the one object on demand
 * (unpinned), let the kernel aggregate by stack, read the aggregates once at the end,
 * symbolize and write folded stacks, pprof or JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "kernel.h"
#include "lowtrace.h"
#include "lt_prof.h"
#include "opts.h"
#include "out.h"
#include "profsess.h"

struct prof_opts {
	struct lt_psess_opts s;
	unsigned int freq;
	bool off_cpu;
};

static const char *const prof_fmts[] = { "folded", "pprof", "json", NULL };

static unsigned int max_freq(void)
{
	unsigned int v = 100000;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");

	if (f) {
		if (fscanf(f, "%u", &v) != 1 || !v)
			v = 100000;
		fclose(f);
	}
	return v;
}

static const int prof_keys[] = { LT_O_FREQ,   LT_O_PID,    LT_O_CGROUP, LT_O_DURATION,
				 LT_O_OFF_CPU, LT_O_FORMAT, LT_O_OUTPUT, LT_O_NO_UNWIND,
				 0 };

static int prof_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct prof_opts *o = ctx;
	unsigned int max;

	switch (key) {
	case LT_O_FREQ:
		max = max_freq();
		if (num < 1 || num > max)
			return lt_error(LT_USAGE,
					"-F %s: out of range: 1 to %u Hz "
					"(kernel.perf_event_max_sample_rate)",
					arg, max);
		o->freq = num;
		break;
	case LT_O_PID:
		o->s.pid = num;
		break;
	case LT_O_CGROUP:
		o->s.cgroup = arg;
		return lt_check_cgroup_arg(arg);
	case LT_O_DURATION:
		o->s.duration_s = num;
		break;
	case LT_O_OFF_CPU:
		o->off_cpu = true;
		break;
	case LT_O_NO_UNWIND:
		o->s.no_unwind = true;
		break;
	case LT_O_FORMAT:
		return lt_pfmt_parse(arg, prof_fmts, &o->s.fmt);
	case LT_O_OUTPUT:
		o->s.out = arg;
		return lt_out_check("-o", arg, true);
	}
	return LT_OK;
}

static void help_profile(void)
{
	printf("NAME\n    lowtrace profile - sample stacks on CPU, or time blocked off CPU\n\n"
	       "SYNOPSIS\n    lowtrace profile [-F HZ] [-p PID] [-c CGROUP] [--duration S]"
	       " [--off-cpu]\n                     [--format folded|pprof|json] [-o FILE]"
	       " [--no-unwind]\n\n"
	       "DESCRIPTION\n"
	       "    Loads the profile probe of the lowtrace object (not pinned; a pinned\n"
	       "    suite is not needed and not touched) until --duration, Ctrl-C or the\n"
	       "    end of process -p. On CPU: a perf event per CPU samples at HZ (cycles\n"
	       "    where the kernel has them, else the software cpu-clock). --off-cpu: the\n"
	       "    time tasks spend blocked (asleep, not preempted), from sched_switch, in\n"
	       "    nanoseconds. The kernel counts samples per process, comm and stack; the\n"
	       "    stacks are read once, at the end. Lost stacks (stack table full or\n"
	       "    colliding, errors, full maps) are counted in the summary on stderr,\n"
	       "    never dropped silently.\n"
	       "    Kernel frames come from /proc/kallsyms, user frames from the ELF\n"
	       "    symbols of the mapped files; a frame without a symbol prints as\n"
	       "    module+0xOFFSET. Processes are snapshotted when first seen, so those that\n"
	       "    exit before the end are still symbolized.\n"
	       "    User stacks are walked with unwind tables compiled from the mapped\n"
	       "    files' .eh_frame/.debug_frame (code without frame pointers, as most of\n"
	       "    Debian's userland), else by frame pointers (JIT code; its names come\n"
	       "    from /tmp/perf-PID.map). The summary's unwind: line counts walks, why\n"
	       "    any stopped early and the tables' size; it also says how many samples\n"
	       "    had a user stack that does not reach _start or a thread start.\n\n"
	       "OPTIONS\n"
	       "    -F, --frequency HZ   samples per second per CPU (default 49; not with\n"
	       "                         --off-cpu, which takes every switch)\n"
	       "    -p, --pid PID        only this process (thread group)\n"
	       "    -c, --cgroup PATH    only tasks in this cgroup directory or below (the\n"
	       "                         identity hierarchy: load --identity-cgroup)\n"
	       "    -d, --duration S     stop after S seconds (default: Ctrl-C or the end of -p)\n"
	       "    --off-cpu            blocked time instead of CPU samples\n"
	       "    -f, --format F       folded (default: comm;root;...;leaf VALUE, kernel\n"
	       "                         frames with _[k]; the value is samples, or ns off CPU),\n"
	       "                         pprof (gzip'd protobuf; needs -o FILE, not a\n"
	       "                         terminal), json\n"
	       "    -o, --output FILE    write there (complete, or not at all) instead of "
	       "stdout\n"
	       "    --no-unwind          user stacks by frame pointers only (no tables)\n\n"
	       "EXIT STATUS\n    0 done (also when -p exits first: what was collected is written);"
	       "\n    2 usage (bad -F, no such -p, unwritable -o); 5 no privileges or BTF;"
	       " 1 other failure.\n");
}

/* lt_prof entries as samples: count, then nanoseconds (on CPU: count × the period) */
struct collect {
	struct lt_vec v;
	bool off;
	uint64_t period;
};

static int collect_prof(void *ctx, const void *key, const void *val)
{
	struct collect *c = ctx;
	const struct lt_prof_key *k = key;
	const struct lt_prof_val *pv = val;
	struct lt_psample *s = lt_vec_push(&c->v);

	if (!s)
		return -1;
	memset(s, 0, sizeof(*s));
	s->tgid = k->tgid;
	lt_comm_str(s->comm, k->comm);
	s->kstack = k->kstack;
	s->ustack = k->ustack;
	s->v[0] = pv->count;
	s->v[1] = c->off ? pv->ns : pv->count * c->period;
	return 0;
}

/* The aggregates read, written in the format, the summary on stderr: an exit code */
static int report(struct lt_psess *s, const struct prof_opts *o, const char *event)
{
	static struct lt_prof_key k, nk;
	static struct lt_prof_val v;
	struct collect c = {
		.v.elem = sizeof(struct lt_psample),
		.off = o->off_cpu,
		.period = 1000000000ull / o->freq,
	};
	char note[160], head[160], tail[96];
	struct lt_pkind kind;
	int ret = lt_map_each(lt_suite_map_fd(s->suite, "lt_prof"), &k, &nk, &v, collect_prof, &c);

	if (ret) {
		free(c.v.p);
		return lt_error(LT_FAIL, "cannot read the profile: %s", strerror(-ret));
	}
	snprintf(note, sizeof(note), "lowtrace profile %s, %s", o->off_cpu ? "--off-cpu" : "",
		 event);
	snprintf(head, sizeof(head), "\"mode\":\"%s\",\"event\":\"%s\"",
		 o->off_cpu ? "off-cpu" : "cpu", event);
	if (!o->off_cpu)
		snprintf(head + strlen(head), sizeof(head) - strlen(head), ",\"frequency_hz\":%u",
			 o->freq);
	lt_pkind_profile(&kind, o->off_cpu, c.period);
	kind.comment = note;
	kind.json_head = head;
	ret = lt_psess_write(s, &kind, c.v.p, c.v.n);
	free(c.v.p);
	if (ret)
		return ret;
	fprintf(stderr, "lowtrace: profile: %llu %s in %.1f s, %zu stacks; lost: ",
		(unsigned long long)s->st.total, o->off_cpu ? "blocks" : "samples", s->dur / 1e9,
		c.v.n);
	snprintf(tail, sizeof(tail), "; user stacks cut short: %llu of %llu",
		 (unsigned long long)s->st.trunc, (unsigned long long)s->st.with_user);
	lt_psess_summary(s, tail);
	return LT_OK;
}

int cmd_profile(int argc, char **argv)
{
	struct prof_opts o = { .freq = 49 };
	struct lt_psess s = {};
	const char *event = "sched_switch";
	int ret;

	o.s.ringbuf_size = 256 * 1024;
	o.s.notices = true;
	o.s.fmt = lt_pfmt_named("folded");
	ret = lt_opts_parse(argc, argv, prof_keys, help_profile, prof_opt, &o);
	if (ret)
		return ret;
	if (o.s.pid) {
		ret = lt_check_pid(o.s.pid, s.comm, sizeof(s.comm));
		if (ret)
			return ret;
	}
	o.s.probe = o.off_cpu ? "offcpu" : "profile";
	ret = lt_psess_open(&s, &o.s);
	if (ret)
		goto out;
	ret = lt_psess_load(&s);
	if (ret)
		goto out;
	if (!o.off_cpu) {
		ret = lt_attach_perf(s.suite, "lt_prof_cpu", o.freq, &event);
		if (ret)
			goto out;
	}
	ret = lt_psess_start(&s);
	if (ret)
		goto out;
	if (o.off_cpu)
		fprintf(stderr, "lowtrace: profile: off-CPU (sched_switch); ");
	else
		fprintf(stderr, "lowtrace: profile: on-CPU, %s at %u Hz; ", event, o.freq);
	fprintf(stderr, "%s\n", o.s.duration_s ? "running" : "Ctrl-C to stop");
	ret = lt_psess_run(&s);
	if (ret)
		goto out;
	if (s.exited)
		fprintf(stderr,
			"lowtrace: profile: process %u exited after %.1f s; writing what was "
			"collected\n",
			o.s.pid, s.dur / 1e9);
	ret = report(&s, &o, event);
out:
	return lt_psess_close(&s, ret);
}
