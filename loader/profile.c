// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lowtrace profile and lowtrace alloc: load a profile probe of the one
 * object on demand (unpinned), let the kernel aggregate by stack, read the
 * aggregates once at the end, symbolize and write folded stacks, pprof,
 * JSON or a text report.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "encode.h"
#include "grow.h"
#include "kernel.h"
#include "lowtrace.h"
#include "lt_prof.h"
#include "pprof.h"
#include "records.h"
#include "sym.h"

#define OUT_CAP (1024 * 1024)
#define NAME_MAX_OUT 512 /* bytes of one frame name written; longer ones are cut */
#define STACK_ENTRIES 16384
#define DEFAULT_SAMPLE_BYTES (512 * 1024)

enum fmt { FMT_FOLDED, FMT_PPROF, FMT_JSON, FMT_TEXT };

struct popts {
	unsigned int freq;
	uint32_t pid;
	const char *cgroup;
	uint64_t duration_s;
	bool off_cpu;
	enum fmt fmt;
	const char *out;
	uint64_t sample_bytes;
	bool leaks;
};

static volatile sig_atomic_t stop_req;

static void on_stop(int sig)
{
	(void)sig;
	stop_req = 1;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- output: written to FILE.tmp-PID, renamed into place only when complete ---- */

struct out {
	const char *path; /* NULL: no file to rename into place */
	char tmp[PATH_MAX];
	int fd;
	bool own_fd; /* a device or fifo opened in place */
	struct lt_buf b;
	int err;
};

static int out_open(struct out *o, const char *path, bool binary)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
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
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return lt_error(LT_USAGE, "-o %s: is a directory", path);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a fifo (/dev/null, a pipe): written in place */
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0)
			return lt_error(LT_USAGE, "-o %s: cannot write there: %s", path,
					strerror(errno));
		o->path = NULL;
		o->own_fd = true;
		return LT_OK;
	}
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp-%d", path, (int)getpid()) >=
	    (int)sizeof(o->tmp))
		return lt_error(LT_USAGE, "-o %s: path too long", path);
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (o->fd < 0)
		return lt_error(LT_USAGE, "-o %s: cannot write there: %s", path, strerror(errno));
	return LT_OK;
}

static void out_flush(struct out *o)
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

/* make room for `n` more bytes */
static void out_room(struct out *o, size_t n)
{
	if (o->b.len + n > o->b.cap)
		out_flush(o);
}

/* ok: rename the finished file into place; else remove it. Returns an exit code. */
static int out_close(struct out *o, bool ok)
{
	int ret = LT_OK;

	out_flush(o);
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
	if (ok && ret == LT_OK && rename(o->tmp, o->path))
		ret = lt_error(LT_FAIL, "%s: %s", o->path, strerror(errno));
	if (!ok || ret != LT_OK)
		unlink(o->tmp);
	return ret;
}

/* A frame name in folded stacks: ';' and spaces would split it, bytes outside printable
 * ASCII never reach a terminal (\xNN) */
static void put_folded(struct lt_buf *b, const char *s)
{
	for (size_t i = 0; s[i] && i < NAME_MAX_OUT; i++) {
		unsigned char c = s[i];

		if (c == ';' || c == ' ')
			lt_put_c(b, '_');
		else
			lt_put_text_str(b, (const char *)&c, 1);
	}
}

/* ---- stacks and symbols ---- */

struct stk {
	uint64_t ip[LT_STACK_DEPTH + 1];
	int n;
};

