// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowtrace profile: load the profile (or offcpu) probe of the one object on demand
 * (unpinned), let the kernel aggregate by stack, read the aggregates once at the end,
 * symbolize and write folded stacks, pprof or JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "encode.h"
#include "kernel.h"
#include "lowtrace.h"
#include "lt_prof.h"
#include "opts.h"
#include "pprof.h"
#include "out.h"
#include "profout.h"
#include "records.h"
#include "sym.h"

struct prof_opts {
	unsigned int freq;
	uint32_t pid;
	const char *cgroup;
	uint64_t duration_s;
	bool off_cpu, no_unwind;
	enum fmt fmt;
	const char *out;
};

/* Where a complete user stack ends: a walk that stops elsewhere was cut short. */
static bool is_entry_frame(const struct lt_frame *f)
{
	static const char *const entries[] = { "_start",
					       "__libc_start_main",
					       "__libc_start_call_main",
					       "start_thread",
					       "clone",
					       "clone3",
					       "__clone",
					       "__clone3",
					       "thread_start" };

	if (!f->func)
		return false;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(f->func, entries[i]))
			return true;
	return false;
}

/* ---- the ring: new processes, whose mappings are read while they live ---- */

struct ringctx {
	struct lt_syms *sy;
	struct lt_prof_uw *uw;
	struct lt_rec rec;
	struct lt_decode_stats ds;
	uint64_t snapshots_failed;
};

static int on_task(void *ctx, void *data, size_t size)
{
	struct ringctx *rc = ctx;
	const struct lt_probe *p = lt_decode(data, size, &rc->rec, &rc->ds);
	char comm[LT_COMM_LEN + 1];

	if (!p || rc->rec.hdr.type != LT_TYPE_TASK)
		return 0;
	lt_comm_str(comm, ((const struct lt_task *)&rc->rec)->comm);
	if (lt_syms_snapshot(rc->sy, rc->rec.hdr.pid, comm))
		rc->snapshots_failed++;
	lt_prof_uw_add(rc->uw, rc->rec.hdr.pid);
	return 0;
}

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
		o->pid = num;
		break;
	case LT_O_CGROUP:
		o->cgroup = arg;
		return lt_check_cgroup_arg(arg);
	case LT_O_DURATION:
		o->duration_s = num;
		break;
	case LT_O_OFF_CPU:
		o->off_cpu = true;
		break;
	case LT_O_NO_UNWIND:
		o->no_unwind = true;
		break;
	case LT_O_FORMAT:
		if (!strcmp(arg, "folded"))
			o->fmt = FMT_FOLDED;
		else if (!strcmp(arg, "pprof"))
			o->fmt = FMT_PPROF;
		else if (!strcmp(arg, "json"))
			o->fmt = FMT_JSON;
		else
			return lt_error(
				LT_USAGE,
				"--format: unknown format '%s' (known: folded, pprof, json)", arg);
		break;
	case LT_O_OUTPUT:
		o->out = arg;
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

struct pent {
	struct lt_prof_key k;
	struct lt_prof_val v;
};

static int collect_prof(void *ctx, const void *key, const void *val)
{
	struct pent *e = lt_vec_push(ctx);

	if (!e)
		return -1;
	memcpy(&e->k, key, sizeof(e->k));
	memcpy(&e->v, val, sizeof(e->v));
	return 0;
}

/* a folded line, to be sorted and merged */
struct fline {
	char *s;
	uint64_t v;
};

static int fline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->s, ((const struct fline *)b)->s);
}

struct prof_out {
	struct lt_pout o;
	struct lt_vec lines; /* folded */
	struct lt_pprof *pp;
	bool first;
};

