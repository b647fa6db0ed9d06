// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The probe table and each record's fields, for JSON and text output. */
#include <arpa/inet.h>
#include <string.h>

#include "records.h"

#define REC(r, t) ((const struct t *)(const void *)(r))

static void exec_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_exec *e = REC(r, lt_exec);
	size_t n = e->args_len < LT_ARGS_MAX ? e->args_len : LT_ARGS_MAX;
	size_t fl = e->filename_len < LT_FILENAME_MAX ? e->filename_len : LT_FILENAME_MAX;
	size_t i = 0;

	lt_json_u64(b, "ppid", e->ppid);
	lt_json_u64(b, "uid", e->uid);
	lt_json_u64(b, "gid", e->gid);
	lt_json_u64(b, "cgroup_id", e->cgroup_id);
	lt_json_str(b, "comm", e->comm, lt_strnlen(e->comm, LT_COMM_LEN));
	lt_json_str(b, "filename", e->filename, lt_strnlen(e->filename, fl));
	lt_json_bool(b, "filename_truncated", e->flags & LT_EXEC_FILENAME_TRUNC);
	lt_json_u64(b, "argc", e->argc);
	lt_json_key(b, "args");
	lt_put_c(b, '[');
	while (i < n) {
		size_t k = lt_strnlen(e->args + i, n - i);

		if (i)
			lt_put_c(b, ',');
		lt_put_json_str(b, e->args + i, k);
		i += k + 1;
	}
	lt_put_c(b, ']');
	lt_json_bool(b, "args_truncated", e->flags & LT_EXEC_ARGS_TRUNC);
}

static void exec_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_exec *e = REC(r, lt_exec);
	size_t n = e->args_len < LT_ARGS_MAX ? e->args_len : LT_ARGS_MAX;
	size_t fl = e->filename_len < LT_FILENAME_MAX ? e->filename_len : LT_FILENAME_MAX;
	size_t i = 0;

	lt_text_u64(b, "ppid", e->ppid);
	lt_text_u64(b, "uid", e->uid);
	lt_text_u64(b, "gid", e->gid);
	lt_text_u64(b, "cgroup_id", e->cgroup_id);
	lt_text_str(b, "comm", e->comm, lt_strnlen(e->comm, LT_COMM_LEN));
	lt_text_str(b, "filename", e->filename, lt_strnlen(e->filename, fl));
	lt_put_s(b, " args=");
	while (i < n) {
		size_t k = lt_strnlen(e->args + i, n - i);

		if (i)
			lt_put_c(b, ' ');
		lt_put_text_str(b, e->args + i, k);
		i += k + 1;
	}
	if (e->flags & LT_EXEC_ARGS_TRUNC)
		lt_put_s(b, " ...");
}

static void exit_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_exit *e = REC(r, lt_exit);

	lt_json_u64(b, "ppid", e->ppid);
	lt_json_str(b, "comm", e->comm, lt_strnlen(e->comm, LT_COMM_LEN));
	lt_json_u64(b, "exit_code", e->exit_code);
	lt_json_u64(b, "signal", e->signal);
	lt_json_bool(b, "core_dumped", e->core_dumped);
	lt_json_u64(b, "lifetime_ns", e->lifetime_ns);
}

static void exit_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_exit *e = REC(r, lt_exit);

	lt_text_u64(b, "ppid", e->ppid);
	lt_text_str(b, "comm", e->comm, lt_strnlen(e->comm, LT_COMM_LEN));
	lt_text_u64(b, "exit_code", e->exit_code);
	lt_text_u64(b, "signal", e->signal);
	if (e->core_dumped)
		lt_put_s(b, " core_dumped");
	lt_text_u64(b, "lifetime_ns", e->lifetime_ns);
}

static void fork_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_fork *f = REC(r, lt_fork);

	lt_json_str(b, "comm", f->comm, lt_strnlen(f->comm, LT_COMM_LEN));
	lt_json_u64(b, "child_pid", f->child_pid);
}

static void fork_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_fork *f = REC(r, lt_fork);

	lt_text_str(b, "comm", f->comm, lt_strnlen(f->comm, LT_COMM_LEN));
	lt_text_u64(b, "child_pid", f->child_pid);
}