/* Read stack `id` of lt_stacks (leaf first); an id < 0 or a missing stack is empty. */
static void read_stack(int fd, int32_t id, struct stk *s)
{
	s->n = 0;
	if (id < 0 || lt_map_lookup(fd, &id, s->ip))
		return;
	while (s->n < LT_STACK_DEPTH && s->ip[s->n])
		s->n++;
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

static const char *frame_str(const struct lt_frame *f, char *buf, size_t len)
{
	lt_frame_name(f, buf, len);
	return buf;
}

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

/* A whole symbolized stack: user frames then kernel frames, each leaf first. */
struct sstack {
	struct lt_frame u[LT_STACK_DEPTH + 1];
	struct lt_frame k[LT_STACK_DEPTH];
	int nu, nk;
};

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

static void symbolize(struct lt_syms *sy, int stacks_fd, uint32_t tgid, const char *comm,
		      int32_t kid, int32_t uid, uint64_t caller, struct sstack *ss)
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
	for (int i = 0; i < st.n; i++)
		sym_frame(sy, false, tgid, comm, st.ip[i], i == 0, &ss->u[i]);
}

static void comm_str(char *dst, const char *comm)
{
	memcpy(dst, comm, LT_COMM_LEN);
	dst[LT_COMM_LEN] = 0;
}

/* ---- the ring: new processes, whose mappings are read while they live ---- */

struct ringctx {
	struct lt_syms *sy;
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
	comm_str(comm, ((const struct lt_task *)&rc->rec)->comm);
	if (lt_syms_snapshot(rc->sy, rc->rec.hdr.pid, comm))
		rc->snapshots_failed++;
	return 0;
}

/* ---- the run loop shared by profile and alloc ---- */

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

/* readable once the process has exited (zombie or reaped) */
static bool pid_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd == -2 || (pidfd >= 0 && poll(&p, 1, 0) == 1);
}