static void emit_profile_stack(struct prof_out *po, enum fmt fmt, const struct pent *e,
			       const struct lt_sstack *ss, bool off, uint64_t period)
{
	char comm[LT_COMM_LEN + 1], name[NAME_MAX_OUT];
	uint64_t value = off ? e->v.ns : e->v.count;
	struct lt_buf *b = &po->o.b;

	lt_comm_str(comm, e->k.comm);
	if (fmt == FMT_FOLDED) {
		/* build the line in the buffer, then keep a copy for sorting */
		size_t start;
		struct fline *l;

		lt_pout_room(&po->o, (size_t)(ss->nu + ss->nk + 1) * (NAME_MAX_OUT * 4 + 8));
		start = b->len;
		lt_put_folded(b, comm);
		for (int i = ss->nu - 1; i >= 0; i--) {
			lt_put_c(b, ';');
			lt_put_folded(b, lt_frame_str(&ss->u[i], name, sizeof(name)));
		}
		for (int i = ss->nk - 1; i >= 0; i--) {
			lt_put_c(b, ';');
			lt_put_folded(b, lt_frame_str(&ss->k[i], name, sizeof(name)));
			lt_put_s(b, "_[k]");
		}
		l = lt_vec_push(&po->lines);
		if (l) {
			l->s = strndup(b->p + start, b->len - start);
			l->v = value;
		}
		b->len = start;
		return;
	}
	if (fmt == FMT_PPROF) {
		uint64_t loc[2 * LT_STACK_DEPTH + 1];
		int64_t vals[2] = { (int64_t)e->v.count,
				    off ? (int64_t)e->v.ns : (int64_t)(e->v.count * period) };
		size_t n = 0;

		for (int i = 0; i < ss->nk; i++)
			loc[n++] = lt_pprof_location(po->pp, 0, ss->k[i].addr, ss->k[i].func);
		for (int i = 0; i < ss->nu; i++) {
			const struct lt_frame *f = &ss->u[i];
			uint64_t m =
				f->module ? lt_pprof_mapping(po->pp, f->map_start, f->map_limit,
							     f->map_pgoff, f->module, f->build_id)
					  : 0;

			loc[n++] = lt_pprof_location(po->pp, m, f->addr,
						     f->func ? f->func
							     : lt_frame_str(f, name, sizeof(name)));
		}
		for (size_t i = 0; i < n; i++)
			if (!loc[i])
				return; /* out of memory: lt_pprof_write reports it */
		lt_pprof_sample(po->pp, loc, n, vals, comm, e->k.tgid);
		return;
	}
	/* json */
	lt_pout_room(&po->o, (size_t)(ss->nu + ss->nk + 1) * (NAME_MAX_OUT * 6 + 300));
	lt_put_s(b, po->first ? "\n{" : ",\n{");
	po->first = false;
	lt_put_s(b, "\"pid\":");
	lt_put_u64(b, e->k.tgid);
	lt_json_str(b, "comm", comm, strlen(comm));
	lt_json_u64(b, "count", e->v.count);
	lt_json_u64(b, "ns", off ? e->v.ns : e->v.count * period);
	lt_put_s(b, ",\"frames\":[");
	for (int i = 0; i < ss->nk + ss->nu; i++) {
		const struct lt_frame *f = i < ss->nk ? &ss->k[i] : &ss->u[i - ss->nk];
		size_t n = lt_frame_name(f, name, sizeof(name));

		lt_put_s(b, i ? ",{\"name\":" : "{\"name\":");
		lt_put_json_str(b, name, n);
		if (f->module)
			lt_json_str(b, "module", f->module, strnlen(f->module, NAME_MAX_OUT));
		lt_json_u64(b, "offset", f->mod_off);
		lt_json_u64(b, "addr", f->addr);
		lt_json_bool(b, "kernel", i < ss->nk);
		lt_put_c(b, '}');
	}
	lt_put_s(b, "]}");
}