static void task_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_task *t = REC(r, lt_task);

	lt_json_str(b, "comm", t->comm, lt_strnlen(t->comm, LT_COMM_LEN));
}

static void task_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_task *t = REC(r, lt_task);

	lt_text_str(b, "comm", t->comm, lt_strnlen(t->comm, LT_COMM_LEN));
}

/* the kernel's enum trace_signal_result */
static const char *const signal_results[] = { "delivered", "ignored", "already_pending",
					      "overflow_fail", "lose_info" };

static const char *const signal_names[] = {
	[1] = "SIGHUP",	    [2] = "SIGINT",   [3] = "SIGQUIT",	 [4] = "SIGILL",   [5] = "SIGTRAP",
	[6] = "SIGABRT",    [7] = "SIGBUS",   [8] = "SIGFPE",	 [9] = "SIGKILL",  [10] = "SIGUSR1",
	[11] = "SIGSEGV",   [12] = "SIGUSR2", [13] = "SIGPIPE",	 [14] = "SIGALRM", [15] = "SIGTERM",
	[16] = "SIGSTKFLT", [17] = "SIGCHLD", [18] = "SIGCONT",	 [19] = "SIGSTOP", [20] = "SIGTSTP",
	[21] = "SIGTTIN",   [22] = "SIGTTOU", [23] = "SIGURG",	 [24] = "SIGXCPU", [25] = "SIGXFSZ",
	[26] = "SIGVTALRM", [27] = "SIGPROF", [28] = "SIGWINCH", [29] = "SIGIO",   [30] = "SIGPWR",
	[31] = "SIGSYS",
};

/* "SIGUSR1", "SIGRT3" (SIGRTMIN+3), or "SIG42" outside both */
static void put_signame(struct lt_buf *b, __s32 sig)
{
	if (sig > 0 && sig < (__s32)(sizeof(signal_names) / sizeof(signal_names[0]))) {
		lt_put_s(b, signal_names[sig]);
	} else if (sig >= 32 && sig <= 64) {
		lt_put_s(b, "SIGRT");
		lt_put_u64(b, (uint64_t)(sig - 32));
	} else {
		lt_put_s(b, "SIG");
		lt_put_s64(b, sig);
	}
}

static void put_result(struct lt_buf *b, __s32 res)
{
	if (res >= 0 && res < (__s32)(sizeof(signal_results) / sizeof(signal_results[0]))) {
		lt_put_s(b, signal_results[res]);
	} else {
		lt_put_s(b, "result_");
		lt_put_s64(b, res);
	}
}

static void signal_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_signal *s = REC(r, lt_signal);

	lt_json_str(b, "comm", s->comm, lt_strnlen(s->comm, LT_COMM_LEN));
	lt_json_u64(b, "target_pid", s->target_pid);
	lt_json_u64(b, "target_tid", s->target_tid);
	lt_json_str(b, "target_comm", s->target_comm, lt_strnlen(s->target_comm, LT_COMM_LEN));
	lt_json_key(b, "sig");
	lt_put_s64(b, s->sig);
	lt_json_key(b, "sig_name");
	lt_put_c(b, '"');
	put_signame(b, s->sig);
	lt_put_c(b, '"');
	lt_json_bool(b, "group", s->group);
	lt_json_key(b, "result");
	lt_put_c(b, '"');
	put_result(b, s->result);
	lt_put_c(b, '"');
}

static void signal_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_signal *s = REC(r, lt_signal);

	lt_text_str(b, "comm", s->comm, lt_strnlen(s->comm, LT_COMM_LEN));
	lt_text_u64(b, "target_pid", s->target_pid);
	lt_text_u64(b, "target_tid", s->target_tid);
	lt_text_str(b, "target_comm", s->target_comm, lt_strnlen(s->target_comm, LT_COMM_LEN));
	lt_put_s(b, " sig=");
	put_signame(b, s->sig);
	if (s->group)
		lt_put_s(b, " group");
	lt_put_s(b, " result=");
	put_result(b, s->result);
}

static void oom_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_oom *o = REC(r, lt_oom);

	lt_json_str(b, "comm", o->comm, lt_strnlen(o->comm, LT_COMM_LEN));
	lt_json_u64(b, "victim_pid", o->victim_pid);
	lt_json_str(b, "victim_comm", o->victim_comm, lt_strnlen(o->victim_comm, LT_COMM_LEN));
	lt_json_u64(b, "victim_uid", o->victim_uid);
	lt_json_u64(b, "pages", o->pages);
	lt_json_u64(b, "total_vm_pages", o->total_vm);
}

