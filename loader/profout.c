// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The parts of lowtrace profile and lowtrace alloc that are the same: the output file, folded
 * frames, stack symbolization, the run loop and the loss counters.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "grow.h"
#include "lowtrace.h"
#include "lt_unwind.h"
#include "opts.h"
#include "out.h"
#include "profout.h"

#define OUT_CAP (1024 * 1024)

int lt_pout_open(struct lt_pout *o, const char *path, bool binary)
{
	const char *why;
	struct stat st;
	char buf[96];
	int err;

	memset(o, 0, sizeof(*o));
	/* a closed reader is a write error here (EPIPE), not a signal that kills */
	signal(SIGPIPE, SIG_IGN);
	o->fd = 1;
	o->path = path;
	o->b.cap = OUT_CAP;
	o->b.p = malloc(OUT_CAP);
	if (!o->b.p)
		return lt_error(LT_FAIL, "out of memory");
	if (!path) {
		if (binary && isatty(1))
			return lt_error(LT_USAGE,
					"--format pprof is binary: write it with -o FILE");
		return LT_OK;
	}
	/* the rules of every file lowtrace writes (out.h); a device root made is written in
	 * place (/dev/null, a terminal), a regular file replaced by a new one */
	err = lt_out_check("-o", path, true);
	if (err)
		return err;
	if (lstat(path, &st) == 0 && S_ISCHR(st.st_mode)) {
		o->fd = lt_out_open(path, O_WRONLY, true, &why, buf, sizeof(buf));
		if (o->fd < 0)
			return lt_error(LT_USAGE, "-o %s: cannot write there: %s", path, why);
		o->path = NULL;
		o->own_fd = true;
		/* -o /dev/tty: the terminal all the same */
		if (binary && isatty(o->fd)) {
			close(o->fd);
			return lt_error(LT_USAGE,
					"-o %s: a terminal: --format pprof is binary, write it "
					"to a file",
					path);
		}
		return LT_OK;
	}
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp-%d", path, (int)getpid()) >=
	    (int)sizeof(o->tmp))
		return lt_error(LT_USAGE, "-o %s: path too long", path);
	o->fd = lt_out_open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, false, &why, buf, sizeof(buf));
	if (o->fd >= 0)
		return LT_OK;
	if (lstat(path, &st) == 0)
		/* the file exists: creating its temporary file beside it failed (a read-only
		 * directory, /proc or /sys): say which file, not "no such file" for `path` */
		return lt_error(LT_USAGE, "-o %s: cannot create %s to replace it with: %s", path,
				o->tmp, why);
	return lt_error(LT_USAGE, "-o %s: cannot write there: %s", path, why);
}

