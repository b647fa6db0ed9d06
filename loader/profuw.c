// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The unwind tables of profile and alloc: sized before load for the processes mapped now, the
 * process views pushed and refreshed while the profile runs, and their figures for the summary.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "kernel.h"
#include "lowtrace.h"
#include "lt_unwind.h"
#include "profuw.h"

/* rows of headroom past what the processes map at the start (dlopen, new processes) */
#define UW_SPARE_ROWS (64u * 1024)
#define UW_PROCS_PID 64 /* -p: the process, and room for pid reuse */
#define UW_PROCS_MIN 256 /* no -p: twice the live processes, within these bounds (2 KiB each) */
#define UW_PROCS_ALL 4096
/* each refresh is a few /proc reads per process: at 200 ms, 0.5 % of a CPU system-wide */
#define UW_REFRESH_NS 1000000000ull
/* every process's mappings hashed again at least this often: a change of the same size */
#define UW_FULL_NS 5000000000ull

/*
 * The process's virtual size in pages (/proc/TGID/statm's first field): what a mapping
 * change almost always changes, read in a few microseconds where hashing /proc/TGID/maps
 * took tens (system-wide at 19 Hz that refresh was 0.5 % of a CPU here). -ENOENT: gone.
 */
static int vm_pages(uint32_t tgid, uint64_t *pages)
{
	char path[32], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/statm", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	*pages = strtoull(buf, NULL, 10);
	return 0;
}

static uint64_t maps_hash(uint32_t tgid)
{
	char path[64], buf[4096];
	uint64_t h = LT_HASH_BASIS;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = lt_hash_more(h, buf, (size_t)n);
	close(fd);
	return n < 0 ? 0 : h;
}

static bool is_pid_dir(const char *name, uint32_t *pid)
{
	char *end;
	unsigned long v = strtoul(name, &end, 10);

	if (!*name || *end || !v || v > UINT32_MAX)
		return false;
	*pid = (uint32_t)v;
	return true;
}

void lt_prof_uw_size(struct lt_prof_uw *u, struct lt_suite *s, struct lt_syms *sy, uint32_t pid,
		     bool off)
{
	uint64_t need = 0, rows, live = 0;
	struct dirent *d;
	uint32_t p;
	DIR *dir;

	memset(u, 0, sizeof(*u));
	u->suite = s;
	u->sy = sy;
	u->pid = pid;
	if (off)
		return;
	if (pid) {
		need = lt_syms_unwind_need(sy, &u->t, pid);
		u->procs = UW_PROCS_PID;
	} else {
		/* every file mapped now is built once: samples of running processes unwind at once */
		dir = opendir("/proc");
		while (dir && (d = readdir(dir)))
			if (is_pid_dir(d->d_name, &p) && p != (uint32_t)getpid()) {
				need += lt_syms_unwind_need(sy, &u->t, p);
				live++;
			}
		if (dir)
			closedir(dir);
		u->procs = live * 2 < UW_PROCS_MIN   ? UW_PROCS_MIN
			   : live * 2 > UW_PROCS_ALL ? UW_PROCS_ALL
						     : live * 2;
	}
	rows = need + need / 2 + UW_SPARE_ROWS;
	if (rows > (1u << 26)) /* the walker's search covers 2^26 rows */
		rows = 1u << 26;
	lt_suite_set_unwind(s, (uint32_t)rows, (uint32_t)u->procs);
	u->on = true;
}

/*
 * now + the mappings of old that overlap none of now, in address order, at most LT_UW_MAPS (now
 * first): a library that a dlopen loop maps and unmaps keeps its rows while it is away, so a
 * refresh that catches it unmapped does not leave its next samples without tables.
 */