static void oom_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_oom *o = REC(r, lt_oom);

	lt_text_str(b, "comm", o->comm, lt_strnlen(o->comm, LT_COMM_LEN));
	lt_text_u64(b, "victim_pid", o->victim_pid);
	lt_text_str(b, "victim_comm", o->victim_comm, lt_strnlen(o->victim_comm, LT_COMM_LEN));
	lt_text_u64(b, "victim_uid", o->victim_uid);
	lt_text_u64(b, "pages", o->pages);
	lt_text_u64(b, "total_vm_pages", o->total_vm);
}

/* open flags with the kernel's (x86-64, asm-generic) values: libc's may differ (O_LARGEFILE is 0) */
static const struct {
	uint32_t bit;
	const char *name;
} open_flags[] = {
	{ 0100, "O_CREAT" },	    { 0200, "O_EXCL" },		  { 0400, "O_NOCTTY" },
	{ 01000, "O_TRUNC" },	    { 02000, "O_APPEND" },	  { 04000, "O_NONBLOCK" },
	{ 010000, "O_DSYNC" },	    { 020000, "O_ASYNC" },	  { 040000, "O_DIRECT" },
	{ 0100000, "O_LARGEFILE" }, { 0200000, "O_DIRECTORY" },	  { 0400000, "O_NOFOLLOW" },
	{ 01000000, "O_NOATIME" },  { 02000000, "O_CLOEXEC" },	  { 04000000, "__O_SYNC" },
	{ 010000000, "O_PATH" },    { 020000000, "__O_TMPFILE" },
};

static const char *const open_calls[] = { "open", "openat", "openat2" };

/* octal digits of v, none for 0 (callers print the leading 0) */
static void put_octal(struct lt_buf *b, uint32_t v)
{
	char d[12];
	int n = 0;

	while (v && n < (int)sizeof(d)) {
		d[n++] = '0' + (v & 7);
		v >>= 3;
	}
	while (n)
		lt_put_c(b, d[--n]);
}

/* names of the flags, access mode first; bits without a name as one octal number */
static void put_open_flags(struct lt_buf *b, uint32_t f, bool json)
{
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };
	const char *sep = json ? "\",\"" : "|";
	uint32_t rest = f & ~3u;

	if (json)
		lt_put_s(b, "[\"");
	lt_put_s(b, acc[f & 3]);
	for (size_t i = 0; i < sizeof(open_flags) / sizeof(open_flags[0]); i++) {
		if (!(f & open_flags[i].bit))
			continue;
		lt_put_s(b, sep);
		lt_put_s(b, open_flags[i].name);
		rest &= ~open_flags[i].bit;
	}
	if (rest) {
		lt_put_s(b, sep);
		lt_put_c(b, '0');
		put_octal(b, rest);
	}
	if (json)
		lt_put_s(b, "\"]");
}

static void open_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_open *o = REC(r, lt_open);
	size_t pl = o->path_len < LT_PATH_MAX ? o->path_len : LT_PATH_MAX;

	lt_json_str(b, "comm", o->comm, lt_strnlen(o->comm, LT_COMM_LEN));
	lt_json_key(b, "syscall");
	lt_put_c(b, '"');
	lt_put_s(b, o->syscall < 3 ? open_calls[o->syscall] : "unknown");
	lt_put_c(b, '"');
	lt_json_key(b, "dfd");
	lt_put_s64(b, o->dfd);
	lt_json_str(b, "path", o->path, lt_strnlen(o->path, pl));
	lt_json_bool(b, "path_truncated", o->rflags & LT_OPEN_PATH_TRUNC);
	lt_json_key(b, "flags");
	put_open_flags(b, o->flags, true);
	lt_json_u64(b, "mode", o->mode);
	lt_json_key(b, "ret");
	lt_put_s64(b, o->ret);
}

