// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowtrace alloc: uprobes on the allocator of one process, sampled in the kernel by bytes,
 * aggregated by stack (and, with --leaks, the sampled blocks not freed), written as a text
 * report, folded stacks or pprof at the end.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
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

#define DEFAULT_SAMPLE_BYTES (512 * 1024)

struct alloc_opts {
	uint32_t pid;
	uint64_t duration_s;
	enum fmt fmt;
	const char *out;
	uint64_t sample_bytes;
	bool leaks, no_unwind;
};

static const int alloc_keys[] = {
	LT_O_PID,	  LT_O_DURATION, LT_O_FORMAT,	 LT_O_OUTPUT,
	LT_O_SAMPLE_BYTES, LT_O_LEAKS,   LT_O_NO_UNWIND, 0
};

static int alloc_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct alloc_opts *o = ctx;

	switch (key) {
	case LT_O_PID:
		o->pid = num;
		break;
	case LT_O_DURATION:
		o->duration_s = num;
		break;
	case LT_O_FORMAT:
		if (!strcmp(arg, "text"))
			o->fmt = FMT_TEXT;
		else if (!strcmp(arg, "folded"))
			o->fmt = FMT_FOLDED;
		else if (!strcmp(arg, "pprof"))
			o->fmt = FMT_PPROF;
		else
			return lt_error(
				LT_USAGE,
				"--format: unknown format '%s' (known: text, folded, pprof)", arg);
		break;
	case LT_O_OUTPUT:
		o->out = arg;
		return lt_out_check("-o", arg, true);
	case LT_O_SAMPLE_BYTES:
		o->sample_bytes = num;
		break;
	case LT_O_LEAKS:
		o->leaks = true;
		break;
	case LT_O_NO_UNWIND:
		o->no_unwind = true;
		break;
	}
	return LT_OK;
}

static void help_alloc(void)
{
	printf("NAME\n    lowtrace alloc - sampled allocations of a process, by stack, and "
	       "leaks\n\n"
	       "SYNOPSIS\n    lowtrace alloc -p PID [--sample-bytes N] [--duration S] [--leaks]\n"
	       "                   [--format text|folded|pprof] [-o FILE] [--no-unwind]\n\n"
	       "DESCRIPTION\n"
	       "    Puts uprobes on the allocator the process maps (malloc, calloc,\n"
	       "    realloc, aligned_alloc, memalign, posix_memalign; free with --leaks),\n"
	       "    found by symbol in the executable or the library that defines them,\n"
	       "    until --duration, Ctrl-C or the end of the process.\n"
	       "    Sampling happens in the kernel: each thread counts down the bytes it\n"
	       "    allocates to its next sample point, at exponentially distributed\n"
	       "    intervals of mean N bytes. Only sampled allocations touch the maps;\n"
	       "    each carries the bytes it stands for, so totals are unbiased\n"
	       "    estimates. --sample-bytes 1 records every allocation, exactly. Every\n"
	       "    call still pays the uprobe trap.\n"
	       "    --leaks also follows the sampled blocks to free (uretprobes and a free\n"
	       "    uprobe: every call pays a second trap) and reports those not freed at\n"
	       "    the end, by stack.\n"
	       "    User stacks are walked with unwind tables compiled from the mapped\n"
	       "    files' .eh_frame/.debug_frame, as lowtrace profile does (see its -h).\n\n"
	       "OPTIONS\n"
	       "    -p, --pid PID        the process (required)\n"
	       "    --sample-bytes N     mean bytes between samples, K/M/G allowed (default 512K)\n"
	       "    -d, --duration S     stop after S seconds (default: Ctrl-C or the process' "
	       "end)\n"
	       "    --leaks              report sampled blocks still allocated at the end\n"
	       "    -f, --format F       text (default: sites by estimated bytes), folded\n"
	       "                         (comm;root;...;leaf BYTES: allocated, or with --leaks\n"
	       "                         still allocated), pprof (alloc_objects, alloc_space;\n"
	       "                         inuse_objects, inuse_space with --leaks; needs -o\n"
	       "                         FILE, not a terminal)\n"
	       "    -o, --output FILE    write there (complete, or not at all) instead of "
	       "stdout\n"
	       "    --no-unwind          user stacks by frame pointers only (no tables)\n\n"
	       "EXIT STATUS\n    0 done (also when the process exits first); 2 usage (no such\n"
	       "    process, a kernel thread, unwritable -o); 1 allocator not found or\n"
	       "    other failure; 5 no privileges (the process' mappings, BPF) or BTF.\n");
}