int cmd_profile(int argc, char **argv)
{
	static struct lt_sstack ss;
	struct prof_opts o = { .freq = 49, .fmt = FMT_FOLDED };
	struct lt_load_opts lo = { .ringbuf_size = 256 * 1024 };
	struct prof_out po = { .first = true };
	struct ringctx rc = {};
	struct lt_prof_uw uw = {};
	struct lt_prof_counts ctr;
	struct lt_vec ents = { .elem = sizeof(struct pent) };
	struct lt_suite *suite = NULL;
	struct lt_ring *ring = NULL;
	struct lt_handles h;
	const char *event = "sched_switch";
	const struct lt_probe *row;
	uint64_t t0, t0_real, dur, period, total = 0, trunc = 0, with_user = 0;
	int pidfd = -1, ret, stacks_fd;
	bool exited = false;
	char comm[64];

	po.lines.elem = sizeof(struct fline);
	ret = lt_opts_parse(argc, argv, prof_keys, help_profile, prof_opt, &o);
	if (ret)
		return ret;
	if (o.pid) {
		ret = lt_check_pid(o.pid, comm, sizeof(comm));
		if (ret)
			return ret;
	}
	ret = lt_pout_open(&po.o, o.out, o.fmt == FMT_PPROF);
	if (ret) {
		free(po.o.b.p);
		return ret;
	}
	rc.sy = lt_syms_new();
	if (!rc.sy) {
		ret = lt_error(LT_FAIL, "out of memory");
		goto out;
	}
	row = lt_probe_by_name(o.off_cpu ? "offcpu" : "profile", o.off_cpu ? 6 : 7);
	lo.probes = 1ull << (row - lt_probes);
	lo.pid = o.pid;
	lo.cgroup = o.cgroup;
	ret = lt_suite_open(&lo, &suite);
	if (ret)
		goto out;
	lt_suite_set_stacks(suite, STACK_ENTRIES);
	lt_prof_uw_size(&uw, suite, rc.sy, o.pid, o.no_unwind);
	rc.uw = &uw;
	ret = lt_suite_load(suite);
	if (ret)
		goto out;
	ret = lt_prof_uw_start(&uw);
	if (ret)
		goto out;
	if (!o.off_cpu) {
		ret = lt_attach_perf(suite, "lt_prof_cpu", o.freq, &event);
		if (ret)
			goto out;
	}
	lt_suite_handles(suite, &h);
	ring = lt_ring_open(h.ring_fd, on_task, &rc);
	if (!ring) {
		ret = LT_FAIL;
		goto out;
	}
	if (o.pid) {
		pidfd = lt_pidfd_of(o.pid);
		lt_syms_snapshot(rc.sy, o.pid, comm);
	}
	lt_catch_stop();
	t0 = lt_now_ns(CLOCK_MONOTONIC);
	t0_real = lt_now_ns(CLOCK_REALTIME);
	if (o.off_cpu)
		fprintf(stderr, "lowtrace: profile: off-CPU (sched_switch); ");
	else
		fprintf(stderr, "lowtrace: profile: on-CPU, %s at %u Hz; ", event, o.freq);
	fprintf(stderr, "%s\n", o.duration_s ? "running" : "Ctrl-C to stop");
	ret = lt_prof_run(ring, rc.sy, &uw, o.duration_s, pidfd, &exited);
	dur = lt_now_ns(CLOCK_MONOTONIC) - t0;
	/* stop counting, then read what is left of the ring (late new processes) */
	lt_suite_detach(suite);
	lt_ring_poll(ring, 0);
	if (ret)
		goto out;
	if (exited)
		fprintf(stderr,
			"lowtrace: profile: process %u exited after %.1f s; writing what was "
			"collected\n",
			o.pid, dur / 1e9);

	stacks_fd = lt_suite_map_fd(suite, "lt_stacks");
	{
		static struct lt_prof_key k, nk;
		static struct lt_prof_val v;

		int err = lt_map_each(lt_suite_map_fd(suite, "lt_prof"), &k, &nk, &v, collect_prof,
				      &ents);

		if (err) {
			ret = lt_error(LT_FAIL, "cannot read the profile: %s", strerror(-err));
			goto out;
		}
	}
	lt_prof_read_counts(suite, &ctr);
	period = 1000000000ull / o.freq;
	if (o.fmt == FMT_PPROF) {
		po.pp = lt_pprof_new();
		if (!po.pp) {
			ret = lt_error(LT_FAIL, "out of memory");
			goto out;
		}
		if (o.off_cpu) {
			lt_pprof_sample_type(po.pp, "blocks", "count");
			lt_pprof_sample_type(po.pp, "off-cpu", "nanoseconds");
		} else {
			lt_pprof_sample_type(po.pp, "samples", "count");
			lt_pprof_sample_type(po.pp, "cpu", "nanoseconds");
			lt_pprof_period(po.pp, "cpu", "nanoseconds", period);
		}
		lt_pprof_times(po.pp, t0_real, dur);
	} else if (o.fmt == FMT_JSON) {
		struct lt_buf *b = &po.o.b;

		lt_put_s(b, "{\"mode\":\"");
		lt_put_s(b, o.off_cpu ? "off-cpu" : "cpu");
		lt_put_s(b, "\",\"event\":\"");
		lt_put_s(b, event);
		lt_put_c(b, '"');
		if (!o.off_cpu)
			lt_json_u64(b, "frequency_hz", o.freq);
		lt_json_u64(b, "duration_ns", dur);
		lt_put_s(b, ",\"stacks\":[");
	}
	for (size_t i = 0; i < ents.n; i++) {
		const struct pent *e = (const struct pent *)ents.p + i;
		char c[LT_COMM_LEN + 1];

		lt_comm_str(c, e->k.comm);
		lt_symbolize(rc.sy, stacks_fd, e->k.tgid, c, e->k.kstack, e->k.ustack, 0, &ss);
		total += e->v.count;
		if (ss.nu) {
			with_user += e->v.count;
			if (!ss.u_complete && !is_entry_frame(&ss.u[ss.nu - 1]))
				trunc += e->v.count;
		}
		emit_profile_stack(&po, o.fmt, e, &ss, o.off_cpu, period);
	}
	if (o.fmt == FMT_FOLDED) {
		struct fline *l = po.lines.p;

		if (po.lines.n)
			qsort(l, po.lines.n, sizeof(*l), fline_cmp);
		for (size_t i = 0; i < po.lines.n; i++) {
			uint64_t v = l[i].v;

			while (i + 1 < po.lines.n && !strcmp(l[i].s, l[i + 1].s))
				v += l[++i].v;
			lt_pout_room(&po.o, strlen(l[i].s) + 32);
			lt_put_s(&po.o.b, l[i].s);
			lt_put_c(&po.o.b, ' ');
			lt_put_u64(&po.o.b, v);
			lt_put_c(&po.o.b, '\n');
		}
	} else if (o.fmt == FMT_JSON) {
		struct lt_buf *b = &po.o.b;

		lt_pout_room(&po.o, 4096);
		lt_put_s(b, "\n]");
		lt_json_u64(b, "samples", total);
		lt_json_u64(b, "user_stacks", with_user);
		lt_json_u64(b, "user_stacks_truncated", trunc);
		lt_put_s(b, ",\"lost\":{");
		for (int i = 0, n = 0; i < LT_PC_SLOTS; i++) {
			if (!lt_prof_ctr_names[i])
				continue;
			lt_put_s(b, n++ ? ",\"" : "\"");
			lt_put_s(b, lt_prof_ctr_names[i]);
			lt_put_s(b, "\":");
			lt_put_u64(b, ctr.c[i]);
		}
		lt_put_c(b, '}');
		lt_prof_uw_json(b, &uw, &ctr);
		lt_put_s(b, "}\n");
	} else {
		char note[160];

		snprintf(note, sizeof(note), "lowtrace profile %s, %s",
			 o.off_cpu ? "--off-cpu" : "", event);
		lt_pprof_comment(po.pp, note);
		lt_pout_flush(&po.o);
		ret = lt_pprof_write(po.pp, po.o.fd);
		if (ret) {
			ret = lt_error(LT_FAIL, "cannot write the pprof file: %s", strerror(-ret));
			goto out;
		}
	}
	fprintf(stderr, "lowtrace: profile: %llu %s in %.1f s, %zu stacks; lost: ",
		(unsigned long long)total, o.off_cpu ? "blocks" : "samples", dur / 1e9, ents.n);
	lt_prof_print_losses(stderr, &ctr);
	fprintf(stderr, "; user stacks cut short: %llu of %llu\n", (unsigned long long)trunc,
		(unsigned long long)with_user);
	lt_prof_uw_print(stderr, &uw, &ctr);
	ret = LT_OK;
out:
	if (po.o.b.p)
		ret = lt_pout_close(&po.o, ret == LT_OK) ?: ret;
	for (size_t i = 0; i < po.lines.n; i++)
		free(((struct fline *)po.lines.p)[i].s);
	free(po.lines.p);
	free(ents.p);
	lt_pprof_free(po.pp);
	lt_ring_free(ring);
	lt_suite_free(suite);
	lt_prof_uw_free(&uw);
	lt_syms_free(rc.sy);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}