static void open_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_open *o = REC(r, lt_open);
	size_t pl = o->path_len < LT_PATH_MAX ? o->path_len : LT_PATH_MAX;

	lt_text_str(b, "comm", o->comm, lt_strnlen(o->comm, LT_COMM_LEN));
	lt_put_s(b, " syscall=");
	lt_put_s(b, o->syscall < 3 ? open_calls[o->syscall] : "unknown");
	lt_put_s(b, " dfd=");
	lt_put_s64(b, o->dfd);
	lt_text_str(b, "path", o->path, lt_strnlen(o->path, pl));
	if (o->rflags & LT_OPEN_PATH_TRUNC)
		lt_put_s(b, "...");
	lt_put_s(b, " flags=");
	put_open_flags(b, o->flags, false);
	lt_put_s(b, " mode=0");
	put_octal(b, o->mode);
	lt_put_s(b, " ret=");
	lt_put_s64(b, o->ret);
}

static const char *const tcp_states[] = {
	[1] = "ESTABLISHED", [2] = "SYN_SENT",	[3] = "SYN_RECV", [4] = "FIN_WAIT1",
	[5] = "FIN_WAIT2",   [6] = "TIME_WAIT", [7] = "CLOSE",	  [8] = "CLOSE_WAIT",
	[9] = "LAST_ACK",    [10] = "LISTEN",	[11] = "CLOSING", [12] = "NEW_SYN_RECV",
};

/* an address as inet_ntop writes it (into the stack: no allocation) */
static void put_addr(struct lt_buf *b, const struct lt_tcp_addr *a, const __u8 *ip)
{
	char s[INET6_ADDRSTRLEN];

	if (!inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, ip, s, sizeof(s)))
		strcpy(s, "?");
	lt_put_s(b, s);
}

static void tcp_addr_json(struct lt_buf *b, const struct lt_tcp_addr *a)
{
	lt_json_u64(b, "family", a->family);
	lt_json_key(b, "saddr");
	lt_put_c(b, '"');
	put_addr(b, a, a->saddr);
	lt_put_c(b, '"');
	lt_json_key(b, "daddr");
	lt_put_c(b, '"');
	put_addr(b, a, a->daddr);
	lt_put_c(b, '"');
	lt_json_u64(b, "sport", a->sport);
	lt_json_u64(b, "dport", a->dport);
}

static void tcp_addr_text(struct lt_buf *b, const struct lt_tcp_addr *a)
{
	lt_text_u64(b, "family", a->family);
	lt_put_s(b, " saddr=");
	put_addr(b, a, a->saddr);
	lt_put_s(b, " daddr=");
	put_addr(b, a, a->daddr);
	lt_text_u64(b, "sport", a->sport);
	lt_text_u64(b, "dport", a->dport);
}

static const char *tcp_dir(__u8 d)
{
	return d == LT_TCP_CONNECT ? "connect" : d == LT_TCP_ACCEPT ? "accept" : "unknown";
}

static void tcp_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_tcp *t = REC(r, lt_tcp);

	lt_json_str(b, "comm", t->comm, lt_strnlen(t->comm, LT_COMM_LEN));
	tcp_addr_json(b, &t->addr);
	lt_json_key(b, "direction");
	lt_put_c(b, '"');
	lt_put_s(b, tcp_dir(t->direction));
	lt_put_c(b, '"');
	lt_json_u64(b, "tx_bytes", t->tx_bytes);
	lt_json_u64(b, "rx_bytes", t->rx_bytes);
	lt_json_u64(b, "duration_ns", t->duration_ns);
}

static void tcp_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_tcp *t = REC(r, lt_tcp);

	lt_text_str(b, "comm", t->comm, lt_strnlen(t->comm, LT_COMM_LEN));
	tcp_addr_text(b, &t->addr);
	lt_put_s(b, " direction=");
	lt_put_s(b, tcp_dir(t->direction));
	lt_text_u64(b, "tx_bytes", t->tx_bytes);
	lt_text_u64(b, "rx_bytes", t->rx_bytes);
	lt_text_u64(b, "duration_ns", t->duration_ns);
}

static void put_tcp_state(struct lt_buf *b, __u8 st)
{
	if (st < sizeof(tcp_states) / sizeof(tcp_states[0]) && tcp_states[st]) {
		lt_put_s(b, tcp_states[st]);
	} else {
		lt_put_s(b, "STATE_");
		lt_put_u64(b, st);
	}
}