/* Exponential intervals of mean `mean` bytes: the quantiles at (i + 1/2) / n, scaled so
 * that their mean is `mean` exactly. */
static void exp_table(uint64_t mean, uint64_t *t)
{
	double sum = 0, scale;

	for (int i = 0; i < LT_AL_IVAL_N; i++)
		sum += -log((i + 0.5) / LT_AL_IVAL_N);
	scale = (double)mean * LT_AL_IVAL_N / sum;
	for (int i = 0; i < LT_AL_IVAL_N; i++) {
		double v = -log((i + 0.5) / LT_AL_IVAL_N) * scale;

		t[i] = v < 1 ? 1 : (uint64_t)(v + 0.5);
	}
}

/* allocator entry points: symbol, program, and whether its return gives the block */
static const struct {
	const char *sym;
	const char *prog;
	bool ret;
} al_funcs[] = {
	{ "malloc", "lt_al_malloc", true },	{ "calloc", "lt_al_calloc", true },
	{ "realloc", "lt_al_realloc", true },	{ "aligned_alloc", "lt_al_memalign", true },
	{ "memalign", "lt_al_memalign", true }, { "posix_memalign", "lt_al_pmalign", true },
	{ "free", "lt_al_free", false },
};
#define AL_NFUNCS (sizeof(al_funcs) / sizeof(al_funcs[0]))

struct site {
	struct lt_al_key k;
	struct lt_al_val v;
	uint64_t live_blocks; /* sampled blocks not freed */
	uint64_t live_bytes; /* their estimated bytes */
	uint64_t live_count_fp; /* their estimated count */
};

static int collect_site(void *ctx, const void *key, const void *val)
{
	struct site *s = lt_vec_push(ctx);

	if (!s)
		return -1;
	memset(s, 0, sizeof(*s));
	memcpy(&s->k, key, sizeof(s->k));
	memcpy(&s->v, val, sizeof(s->v));
	return 0;
}

static int site_key_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct site *)a)->k, &((const struct site *)b)->k,
		      sizeof(struct lt_al_key));
}

static int collect_live(void *ctx, const void *key, const void *val)
{
	struct lt_vec *sites = ctx;
	const struct lt_al_live *l = val;
	struct site probe = { .k = l->site }, *s;

	(void)key;
	s = bsearch(&probe, sites->p, sites->n, sizeof(struct site), site_key_cmp);
	if (s && l->size) {
		s->live_blocks++;
		s->live_bytes += l->weight;
		s->live_count_fp += (l->weight << LT_AL_FP_SHIFT) / l->size;
	}
	return 0;
}

static uint64_t fp_round(uint64_t fp)
{
	return (fp + (1ull << (LT_AL_FP_SHIFT - 1))) >> LT_AL_FP_SHIFT;
}

#define TEXT_ROWS 20

/* " <- "-joined user frames, the allocator's own frame (frame 0) left out */
static void put_site_frames(struct lt_buf *b, const struct lt_sstack *ss)
{
	char name[NAME_MAX_OUT];

	if (ss->nu < 2) {
		lt_put_s(b, ss->nu ? "(no caller)" : "(no stack)");
		return;
	}
	for (int i = 1; i < ss->nu; i++) {
		size_t n = lt_frame_name(&ss->u[i], name, sizeof(name));

		if (i > 1)
			lt_put_s(b, " <- ");
		lt_put_text_str(b, name, n);
	}
}

