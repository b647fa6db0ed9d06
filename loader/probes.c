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
/* a field of some ops of the record (its member `op`): bit v of `o` for op v */
#define OPS_(t, o) .ops = (o), .op_off = offsetof(struct t, op)
#define F_INT_OPS(t, m, nm, o)                                                             \
	{                                                                                  \
		FIELD_(t, m, nm, TKEY(nm), LT_F_INT, LT_T_KV), .sgn = SGN(t, m), OPS_(t, o) \
	}
#define F_OCTAL_OPS(t, m, nm, o)                                                  \
	{                                                                         \
		FIELD_(t, m, nm, TKEY(nm) "0", LT_F_INT, LT_T_OCTAL), OPS_(t, o) \
	}
#define F_STRN_OPS(t, m, nm, lm, o)                                                    \
	{                                                                              \
		FIELD_(t, m, nm, TKEY(nm), LT_F_STR, LT_T_KV), LEN_(t, lm), OPS_(t, o) \
	}
#define F_FLAG_OPS(t, m, nm, b, tx, word, o)                                \
	{                                                                   \
		FIELD_(t, m, nm, word, LT_F_FLAG, tx), .bit = b, OPS_(t, o) \
	}
#define F_FMT_OPS(t, m, nm, tk, fn, o)                                                            \
	{                                                                                         \
		FIELD_(t, m, nm, tk, LT_F_FMT, LT_T_KV), .sgn = SGN(t, m), .put = fn, OPS_(t, o) \
	}
#define F_REC(t, m, nm, fn)                                                  \
	{                                                                    \
		FIELD_(t, m, nm, TKEY(nm), LT_F_REC, LT_T_KV), .put_rec = fn \
	}
#define F_STR_OPS(t, m, nm, o)                                            \
	{                                                                 \
		FIELD_(t, m, nm, TKEY(nm), LT_F_STR, LT_T_KV), OPS_(t, o) \
	}
#define F_ENUM_OPS(t, m, nm, tab, unk, num, o)                                                     \
	{                                                                                          \
		FIELD_(t, m, nm, TKEY(nm), LT_F_ENUM, LT_T_KV),                                    \
			.sgn = SGN(t, m), .nnames = ARRAY_SIZE(tab), .names = tab, .unknown = unk, \
			.unknown_num = num, OPS_(t, o)                                             \
	}
/* REC writing its own key, or nothing: the field's keys are empty */
#define F_REC_OPS(t, m, nm, fn, o)                                                       \
	{                                                                                \
		.name = nm, .jkey = "", .tkey = "", .kind = LT_F_REC, .text = LT_T_KV,   \
		.off = offsetof(struct t, m), .size = sizeof(MEMB(t, m)), .put_rec = fn, \
		OPS_(t, o)                                                               \
	}
#define B(v) (1u << (v))
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

/* an exec_id: JSON a string of its digits (a u64 is past a double's integers), text the digits */
static void put_exec_id(struct lt_buf *b, int64_t v, bool json)
{
	if (json)
		lt_put_c(b, '"');
	lt_put_u64(b, (uint64_t)v);
	if (json)
		lt_put_c(b, '"');
}

/*
 * An exec's ancestors, nearest first: JSON [{"pid":1,"exec_id":"..","filename":"/sbin/init"}]
 * (exec_id and filename null where the process had no entry); text pid:filename,... ("?").
 */