static void tcp_retrans_json(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_tcp_retrans *t = REC(r, lt_tcp_retrans);

	lt_json_str(b, "comm", t->comm, lt_strnlen(t->comm, LT_COMM_LEN));
	tcp_addr_json(b, &t->addr);
	lt_json_key(b, "state");
	lt_put_c(b, '"');
	put_tcp_state(b, t->state);
	lt_put_c(b, '"');
}

static void tcp_retrans_text(struct lt_buf *b, const struct lt_rec *r)
{
	const struct lt_tcp_retrans *t = REC(r, lt_tcp_retrans);

	lt_text_str(b, "comm", t->comm, lt_strnlen(t->comm, LT_COMM_LEN));
	tcp_addr_text(b, &t->addr);
	lt_put_s(b, " state=");
	put_tcp_state(b, t->state);
}

const struct lt_probe lt_probes[] = {
	{ .name = "exec",
	  .progs = { "lt_exec" },
	  .id = LT_PROBE_EXEC,
	  .type = LT_TYPE_EXEC,
	  .rec_size = sizeof(struct lt_exec),
	  .dflt = true,
	  .json = exec_json,
	  .text = exec_text,
	  .about = "program executions with filename and argv (tp_btf)" },
	{ .name = "exit",
	  .progs = { "lt_exit" },
	  .id = LT_PROBE_EXIT,
	  .type = LT_TYPE_EXIT,
	  .rec_size = sizeof(struct lt_exit),
	  .dflt = true,
	  .json = exit_json,
	  .text = exit_text,
	  .about = "process exits with code, signal and lifetime (tp_btf)" },
	{ .name = "fork",
	  .progs = { "lt_fork" },
	  .id = LT_PROBE_FORK,
	  .type = LT_TYPE_FORK,
	  .rec_size = sizeof(struct lt_fork),
	  .dflt = true,
	  .json = fork_json,
	  .text = fork_text,
	  .about = "new processes with parent and child pid (tp_btf)" },
	{ .name = "signal",
	  .progs = { "lt_signal" },
	  .id = LT_PROBE_SIGNAL,
	  .type = LT_TYPE_SIGNAL,
	  .rec_size = sizeof(struct lt_signal),
	  .dflt = true,
	  .json = signal_json,
	  .text = signal_text,
	  .about = "signals generated: sender, target, signal, result (tp_btf)" },
	{ .name = "oom",
	  .progs = { "lt_oom", "lt_oom_kill" },
	  .id = LT_PROBE_OOM,
	  .type = LT_TYPE_OOM,
	  .rec_size = sizeof(struct lt_oom),
	  .dflt = true,
	  .json = oom_json,
	  .text = oom_text,
	  .about = "OOM kills: victim, its resident pages, the trigger (tp_btf)" },
	{ .name = "tcp",
	  .progs = { "lt_tcp", "lt_tcp_nest" },
	  .id = LT_PROBE_TCP,
	  .type = LT_TYPE_TCP,
	  .rec_size = sizeof(struct lt_tcp),
	  .dflt = true,
	  .json = tcp_json,
	  .text = tcp_text,
	  .about = "closed TCP connections: ends, direction, bytes, duration (tp_btf)" },
	{ .name = "tcp_retrans",
	  .progs = { "lt_tcp_retrans" },
	  .id = LT_PROBE_TCP_RETRANS,
	  .type = LT_TYPE_TCP_RETRANS,
	  .rec_size = sizeof(struct lt_tcp_retrans),
	  .dflt = true,
	  .json = tcp_retrans_json,
	  .text = tcp_retrans_text,
	  .about = "retransmitted TCP segments: ends and state (tp_btf)" },
	{ .name = "open",
	  .progs = { "lt_open_e", "lt_open_x" },
	  .id = LT_PROBE_OPEN,
	  .type = LT_TYPE_OPEN,
	  .rec_size = sizeof(struct lt_open),
	  .json = open_json,
	  .text = open_text,
	  .about = "open, openat, openat2: path, flags, mode, fd or -errno (tp_btf)" },
	{ .name = "syscalls",
	  .progs = { "lt_sys_e", "lt_sys_x" },
	  .id = LT_PROBE_SYSCALLS,
	  .map = "lt_sys_hist",
	  .about = "count and log2 latency histogram per syscall (tp_btf; lowtrace hist)" },
	{ .name = "runq",
	  .progs = { "lt_runq_wake", "lt_runq_new", "lt_runq_switch" },
	  .id = LT_PROBE_RUNQ,
	  .map = "lt_runq_hist",
	  .about = "run-queue latency log2 histogram (tp_btf; lowtrace hist)" },
	{ .name = "bio",
	  .progs = { "lt_bio_issue", "lt_bio_done" },
	  .id = LT_PROBE_BIO,
	  .map = "lt_bio_hist",
	  .about = "block I/O latency histogram per device and op (tp_btf; lowtrace hist)" },
	/* profiles: loaded by their commands, one at a time, never pinned */
	{ .name = "profile",
	  .progs = { "lt_prof_cpu" },
	  .id = LT_PROBE_PROFILE,
	  .type = LT_TYPE_TASK, /* new processes, for their mappings */
	  .rec_size = sizeof(struct lt_task),
	  .own = { "lt_stacks", "lt_stack_buf", "lt_prof_err", "lt_prof_seen", "lt_prof" },
	  .cmd = "profile",
	  .json = task_json,
	  .text = task_text,
	  .about = "on-CPU stack samples (perf_event)" },
	{ .name = "offcpu",
	  .progs = { "lt_prof_off" },
	  .id = LT_PROBE_OFFCPU,
	  .own = { "lt_stacks", "lt_stack_buf", "lt_prof_err", "lt_prof_seen", "lt_prof",
		   "lt_off_start" },
	  .cmd = "profile --off-cpu",
	  .about = "time blocked, with the blocking stacks (tp_btf)" },
	{ .name = "alloc",
	  .progs = { "lt_al_malloc", "lt_al_calloc", "lt_al_realloc", "lt_al_memalign",
		     "lt_al_pmalign", "lt_al_ret", "lt_al_free" },
	  .id = LT_PROBE_ALLOC,
	  .own = { "lt_stacks", "lt_stack_buf", "lt_prof_err", "lt_al_cd", "lt_al_sites",
		   "lt_al_pend", "lt_al_live" },
	  .cmd = "alloc",
	  .about = "sampled allocations of one process (uprobes)" },
};
const size_t lt_nprobes = sizeof(lt_probes) / sizeof(lt_probes[0]);

