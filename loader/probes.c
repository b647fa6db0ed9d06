// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The probe table: one row per probe, and in it the one description of what
 * the probe writes. Record probes list their record's fields (JSON, text and
 * `events -h` are made from the list by records.c); aggregate probes say how
 * their map's key reads (`hist` and the metrics endpoint).
 */
#include <stdio.h>
#include <string.h>

#include "histfmt.h"
#include "records.h"
#include "sysnames.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- field descriptors ---- */

#define JKEY(nm) ",\"" nm "\":"
#define TKEY(nm) " " nm "="
#define MEMB(t, m) (((struct t *)0)->m)
/* an integer member's signedness, from its type */
#define SGN(t, m)                        \
	_Generic(MEMB(t, m), signed char \
		 : true, short           \
		 : true, int             \
		 : true, long            \
		 : true, long long       \
		 : true, default         \
		 : false)

#define FIELD_(t, m, nm, tk, k, tx)                                                  \
	.name = nm, .jkey = JKEY(nm), .tkey = tk, .jlen = sizeof(JKEY(nm)) - 1,      \
	.tlen = sizeof(tk) - 1, .kind = k, .text = tx, .off = offsetof(struct t, m), \
	.size = sizeof(MEMB(t, m))
#define LEN_(t, lm) .len_off = offsetof(struct t, lm), .len_size = sizeof(MEMB(t, lm))

#define F_INT(t, m, nm)                                                         \
	{                                                                       \
		FIELD_(t, m, nm, TKEY(nm), LT_F_INT, LT_T_KV), .sgn = SGN(t, m) \
	}
#define F_INT_JSON(t, m, nm)                                                \
	{                                                                   \
		FIELD_(t, m, nm, "", LT_F_INT, LT_T_NONE), .sgn = SGN(t, m) \
	}
/* text: "mode=0644" */
#define F_OCTAL(t, m, nm)                                            \
	{                                                            \
		FIELD_(t, m, nm, TKEY(nm) "0", LT_F_INT, LT_T_OCTAL) \
	}
#define F_STR(t, m, nm)                                       \
	{                                                     \
		FIELD_(t, m, nm, TKEY(nm), LT_F_STR, LT_T_KV) \
	}
#define F_STRN(t, m, nm, lm)                                               \
	{                                                                  \
		FIELD_(t, m, nm, TKEY(nm), LT_F_STR, LT_T_KV), LEN_(t, lm) \
	}
#define F_ARGV(t, m, nm, lm)                                                \
	{                                                                   \
		FIELD_(t, m, nm, TKEY(nm), LT_F_ARGV, LT_T_KV), LEN_(t, lm) \
	}
/* text: `word` when set (LT_T_WORD), or nothing (LT_T_NONE) */
#define F_FLAG(t, m, nm, b, tx, word)                           \
	{                                                       \
		FIELD_(t, m, nm, word, LT_F_FLAG, tx), .bit = b \
	}
#define F_ENUM(t, m, nm, tab, unk, num)                                                            \
	{                                                                                          \
		FIELD_(t, m, nm, TKEY(nm), LT_F_ENUM, LT_T_KV),                                    \
			.sgn = SGN(t, m), .nnames = ARRAY_SIZE(tab), .names = tab, .unknown = unk, \
			.unknown_num = num                                                         \
	}
#define F_ADDR(t, m, nm, fam)                                                \
	{                                                                    \
		FIELD_(t, m, nm, TKEY(nm), LT_F_ADDR, LT_T_KV), LEN_(t, fam) \
	}
#define F_FMT(t, m, nm, tk, fn)                                                      \
	{                                                                            \
		FIELD_(t, m, nm, tk, LT_F_FMT, LT_T_KV), .sgn = SGN(t, m), .put = fn \
	}
#define F_END                \
	{                    \
		.name = NULL \
	}

const struct lt_field lt_hdr_fields[] = {
	F_INT(lt_hdr, ts_ns, "ts_ns"),
	F_INT(lt_hdr, cpu, "cpu"),
	F_INT(lt_hdr, pid, "pid"),
	F_INT(lt_hdr, tid, "tid"),
	F_INT(lt_hdr, cgroup_id, "cgroup_id"),
	F_END,
};