static void uw_merge(struct lt_uw_proc *now, const struct lt_uw_proc *old)
{
	struct lt_uw_map keep[LT_UW_MAPS];
	uint32_t nk = 0, i, j;

	for (i = 0; i < old->n && now->n + nk < LT_UW_MAPS; i++) {
		bool overlaps = false;

		for (j = 0; j < now->n && !overlaps; j++)
			overlaps =
				old->m[i].start < now->m[j].end && now->m[j].start < old->m[i].end;
		if (!overlaps)
			keep[nk++] = old->m[i];
	}
	/* both sorted: merge from the end */
	i = now->n;
	j = nk;
	now->n += nk;
	for (uint32_t at = now->n; j;) {
		if (i && now->m[i - 1].start > keep[j - 1].start)
			now->m[--at] = now->m[--i];
		else
			now->m[--at] = keep[--j];
	}
}

static void uw_push(struct lt_prof_uw *u, uint32_t tgid, struct lt_uw_track *tr)
{
	static struct lt_uw_proc view;
	uint64_t h = maps_hash(tgid);

	if (tr && tr->maps_hash == h)
		return;
	/* h again, of the text the view is made of: the maps may have moved since (a dlopen
	 * under way), and a hash of one state kept with the view of another hid the change */
	if (lt_syms_unwind(u->sy, &u->t, tgid, &view, &h))
		return;
	if (tr && tr->view)
		uw_merge(&view, tr->view);
	if (lt_suite_unwind_proc(u->suite, tgid, &view)) {
		u->proc_full++;
		return;
	}
	u->pushes++;
	if (!tr) {
		if (lt_grow((void **)&u->v, &u->cap, u->n + 1, sizeof(*u->v)))
			return;
		tr = &u->v[u->n++];
		memset(tr, 0, sizeof(*tr));
		tr->tgid = tgid;
	}
	tr->maps_hash = h;
	if (!tr->vm_pages)
		vm_pages(tgid, &tr->vm_pages);
	if (!tr->view)
		tr->view = malloc(sizeof(*tr->view));
	if (tr->view)
		memcpy(tr->view, &view, sizeof(view));
}

int lt_prof_uw_start(struct lt_prof_uw *u)
{
	struct dirent *d;
	uint32_t p;
	DIR *dir;

	if (!u->on)
		return LT_OK;
	u->t.rows = lt_suite_unwind_rows(u->suite, &u->t.cap);
	if (!u->t.rows)
		return lt_error(LT_FAIL, "cannot map the unwind table: %s", strerror(errno));
	if (u->pid)
		lt_prof_uw_add(u, u->pid);
	if (!u->pid) {
		dir = opendir("/proc");
		while (dir && (d = readdir(dir)) && u->n < u->procs)
			if (is_pid_dir(d->d_name, &p) && p != (uint32_t)getpid())
				lt_prof_uw_add(u, p);
		if (dir)
			closedir(dir);
	}
	u->next_ns = lt_now_ns(CLOCK_MONOTONIC) + UW_REFRESH_NS;
	return LT_OK;
}

void lt_prof_uw_add(struct lt_prof_uw *u, uint32_t tgid)
{
	if (!u || !u->on)
		return;
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].tgid == tgid) {
			/* exec'd (a new comm), or the walker met a pc outside its view */
			uw_push(u, tgid, &u->v[i]);
			return;
		}
	uw_push(u, tgid, NULL);
}

void lt_prof_uw_tick(struct lt_prof_uw *u)
{
	uint64_t now;
	bool full;

	if (!u || !u->on)
		return;
	now = lt_now_ns(CLOCK_MONOTONIC);
	if (now < u->next_ns)
		return;
	u->next_ns = now + UW_REFRESH_NS;
	full = now >= u->full_ns;
	if (full)
		u->full_ns = now + UW_FULL_NS;
	for (size_t i = 0; i < u->n;) {
		struct lt_uw_track *tr = &u->v[i];
		uint64_t pages = 0;
		int err = vm_pages(tr->tgid, &pages);

		if (err == -ENOENT || err == -ESRCH) {
			/* gone: its entry is free for the next process */
			lt_suite_unwind_proc(u->suite, tr->tgid, NULL);
			free(tr->view);
			*tr = u->v[--u->n];
			u->gone++;
			continue;
		}
		/* the maps' hash when the size moved, and every UW_FULL_NS anyway */
		if (full || err || pages != tr->vm_pages) {
			tr->vm_pages = pages;
			uw_push(u, tr->tgid, tr);
		}
		i++;
	}
}

