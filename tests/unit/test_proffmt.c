// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The output formats of profile and alloc (proffmt.h), every format through the table on one
 * fixed set of samples, stacks and counters; the bytes must equal the files in tests/unit/proffmt/, what
 * the commands wrote for the same input before the table existed (pprof compared gunzip'd).
 * The stacks go through lt_symbolize: lt_map_lookup is served here, the symbolizer's lookups
 * are wrapped (-Wl,--wrap=lt_syms_user,--wrap=lt_syms_kernel).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lowtrace.h"
#include "lt_unwind.h"
#include "proffmt.h"
#include "tap.h"

#define GOLDEN "tests/unit/proffmt/"
#define STACKS_FD 100

/* ---- the kernel's side: stacks by id, and the unwind calls profuw.c links to ---- */

static const uint64_t stacks[][8] = {
	[1] = { 0xffff0001, 0xffff0010, 0xffff0020, 0xffff0030 },
	[2] = { 0x1000, 0x2000, 0x3000, 0x4000 | LT_UW_COMPLETE },
	[3] = { 0x1100, 0x2200, 0x7700, 0x3300 },
	[4] = { 0x1100 },
	[5] = { 0x1100, 0x5000, 0x3000 },
	[6] = { 0x1000, 0x8800, 0x2000, 0x9900 },
};

int lt_map_lookup(int fd, const void *key, void *val)
{
	int32_t id;

	memcpy(&id, key, sizeof(id));
	if (fd != STACKS_FD || id <= 0 || id >= 7)
		return -ENOENT;
	memset(val, 0, LT_STACK_DEPTH * 8);
	memcpy(val, stacks[id], sizeof(stacks[id]));
	return 0;
}

void lt_suite_set_unwind(struct lt_suite *s, uint32_t rows, uint32_t procs)
{
	(void)s, (void)rows, (void)procs;
}

struct lt_uw_row *lt_suite_unwind_rows(struct lt_suite *s, uint32_t *cap)
{
	(void)s, (void)cap;
	return NULL;
}

int lt_suite_unwind_proc(struct lt_suite *s, uint32_t tgid, const struct lt_uw_proc *p)
{
	(void)s, (void)tgid, (void)p;
	return -ENOSYS;
}

/* ---- the symbolizer: names by address (a bpf_prog_ leaf, odd bytes, no symbol, no file) ---- */

void __wrap_lt_syms_kernel(struct lt_syms *s, uint64_t addr, struct lt_frame *f)
{
	static const char *const names[] = { "bpf_prog_abc_lt_prof", "schedule", "do_syscall_64",
					     NULL };

	(void)s;
	memset(f, 0, sizeof(*f));
	f->func = names[((addr & 0xff) >> 4) & 3];
	f->func_off = addr & 0xf;
	f->module = "[kernel]";
	f->mod_off = addr - 0xffff0000;
}

static const char *user_func(uint64_t addr, const char **module, const char **build_id)
{
	switch (addr >> 8) {
	case 0x10:
		return "work;x y";
	case 0x11:
		*module = "/usr/lib/libc.so.6";
		*build_id = NULL;
		return "malloc";
	case 0x1f:
		return "leaf_fn";
	case 0x21:
		return "\xc3\xa9t\x01\xff";
	case 0x20:
	case 0x1ff:
		*module = "/usr/lib/libz.so";
		return NULL;
	case 0x2f:
		return "mid";
	case 0x32:
	case 0x2ff:
	case 0x3f:
		return "main";
	case 0x3ff:
		return "_start";
	case 0x4f:
		return "caller_a";
	case 0x5f:
		return "caller_b";
	case 0x76:
		return "__libc_start_main";
	case 0x87:
		*module = NULL;
		return NULL;
	case 0x98:
		*module = "/tmp/perf-46.map";
		*build_id = NULL;
		return NULL;
	}
	return "other";
}

void __wrap_lt_syms_user(struct lt_syms *s, uint32_t tgid, const char *comm, uint64_t addr,
			 struct lt_frame *f)
{
	(void)s, (void)tgid, (void)comm;
	memset(f, 0, sizeof(*f));
	f->func_off = addr & 0xff;
	f->mod_off = addr + 0x40;
	f->map_start = addr & ~0xfffull;
	f->map_limit = f->map_start + 0x1000;
	f->map_pgoff = 0x200;
	f->module = "/usr/bin/app";
	f->build_id = "deadbeef";
	f->func = user_func(addr, &f->module, &f->build_id);
}

static void stack_of(void *ctx, const struct lt_psample *s, struct lt_sstack *ss)
{
	lt_symbolize(ctx, STACKS_FD, s->tgid, s->comm, s->kstack, s->ustack, s->caller, ss);
}

/* ---- the samples ---- */

#define PERIOD (1000000000ull / 49)

static size_t profile_samples(struct lt_psample *out, bool off)
{
	static const struct {
		uint32_t tgid;
		int32_t k, u;
		const char *comm;
		uint64_t count, ns;
	} e[] = {
		{ 42, 1, 2, "app", 5, 1000 },
		{ 42, -1, 2, "app", 3, 7 },
		{ 43, 1, 3, "we;ird name\x7f", 2, 9 },
		{ 44, 1, 2, "app", 4, 11 },
		{ 45, -1, -1, "abcdefghijklmnop", 1, 0 },
		{ 46, 1, 6, "jit", 6, 0 },
		{ 47, -1, 4, "app", 0, 0 },
	};
	size_t n = sizeof(e) / sizeof(e[0]);

	for (size_t i = 0; i < n; i++) {
		struct lt_psample *s = &out[i];

		memset(s, 0, sizeof(*s));
		s->tgid = e[i].tgid;
		snprintf(s->comm, sizeof(s->comm), "%s", e[i].comm); /* 16 bytes, no NUL: cut */
		s->kstack = e[i].k;
		s->ustack = e[i].u;
		s->v[0] = e[i].count;
		s->v[1] = off ? e[i].ns : e[i].count * PERIOD;
	}
	return n;
}

/* sites in key order, with what their sampled blocks not freed add up to */
static size_t alloc_samples(struct lt_psample *out)
{
	static const struct {
		int32_t u;
		uint64_t caller;
		struct lt_psite a, live;
	} e[] = {
		{ 3, 0, { 1000, (3 << 16) + 0x8000, 2 }, { 1000, 10 << 16, 1 } },
		{ 3, 0x2200, { 300, (1 << 16) + 0x4000, 1 }, { 300, 30 << 16, 1 } },
		{ 4, 0, { 500, 1 << 16, 1 }, {} },
		{ 5, 0x5000, { 2000, 9 << 16, 4 }, { 2000, (2000 << 16) / 33, 1 } },
		{ 5, 0x6000, { 700, 7 << 16, 3 }, {} },
		{ 6, 0, { 64, 1 << 15, 1 }, { 64, (64 << 16) / 7, 1 } },
		{ -1, 0, {}, {} },
	};
	size_t n = sizeof(e) / sizeof(e[0]);

	for (size_t i = 0; i < n; i++) {
		struct lt_psample *s = &out[i];

		memset(s, 0, sizeof(*s));
		s->tgid = 4242;
		strcpy(s->comm, "sleep");
		s->kstack = -1;
		s->ustack = e[i].u;
		s->caller = e[i].caller;
		s->site[0] = e[i].a;
		s->site[1] = e[i].live;
		for (int j = 0; j < 2; j++) {
			s->v[2 * j] = lt_fp_round(s->site[j].count_fp);
			s->v[2 * j + 1] = s->site[j].bytes;
		}
	}
	return n;
}

/* ---- one format, one kind: written to a file, compared ---- */

static struct lt_syms *sy;
static char dir[64];

static char *slurp(const char *path, bool gz, size_t *len)
{
	size_t cap = 1 << 20;
	char *p = malloc(cap);
	gzFile g = gz ? gzopen(path, "rb") : NULL;
	int fd = gz ? -1 : open(path, O_RDONLY);
	ssize_t n;

	*len = 0;
	if (!p || (gz ? !g : fd < 0)) {
		free(p);
		return NULL;
	}
	while ((n = gz ? gzread(g, p + *len, cap - *len) : read(fd, p + *len, cap - *len)) > 0)
		*len += n;
	if (gz)
		gzclose(g);
	else
		close(fd);
	return p;
}

static void check(const char *fmt, const struct lt_pkind *kind, const struct lt_psample *s,
		  size_t n, const char *golden)
{
	static struct lt_prof_counts ctr;
	struct lt_prof_uw uw = { .sy = sy };
	struct lt_pout o;
	char path[128], gpath[128];
	struct lt_pwriter w = {
		.fmt = lt_pfmt_named(fmt),
		.kind = kind,
		.out = &o,
		.stack = stack_of,
		.stack_ctx = sy,
		.t0_real = 1700000000123456789ull,
		.dur = 1750000000,
		.ctr = &ctr,
		.uw = &uw,
	};
	size_t len, glen;
	char *got, *want;
	int ret;

	for (int i = 0; i < LT_PC_SLOTS; i++)
		ctr.c[i] = i * 7 + 1;
	snprintf(path, sizeof(path), "%s/%s", dir, golden);
	snprintf(gpath, sizeof(gpath), GOLDEN "%s", golden);
	ret = lt_pout_open(&o, path, w.fmt->binary);
	if (!ret)
		ret = lt_pwrite(&w, s, n);
	ret = lt_pout_close(&o, ret == LT_OK) ?: ret;
	got = slurp(path, w.fmt->binary, &len);
	want = slurp(gpath, false, &glen);
	ok(!ret && got && want && len == glen && !memcmp(got, want, len),
	   "%s: %s (%zu bytes, %zu expected)", fmt, golden, len, glen);
	free(got);
	free(want);
	unlink(path);
}

static void profile_kind(struct lt_pkind *k, bool off)
{
	lt_pkind_profile(k, off, PERIOD);
	k->comment = off ? "lowtrace profile --off-cpu, sched_switch" : "lowtrace profile , cycles";
	k->json_head = off ? "\"mode\":\"off-cpu\",\"event\":\"sched_switch\""
			   : "\"mode\":\"cpu\",\"event\":\"cycles\",\"frequency_hz\":49";
}

int main(void)
{
	static struct lt_psample s[16];
	struct lt_pkind k;
	size_t n;

	sy = lt_syms_new();
	strcpy(dir, "/tmp/lt-proffmt-XXXXXX");
	if (!sy || !mkdtemp(dir))
		return 1;
	for (int off = 0; off < 2; off++) {
		const char *const names[2][3] = {
			{ "profile.folded", "profile.json", "profile.pb" },
			{ "profile_off.folded", "profile_off.json", "profile_off.pb" },
		};

		n = profile_samples(s, off);
		profile_kind(&k, off);
		check("folded", &k, s, n, names[off][0]);
		check("json", &k, s, n, names[off][1]);
		check("pprof", &k, s, n, names[off][2]);
	}
	for (int leaks = 0; leaks < 2; leaks++) {
		const char *const names[2][3] = {
			{ "alloc.txt", "alloc.folded", "alloc.pb" },
			{ "alloc_leaks.txt", "alloc_leaks.folded", "alloc_leaks.pb" },
		};

		n = alloc_samples(s);
		lt_pkind_alloc(&k, leaks);
		check("text", &k, s, n, names[leaks][0]);
		check("folded", &k, s, n, names[leaks][1]);
		check("pprof", &k, s, n, names[leaks][2]);
	}
	lt_syms_free(sy);
	rmdir(dir);
	return tap_done();
}