/* ---- values with names ---- */

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
static void put_signame(struct lt_buf *b, int64_t sig, bool json)
{
	if (json)
		lt_put_c(b, '"');
	if (sig > 0 && sig < (int64_t)ARRAY_SIZE(signal_names)) {
		lt_put_s(b, signal_names[sig]);
	} else if (sig >= 32 && sig <= 64) {
		lt_put_s(b, "SIGRT");
		lt_put_u64(b, (uint64_t)(sig - 32));
	} else {
		lt_put_s(b, "SIG");
		lt_put_s64(b, sig);
	}
	if (json)
		lt_put_c(b, '"');
}

/*
 * open flags with the kernel's values for the build's architecture: asm-generic's, which
 * x86-64 keeps, except four that arm64's uapi asm/fcntl.h moves. libc's may differ
 * (O_LARGEFILE is 0). The names keep one order on both.
 */
#if defined(__aarch64__)
#define LT_O_DIRECT 0200000
#define LT_O_LARGEFILE 0400000
#define LT_O_DIRECTORY 040000
#define LT_O_NOFOLLOW 0100000
#elif defined(__x86_64__)
#define LT_O_DIRECT 040000
#define LT_O_LARGEFILE 0100000
#define LT_O_DIRECTORY 0200000
#define LT_O_NOFOLLOW 0400000
#else
#error "open flags: lowtrace builds for x86-64 or arm64"
#endif
static const struct {
	uint32_t bit;
	const char *name;
} open_flags[] = {
	{ 0100, "O_CREAT" },
	{ 0200, "O_EXCL" },
	{ 0400, "O_NOCTTY" },
	{ 01000, "O_TRUNC" },
	{ 02000, "O_APPEND" },
	{ 04000, "O_NONBLOCK" },
	{ 010000, "O_DSYNC" },
	{ 020000, "O_ASYNC" },
	{ LT_O_DIRECT, "O_DIRECT" },
	{ LT_O_LARGEFILE, "O_LARGEFILE" },
	{ LT_O_DIRECTORY, "O_DIRECTORY" },
	{ LT_O_NOFOLLOW, "O_NOFOLLOW" },
	{ 01000000, "O_NOATIME" },
	{ 02000000, "O_CLOEXEC" },
	{ 04000000, "__O_SYNC" },
	{ 010000000, "O_PATH" },
	{ 020000000, "__O_TMPFILE" },
};

static const char *const open_calls[] = { "open", "openat", "openat2" };

/* open(2)'s programs (its classic tracepoints), only where the target has the syscall (arm64
 * has openat and openat2 alone): "name", in the table */
#ifdef LT_NR_open
#define OPEN2_PROG(name) name,
#else
#define OPEN2_PROG(name)
#endif

/* names of the flags, access mode first; bits without a name as one octal number */
static void put_open_flags(struct lt_buf *b, int64_t v, bool json)
{
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };
	const char *sep = json ? "\",\"" : "|";
	uint32_t f = (uint32_t)v, rest = f & ~3u;

	if (json)
		lt_put_s(b, "[\"");
	lt_put_s(b, acc[f & 3]);
	for (size_t i = 0; i < ARRAY_SIZE(open_flags); i++) {
		if (!(f & open_flags[i].bit))
			continue;
		lt_put_s(b, sep);
		lt_put_s(b, open_flags[i].name);
		rest &= ~open_flags[i].bit;
	}
	if (rest) {
		lt_put_s(b, sep);
		lt_put_c(b, '0');
		lt_put_octal(b, rest);
	}
	if (json)
		lt_put_s(b, "\"]");
}

static const char *const tcp_dirs[] = { [LT_TCP_CONNECT] = "connect", [LT_TCP_ACCEPT] = "accept" };

static const char *const tcp_states[] = {
	[1] = "ESTABLISHED", [2] = "SYN_SENT",	[3] = "SYN_RECV", [4] = "FIN_WAIT1",
	[5] = "FIN_WAIT2",   [6] = "TIME_WAIT", [7] = "CLOSE",	  [8] = "CLOSE_WAIT",
	[9] = "LAST_ACK",    [10] = "LISTEN",	[11] = "CLOSING", [12] = "NEW_SYN_RECV",
};

/* both ends of a TCP socket, in struct t's member addr */
#define TCP_ADDR_FIELDS(t)                                                                  \
	F_INT(t, addr.family, "family"), F_ADDR(t, addr.saddr, "saddr", addr.family),       \
		F_ADDR(t, addr.daddr, "daddr", addr.family), F_INT(t, addr.sport, "sport"), \
		F_INT(t, addr.dport, "dport")