static void put_ancestors(struct lt_buf *b, const unsigned char *r, bool json)
{
	const struct lt_exec *e = (const struct lt_exec *)r;
	unsigned int n = e->n_anc < LT_ANC_MAX ? e->n_anc : LT_ANC_MAX;

	if (json)
		lt_put_c(b, '[');
	for (unsigned int i = 0; i < n; i++) {
		const struct lt_anc *a = &e->anc[i];
		size_t len = lt_strnlen(a->name, a->name_len < LT_ANC_NAME ? a->name_len : LT_ANC_NAME);
		bool known = !(a->flags & LT_ANC_UNKNOWN);

		if (i)
			lt_put_c(b, ',');
		if (!json) {
			lt_put_u64(b, a->pid);
			lt_put_c(b, ':');
			if (known)
				lt_put_text_str(b, a->name, len);
			else
				lt_put_c(b, '?');
			continue;
		}
		lt_put_s(b, "{\"pid\":");
		lt_put_u64(b, a->pid);
		lt_put_s(b, ",\"exec_id\":");
		if (known)
			put_exec_id(b, (int64_t)a->exec_id, true);
		else
			lt_put_s(b, "null");
		lt_put_s(b, ",\"filename\":");
		if (known)
			lt_put_json_str(b, a->name, len);
		else
			lt_put_s(b, "null");
		lt_put_c(b, '}');
	}
	if (json)
		lt_put_c(b, ']');
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

/* the syscall's name on this architecture: "renameat2" */
static void put_sysname(struct lt_buf *b, int64_t nr, bool json)
{
	char tmp[32];

	if (json)
		lt_put_c(b, '"');
	lt_put_s(b, lt_syscall_name(nr >= 0 && nr < 65536 ? (uint32_t)nr : 65535, tmp, sizeof(tmp)));
	if (json)
		lt_put_c(b, '"');
}

static const char *const file_ops[] = {
	[LT_FILE_UNLINK] = "unlink",	 [LT_FILE_RENAME] = "rename", [LT_FILE_CHMOD] = "chmod",
	[LT_FILE_CHOWN] = "chown",	 [LT_FILE_LINK] = "link",     [LT_FILE_SYMLINK] = "symlink",
	[LT_FILE_TRUNCATE] = "truncate", [LT_FILE_MKDIR] = "mkdir",   [LT_FILE_RMDIR] = "rmdir",
};
_Static_assert(ARRAY_SIZE(file_ops) == LT_FILE_OPS, "a name per file op");

/* the file ops with a second path, a mode, an owner, flags */
#define FILE_TWO (B(LT_FILE_RENAME) | B(LT_FILE_LINK) | B(LT_FILE_SYMLINK))
#define FILE_MODE (B(LT_FILE_CHMOD) | B(LT_FILE_MKDIR))
#define FILE_FLAGS \
	(B(LT_FILE_RENAME) | B(LT_FILE_LINK) | B(LT_FILE_CHOWN) | B(LT_FILE_CHMOD) | \
	 B(LT_FILE_UNLINK) | B(LT_FILE_RMDIR))

static const char *const cred_ops[] = {
	[LT_CRED_SETUID] = "setuid",	   [LT_CRED_SETGID] = "setgid",
	[LT_CRED_SETREUID] = "setreuid",   [LT_CRED_SETREGID] = "setregid",
	[LT_CRED_SETRESUID] = "setresuid", [LT_CRED_SETRESGID] = "setresgid",
	[LT_CRED_SETFSUID] = "setfsuid",   [LT_CRED_SETFSGID] = "setfsgid",
	[LT_CRED_SETGROUPS] = "setgroups", [LT_CRED_CAPSET] = "capset",
	[LT_CRED_EXEC] = "exec",
};
_Static_assert(ARRAY_SIZE(cred_ops) == LT_CRED_OPS, "a name per cred op");

/* a capability set as hex: JSON a string (a u64 is past a double's integers) */
static void put_hex(struct lt_buf *b, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int n = 0;

	lt_put_s(b, "0x");
	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		lt_put_c(b, tmp[--n]);
}

/* {"effective":"0x1ff","permitted":"0x1ff"}; text effective/permitted: 0x1ff/0x1ff */
static void put_caps(struct lt_buf *b, const struct lt_creds *c, bool json)
{
	if (json)
		lt_put_s(b, "{\"effective\":\"");
	put_hex(b, c->cap_effective);
	lt_put_s(b, json ? "\",\"permitted\":\"" : "/");
	put_hex(b, c->cap_permitted);
	if (json)
		lt_put_s(b, "\"}");
}

static void put_old_caps(struct lt_buf *b, const unsigned char *r, bool json)
{
	struct lt_creds c;

	memcpy(&c, r + offsetof(struct lt_cred, old), sizeof(c));
	put_caps(b, &c, json);
}

static void put_new_caps(struct lt_buf *b, const unsigned char *r, bool json)
{
	struct lt_creds c;

	memcpy(&c, r + offsetof(struct lt_cred, new), sizeof(c));
	put_caps(b, &c, json);
}

/* both values of one id: old_uid, new_uid */
#define CRED_ID(id) \
	F_INT(lt_cred, old.id, "old_" #id), F_INT(lt_cred, new.id, "new_" #id)

static const char *const priv_ops[] = {
	[LT_PRIV_PTRACE] = "ptrace",
	[LT_PRIV_MOUNT] = "mount",
	[LT_PRIV_UMOUNT] = "umount",
	[LT_PRIV_BPF] = "bpf",
	[LT_PRIV_MODULE_LOAD] = "module_load",
	[LT_PRIV_MODULE_UNLOAD] = "module_unload",
	[LT_PRIV_UNSHARE] = "unshare",
	[LT_PRIV_SETNS] = "setns",
	[LT_PRIV_FILELESS_EXEC] = "fileless_exec",
};
_Static_assert(ARRAY_SIZE(priv_ops) == LT_PRIV_OPS, "a name per priv op");

static const char *const ptrace_requests[] = { [0] = "traceme", [16] = "attach" };

/* attach, seize, traceme; another request by number */
static void put_ptrace_req(struct lt_buf *b, int64_t v, bool json)
{
	const char *n = v == 0x4206 ? "seize"
			: v >= 0 && v < (int64_t)ARRAY_SIZE(ptrace_requests) ? ptrace_requests[v]
									       : NULL;

	if (!n) {
		lt_put_s64(b, v);
		return;
	}
	if (json)
		lt_put_c(b, '"');
	lt_put_s(b, n);
	if (json)
		lt_put_c(b, '"');
}

static const char *const bpf_cmds[] = {
	[0] = "MAP_CREATE",	    [5] = "PROG_LOAD",	  [6] = "OBJ_PIN",
	[8] = "PROG_ATTACH",	    [9] = "PROG_DETACH",  [17] = "RAW_TRACEPOINT_OPEN",
	[18] = "BTF_LOAD",	    [28] = "LINK_CREATE", [29] = "LINK_UPDATE",
	[32] = "ENABLE_STATS",	    [33] = "ITER_CREATE", [34] = "LINK_DETACH",
	[36] = "TOKEN_CREATE",
};

/* prog_type (PROG_LOAD), map_type (MAP_CREATE) or attach_type (the attaches): key and value */
static void put_bpf_type(struct lt_buf *b, const unsigned char *r, bool json)
{
	const struct lt_priv *p = (const struct lt_priv *)r;
	const char *key = p->bpf_cmd == 5   ? "prog_type"
			  : p->bpf_cmd == 0 ? "map_type"
			  : p->bpf_cmd == 8 || p->bpf_cmd == 9 || p->bpf_cmd == 28 ? "attach_type"
										   : NULL;

	if (!key)
		return;
	lt_put_s(b, json ? ",\"" : " ");
	lt_put_s(b, key);
	lt_put_s(b, json ? "\":" : "=");
	lt_put_u64(b, p->bpf_type);
}

/* unshare's and setns' namespaces: CLONE_NEW* names, other bits as one hex number */
static void put_ns_flags(struct lt_buf *b, int64_t v, bool json)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} ns[] = {
		{ 0x00000080, "CLONE_NEWTIME" }, { 0x00020000, "CLONE_NEWNS" },
		{ 0x02000000, "CLONE_NEWCGROUP" }, { 0x04000000, "CLONE_NEWUTS" },
		{ 0x08000000, "CLONE_NEWIPC" },	 { 0x10000000, "CLONE_NEWUSER" },
		{ 0x20000000, "CLONE_NEWPID" },	 { 0x40000000, "CLONE_NEWNET" },
	};
	uint64_t rest = (uint64_t)v;
	bool first = true;

	lt_put_c(b, json ? '[' : '"');
	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		if (!(rest & ns[i].bit))
			continue;
		lt_put_s(b, first ? "" : json ? "," : "|");
		lt_put_s(b, json ? "\"" : "");
		lt_put_s(b, ns[i].name);
		lt_put_s(b, json ? "\"" : "");
		rest &= ~ns[i].bit;
		first = false;
	}
	if (rest) {
		lt_put_s(b, first ? "" : json ? "," : "|");
		lt_put_s(b, json ? "\"" : "");
		put_hex(b, rest);
		lt_put_s(b, json ? "\"" : "");
	}
	lt_put_c(b, json ? ']' : '"');
}

