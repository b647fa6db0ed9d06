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
#include "kernel.h"
#include "lowtrace.h"
#include "lt_prof.h"
#include "opts.h"
#include "out.h"
#include "profsess.h"
#include "sym.h"

#define DEFAULT_SAMPLE_BYTES (512 * 1024)

struct alloc_opts {
	struct lt_psess_opts s;
	uint64_t sample_bytes;
	bool leaks;
};

static const char *const alloc_fmts[] = { "text", "folded", "pprof", NULL };

static const int alloc_keys[] = {
	LT_O_PID,	  LT_O_DURATION, LT_O_FORMAT,	 LT_O_OUTPUT,
	LT_O_SAMPLE_BYTES, LT_O_LEAKS,   LT_O_NO_UNWIND, 0
};

static int alloc_opt(void *ctx, int key, const char *arg, uint64_t num)
{
	struct alloc_opts *o = ctx;

	switch (key) {
	case LT_O_PID:
		o->s.pid = num;
		break;
	case LT_O_DURATION:
		o->s.duration_s = num;
		break;
	case LT_O_FORMAT:
		return lt_pfmt_parse(arg, alloc_fmts, &o->s.fmt);
	case LT_O_OUTPUT:
		o->s.out = arg;
		return lt_out_check("-o", arg, true);
	case LT_O_SAMPLE_BYTES:
		o->sample_bytes = num;
		break;
	case LT_O_LEAKS:
		o->leaks = true;
		break;
	case LT_O_NO_UNWIND:
		o->s.no_unwind = true;
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

/* where each allocator function is, found before anything is loaded */
struct al_target {
	char path[AL_NFUNCS][PATH_MAX];
	uint64_t off[AL_NFUNCS];
	bool found[AL_NFUNCS];
};

/* why malloc (the first function) was not found */
static int find_error(int err, uint32_t pid, const char *path)
{
	if (err == -EAGAIN)
		return lt_error(LT_FAIL,
				"alloc: process %u mapped no library in %u s (stopped "
				"before ld.so ran, or linked to none)",
				pid, START_WAIT_MS / 1000);
	if (err == -ENOENT)
		return lt_error(LT_FAIL,
				"alloc: no malloc symbol in %s (the libraries of process "
				"%u: a static binary without symbols?)",
				*path ? path : "any mapped file", pid);
	if (err == -EACCES || err == -EPERM)
		return lt_error(LT_ENV,
				"permission denied: cannot read the mappings of process %u "
				"(run as root)",
				pid);
	return lt_error(LT_FAIL, "alloc: cannot read the mappings of process %u: %s", pid,
			strerror(-err));
}

/* -p checked (comm[len]: its comm) and its allocator found: an exit code */
static int find_allocator(const struct alloc_opts *o, char *comm, size_t len, struct al_target *t)
{
	uint32_t pid = o->s.pid, tgid;
	bool kthread;
	int ret, err;

	if (!pid)
		return lt_error(LT_USAGE, "alloc: -p PID is required");
	ret = lt_check_pid(pid, comm, len);
	if (ret)
		return ret;
	if (!lt_proc_task(pid, &tgid, &kthread) && kthread)
		return lt_error(LT_USAGE,
				"alloc: process %u (%s) is a kernel thread: no user memory", pid,
				comm);
	for (size_t i = 0; i < AL_NFUNCS; i++) {
		err = find_func_waiting(pid, al_funcs[i].sym, t->path[i], sizeof(t->path[i]),
					&t->off[i]);
		if (err == -ESRCH)
			return lt_error(LT_USAGE, "--pid %u: no such process", pid);
		t->found[i] = !err;
		if (err && i == 0)
			return find_error(err, pid, t->path[0]);
	}
	if (o->leaks && !t->found[AL_NFUNCS - 1])
		return lt_error(LT_FAIL, "alloc --leaks: no free symbol in %s", t->path[0]);
	/* after any wait: an exec the wait saw the end of set the comm */
	return lt_check_pid(pid, comm, len);
}

/* the uprobes (and uretprobes with --leaks); the names attached into attached[len] */
static int attach_allocator(struct lt_psess *s, const struct alloc_opts *o,
			    const struct al_target *t, char *attached, size_t len)
{
	for (size_t i = 0; i < AL_NFUNCS; i++) {
		bool dup = false;
		int ret;

		if (!t->found[i] || (!o->leaks && !strcmp(al_funcs[i].sym, "free")))
			continue;
		/* aliases (aligned_alloc = memalign in some libcs) are probed once */
		for (size_t j = 0; j < i; j++)
			dup |= t->found[j] && t->off[j] == t->off[i] &&
			       !strcmp(t->path[j], t->path[i]);
		if (dup)
			continue;
		ret = lt_attach_uprobe(s->suite, al_funcs[i].prog, o->s.pid, t->path[i], t->off[i],
				       false);
		if (!ret && o->leaks && al_funcs[i].ret)
			ret = lt_attach_uprobe(s->suite, "lt_al_ret", o->s.pid, t->path[i],
					       t->off[i], true);
		if (ret)
			return ret;
		if (strlen(attached) + strlen(al_funcs[i].sym) + 2 < len)
			strcat(strcat(attached, *attached ? " " : ""), al_funcs[i].sym);
	}
	return LT_OK;
}

/* the sites (sorted by key) with their blocks not freed, as samples */
static int read_sites(struct lt_psess *s, bool leaks, struct lt_vec *smp)
{
	static struct lt_al_key k, nk;
	static struct lt_al_val v;
	static uint64_t a, na;
	static struct lt_al_live l;
	struct lt_vec sites = { .elem = sizeof(struct site) };
	int err = lt_map_each(lt_suite_map_fd(s->suite, "lt_al_sites"), &k, &nk, &v, collect_site,
			      &sites);

	if (err) {
		free(sites.p);
		return lt_error(LT_FAIL, "cannot read the allocation sites: %s", strerror(-err));
	}
	if (sites.n)
		qsort(sites.p, sites.n, sizeof(struct site), site_key_cmp);
	if (leaks)
		lt_map_each(lt_suite_map_fd(s->suite, "lt_al_live"), &a, &na, &l, collect_live,
			    &sites);
	for (size_t i = 0; i < sites.n; i++) {
		const struct site *st = (const struct site *)sites.p + i;
		struct lt_psample *p = lt_vec_push(smp);

		if (!p)
			break;
		memset(p, 0, sizeof(*p));
		p->tgid = st->k.tgid;
		/* /proc/PID/comm: at most LT_COMM_LEN - 1 bytes */
		memcpy(p->comm, s->comm, strnlen(s->comm, LT_COMM_LEN));
		p->kstack = -1;
		p->ustack = st->k.ustack;
		p->caller = st->k.caller;
		p->site[0] = (struct lt_psite){ st->v.bytes, st->v.count_fp, st->v.samples };
		p->site[1] =
			(struct lt_psite){ st->live_bytes, st->live_count_fp, st->live_blocks };
		for (int j = 0; j < 2; j++) {
			p->v[2 * j] = lt_fp_round(p->site[j].count_fp);
			p->v[2 * j + 1] = p->site[j].bytes;
		}
	}
	free(sites.p);
	return LT_OK;
}

/* The sites read, written in the format, the summary on stderr: an exit code */
static int report(struct lt_psess *s, bool leaks)
{
	struct lt_vec smp = { .elem = sizeof(struct lt_psample) };
	struct lt_pkind kind;
	int ret = read_sites(s, leaks, &smp);

	lt_pkind_alloc(&kind, leaks);
	if (!ret)
		ret = lt_psess_write(s, &kind, smp.p, smp.n);
	free(smp.p);
	if (ret)
		return ret;
	fprintf(stderr, "lowtrace: alloc: %llu calls, %llu sampled in %.1f s, %zu stacks; lost: ",
		(unsigned long long)s->ctr.c[LT_PC_CALLS],
		(unsigned long long)s->ctr.c[LT_PC_SAMPLES], s->dur / 1e9, smp.n);
	lt_psess_summary(s, "");
	return LT_OK;
}

int cmd_alloc(int argc, char **argv)
{
	static uint64_t ival[LT_AL_IVAL_N];
	static struct al_target t;
	struct alloc_opts o = { .sample_bytes = DEFAULT_SAMPLE_BYTES };
	struct lt_psess s = {};
	char attached[512] = "";
	int ret;

	o.s.ringbuf_size = 4096;
	o.s.fmt = &lt_pfmt_text;
	o.s.probe = "alloc";
	ret = lt_opts_parse(argc, argv, alloc_keys, help_alloc, alloc_opt, &o);
	if (ret)
		return ret;
	ret = find_allocator(&o, s.comm, sizeof(s.comm), &t);
	if (ret)
		return ret;
	if (o.sample_bytes > 1)
		exp_table(o.sample_bytes, ival);
	ret = lt_psess_open(&s, &o.s);
	if (ret)
		goto out;
	lt_suite_set_alloc(s.suite, o.sample_bytes, ival, o.leaks);
	ret = lt_psess_load(&s);
	if (!ret)
		ret = attach_allocator(&s, &o, &t, attached, sizeof(attached));
	if (!ret)
		ret = lt_psess_start(&s);
	if (ret)
		goto out;
	fprintf(stderr, "lowtrace: alloc: attached to process %u (%s): %s in %s; ", o.s.pid, s.comm,
		attached, t.path[0]);
	if (o.sample_bytes > 1)
		fprintf(stderr, "sampling every %llu bytes on average\n",
			(unsigned long long)o.sample_bytes);
	else
		fprintf(stderr, "recording every allocation\n");
	ret = lt_psess_run(&s);
	if (ret)
		goto out;
	if (s.exited)
		fprintf(stderr,
			"lowtrace: alloc: process %u exited after %.1f s; reporting what was "
			"collected\n",
			o.s.pid, s.dur / 1e9);
	ret = report(&s, o.leaks);
out:
	return lt_psess_close(&s, ret);
}