/* ---- aggregate keys ---- */

static void sys_key_json(struct lt_buf *b, const void *key)
{
	struct lt_sys_key k;
	char tmp[32];

	memcpy(&k, key, sizeof(k));
	lt_put_s(b, "\"syscall\":\"");
	lt_put_s(b, lt_syscall_name(k.nr, tmp, sizeof(tmp)));
	lt_put_c(b, '"');
	lt_json_u64(b, "pid", k.pid);
}

static void sys_key_title(char *s, size_t n, const struct lt_probe *p, const void *key)
{
	struct lt_sys_key k;
	char tmp[32];

	(void)p;
	memcpy(&k, key, sizeof(k));
	if (k.pid)
		snprintf(s, n, "syscall %s pid %u", lt_syscall_name(k.nr, tmp, sizeof(tmp)), k.pid);
	else
		snprintf(s, n, "syscall %s", lt_syscall_name(k.nr, tmp, sizeof(tmp)));
}

static unsigned int sys_key_name(const void *key)
{
	struct lt_sys_key k;

	memcpy(&k, key, sizeof(k));
	return k.nr; /* summed over processes */
}

static const char *sys_name(unsigned int nr)
{
	return lt_syscall_known(nr);
}

static void bio_key_json(struct lt_buf *b, const void *key)
{
	struct lt_bio_key k;
	char tmp[32];

	memcpy(&k, key, sizeof(k));
	snprintf(tmp, sizeof(tmp), "%u:%u", k.dev >> 20, k.dev & 0xfffff);
	lt_put_s(b, "\"device\":\"");
	lt_put_s(b, tmp);
	lt_put_s(b, "\",\"op\":\"");
	lt_put_s(b, lt_bio_op_name(k.op));
	lt_put_c(b, '"');
}

static void bio_key_title(char *s, size_t n, const struct lt_probe *p, const void *key)
{
	struct lt_bio_key k;

	(void)p;
	memcpy(&k, key, sizeof(k));
	snprintf(s, n, "bio %u:%u %s", k.dev >> 20, k.dev & 0xfffff, lt_bio_op_name(k.op));
}

static void bio_labels(char *s, size_t n, const void *key)
{
	struct lt_bio_key k;

	memcpy(&k, key, sizeof(k));
	snprintf(s, n, "device=\"%u:%u\",op=\"%s\"", k.dev >> 20, k.dev & 0xfffff,
		 lt_bio_op_name(k.op));
}

/* one histogram: the key says nothing */
static void one_key_json(struct lt_buf *b, const void *key)
{
	(void)key;
	lt_put_s(b, "\"probe\":\"runq\"");
}

static void one_key_title(char *s, size_t n, const struct lt_probe *p, const void *key)
{
	(void)key;
	snprintf(s, n, "%s latency", p->name);
}

_Static_assert(sizeof(struct lt_sys_key) <= LT_AGG_KEY_MAX, "syscalls key fits");
_Static_assert(sizeof(struct lt_bio_key) <= LT_AGG_KEY_MAX, "bio key fits");

/* ---- the table ---- */