/* Runs until --duration, a signal or the end of process --pid. *exited: the latter. */
static int run_loop(struct lt_ring *ring, struct lt_syms *sy, uint64_t duration_s, int pidfd,
		    bool *exited)
{
	uint64_t end = duration_s ? now_ns(CLOCK_MONOTONIC) + duration_s * 1000000000ull : 0;

	*exited = false;
	while (!stop_req) {
		int n;

		if (end && now_ns(CLOCK_MONOTONIC) >= end)
			break;
		if (pid_exited(pidfd)) {
			*exited = true;
			break;
		}
		lt_syms_tick(sy);
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

static int check_pid(uint32_t pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

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

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	stop_req = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- options ---- */

static int parse_fmt(const char *s, bool alloc, enum fmt *f)
{
	if (!strcmp(s, "folded"))
		*f = FMT_FOLDED;
	else if (!strcmp(s, "pprof"))
		*f = FMT_PPROF;
	else if (!alloc && !strcmp(s, "json"))
		*f = FMT_JSON;
	else if (alloc && !strcmp(s, "text"))
		*f = FMT_TEXT;
	else
		return lt_error(LT_USAGE, "--format: unknown format '%s' (known: %s)", s,
				alloc ? "text, folded, pprof" : "folded, pprof, json");
	return LT_OK;
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

static int parse_popts(int argc, char **argv, bool alloc, void (*help)(void), struct popts *o)
{
	static const struct option lopts[] = {
		{ "frequency", required_argument, 0, 'F' },
		{ "pid", required_argument, 0, 'p' },
		{ "cgroup", required_argument, 0, 'c' },
		{ "duration", required_argument, 0, 'd' },
		{ "off-cpu", no_argument, 0, 'O' },
		{ "format", required_argument, 0, 'f' },
		{ "output", required_argument, 0, 'o' },
		{ "sample-bytes", required_argument, 0, 'S' },
		{ "leaks", no_argument, 0, 'L' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *allowed = alloc ? "pdfoSL" : "FpcdOfo";
	uint64_t v;
	int c, err = 0;

	memset(o, 0, sizeof(*o));
	o->freq = 49;
	o->fmt = alloc ? FMT_TEXT : FMT_FOLDED;
	o->sample_bytes = DEFAULT_SAMPLE_BYTES;
	optind = 1;
	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, ":hF:p:c:d:f:o:", lopts, NULL)) != -1) {
		if (c == 'h') {
			help();
			exit(LT_OK);
		}
		if (c == '?')
			return lt_error(LT_USAGE, "%s: unknown option '%s' (see 'lowtrace %s -h')",
					argv[0], argv[optind - 1], argv[0]);
		if (c == ':')
			return lt_error(LT_USAGE, "%s: option '%s' needs a value", argv[0],
					argv[optind - 1]);
		if (!strchr(allowed, c)) {
			const struct option *l = lopts;

			while (l->val != c)
				l++;
			return lt_error(
				LT_USAGE,
				"%s: option '--%s' does not apply here (see 'lowtrace %s -h')",
				argv[0], l->name, argv[0]);
		}
		switch (c) {
		case 'F': {
			unsigned int max = max_freq();

			err = lt_parse_u64("-F", optarg, false, ~0u, &v);
			if (!err && (v < 1 || v > max))
				err = lt_error(LT_USAGE,
					       "-F %s: out of range: 1 to %u Hz "
					       "(kernel.perf_event_max_sample_rate)",
					       optarg, max);
			o->freq = v;
			break;
		}
		case 'p':
			err = lt_parse_u64("--pid", optarg, false, 0x3fffffff, &v);
			if (!err && !v)
				err = lt_error(LT_USAGE, "--pid: invalid value '0'");
			o->pid = v;
			break;
		case 'c':
			o->cgroup = optarg;
			break;
		case 'd':
			err = lt_parse_u64("--duration", optarg, false, 86400 * 365,
					   &o->duration_s);
			if (!err && !o->duration_s)
				err = lt_error(LT_USAGE, "--duration: must be at least 1");
			break;
		case 'O':
			o->off_cpu = true;
			break;
		case 'f':
			err = parse_fmt(optarg, alloc, &o->fmt);
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'S':
			err = lt_parse_u64("--sample-bytes", optarg, true, 1ull << 30,
					   &o->sample_bytes);
			if (!err && !o->sample_bytes)
				err = lt_error(LT_USAGE, "--sample-bytes: must be at least 1");
			break;
		case 'L':
			o->leaks = true;
			break;
		}
	}
	if (err)
		return err;
	if (optind < argc)
		return lt_error(LT_USAGE, "%s: unexpected argument '%s' (see 'lowtrace %s -h')",
				argv[0], argv[optind], argv[0]);
	if (alloc && !o->pid)
		return lt_error(LT_USAGE, "alloc: -p PID is required");
	return LT_OK;
}

/* ---- profile ---- */

static void help_profile(void)
{
	printf("NAME\n    lowtrace profile - sample stacks on CPU, or time blocked off CPU\n\n"
	       "SYNOPSIS\n    lowtrace profile [-F HZ] [-p PID] [-c CGROUP] [--duration S]"
	       " [--off-cpu]\n                     [--format folded|pprof|json] [-o FILE]\n\n"
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
	       "    User stacks are walked by frame pointers: code built without them\n"
	       "    (most of Debian's userland) gives cut stacks; the summary says how\n"
	       "    many samples had a user stack that does not reach _start or a thread\n"
	       "    start. Build your own code with -fno-omit-frame-pointer.\n\n"
	       "OPTIONS\n"
	       "    -F, --frequency HZ   samples per second per CPU (default 49)\n"
	       "    -p, --pid PID        only this process (thread group)\n"
	       "    -c, --cgroup PATH    only tasks in this cgroup v2 directory or below\n"
	       "    -d, --duration S     stop after S seconds (default: Ctrl-C or the end of -p)\n"
	       "    --off-cpu            blocked time instead of CPU samples\n"
	       "    -f, --format F       folded (default: comm;root;...;leaf VALUE, kernel\n"
	       "                         frames with _[k]; the value is samples, or ns off CPU),\n"
	       "                         pprof (gzip'd protobuf; needs -o), json\n"
	       "    -o, --output FILE    write there (complete, or not at all) instead of "
	       "stdout\n\n"
	       "EXIT STATUS\n    0 done (also when -p exits first: what was collected is written);"
	       "\n    2 usage (bad -F, no such -p, unwritable -o); 5 no privileges or BTF;"
	       " 1 other failure.\n");
}

struct pent {
	struct lt_prof_key k;
	struct lt_prof_val v;
};

struct vec {
	void *p;
	size_t n, cap, elem;
};

static void *vec_push(struct vec *v)
{
	if (lt_grow(&v->p, &v->cap, v->n + 1, v->elem))
		return NULL;
	return (char *)v->p + v->elem * v->n++;
}

static int collect_prof(void *ctx, const void *key, const void *val)
{
	struct pent *e = vec_push(ctx);

	if (!e)
		return -1;
	memcpy(&e->k, key, sizeof(e->k));
	memcpy(&e->v, val, sizeof(e->v));
	return 0;
}

struct counters {
	uint64_t c[LT_PC_SLOTS];
};

static void read_counters(struct lt_suite *s, struct counters *c)
{
	int fd = lt_suite_map_fd(s, "lt_prof_err");

	for (uint32_t i = 0; i < LT_PC_SLOTS; i++)
		if (fd < 0 || lt_percpu_u64(fd, i, &c->c[i]))
			c->c[i] = 0;
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
	struct out o;
	struct vec lines; /* folded */
	struct lt_pprof *pp;
	bool first;
};

static void emit_profile_stack(struct prof_out *po, enum fmt fmt, const struct pent *e,
			       const struct sstack *ss, bool off, uint64_t period)
{
	char comm[LT_COMM_LEN + 1], name[NAME_MAX_OUT];
	uint64_t value = off ? e->v.ns : e->v.count;
	struct lt_buf *b = &po->o.b;

	comm_str(comm, e->k.comm);
	if (fmt == FMT_FOLDED) {
		/* build the line in the buffer, then keep a copy for sorting */
		size_t start;
		struct fline *l;

		out_room(&po->o, (size_t)(ss->nu + ss->nk + 1) * (NAME_MAX_OUT * 4 + 8));
		start = b->len;
		put_folded(b, comm);
		for (int i = ss->nu - 1; i >= 0; i--) {
			lt_put_c(b, ';');
			put_folded(b, frame_str(&ss->u[i], name, sizeof(name)));
		}
		for (int i = ss->nk - 1; i >= 0; i--) {
			lt_put_c(b, ';');
			put_folded(b, frame_str(&ss->k[i], name, sizeof(name)));
			lt_put_s(b, "_[k]");
		}
		l = vec_push(&po->lines);
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
							     : frame_str(f, name, sizeof(name)));
		}
		for (size_t i = 0; i < n; i++)
			if (!loc[i])
				return; /* out of memory: lt_pprof_write reports it */
		lt_pprof_sample(po->pp, loc, n, vals, comm, e->k.tgid);
		return;
	}
	/* json */
	out_room(&po->o, (size_t)(ss->nu + ss->nk + 1) * (NAME_MAX_OUT * 6 + 300));
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

static const char *const ctr_names[LT_PC_SLOTS] = {
	[LT_PC_KSTACK_COLL] = "kernel_stack_collisions",
	[LT_PC_USTACK_COLL] = "user_stack_collisions",
	[LT_PC_KSTACK_ERR] = "kernel_stack_errors",
	[LT_PC_USTACK_ERR] = "user_stack_missing",
	[LT_PC_MAP_FULL] = "map_full",
	[LT_PC_TASK_DROP] = "new_process_notices_lost",
	[LT_PC_START_FULL] = "switch_table_full",
	[LT_PC_LIVE_FULL] = "live_table_full",
	[LT_PC_STACKS_FULL] = "stack_table_full",
};

static void print_losses(FILE *f, const struct counters *c)
{
	bool any = false;

	for (int i = 0; i < LT_PC_SLOTS; i++) {
		if (!ctr_names[i])
			continue;
		fprintf(f, "%s%s=%llu", any ? " " : "", ctr_names[i], (unsigned long long)c->c[i]);
		any = true;
	}
}

int cmd_profile(int argc, char **argv)
{
	static struct sstack ss;
	struct popts o;
	struct lt_load_opts lo = { .ringbuf_size = 256 * 1024 };
	struct prof_out po = { .first = true };
	struct ringctx rc = {};
	struct counters ctr;
	struct vec ents = { .elem = sizeof(struct pent) };
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
	ret = parse_popts(argc, argv, false, help_profile, &o);
	if (ret)
		return ret;
	if (o.pid) {
		ret = check_pid(o.pid, comm, sizeof(comm));
		if (ret)
			return ret;
	}
	ret = out_open(&po.o, o.out, o.fmt == FMT_PPROF);
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
	ret = lt_suite_load(suite);
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
		pidfd = pidfd_of(o.pid);
		lt_syms_snapshot(rc.sy, o.pid, comm);
	}
	install_signals();
	t0 = now_ns(CLOCK_MONOTONIC);
	t0_real = now_ns(CLOCK_REALTIME);
	if (o.off_cpu)
		fprintf(stderr, "lowtrace: profile: off-CPU (sched_switch); ");
	else
		fprintf(stderr, "lowtrace: profile: on-CPU, %s at %u Hz; ", event, o.freq);
	fprintf(stderr, "%s\n", o.duration_s ? "running" : "Ctrl-C to stop");
	ret = run_loop(ring, rc.sy, o.duration_s, pidfd, &exited);
	dur = now_ns(CLOCK_MONOTONIC) - t0;
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

		if (lt_map_each(lt_suite_map_fd(suite, "lt_prof"), &k, &nk, &v, collect_prof,
				&ents)) {
			ret = lt_error(LT_FAIL, "cannot read the profile: %s", strerror(errno));
			goto out;
		}
	}
	read_counters(suite, &ctr);
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

		comm_str(c, e->k.comm);
		symbolize(rc.sy, stacks_fd, e->k.tgid, c, e->k.kstack, e->k.ustack, 0, &ss);
		total += e->v.count;
		if (ss.nu) {
			with_user += e->v.count;
			if (!is_entry_frame(&ss.u[ss.nu - 1]))
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
			out_room(&po.o, strlen(l[i].s) + 32);
			lt_put_s(&po.o.b, l[i].s);
			lt_put_c(&po.o.b, ' ');
			lt_put_u64(&po.o.b, v);
			lt_put_c(&po.o.b, '\n');
		}
	} else if (o.fmt == FMT_JSON) {
		struct lt_buf *b = &po.o.b;

		out_room(&po.o, 4096);
		lt_put_s(b, "\n]");
		lt_json_u64(b, "samples", total);
		lt_json_u64(b, "user_stacks", with_user);
		lt_json_u64(b, "user_stacks_truncated", trunc);
		lt_put_s(b, ",\"lost\":{");
		for (int i = 0, n = 0; i < LT_PC_SLOTS; i++) {
			if (!ctr_names[i])
				continue;
			lt_put_s(b, n++ ? ",\"" : "\"");
			lt_put_s(b, ctr_names[i]);
			lt_put_s(b, "\":");
			lt_put_u64(b, ctr.c[i]);
		}
		lt_put_s(b, "}}\n");
	} else {
		char note[160];

		snprintf(note, sizeof(note), "lowtrace profile %s, %s",
			 o.off_cpu ? "--off-cpu" : "", event);
		lt_pprof_comment(po.pp, note);
		out_flush(&po.o);
		ret = lt_pprof_write(po.pp, po.o.fd);
		if (ret) {
			ret = lt_error(LT_FAIL, "cannot write the pprof file: %s", strerror(-ret));
			goto out;
		}
	}
	fprintf(stderr, "lowtrace: profile: %llu %s in %.1f s, %zu stacks; lost: ",
		(unsigned long long)total, o.off_cpu ? "blocks" : "samples", dur / 1e9, ents.n);
	print_losses(stderr, &ctr);
	fprintf(stderr, "; user stacks cut short (no frame pointers?): %llu of %llu\n",
		(unsigned long long)trunc, (unsigned long long)with_user);
	ret = LT_OK;