void lt_pout_flush(struct lt_pout *o)
{
	size_t done = 0;

	while (done < o->b.len && !o->err) {
		ssize_t n = write(o->fd, o->b.p + done, o->b.len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			done += n;
	}
	o->b.len = 0;
}

void lt_pout_room(struct lt_pout *o, size_t n)
{
	if (o->b.len + n > o->b.cap)
		lt_pout_flush(o);
}

int lt_pout_close(struct lt_pout *o, bool ok)
{
	int ret = LT_OK;

	lt_pout_flush(o);
	free(o->b.p);
	o->b.p = NULL;
	if (!o->path) {
		if (o->own_fd)
			close(o->fd);
		return o->err ? lt_error(LT_FAIL, "write: %s", strerror(o->err)) : LT_OK;
	}
	if (o->err)
		ret = lt_error(LT_FAIL, "%s: %s", o->path, strerror(o->err));
	else if (close(o->fd))
		ret = lt_error(LT_FAIL, "%s: %s", o->path, strerror(errno));
	o->fd = -1;
	/* rename replaces a link rather than following it; still, what was planted at the
	 * name during the run is left alone (checked as at the start) */
	if (ok && ret == LT_OK) {
		char buf[96];
		const char *why = lt_out_refused(o->path, false, buf, sizeof(buf));

		if (why)
			ret = lt_error(LT_FAIL, "-o %s: %s: refused", o->path, why);
	}
	if (ok && ret == LT_OK && rename(o->tmp, o->path))
		ret = lt_error(LT_FAIL, "%s: %s", o->path, strerror(errno));
	if (!ok || ret != LT_OK)
		unlink(o->tmp);
	return ret;
}

void lt_put_folded(struct lt_buf *b, const char *s)
{
	for (size_t i = 0; s[i] && i < NAME_MAX_OUT; i++) {
		unsigned char c = s[i];

		if (c == ';' || c == ' ')
			lt_put_c(b, '_');
		else
			lt_put_text_str(b, (const char *)&c, 1);
	}
}

struct stk {
	uint64_t ip[LT_STACK_DEPTH + 1];
	int n;
	bool complete; /* LT_UW_COMPLETE was on the last frame */
};

/* Read stack `id` of lt_stacks (leaf first); an id < 0 or a missing stack is empty. */
static void read_stack(int fd, int32_t id, struct stk *s)
{
	s->n = 0;
	s->complete = false;
	if (id < 0 || lt_map_lookup(fd, &id, s->ip))
		return;
	while (s->n < LT_STACK_DEPTH && s->ip[s->n])
		s->n++;
	if (s->n && (s->ip[s->n - 1] & LT_UW_COMPLETE)) {
		s->ip[s->n - 1] &= ~LT_UW_COMPLETE;
		s->complete = true;
	}
}

/* a return address points after the call: look up the call itself */
static void sym_frame(struct lt_syms *sy, bool kernel, uint32_t tgid, const char *comm, uint64_t ip,
		      bool leaf, struct lt_frame *f)
{
	uint64_t a = leaf ? ip : ip - 1;

	if (kernel)
		lt_syms_kernel(sy, a, f);
	else
		lt_syms_user(sy, tgid, comm, a, f);
	f->addr = ip;
}

const char *lt_frame_str(const struct lt_frame *f, char *buf, size_t len)
{
	lt_frame_name(f, buf, len);
	return buf;
}

/* Frames of the tracing machinery itself, on top of a stack taken in a tracepoint. */
static bool is_bpf_frame(const struct lt_frame *f)
{
	static const char *const pfx[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
					   "__traceiter_", "bpf_get_stack" };

	for (size_t i = 0; f->func && i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(f->func, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

void lt_symbolize(struct lt_syms *sy, int stacks_fd, uint32_t tgid, const char *comm, int32_t kid,
		  int32_t uid, uint64_t caller, struct lt_sstack *ss)
{
	static struct stk st;
	int skip = 0;

	read_stack(stacks_fd, kid, &st);
	ss->nk = 0;
	for (int i = 0; i < st.n; i++) {
		struct lt_frame *f = &ss->k[ss->nk];

		sym_frame(sy, true, 0, NULL, st.ip[i], i == skip, f);
		if (i == skip && is_bpf_frame(f))
			skip++;
		else
			ss->nk++;
	}
	read_stack(stacks_fd, uid, &st);
	/* alloc: a walk from the allocator's first instruction misses its caller on
	 * kernels before 6.12; the return address read at entry puts it back */
	if (caller && st.n >= 1 && (st.n < 2 || st.ip[1] != caller)) {
		memmove(&st.ip[2], &st.ip[1], (st.n - 1) * sizeof(st.ip[0]));
		st.ip[1] = caller;
		st.n++;
	}
	ss->nu = st.n;
	ss->u_complete = st.complete;
	for (int i = 0; i < st.n; i++)
		sym_frame(sy, false, tgid, comm, st.ip[i], i == 0, &ss->u[i]);
}

void lt_comm_str(char *dst, const char *comm)
{
	memcpy(dst, comm, LT_COMM_LEN);
	dst[LT_COMM_LEN] = 0;
}

int lt_pidfd_of(uint32_t pid)
{
	int fd;

	if (!pid)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno == ESRCH)
		return -2;
	return fd;
}

/* readable once the process has exited (zombie or reaped) */
static bool pid_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd == -2 || (pidfd >= 0 && poll(&p, 1, 0) == 1);
}

int lt_prof_run(struct lt_ring *ring, struct lt_syms *sy, struct lt_prof_uw *uw,
		uint64_t duration_s, int pidfd, bool *exited)
{
	uint64_t end = duration_s ? lt_now_ns(CLOCK_MONOTONIC) + duration_s * 1000000000ull : 0;

	*exited = false;
	while (!lt_stop) {
		int n;

		if (end && lt_now_ns(CLOCK_MONOTONIC) >= end)
			break;
		if (pid_exited(pidfd)) {
			*exited = true;
			break;
		}
		lt_syms_tick(sy);
		lt_prof_uw_tick(uw);
		if (!ring) {
			usleep(100000);
			continue;
		}
		n = lt_ring_poll(ring, 100);
		if (n < 0 && n != -EINTR)
			return lt_error(LT_FAIL, "ring buffer: %s", strerror(-n));
	}
	return LT_OK;
}

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

void *lt_vec_push(struct lt_vec *v)
{
	if (lt_grow(&v->p, &v->cap, v->n + 1, v->elem))
		return NULL;
	return (char *)v->p + v->elem * v->n++;
}

void lt_prof_read_counts(struct lt_suite *s, struct lt_prof_counts *c)
{
	int fd = lt_suite_map_fd(s, "lt_prof_err");

	for (uint32_t i = 0; i < LT_PC_SLOTS; i++)
		if (fd < 0 || lt_percpu_u64(fd, i, &c->c[i]))
			c->c[i] = 0;
}

const char *const lt_prof_ctr_names[LT_PC_SLOTS] = {
	[LT_PC_KSTACK_COLL] = "kernel_stack_collisions",
	[LT_PC_USTACK_COLL] = "user_stack_collisions",
	[LT_PC_KSTACK_ERR] = "kernel_stack_errors",
	[LT_PC_USTACK_ERR] = "user_stack_missing",
	[LT_PC_MAP_FULL] = "map_full",
	[LT_PC_TASK_DROP] = "new_process_notices_lost",
	[LT_PC_START_FULL] = "switch_table_full",
	[LT_PC_LIVE_FULL] = "live_table_full",
	[LT_PC_STACKS_FULL] = "stack_table_full",
	[LT_PC_SEEN_FULL] = "process_table_full",
	[LT_PC_CD_FULL] = "countdown_table_full",
};

void lt_prof_print_losses(FILE *f, const struct lt_prof_counts *c)
{
	bool any = false;

	for (int i = 0; i < LT_PC_SLOTS; i++) {
		if (!lt_prof_ctr_names[i])
			continue;
		fprintf(f, "%s%s=%llu", any ? " " : "", lt_prof_ctr_names[i],
			(unsigned long long)c->c[i]);
		any = true;
	}
}

/* ---- unwind tables ---- */

/* rows of headroom past what the processes map at the start (dlopen, new processes) */
#define UW_SPARE_ROWS (64u * 1024)
#define UW_PROCS_PID 64 /* -p: the process, and room for pid reuse */
#define UW_PROCS_MIN 256 /* no -p: twice the live processes, within these bounds (2 KiB each) */
#define UW_PROCS_ALL 4096
#define UW_REFRESH_NS 200000000ull

static uint64_t maps_hash(uint32_t tgid)
{
	char path[64], buf[4096];
	uint64_t h = 0xcbf29ce484222325ull;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ (uint8_t)buf[i]) * 0x100000001b3ull;
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
			overlaps = old->m[i].start < now->m[j].end && now->m[j].start < old->m[i].end;
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
	if (lt_syms_unwind(u->sy, &u->t, tgid, &view))
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
			uw_push(u, tgid, &u->v[i]); /* exec'd: a new comm, new mappings */
			return;
		}
	uw_push(u, tgid, NULL);
}