/* a text row: sites whose stacks print the same are one row */
struct trow {
	char *s;
	uint64_t bytes, count_fp, samples;
};

static int trow_str_cmp(const void *a, const void *b)
{
	return strcmp(((const struct trow *)a)->s, ((const struct trow *)b)->s);
}

static int trow_bytes_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->s, y->s);
}

static void alloc_text(struct lt_pout *o, struct lt_syms *sy, int stacks_fd, const char *comm,
		       const struct site *s, size_t n, bool leaks)
{
	static struct lt_sstack ss;
	struct lt_vec rows = { .elem = sizeof(struct trow) };
	struct lt_buf *b = &o->b;
	struct trow *r;
	size_t nr = 0;

	for (size_t i = 0; i < n; i++) {
		size_t start;

		if (leaks ? !s[i].live_blocks : !s[i].v.samples)
			continue;
		lt_symbolize(sy, stacks_fd, s[i].k.tgid, comm, -1, s[i].k.ustack, s[i].k.caller,
			     &ss);
		r = lt_vec_push(&rows);
		if (!r)
			break;
		/* the frames are encoded at the end of the output buffer, then copied */
		lt_pout_room(o, (size_t)(ss.nu + 1) * (NAME_MAX_OUT * 4 + 8));
		start = b->len;
		put_site_frames(b, &ss);
		r->s = strndup(b->p + start, b->len - start);
		b->len = start;
		r->bytes = leaks ? s[i].live_bytes : s[i].v.bytes;
		r->count_fp = leaks ? s[i].live_count_fp : s[i].v.count_fp;
		r->samples = leaks ? s[i].live_blocks : s[i].v.samples;
		if (!r->s)
			rows.n--;
	}
	r = rows.p;
	if (rows.n)
		qsort(r, rows.n, sizeof(*r), trow_str_cmp);
	for (size_t i = 0; i < rows.n; i++) {
		if (nr && !strcmp(r[nr - 1].s, r[i].s)) {
			r[nr - 1].bytes += r[i].bytes;
			r[nr - 1].count_fp += r[i].count_fp;
			r[nr - 1].samples += r[i].samples;
			free(r[i].s);
			continue;
		}
		r[nr++] = r[i];
	}
	if (nr)
		qsort(r, nr, sizeof(*r), trow_bytes_cmp);
	lt_pout_room(o, 256);
	lt_put_s(b,
		 leaks ? "LEAKS: blocks not freed at the end, estimated from the sampled ones (top "
		       : "ALLOCATIONS by stack, estimated (top ");
	lt_put_u64(b, TEXT_ROWS);
	lt_put_s(b, " of ");
	lt_put_u64(b, nr);
	lt_put_s(b, leaks ? ")\n      BYTES     BLOCKS    SAMPLED  STACK (caller first)\n"
			  : ")\n      BYTES     ALLOCS    SAMPLED  STACK (caller first)\n");
	for (size_t i = 0; i < nr; i++) {
		char num[64];

		if (i < TEXT_ROWS) {
			lt_pout_room(o, strlen(r[i].s) + 100);
			snprintf(num, sizeof(num), "%11llu %10llu %10llu  ",
				 (unsigned long long)r[i].bytes,
				 (unsigned long long)fp_round(r[i].count_fp),
				 (unsigned long long)r[i].samples);
			lt_put_s(b, num);
			lt_put_s(b, r[i].s);
			lt_put_c(b, '\n');
		}
		free(r[i].s);
	}
	free(rows.p);
}