const char *const lt_prof_uw_names[LT_PC_SLOTS] = {
	[LT_PC_UW_WALKS] = "walks",
	[LT_PC_UW_NOPROC] = "no_tables",
	[LT_PC_UW_EXPR] = "stopped_expression",
	[LT_PC_UW_SIGNAL] = "stopped_signal",
	[LT_PC_UW_READ] = "stopped_read",
	[LT_PC_UW_DEPTH] = "cut_at_depth",
	[LT_PC_UW_FP] = "frame_pointer_steps",
};

void lt_prof_uw_print(FILE *f, const struct lt_prof_uw *u, const uint64_t *c)
{
	const struct lt_uw_table *t = &u->t;
	struct lt_syms_stats ss;

	lt_syms_get_stats(u->sy, &ss);
	if (!u->on) {
		fprintf(f,
			"lowtrace: unwind: off (frame pointers only); perf_maps_read=%llu "
			"perf_maps_cut=%llu\n",
			(unsigned long long)ss.jit_read, (unsigned long long)ss.jit_cut);
		return;
	}
	fprintf(f,
		"lowtrace: unwind: %llu files, %llu rows and %llu of block index (%.1f MiB for %.1f "
		"MiB of text) built in %.0f ms;",
		(unsigned long long)t->files, (unsigned long long)(t->used - t->idx_rows),
		(unsigned long long)t->idx_rows,
		t->used * (double)sizeof(struct lt_uw_row) / (1 << 20),
		t->text_bytes / (double)(1 << 20), t->build_ns / 1e6);
	for (int i = 0; i < LT_PC_SLOTS; i++)
		if (lt_prof_uw_names[i])
			fprintf(f, " %s=%llu", lt_prof_uw_names[i], (unsigned long long)c[i]);
	fprintf(f,
		" files_without_cfi=%llu files_not_fitting=%llu mappings_over=%llu "
		"processes_not_fitting=%llu views_pushed=%llu perf_maps_read=%llu perf_maps_cut=%llu\n",
		(unsigned long long)t->files_no_cfi, (unsigned long long)t->files_full,
		(unsigned long long)t->maps_over, (unsigned long long)u->proc_full,
		(unsigned long long)u->pushes,
		(unsigned long long)ss.jit_read, (unsigned long long)ss.jit_cut);
}

void lt_prof_uw_json(struct lt_buf *b, const struct lt_prof_uw *u, const uint64_t *c)
{
	struct lt_syms_stats ss;

	lt_put_s(b, ",\"unwind\":{");
	lt_put_s(b, u->on ? "\"on\":true" : "\"on\":false");
	for (int i = 0; i < LT_PC_SLOTS; i++)
		if (lt_prof_uw_names[i])
			lt_json_u64(b, lt_prof_uw_names[i], c[i]);
	lt_json_u64(b, "files", u->t.files);
	lt_json_u64(b, "rows", u->t.used - u->t.idx_rows);
	lt_json_u64(b, "index_rows", u->t.idx_rows);
	lt_json_u64(b, "text_bytes", u->t.text_bytes);
	lt_json_u64(b, "build_ns", u->t.build_ns);
	lt_json_u64(b, "files_without_cfi", u->t.files_no_cfi);
	lt_json_u64(b, "files_not_fitting", u->t.files_full);
	lt_json_u64(b, "mappings_over", u->t.maps_over);
	lt_json_u64(b, "processes_not_fitting", u->proc_full);
	lt_json_u64(b, "views_pushed", u->pushes);
	lt_syms_get_stats(u->sy, &ss);
	lt_json_u64(b, "perf_maps_read", ss.jit_read);
	lt_json_u64(b, "perf_maps_cut", ss.jit_cut);
	lt_put_c(b, '}');
}

void lt_prof_uw_free(struct lt_prof_uw *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->v[i].view);
	free(u->v);
	u->v = NULL;
	u->n = u->cap = 0;
}