void lt_prof_uw_tick(struct lt_prof_uw *u)
{
	uint64_t now;

	if (!u || !u->on)
		return;
	now = lt_now_ns(CLOCK_MONOTONIC);
	if (now < u->next_ns)
		return;
	u->next_ns = now + UW_REFRESH_NS;
	for (size_t i = 0; i < u->n;) {
		char path[32];

		snprintf(path, sizeof(path), "/proc/%u", u->v[i].tgid);
		if (access(path, F_OK)) {
			/* gone: its entry is free for the next process */
			lt_suite_unwind_proc(u->suite, u->v[i].tgid, NULL);
			free(u->v[i].view);
			u->v[i] = u->v[--u->n];
			u->gone++;
			continue;
		}
		uw_push(u, u->v[i].tgid, &u->v[i]);
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

void lt_prof_uw_print(FILE *f, const struct lt_prof_uw *u, const struct lt_prof_counts *c)
{
	const struct lt_uw_table *t = &u->t;
	struct lt_syms_stats ss;

	lt_syms_get_stats(u->sy, &ss);
	if (!u->on) {
		fprintf(f, "lowtrace: unwind: off (frame pointers only); perf_maps_read=%llu "
			   "perf_maps_cut=%llu\n",
			(unsigned long long)ss.jit_read, (unsigned long long)ss.jit_cut);
		return;
	}
	fprintf(f, "lowtrace: unwind: %llu files, %u rows (%.1f MiB for %.1f MiB of text) built in %.0f ms;",
		(unsigned long long)t->files, t->used, t->used * 8.0 / (1 << 20),
		t->text_bytes / (double)(1 << 20), t->build_ns / 1e6);
	for (int i = 0; i < LT_PC_SLOTS; i++)
		if (lt_prof_uw_names[i])
			fprintf(f, " %s=%llu", lt_prof_uw_names[i], (unsigned long long)c->c[i]);
	fprintf(f, " files_without_cfi=%llu files_not_fitting=%llu mappings_over=%llu "
		   "processes_not_fitting=%llu perf_maps_read=%llu perf_maps_cut=%llu\n",
		(unsigned long long)t->files_no_cfi, (unsigned long long)t->files_full,
		(unsigned long long)t->maps_over, (unsigned long long)u->proc_full,
		(unsigned long long)ss.jit_read, (unsigned long long)ss.jit_cut);
}

void lt_prof_uw_json(struct lt_buf *b, const struct lt_prof_uw *u, const struct lt_prof_counts *c)
{
	struct lt_syms_stats ss;

	lt_put_s(b, ",\"unwind\":{");
	lt_put_s(b, u->on ? "\"on\":true" : "\"on\":false");
	for (int i = 0; i < LT_PC_SLOTS; i++)
		if (lt_prof_uw_names[i])
			lt_json_u64(b, lt_prof_uw_names[i], c->c[i]);
	lt_json_u64(b, "files", u->t.files);
	lt_json_u64(b, "rows", u->t.used);
	lt_json_u64(b, "text_bytes", u->t.text_bytes);
	lt_json_u64(b, "build_ns", u->t.build_ns);
	lt_json_u64(b, "files_without_cfi", u->t.files_no_cfi);
	lt_json_u64(b, "files_not_fitting", u->t.files_full);
	lt_json_u64(b, "mappings_over", u->t.maps_over);
	lt_json_u64(b, "processes_not_fitting", u->proc_full);
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