static void alloc_folded(struct lt_pout *o, struct lt_syms *sy, int stacks_fd, const char *comm,
			 const struct site *s, size_t n, bool leaks)
{
	static struct lt_sstack ss;
	char name[NAME_MAX_OUT];
	struct lt_buf *b = &o->b;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = leaks ? s[i].live_bytes : s[i].v.bytes;

		if (!v)
			continue;
		lt_symbolize(sy, stacks_fd, s[i].k.tgid, comm, -1, s[i].k.ustack, s[i].k.caller,
			     &ss);
		lt_pout_room(o, (size_t)(ss.nu + 1) * (NAME_MAX_OUT * 4 + 8) + 32);
		lt_put_folded(b, comm);
		for (int f = ss.nu - 1; f >= 0; f--) {
			lt_put_c(b, ';');
			lt_put_folded(b, lt_frame_str(&ss.u[f], name, sizeof(name)));
		}
		lt_put_c(b, ' ');
		lt_put_u64(b, v);
		lt_put_c(b, '\n');
	}
}

static int alloc_pprof(struct lt_pout *o, struct lt_syms *sy, int stacks_fd, const char *comm,
		       const struct site *s, size_t n, bool leaks, uint64_t t0, uint64_t dur)
{
	static struct lt_sstack ss;
	struct lt_pprof *pp = lt_pprof_new();
	char name[NAME_MAX_OUT];
	int err;

	if (!pp)
		return -ENOMEM;
	lt_pprof_sample_type(pp, "alloc_objects", "count");
	lt_pprof_sample_type(pp, "alloc_space", "bytes");
	if (leaks) {
		lt_pprof_sample_type(pp, "inuse_objects", "count");
		lt_pprof_sample_type(pp, "inuse_space", "bytes");
	}
	lt_pprof_times(pp, t0, dur);
	for (size_t i = 0; i < n; i++) {
		uint64_t loc[LT_STACK_DEPTH + 1];
		int64_t vals[4] = { fp_round(s[i].v.count_fp), s[i].v.bytes,
				    fp_round(s[i].live_count_fp), s[i].live_bytes };
		size_t nl = 0;
		bool ok = true;

		lt_symbolize(sy, stacks_fd, s[i].k.tgid, comm, -1, s[i].k.ustack, s[i].k.caller,
			     &ss);
		for (int f = 0; f < ss.nu; f++) {
			const struct lt_frame *fr = &ss.u[f];
			uint64_t m = fr->module ? lt_pprof_mapping(pp, fr->map_start, fr->map_limit,
								   fr->map_pgoff, fr->module,
								   fr->build_id)
						: 0;

			loc[nl] = lt_pprof_location(
				pp, m, fr->addr,
				fr->func ? fr->func : lt_frame_str(fr, name, sizeof(name)));
			ok &= loc[nl++] != 0;
		}
		if (ok)
			lt_pprof_sample(pp, loc, nl, vals, comm, s[i].k.tgid);
	}
	lt_pout_flush(o);
	err = lt_pprof_write(pp, o->fd);
	lt_pprof_free(pp);
	return err;
}

/* how long alloc waits for a process that has not mapped its libraries yet */
#define START_WAIT_MS 10000u
#define START_POLL_MS 10u

/*
 * lt_proc_find_func, waiting while the process is still starting: one started a moment ago
 * (`prog & lowtrace alloc -p $!`) can be inside exec or before ld.so mapped libc.
 */
static int find_func_waiting(uint32_t pid, const char *sym, char *path, size_t len, uint64_t *off)
{
	unsigned int waited = 0;
	int err;

	while ((err = lt_proc_find_func(pid, sym, path, len, off)) == -EAGAIN &&
	       waited < START_WAIT_MS) {
		if (!waited)
			fprintf(stderr,
				"lowtrace: alloc: process %u is still starting; waiting for its "
				"libraries\n",
				pid);
		usleep(START_POLL_MS * 1000);
		waited += START_POLL_MS;
	}
	return err;
}