out:
	if (po.o.b.p)
		ret = out_close(&po.o, ret == LT_OK) ?: ret;
	for (size_t i = 0; i < po.lines.n; i++)
		free(((struct fline *)po.lines.p)[i].s);
	free(po.lines.p);
	free(ents.p);
	lt_pprof_free(po.pp);
	lt_ring_free(ring);
	lt_suite_free(suite);
	lt_syms_free(rc.sy);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

/* ---- alloc ---- */

static void help_alloc(void)
{
	printf("NAME\n    lowtrace alloc - sampled allocations of a process, by stack, and "
	       "leaks\n\n"
	       "SYNOPSIS\n    lowtrace alloc -p PID [--sample-bytes N] [--duration S] [--leaks]\n"
	       "                   [--format text|folded|pprof] [-o FILE]\n\n"
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
	       "    User stacks are walked by frame pointers: build the target with\n"
	       "    -fno-omit-frame-pointer for whole stacks.\n\n"
	       "OPTIONS\n"
	       "    -p, --pid PID        the process (required)\n"
	       "    --sample-bytes N     mean bytes between samples, K/M/G allowed (default 512K)\n"
	       "    -d, --duration S     stop after S seconds (default: Ctrl-C or the process' "
	       "end)\n"
	       "    --leaks              report sampled blocks still allocated at the end\n"
	       "    -f, --format F       text (default: sites by estimated bytes), folded\n"
	       "                         (comm;root;...;leaf BYTES: allocated, or with --leaks\n"
	       "                         still allocated), pprof (alloc_objects, alloc_space;\n"
	       "                         inuse_objects, inuse_space with --leaks; needs -o)\n"
	       "    -o, --output FILE    write there (complete, or not at all) instead of "
	       "stdout\n\n"
	       "EXIT STATUS\n    0 done (also when the process exits first); 2 usage (no such\n"
	       "    process, unwritable -o); 1 allocator not found or other failure;\n"
	       "    5 no privileges or BTF.\n");
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
	struct site *s = vec_push(ctx);

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
	struct vec *sites = ctx;
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
static void put_site_frames(struct lt_buf *b, const struct sstack *ss)
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

static void alloc_text(struct out *o, struct lt_syms *sy, int stacks_fd, const char *comm,
		       const struct site *s, size_t n, bool leaks)
{
	static struct sstack ss;
	struct vec rows = { .elem = sizeof(struct trow) };
	struct lt_buf *b = &o->b;
	struct trow *r;
	size_t nr = 0;

	for (size_t i = 0; i < n; i++) {
		size_t start;

		if (leaks ? !s[i].live_blocks : !s[i].v.samples)
			continue;
		symbolize(sy, stacks_fd, s[i].k.tgid, comm, -1, s[i].k.ustack, s[i].k.caller, &ss);
		r = vec_push(&rows);
		if (!r)
			break;
		/* the frames are encoded at the end of the output buffer, then copied */
		out_room(o, (size_t)(ss.nu + 1) * (NAME_MAX_OUT * 4 + 8));
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
	out_room(o, 256);
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
			out_room(o, strlen(r[i].s) + 100);
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

static void alloc_folded(struct out *o, struct lt_syms *sy, int stacks_fd, const char *comm,
			 const struct site *s, size_t n, bool leaks)
{
	static struct sstack ss;
	char name[NAME_MAX_OUT];
	struct lt_buf *b = &o->b;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = leaks ? s[i].live_bytes : s[i].v.bytes;

		if (!v)
			continue;
		symbolize(sy, stacks_fd, s[i].k.tgid, comm, -1, s[i].k.ustack, s[i].k.caller, &ss);
		out_room(o, (size_t)(ss.nu + 1) * (NAME_MAX_OUT * 4 + 8) + 32);
		put_folded(b, comm);
		for (int f = ss.nu - 1; f >= 0; f--) {
			lt_put_c(b, ';');
			put_folded(b, frame_str(&ss.u[f], name, sizeof(name)));
		}
		lt_put_c(b, ' ');
		lt_put_u64(b, v);
		lt_put_c(b, '\n');
	}
}

static int alloc_pprof(struct out *o, struct lt_syms *sy, int stacks_fd, const char *comm,
		       const struct site *s, size_t n, bool leaks, uint64_t t0, uint64_t dur)
{
	static struct sstack ss;
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

		symbolize(sy, stacks_fd, s[i].k.tgid, comm, -1, s[i].k.ustack, s[i].k.caller, &ss);
		for (int f = 0; f < ss.nu; f++) {
			const struct lt_frame *fr = &ss.u[f];
			uint64_t m = fr->module ? lt_pprof_mapping(pp, fr->map_start, fr->map_limit,
								   fr->map_pgoff, fr->module,
								   fr->build_id)
						: 0;

			loc[nl] = lt_pprof_location(pp, m, fr->addr,
						    fr->func ? fr->func
							     : frame_str(fr, name, sizeof(name)));
			ok &= loc[nl++] != 0;
		}
		if (ok)
			lt_pprof_sample(pp, loc, nl, vals, comm, s[i].k.tgid);
	}
	out_flush(o);
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
	struct popts o;
	struct lt_load_opts lo = { .ringbuf_size = 4096 };
	struct out out = {};
	struct counters ctr;
	struct vec sites = { .elem = sizeof(struct site) };
	struct lt_suite *suite = NULL;
	struct lt_syms *sy = NULL;
	char comm[64], path[AL_NFUNCS][PATH_MAX], attached[512] = "";
	uint64_t off[AL_NFUNCS], t0, t0_real, dur;
	bool found[AL_NFUNCS] = {}, exited = false;
	int pidfd = -1, ret, err;

	ret = parse_popts(argc, argv, true, help_alloc, &o);
	if (ret)
		return ret;
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
		return lt_error(LT_FAIL, "alloc: cannot read the mappings of process %u: %s", o.pid,
				strerror(-err));
	}
	if (o.leaks && !found[AL_NFUNCS - 1])
		return lt_error(LT_FAIL, "alloc --leaks: no free symbol in %s", path[0]);
	/* after any wait: an exec the wait saw the end of set the comm */
	ret = check_pid(o.pid, comm, sizeof(comm));
	if (ret)
		return ret;
	ret = out_open(&out, o.out, o.fmt == FMT_PPROF);
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
	ret = lt_suite_load(suite);
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
	pidfd = pidfd_of(o.pid);
	lt_syms_snapshot(sy, o.pid, comm);
	install_signals();
	t0 = now_ns(CLOCK_MONOTONIC);
	t0_real = now_ns(CLOCK_REALTIME);
	fprintf(stderr, "lowtrace: alloc: attached to process %u (%s): %s in %s; ", o.pid, comm,
		attached, path[0]);
	if (o.sample_bytes > 1)
		fprintf(stderr, "sampling every %llu bytes on average\n",
			(unsigned long long)o.sample_bytes);
	else
		fprintf(stderr, "recording every allocation\n");
	ret = run_loop(NULL, sy, o.duration_s, pidfd, &exited);
	dur = now_ns(CLOCK_MONOTONIC) - t0;
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

		if (lt_map_each(lt_suite_map_fd(suite, "lt_al_sites"), &k, &nk, &v, collect_site,
				&sites)) {
			ret = lt_error(LT_FAIL, "cannot read the allocation sites: %s",
				       strerror(errno));
			goto out;
		}
		if (sites.n)
			qsort(sites.p, sites.n, sizeof(struct site), site_key_cmp);
		if (o.leaks)
			lt_map_each(lt_suite_map_fd(suite, "lt_al_live"), &a, &na, &l, collect_live,
				    &sites);
	}
	read_counters(suite, &ctr);
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
	print_losses(stderr, &ctr);
	fprintf(stderr, "\n");
	ret = LT_OK;
out:
	if (out.b.p)
		ret = out_close(&out, ret == LT_OK) ?: ret;
	free(sites.p);
	lt_suite_free(suite);
	lt_syms_free(sy);
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}