_Static_assert(sizeof(struct lt_exec) <= LT_RECORD_MAX, "records fit struct lt_rec");

const struct lt_probe *lt_probe_by_name(const char *name, size_t len)
{
	for (size_t i = 0; i < lt_nprobes; i++)
		if (strlen(lt_probes[i].name) == len && !memcmp(lt_probes[i].name, name, len))
			return &lt_probes[i];
	return NULL;
}

const char *lt_link_name(const char *prog)
{
	return strncmp(prog, "lt_", 3) ? prog : prog + 3;
}

bool lt_prog_is_fallback(const char *prog)
{
	size_t n = strlen(prog);

	return n > 5 && !strcmp(prog + n - 5, "_nest");
}

const struct lt_probe *lt_probe_by_type(unsigned int type)
{
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].type && lt_probes[i].type == type)
			return &lt_probes[i];
	return NULL;
}

void lt_encode_json(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r)
{
	lt_put_s(b, "{\"type\":\"");
	lt_put_s(b, p->name);
	lt_put_c(b, '"');
	lt_json_u64(b, "ts_ns", r->hdr.ts_ns);
	lt_json_u64(b, "cpu", r->hdr.cpu);
	lt_json_u64(b, "pid", r->hdr.pid);
	lt_json_u64(b, "tid", r->hdr.tid);
	p->json(b, r);
	lt_put_c(b, '}');
	lt_put_c(b, '\n');
}

void lt_encode_text(struct lt_buf *b, const struct lt_probe *p, const struct lt_rec *r)
{
	lt_put_s(b, p->name);
	lt_text_u64(b, "ts_ns", r->hdr.ts_ns);
	lt_text_u64(b, "cpu", r->hdr.cpu);
	lt_text_u64(b, "pid", r->hdr.pid);
	lt_text_u64(b, "tid", r->hdr.tid);
	p->text(b, r);
	lt_put_c(b, '\n');
}