int cmd_alloc(int argc, char **argv)
{
	static uint64_t ival[LT_AL_IVAL_N];
	struct alloc_opts o = { .fmt = FMT_TEXT, .sample_bytes = DEFAULT_SAMPLE_BYTES };
	struct lt_load_opts lo = { .ringbuf_size = 4096 };
	struct lt_pout out = {};
	struct lt_prof_counts ctr;
	struct lt_vec sites = { .elem = sizeof(struct site) };
	struct lt_suite *suite = NULL;
	struct lt_syms *sy = NULL;
	struct lt_prof_uw uw = {};
	char comm[64], path[AL_NFUNCS][PATH_MAX], attached[512] = "";
	uint64_t off[AL_NFUNCS], t0, t0_real, dur;
	bool found[AL_NFUNCS] = {}, exited = false, kthread;
	uint32_t tgid;
	int pidfd = -1, ret, err;

	ret = lt_opts_parse(argc, argv, alloc_keys, help_alloc, alloc_opt, &o);
	if (ret)
		return ret;
	if (!o.pid)
		return lt_error(LT_USAGE, "alloc: -p PID is required");
	ret = lt_check_pid(o.pid, comm, sizeof(comm));
	if (ret)
		return ret;
	if (!lt_proc_task(o.pid, &tgid, &kthread) && kthread)
		return lt_error(LT_USAGE,
				"alloc: process %u (%s) is a kernel thread: no user memory", o.pid,
				comm);
	/* the allocator, found before anything is loaded */
	for (size_t i = 0; i < AL_NFUNCS; i++) {
		err = find_func_waiting(o.pid, al_funcs[i].sym, path[i], sizeof(path[i]), &off[i]);
		if (err == -ESRCH)
			return lt_error(LT_USAGE, "--pid %u: no such process", o.pid);
		found[i] = !err;
		if (!err || i > 0)
			continue;
		if (err == -EAGAIN)
			return lt_error(LT_FAIL,
					"alloc: process %u mapped no library in %u s (stopped "
					"before ld.so ran, or linked to none)",
					o.pid, START_WAIT_MS / 1000);
		if (err == -ENOENT)
			return lt_error(LT_FAIL,
					"alloc: no malloc symbol in %s (the libraries of process "
					"%u: a static binary without symbols?)",
					*path[0] ? path[0] : "any mapped file", o.pid);
		if (err == -EACCES || err == -EPERM)
			return lt_error(LT_ENV,
					"permission denied: cannot read the mappings of process %u "
					"(run as root)",
					o.pid);
		return lt_error(LT_FAIL, "alloc: cannot read the mappings of process %u: %s", o.pid,
				strerror(-err));
	}
	if (o.leaks && !found[AL_NFUNCS - 1])
		return lt_error(LT_FAIL, "alloc --leaks: no free symbol in %s", path[0]);
	/* after any wait: an exec the wait saw the end of set the comm */
	ret = lt_check_pid(o.pid, comm, sizeof(comm));
	if (ret)
		return ret;
	ret = lt_pout_open(&out, o.out, o.fmt == FMT_PPROF);
	if (ret) {
		free(out.b.p);
		return ret;
	}
	sy = lt_syms_new();
	if (!sy) {
		ret = lt_error(LT_FAIL, "out of memory");
		goto out;
	}
	if (o.sample_bytes > 1)
		exp_table(o.sample_bytes, ival);
	lo.probes = 1ull << (lt_probe_by_name("alloc", 5) - lt_probes);
	lo.pid = o.pid;
	ret = lt_suite_open(&lo, &suite);
	if (ret)
		goto out;
	lt_suite_set_stacks(suite, STACK_ENTRIES);
	lt_suite_set_alloc(suite, o.sample_bytes, ival, o.leaks);
	lt_prof_uw_size(&uw, suite, sy, o.pid, o.no_unwind);
	ret = lt_suite_load(suite);
	if (ret)
		goto out;
	ret = lt_prof_uw_start(&uw);
	if (ret)
		goto out;
	for (size_t i = 0; i < AL_NFUNCS; i++) {
		bool dup = false;

		if (!found[i] || (!o.leaks && !strcmp(al_funcs[i].sym, "free")))
			continue;
		/* aliases (aligned_alloc = memalign in some libcs) are probed once */
		for (size_t j = 0; j < i; j++)
			dup |= found[j] && off[j] == off[i] && !strcmp(path[j], path[i]);
		if (dup)
			continue;
		ret = lt_attach_uprobe(suite, al_funcs[i].prog, o.pid, path[i], off[i], false);
		if (!ret && o.leaks && al_funcs[i].ret)
			ret = lt_attach_uprobe(suite, "lt_al_ret", o.pid, path[i], off[i], true);
		if (ret)
			goto out;
		if (strlen(attached) + strlen(al_funcs[i].sym) + 2 < sizeof(attached))
			strcat(strcat(attached, *attached ? " " : ""), al_funcs[i].sym);
	}
	pidfd = lt_pidfd_of(o.pid);
	lt_syms_snapshot(sy, o.pid, comm);
	lt_catch_stop();
	t0 = lt_now_ns(CLOCK_MONOTONIC);
	t0_real = lt_now_ns(CLOCK_REALTIME);
	fprintf(stderr, "lowtrace: alloc: attached to process %u (%s): %s in %s; ", o.pid, comm,
		attached, path[0]);
	if (o.sample_bytes > 1)
		fprintf(stderr, "sampling every %llu bytes on average\n",
			(unsigned long long)o.sample_bytes);
	else
		fprintf(stderr, "recording every allocation\n");
	ret = lt_prof_run(NULL, sy, &uw, o.duration_s, pidfd, &exited);
	dur = lt_now_ns(CLOCK_MONOTONIC) - t0;
	lt_suite_detach(suite);
	if (ret)
		goto out;
	if (exited)
		fprintf(stderr,
			"lowtrace: alloc: process %u exited after %.1f s; reporting what was "
			"collected\n",
			o.pid, dur / 1e9);
	{
		static struct lt_al_key k, nk;
		static struct lt_al_val v;
		static uint64_t a, na;
		static struct lt_al_live l;

		err = lt_map_each(lt_suite_map_fd(suite, "lt_al_sites"), &k, &nk, &v, collect_site,
				  &sites);
		if (err) {
			ret = lt_error(LT_FAIL, "cannot read the allocation sites: %s",
				       strerror(-err));
			goto out;
		}
		if (sites.n)
			qsort(sites.p, sites.n, sizeof(struct site), site_key_cmp);
		if (o.leaks)
			lt_map_each(lt_suite_map_fd(suite, "lt_al_live"), &a, &na, &l, collect_live,
				    &sites);
	}
	lt_prof_read_counts(suite, &ctr);
	{
		int sfd = lt_suite_map_fd(suite, "lt_stacks");

		if (o.fmt == FMT_TEXT) {
			alloc_text(&out, sy, sfd, comm, sites.p, sites.n, false);
			if (o.leaks)
				alloc_text(&out, sy, sfd, comm, sites.p, sites.n, true);
		} else if (o.fmt == FMT_FOLDED) {
			alloc_folded(&out, sy, sfd, comm, sites.p, sites.n, o.leaks);
		} else {
			err = alloc_pprof(&out, sy, sfd, comm, sites.p, sites.n, o.leaks, t0_real,
					  dur);
			if (err) {
				ret = lt_error(LT_FAIL, "cannot write the pprof file: %s",
					       strerror(-err));
				goto out;
			}
		}
	}
	fprintf(stderr, "lowtrace: alloc: %llu calls, %llu sampled in %.1f s, %zu stacks; lost: ",
		(unsigned long long)ctr.c[LT_PC_CALLS], (unsigned long long)ctr.c[LT_PC_SAMPLES],
		dur / 1e9, sites.n);
	lt_prof_print_losses(stderr, &ctr);
	fprintf(stderr, "\n");
	lt_prof_uw_print(stderr, &uw, &ctr);
	ret = LT_OK;
out:
	if (out.b.p)
		ret = lt_pout_close(&out, ret == LT_OK) ?: ret;
	free(sites.p);
	lt_suite_free(suite);
	lt_prof_uw_free(&uw);
	lt_syms_free(sy);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}