const struct lt_probe lt_probes[] = {
	{ .name = "exec",
	  .progs = { "lt_exec", "lt_exec_nest", "lt_exec_tp" },
	  .own = { "lt_cg_counts", "lt_marks_cpu", "lt_marks", "lt_exec_buf" },
	  .id = LT_PROBE_EXEC,
	  .type = LT_TYPE_EXEC,
	  .rec_size = sizeof(struct lt_exec),
	  .dflt = true,
	  .fields =
		  (const struct lt_field[]){
			  F_INT(lt_exec, ppid, "ppid"),
			  F_INT(lt_exec, uid, "uid"),
			  F_INT(lt_exec, gid, "gid"),
			  F_INT(lt_exec, pid_ns, "pid_ns"),
			  F_INT(lt_exec, mnt_ns, "mnt_ns"),
			  F_INT(lt_exec, net_ns, "net_ns"),
			  F_STR(lt_exec, comm, "comm"),
			  F_STRN(lt_exec, filename, "filename", filename_len),
			  F_FLAG(lt_exec, flags, "filename_truncated", LT_EXEC_FILENAME_TRUNC,
				 LT_T_NONE, ""),
			  F_INT_JSON(lt_exec, argc, "argc"),
			  F_ARGV(lt_exec, args, "args", args_len),
			  F_FLAG(lt_exec, flags, "args_truncated", LT_EXEC_ARGS_TRUNC, LT_T_WORD,
				 " ..."),
			  F_FLAG(lt_exec, flags, "args_shed", LT_EXEC_ARGS_SHED, LT_T_WORD,
				 " args_shed"),
			  F_END,
		  },
	  .about = "program executions with filename and argv (tp_btf)" },
	{ .name = "exit",
	  .progs = { "lt_exit", "lt_exit_nest", "lt_exit_free", "lt_exit_tp" },
	  .own = { "lt_exit_seen", "lt_cg_counts", "lt_marks_cpu", "lt_marks" },
	  .id = LT_PROBE_EXIT,
	  .type = LT_TYPE_EXIT,
	  .rec_size = sizeof(struct lt_exit),
	  .dflt = true,
	  .fields =
		  (const struct lt_field[]){
			  F_INT(lt_exit, ppid, "ppid"),
			  F_STR(lt_exit, comm, "comm"),
			  F_INT(lt_exit, exit_code, "exit_code"),
			  F_INT(lt_exit, signal, "signal"),
			  F_FLAG(lt_exit, core_dumped, "core_dumped", 0, LT_T_WORD, " core_dumped"),
			  F_INT(lt_exit, lifetime_ns, "lifetime_ns"),
			  F_END,
		  },
	  .about = "process exits with code, signal and lifetime (tp_btf)" },
	{ .name = "fork",
	  .progs = { "lt_fork", "lt_fork_nest", "lt_fork_tp" },
	  .own = { "lt_cg_counts", "lt_marks_cpu", "lt_marks" },
	  .id = LT_PROBE_FORK,
	  .type = LT_TYPE_FORK,
	  .rec_size = sizeof(struct lt_fork),
	  .dflt = true,
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_fork, comm, "comm"),
			  F_INT(lt_fork, child_pid, "child_pid"),
			  F_END,
		  },
	  .about = "new processes with parent and child pid (tp_btf)" },
	{ .name = "signal",
	  .progs = { "lt_signal", "lt_signal_nest" },
	  .own = { "lt_marks_cpu", "lt_marks" },
	  .id = LT_PROBE_SIGNAL,
	  .type = LT_TYPE_SIGNAL,
	  .rec_size = sizeof(struct lt_signal),
	  .dflt = true,
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_signal, comm, "comm"),
			  F_INT(lt_signal, target_pid, "target_pid"),
			  F_INT(lt_signal, target_tid, "target_tid"),
			  F_STR(lt_signal, target_comm, "target_comm"),
			  F_INT_JSON(lt_signal, sig, "sig"),
			  F_FMT(lt_signal, sig, "sig_name", TKEY("sig"), put_signame),
			  F_FLAG(lt_signal, group, "group", 0, LT_T_WORD, " group"),
			  F_ENUM(lt_signal, result, "result", signal_results, "result_", true),
			  F_END,
		  },
	  .about = "signals generated: sender, target, signal, result (tp_btf)" },
	{ .name = "oom",
	  .progs = { "lt_oom", "lt_oom_kill" },
	  .own = { "lt_oom_victim" },
	  .id = LT_PROBE_OOM,
	  .type = LT_TYPE_OOM,
	  .rec_size = sizeof(struct lt_oom),
	  .dflt = true,
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_oom, comm, "comm"),
			  F_INT(lt_oom, victim_pid, "victim_pid"),
			  F_STR(lt_oom, victim_comm, "victim_comm"),
			  F_INT(lt_oom, victim_uid, "victim_uid"),
			  F_INT(lt_oom, pages, "pages"),
			  F_INT(lt_oom, total_vm, "total_vm_pages"),
			  F_END,
		  },
	  .about = "OOM kills: victim, its resident pages, the trigger (tp_btf)" },
	{ .name = "tcp",
	  .progs = { "lt_tcp", "lt_tcp_nest", "lt_tcp_tp" },
	  .iters = { "lt_tcp_sweep" },
	  .reap = "lt_tcp_reap",
	  .own = { "lt_tcp_conns", "lt_tcp_first", "lt_sweep", "lt_tcp_reap_keys" },
	  .id = LT_PROBE_TCP,
	  .type = LT_TYPE_TCP,
	  .rec_size = sizeof(struct lt_tcp),
	  .dflt = true,
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_tcp, comm, "comm"),
			  TCP_ADDR_FIELDS(lt_tcp),
			  F_ENUM(lt_tcp, direction, "direction", tcp_dirs, "unknown", false),
			  F_INT(lt_tcp, tx_bytes, "tx_bytes"),
			  F_INT(lt_tcp, rx_bytes, "rx_bytes"),
			  F_INT(lt_tcp, duration_ns, "duration_ns"),
			  F_END,
		  },
	  .about = "closed TCP connections: ends, direction, bytes, duration (tp_btf)" },
	{ .name = "tcp_retrans",
	  .progs = { "lt_tcp_retrans" },
	  .own = { "lt_tcp_conns" }, /* the owner of a retransmitting connection */
	  .id = LT_PROBE_TCP_RETRANS,
	  .type = LT_TYPE_TCP_RETRANS,
	  .rec_size = sizeof(struct lt_tcp_retrans),
	  .dflt = true,
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_tcp_retrans, comm, "comm"),
			  TCP_ADDR_FIELDS(lt_tcp_retrans),
			  F_ENUM(lt_tcp_retrans, state, "state", tcp_states, "STATE_", true),
			  F_END,
		  },
	  .about = "retransmitted TCP segments: ends and state (tp_btf)" },
	{ .name = "open",
	  .progs = { "lt_open_e", "lt_open_x", OPEN2_PROG("lt_open_eo") "lt_open_eat",
		     "lt_open_eat2", OPEN2_PROG("lt_open_xo") "lt_open_xat", "lt_open_xat2" },
	  .own = { "lt_open_args", "lt_open_buf" },
	  .id = LT_PROBE_OPEN,
	  .type = LT_TYPE_OPEN,
	  .rec_size = sizeof(struct lt_open),
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_open, comm, "comm"),
			  F_ENUM(lt_open, syscall, "syscall", open_calls, "unknown", false),
			  F_INT(lt_open, dfd, "dfd"),
			  F_STRN(lt_open, path, "path", path_len),
			  /* text: "path=/et..." */
			  F_FLAG(lt_open, rflags, "path_truncated", LT_OPEN_PATH_TRUNC, LT_T_WORD,
				 "..."),
			  F_FLAG(lt_open, rflags, "path_shed", LT_OPEN_PATH_SHED, LT_T_WORD,
				 " path_shed"),
			  F_FMT(lt_open, flags, "flags", TKEY("flags"), put_open_flags),
			  F_OCTAL(lt_open, mode, "mode"),
			  F_INT(lt_open, ret, "ret"),
			  F_END,
		  },
	  .about = "open, openat, openat2: path, flags, mode, fd or -errno (syscall tracepoints; "
		   "tp_btf before 5.15)" },
	{ .name = "syscalls",
	  .progs = { "lt_sys_e", "lt_sys_x", "lt_sys_c" }, /* lt_sys_c alone: --count-only */
	  .own = { "lt_sys_start", "lt_sys_nr", "lt_sys_hist" },
	  .id = LT_PROBE_SYSCALLS,
	  .map = "lt_sys_nr",
	  .map2 = "lt_sys_hist",
	  .key_size = sizeof(struct lt_sys_key),
	  .key_json = sys_key_json,
	  .key_title = sys_key_title,
	  .prom =
		  &(const struct lt_prom){
			  .hist = "lowtrace_syscall_latency_seconds",
			  .hist_help = "Syscall latency, entry to exit.",
			  .nnames = LT_SYS_SLOTS,
			  .key_name = sys_key_name,
			  .name = sys_name,
			  .label = "name",
			  .count = "lowtrace_syscalls_total",
			  .count_help = "Syscalls completed, by name.",
		  },
	  .about = "count and log2 latency histogram per syscall (tp_btf; lowtrace hist)" },
	{ .name = "runq",
	  .progs = { "lt_runq_wake", "lt_runq_new", "lt_runq_switch" },
	  .own = { "lt_runq_start", "lt_runq_hist" },
	  .id = LT_PROBE_RUNQ,
	  .map = "lt_runq_hist",
	  .key_json = one_key_json,
	  .key_title = one_key_title,
	  .prom =
		  &(const struct lt_prom){
			  .hist = "lowtrace_runq_latency_seconds",
			  .hist_help = "Run-queue latency: runnable to running.",
		  },
	  .about = "run-queue latency log2 histogram (tp_btf; lowtrace hist)" },
	{ .name = "bio",
	  .progs = { "lt_bio_issue", "lt_bio_done" },
	  .own = { "lt_bio_start", "lt_bio_hist" },
	  .id = LT_PROBE_BIO,
	  .map = "lt_bio_hist",
	  .key_size = sizeof(struct lt_bio_key),
	  .key_json = bio_key_json,
	  .key_title = bio_key_title,
	  .prom =
		  &(const struct lt_prom){
			  .hist = "lowtrace_bio_latency_seconds",
			  .hist_help = "Block I/O latency, issue to completion, per device and "
				       "operation.",
			  .labels = bio_labels,
		  },
	  .about = "block I/O latency histogram per device and op (tp_btf; lowtrace hist)" },
	/* profiles: loaded by their commands, one at a time, never pinned */
	{ .name = "profile",
	  .progs = { "lt_prof_cpu" },
	  .id = LT_PROBE_PROFILE,
	  .type = LT_TYPE_TASK, /* new processes, for their mappings */
	  .rec_size = sizeof(struct lt_task),
	  .own = { "lt_stacks", "lt_stack_buf", "lt_prof_err", "lt_prof_seen", "lt_prof",
		   "lt_uw_rows", "lt_uw_procs", "lt_uw_st" },
	  .cmd = "profile",
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_task, comm, "comm"),
			  F_END,
		  },
	  .about = "on-CPU stack samples (perf_event)" },
	{ .name = "offcpu",
	  .progs = { "lt_prof_off" },
	  .id = LT_PROBE_OFFCPU,
	  .own = { "lt_stacks", "lt_stack_buf", "lt_prof_err", "lt_prof_seen", "lt_prof",
		   "lt_off_start", "lt_uw_rows", "lt_uw_procs", "lt_uw_st" },
	  .cmd = "profile --off-cpu",
	  .about = "time blocked, with the blocking stacks (tp_btf)" },
	{ .name = "alloc",
	  .progs = { "lt_al_malloc", "lt_al_calloc", "lt_al_realloc", "lt_al_memalign",
		     "lt_al_pmalign", "lt_al_ret", "lt_al_free" },
	  .id = LT_PROBE_ALLOC,
	  .own = { "lt_stacks", "lt_stack_buf", "lt_prof_err", "lt_al_cd", "lt_al_sites",
		   "lt_al_pend", "lt_al_live", "lt_uw_rows", "lt_uw_procs", "lt_uw_st" },
	  .cmd = "alloc",
	  .about = "sampled allocations of one process (uprobes)" },
};
const size_t lt_nprobes = ARRAY_SIZE(lt_probes);