#define PRIV_NS (B(LT_PRIV_UNSHARE) | B(LT_PRIV_SETNS))
#define PRIV_MOUNTS (B(LT_PRIV_MOUNT) | B(LT_PRIV_UMOUNT))
#define PRIV_MODULE (B(LT_PRIV_MODULE_LOAD) | B(LT_PRIV_MODULE_UNLOAD))
#define PRIV_CALLS (((1u << LT_PRIV_OPS) - 1) & ~B(LT_PRIV_FILELESS_EXEC))

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
	  .progs = { "lt_exec", "lt_exec_nest", "lt_exec_tp", "lt_exec_fork", "lt_exec_free" },
	  .no_record = { "lt_exec_fork", "lt_exec_free" }, /* ancestry's table */
	  .own = { "lt_cg_counts", "lt_marks_cpu", "lt_marks", "lt_exec_buf", "lt_procs",
		   "lt_anc_stat" },
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
			  F_INT(lt_exec, euid, "euid"),
			  F_INT(lt_exec, egid, "egid"),
			  F_FLAG(lt_exec, flags, "fileless", LT_EXEC_FILELESS, LT_T_WORD,
				 " fileless"),
			  F_FMT(lt_exec, exec_id, "exec_id", TKEY("exec_id"), put_exec_id),
			  F_FMT(lt_exec, parent_exec_id, "parent_exec_id", TKEY("parent_exec_id"),
				put_exec_id),
			  F_REC(lt_exec, anc, "ancestors", put_ancestors),
			  F_FLAG(lt_exec, anc_more, "ancestors_truncated", 0, LT_T_WORD, " ..."),
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
	  .own = { "lt_tcp_conns", "lt_sweep", "lt_tcp_reap_keys" },
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
	{ .name = "file",
	  .progs = { "lt_file_e", "lt_file_x", "lt_file_se", "lt_file_sx" },
	  .syscalls = { "unlink", "unlinkat", "rename", "renameat", "renameat2", "chmod",
			"fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
			"link", "linkat", "symlink", "symlinkat", "truncate", "ftruncate", "mkdir",
			"mkdirat", "rmdir" },
	  .own = { "lt_sys_args", "lt_op_counts" },
	  .id = LT_PROBE_FILE,
	  .type = LT_TYPE_FILE,
	  .rec_size = sizeof(struct lt_file),
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_file, comm, "comm"),
			  F_ENUM(lt_file, op, "op", file_ops, "op_", true),
			  F_FMT(lt_file, syscall, "syscall", TKEY("syscall"), put_sysname),
			  F_STRN(lt_file, path, "path", path_len),
			  F_FLAG(lt_file, rflags, "path_truncated", LT_FILE_PATH_TRUNC, LT_T_WORD,
				 "..."),
			  F_FLAG(lt_file, rflags, "path_unreadable", LT_FILE_PATH_FAULT, LT_T_WORD,
				 " path_unreadable"),
			  F_FLAG(lt_file, rflags, "path_from_fd", LT_FILE_PATH_FD, LT_T_WORD,
				 " path_from_fd"),
			  F_INT(lt_file, dfd, "dfd"),
			  F_STRN_OPS(lt_file, new_path, "new_path", new_path_len, FILE_TWO),
			  F_FLAG_OPS(lt_file, rflags, "new_path_truncated", LT_FILE_NEW_TRUNC,
				     LT_T_WORD, "...", FILE_TWO),
			  F_FLAG_OPS(lt_file, rflags, "new_path_unreadable", LT_FILE_NEW_FAULT,
				     LT_T_WORD, " new_path_unreadable", FILE_TWO),
			  F_INT_OPS(lt_file, new_dfd, "new_dfd", FILE_TWO),
			  F_OCTAL_OPS(lt_file, mode, "mode", FILE_MODE),
			  F_INT_OPS(lt_file, owner_uid, "owner_uid", B(LT_FILE_CHOWN)),
			  F_INT_OPS(lt_file, owner_gid, "owner_gid", B(LT_FILE_CHOWN)),
			  F_INT_OPS(lt_file, flags, "flags", FILE_FLAGS),
			  F_INT_OPS(lt_file, length, "length", B(LT_FILE_TRUNCATE)),
			  F_INT(lt_file, ret, "ret"),
			  F_END,
		  },
	  .about = "files unlinked, renamed, chmod-ed, chown-ed, linked, truncated, mkdir, rmdir: "
		   "paths, mode, owner, result (syscall tracepoints; tp_btf before 5.15)" },
	{ .name = "cred",
	  .progs = { "lt_cred_e", "lt_cred_x", "lt_cred_se", "lt_cred_sx" },
	  .syscalls = { "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
			"setfsuid", "setfsgid", "setgroups", "capset", "execve", "execveat" },
	  .own = { "lt_sys_args", "lt_op_counts" },
	  .id = LT_PROBE_CRED,
	  .type = LT_TYPE_CRED,
	  .rec_size = sizeof(struct lt_cred),
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_cred, comm, "comm"),
			  F_ENUM(lt_cred, op, "op", cred_ops, "op_", true),
			  F_FMT(lt_cred, syscall, "syscall", TKEY("syscall"), put_sysname),
			  CRED_ID(uid),
			  CRED_ID(euid),
			  CRED_ID(suid),
			  CRED_ID(fsuid),
			  CRED_ID(gid),
			  CRED_ID(egid),
			  CRED_ID(sgid),
			  CRED_ID(fsgid),
			  F_REC(lt_cred, old, "old_caps", put_old_caps),
			  F_REC(lt_cred, new, "new_caps", put_new_caps),
			  F_INT(lt_cred, ret, "ret"),
			  F_END,
		  },
	  .about = "credential changes: setuid family, setgroups, capset, setuid execs; old and "
		   "new ids and capabilities (syscall tracepoints; tp_btf before 5.15)" },
	{ .name = "priv",
	  .progs = { "lt_priv_e", "lt_priv_x", "lt_priv_se", "lt_priv_sx", "lt_priv_mod",
		     "lt_priv_exec" },
	  .optional = "lt_priv_mod",
	  /* tracepoints by the kernel's SYSCALL_DEFINE names: umount2(2) is "umount" */
	  .syscalls = { "ptrace", "mount", "umount", "bpf", "init_module", "finit_module",
			"delete_module", "unshare", "setns" },
	  .own = { "lt_sys_args", "lt_op_counts" },
	  .id = LT_PROBE_PRIV,
	  .type = LT_TYPE_PRIV,
	  .rec_size = sizeof(struct lt_priv),
	  .fields =
		  (const struct lt_field[]){
			  F_STR(lt_priv, comm, "comm"),
			  F_ENUM(lt_priv, op, "op", priv_ops, "op_", true),
			  F_FMT_OPS(lt_priv, syscall, "syscall", TKEY("syscall"), put_sysname,
				    PRIV_CALLS),
			  F_FMT_OPS(lt_priv, request, "request", TKEY("request"), put_ptrace_req,
				    B(LT_PRIV_PTRACE)),
			  F_INT_OPS(lt_priv, target_pid, "target_pid", B(LT_PRIV_PTRACE)),
			  F_STRN_OPS(lt_priv, source, "source", source_len, B(LT_PRIV_MOUNT)),
			  F_STRN_OPS(lt_priv, target, "target", target_len,
				     PRIV_MOUNTS | B(LT_PRIV_BPF)),
			  F_FLAG_OPS(lt_priv, rflags, "source_truncated", LT_PRIV_SOURCE_TRUNC,
				     LT_T_NONE, "", B(LT_PRIV_MOUNT)),
			  F_FLAG_OPS(lt_priv, rflags, "target_truncated", LT_PRIV_TARGET_TRUNC,
				     LT_T_NONE, "", PRIV_MOUNTS | B(LT_PRIV_BPF)),
			  F_STR_OPS(lt_priv, fstype, "fstype", B(LT_PRIV_MOUNT)),
			  F_ENUM_OPS(lt_priv, bpf_cmd, "bpf_cmd", bpf_cmds, "CMD_", true,
				     B(LT_PRIV_BPF)),
			  F_REC_OPS(lt_priv, bpf_type, "prog_type", put_bpf_type, B(LT_PRIV_BPF)),
			  /* the fileless exec's filename, as exec'd, is kept in source */
			  F_STRN_OPS(lt_priv, source, "filename", source_len,
				     B(LT_PRIV_FILELESS_EXEC)),
			  F_STR_OPS(lt_priv, name, "name",
				    B(LT_PRIV_BPF) | PRIV_MODULE | B(LT_PRIV_FILELESS_EXEC)),
			  F_FLAG_OPS(lt_priv, rflags, "name_from_fd", LT_PRIV_NAME_FROM_FD,
				     LT_T_WORD, " name_from_fd", B(LT_PRIV_MODULE_LOAD)),
			  F_FLAG_OPS(lt_priv, rflags, "memfd", LT_PRIV_MEMFD, LT_T_WORD, " memfd",
				     B(LT_PRIV_FILELESS_EXEC)),
			  F_FMT_OPS(lt_priv, flags, "flags", TKEY("flags"), put_ns_flags, PRIV_NS),
			  F_INT_OPS(lt_priv, flags, "flags", PRIV_MOUNTS | PRIV_MODULE),
			  F_INT_OPS(lt_priv, fd, "fd", B(LT_PRIV_SETNS) | B(LT_PRIV_MODULE_LOAD)),
			  F_INT(lt_priv, ret, "ret"),
			  F_END,
		  },
	  .about = "privileged operations: ptrace attach, mount, umount, bpf, modules, unshare, "
		   "setns, fileless execs (syscall tracepoints, tp_btf)" },
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
	  /* the pair with the kernel's atomics (5.12+), or the *_h pair: kernel_open.c */
	  .progs = { "lt_bio_issue", "lt_bio_done", "lt_bio_issue_h", "lt_bio_done_h" },
	  .own = { "lt_bio_slots", "lt_bio_start", "lt_bio_ahist", "lt_bio_keys", "lt_bio_idx",
		   "lt_bio_cache", "lt_bio_hist" },
	  .id = LT_PROBE_BIO,
	  /* one of the two holds the histograms, the other is left one entry (kernel_open.c) */
	  .map = "lt_bio_hist",
	  .map2 = "lt_bio_ahist",
	  .map2_keys = "lt_bio_keys",
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