/*
 * Not a probe: the record lt_reserve writes before a probe's next record when
 * it dropped some on that CPU. lt_probe_by_type finds it; no row, no slot.
 */
static void put_probe_name(struct lt_buf *b, int64_t id, bool json)
{
	const struct lt_probe *p = id >= 0 ? lt_probe_by_id((unsigned int)id) : NULL;

	if (json)
		lt_put_c(b, '"');
	if (p) {
		lt_put_s(b, p->name);
	} else {
		lt_put_s(b, "probe_");
		lt_put_s64(b, id);
	}
	if (json)
		lt_put_c(b, '"');
}

const struct lt_probe lt_lost_record = {
	.name = "lost",
	.id = LT_PROBE_SLOTS,
	.type = LT_TYPE_LOST,
	.rec_size = sizeof(struct lt_lost),
	.fields =
		(const struct lt_field[]){
			F_FMT(lt_lost, probe, "probe", TKEY("probe"), put_probe_name),
			F_INT(lt_lost, count, "count"),
			F_INT(lt_lost, first_ts_ns, "first_ts_ns"),
			F_INT(lt_lost, last_ts_ns, "last_ts_ns"),
			F_INT(lt_lost, throttled, "throttled"),
			F_INT(lt_lost, unseen, "unseen"),
			F_END,
		},
	.about = "records of a probe not written on one CPU: the ring had no room (count), or "
		 "the rate limit held them back (throttled); or not written at all: the "
		 "kernel ran no program for them (unseen, tcp closes)",
};
