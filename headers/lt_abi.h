/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The lowtrace record ABI, shared by the BPF programs and the loader.
 *
 * Rules: every record starts with struct lt_hdr; every struct is 8-byte
 * aligned with explicit _pad fields and no implicit holes; sizes and key
 * offsets are pinned with _Static_assert on both sides; a record carries its
 * own size so older and newer producers and consumers interoperate.
 */
#ifndef LT_ABI_H
#define LT_ABI_H

#ifdef __bpf__
/* vmlinux.h provides __u8 .. __u64 */
#else
#include <linux/types.h>
#include <stddef.h>
#endif

#define LT_COMM_LEN 16
#define LT_FILENAME_MAX 256
#define LT_ARGS_MAX 4096
/* Default size of the record ring (lt_events); the loader may set another power of 2. */
#define LT_RINGBUF_DEFAULT (1u << 20)

/* Record types: stable numbers, never reused. */
enum lt_type {
	LT_TYPE_EXEC = 1,
	LT_TYPE_EXIT = 2,
	LT_TYPE_FORK = 3,
	LT_TYPE_SIGNAL = 4,
	LT_TYPE_OOM = 5,
	LT_TYPE_OPEN = 6,
	LT_TYPE_TCP = 7,
	LT_TYPE_TCP_RETRANS = 8,
	LT_TYPE_TASK = 9,
	LT_TYPE_LOST = 10,
	LT_TYPE_FILE = 11,
	LT_TYPE_CRED = 12,
	LT_TYPE_PRIV = 13,
	LT_TYPE_MAX,
};

/* Index of a probe in the per-CPU stats array. Stable, never reused. */
enum lt_probe_id {
	LT_PROBE_EXEC = 0,
	LT_PROBE_EXIT = 1,
	LT_PROBE_FORK = 2,
	LT_PROBE_SIGNAL = 3,
	LT_PROBE_OOM = 4,
	LT_PROBE_OPEN = 5,
	LT_PROBE_TCP = 6,
	LT_PROBE_TCP_RETRANS = 7,
	LT_PROBE_SYSCALLS = 8,
	LT_PROBE_RUNQ = 9,
	LT_PROBE_BIO = 10,
	LT_PROBE_PROFILE = 11,
	LT_PROBE_OFFCPU = 12,
	LT_PROBE_ALLOC = 13,
	LT_PROBE_FILE = 14,
	LT_PROBE_CRED = 15,
	LT_PROBE_PRIV = 16,
	LT_PROBE_SLOTS = 32, /* room for later probes without resizing the map */
};

/*
 * The probes whose *_nest program pairs with the main one by marks
 * (progs/lt_takeover.bpf.h): each is a mark kind, LT_MARK_<NAME>, with a count
 * in every CPU's and task's marks. A new such probe adds its name here.
 */
#define LT_MARK_PROBES(X) X(EXEC) X(EXIT) X(FORK) X(SIGNAL)

/* lt_cfg_local (.rodata): where per-object state lives, set by the loader */
#define LT_LOCAL_TASK (1u << 0) /* task storage; else a hash by thread id */
#define LT_LOCAL_SK (1u << 1) /* socket storage; else a hash by socket address */

/* lt_hdr.flags */
#define LT_HDR_CGROUP \
	(1u << 0) /* this header (32 bytes, cgroup_id); else the 24-byte one before it */

/*
 * Common header: first in every record. Until the cgroup id joined it, the
 * header was 24 bytes with a __u32 cpu where cpu and flags are now; its
 * records have flags 0 (a CPU number < 65536, little-endian), so the decoder
 * tells the two apart and reads both.
 */
struct lt_hdr {
	__u16 type; /* enum lt_type */
	__u16 size; /* whole record as produced, header included */
	__u16 cpu;
	__u16 flags; /* LT_HDR_* */
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 pid; /* thread group id */
	__u32 tid;
	/* the cgroup id (kernfs inode) of the task that caused the record, in the identity
	 * hierarchy the loader chose (cgroup2, or a v1 controller's: `status`); 0: none */
	__u64 cgroup_id;
};

/* Size of the header before LT_HDR_CGROUP: the decoder's oldest layout. */
#define LT_HDR_V0_SIZE 24

/* lt_exec.flags */
#define LT_EXEC_ARGS_TRUNC (1u << 0)
#define LT_EXEC_FILENAME_TRUNC (1u << 1)
/*
 * Shed: written short because the ring was three quarters full (load sheds unless
 * --no-shed): args cut at LT_SHED_ARGS. A packed exec is then just shorter; one of the
 * fixed layout before packing (LT_EXEC_SHED_SIZE bytes) had the namespace fields right
 * after the cut args, and the decoder still moves them back.
 */
#define LT_EXEC_ARGS_SHED (1u << 2)
#define LT_SHED_ARGS 128
/*
 * Packed (every exec since LT_ARGS_MAX is 4 KiB): the record is as long as what it
 * carries. After the fixed fields (up to filename) come filename_len bytes of filename
 * and a NUL, args_len bytes of args, zeros to a multiple of 8, and the namespace fields
 * (pid_ns .. _pad1) as the record's last LT_EXEC_NS_SIZE bytes. The decoder puts each
 * back where struct lt_exec has it; the length fields are authoritative.
 */
#define LT_EXEC_PACKED (1u << 3)
/* the fixed-layout exec of 1 KiB args before LT_EXEC_PACKED: namespaces its last bytes */
#define LT_EXEC_V1_SIZE 1376
/*
 * Packed with ancestry (every exec since LT_EXEC_ANC): the record's last bytes are
 * pid_ns .. _pad2 (LT_EXEC_TAIL_SIZE), and the anc_len bytes before them the ancestors,
 * each a struct lt_anc's first LT_ANC_HEAD bytes, name_len bytes of name, a NUL and zeros
 * to a multiple of 8. The decoder puts them in anc[].
 */
#define LT_EXEC_ANC (1u << 4)
/* the exec'd file has no name left: a memfd, or a file deleted (i_nlink 0) */
#define LT_EXEC_FILELESS (1u << 5)

/* ancestors an exec record carries at most, and by default (load --ancestors) */
#define LT_ANC_MAX 8
#define LT_ANC_DEFAULT 3
#define LT_ANC_NAME 128
#define LT_ANC_HEAD 16

/* lt_anc.flags, lt_proc.flags */
#define LT_ANC_UNKNOWN (1u << 0) /* no entry for the process: its pid alone */
#define LT_ANC_SEEDED (1u << 1) /* named by the loader's walk of /proc, not by an exec seen */
#define LT_ANC_NAME_TRUNC (1u << 2) /* the name filled all LT_ANC_NAME - 1 bytes: maybe cut */

/* One ancestor of an exec's process: its parent, grandparent, ... */
struct lt_anc {
	__u64 exec_id; /* of the image it ran at the exec; 0: unknown */
	__u32 pid;
	__u16 name_len; /* bytes of name, without the NUL */
	__u8 flags; /* LT_ANC_* */
	__u8 _pad0;
	char name[LT_ANC_NAME]; /* the filename it exec'd (seeded: /proc/PID/exe) */
};

struct lt_exec {
	struct lt_hdr hdr;
	__u32 ppid;
	__u32 uid;
	__u32 gid;
	__u32 argc; /* true argc of the exec, may exceed what args holds */
	__u64 cgroup_id; /* the header's, kept for readers of this field */
	__u16 filename_len; /* bytes in filename, without the NUL */
	__u16 args_len; /* bytes in args: NUL-separated argv, cut at LT_ARGS_MAX */
	__u8 flags; /* LT_EXEC_* */
	__u8 _pad0[3];
	char comm[LT_COMM_LEN];
	char filename[LT_FILENAME_MAX];
	char args[LT_ARGS_MAX];
	/* namespace inode numbers (as in /proc/PID/ns/ *) of the new image */
	__u32 pid_ns;
	__u32 mnt_ns;
	__u32 net_ns;
	__u32 _pad1;
	/* since LT_EXEC_ANC (an older record's read as 0) */
	__u64 exec_id; /* unique per exec on this boot (lt_proc) */
	__u64 parent_exec_id; /* the exec_id of the parent's image; 0: unknown */
	__u32 euid; /* effective ids of the new image */
	__u32 egid;
	__u8 n_anc; /* ancestors in anc, nearest first */
	__u8 anc_more; /* the chain went on past them */
	__u16 anc_len; /* bytes of the packed ancestors */
	__u32 _pad2;
	struct lt_anc anc[LT_ANC_MAX];
};

/*
 * Value of lt_procs (key: a process's tgid): the image it runs, for its children's execs.
 * Written at each exec, copied at fork to the new process, gone when its leader is freed;
 * seeded at load from /proc for the processes already there. An LRU of load --max-procs.
 */
#define LT_PROCS_DEFAULT 16384
struct lt_proc {
	__u64 exec_id;
	__u64 parent_exec_id;
	__u16 name_len;
	__u8 flags; /* LT_ANC_SEEDED, LT_ANC_NAME_TRUNC */
	__u8 _pad0[5];
	char name[LT_ANC_NAME];
};

/*
 * exec_id: the boot-time clock's nanoseconds with the low 12 bits replaced by the CPU: two
 * execs on one CPU are microseconds apart at the least. A seeded process's has all 12
 * bits set (no CPU's), counted down from the load's time.
 */
#define LT_EXEC_ID_CPU 0xfffull

/* Value of lt_anc_stat (one, per CPU): the ancestry's counts */
struct lt_anc_stat {
	__u64 execs; /* lt_procs entries written by execs */
	__u64 forks; /* copied to a new process */
	__u64 freed; /* removed with their process */
	/* ancestors without an entry though they started after the load: evicted from the
	 * LRU (or a fork or exec the kernel skipped the program for) */
	__u64 missing;
	/* ancestors without an entry that started before the load and were not seeded */
	__u64 unknown;
};

struct lt_exit {
	struct lt_hdr hdr;
	__u32 ppid;
	__u32 exit_code; /* status passed to exit(), 0..255 */
	__u32 signal; /* killing signal, 0 if none */
	__u8 core_dumped;
	__u8 _pad0[3];
	__u64 lifetime_ns;
	char comm[LT_COMM_LEN];
};

/* A new process (thread group); new threads are not reported. */
struct lt_fork {
	struct lt_hdr hdr;
	__u32 child_pid;
	__u32 _pad0;
	char comm[LT_COMM_LEN]; /* parent's */
};

/* A signal generated for a task (sender = the header's pid/tid). */
struct lt_signal {
	struct lt_hdr hdr;
	__u32 target_pid; /* thread group of the target */
	__u32 target_tid;
	__s32 sig;
	__s32 result; /* the kernel's enum trace_signal_result: 0 delivered, 1 ignored, ... */
	__u8 group; /* sent to the whole thread group */
	__u8 _pad0[7];
	char comm[LT_COMM_LEN]; /* sender's */
	char target_comm[LT_COMM_LEN];
};

/* The OOM killer chose a victim (the header's pid/tid: the task that ran out of memory). */
struct lt_oom {
	struct lt_hdr hdr;
	__u32 victim_pid;
	__u32 victim_uid;
	__u64 pages; /* victim's resident pages (anon + file + shmem) when it was chosen */
	__u64 total_vm; /* victim's mapped pages */
	char comm[LT_COMM_LEN]; /* the trigger's */
	char victim_comm[LT_COMM_LEN];
};

/* lt_open.syscall */
enum lt_open_call {
	LT_OPEN_OPEN = 0,
	LT_OPEN_OPENAT = 1,
	LT_OPEN_OPENAT2 = 2,
};

/* lt_open.rflags */
#define LT_OPEN_PATH_TRUNC (1u << 0) /* path filled all LT_PATH_MAX - 1 bytes: maybe cut */
#define LT_OPEN_PATH_FAULT (1u << 1) /* the path could not be read from the caller */
/* shed (as exec's): the ring was three quarters full, the path is cut at LT_SHED_PATH bytes
 * (before packing the record was then LT_OPEN_SHED_SIZE bytes long) */
#define LT_OPEN_PATH_SHED (1u << 2)
#define LT_SHED_PATH 64
/* packed: the record ends after the path's NUL, at a multiple of 8 bytes (path is last) */
#define LT_OPEN_PACKED (1u << 3)

#define LT_PATH_MAX 256

/* One open, openat or openat2 call, written when it returns. */
struct lt_open {
	struct lt_hdr hdr;
	__s32 ret; /* the new fd, or -errno */
	__s32 dfd; /* directory fd the path is relative to (-100: AT_FDCWD) */
	__u32 flags; /* O_* as the caller passed them (the kernel's values) */
	__u32 mode;
	__u16 path_len; /* bytes in path, without the NUL */
	__u8 syscall; /* enum lt_open_call */
	__u8 rflags; /* LT_OPEN_PATH_* */
	__u32 _pad0;
	char comm[LT_COMM_LEN];
	char path[LT_PATH_MAX];
};

/*
 * The syscall-set probes (file, cred, priv): a record per call of one of their syscalls,
 * written at its return with the result. What the entry saw is kept per thread until then.
 */

/* lt_file.op */
enum lt_file_op {
	LT_FILE_UNLINK = 1,
	LT_FILE_RENAME,
	LT_FILE_CHMOD,
	LT_FILE_CHOWN,
	LT_FILE_LINK,
	LT_FILE_SYMLINK,
	LT_FILE_TRUNCATE,
	LT_FILE_MKDIR,
	LT_FILE_RMDIR,
	LT_FILE_OPS,
};

/* lt_file.rflags */
#define LT_FILE_PATH_TRUNC (1u << 0) /* path filled all LT_PATH_MAX - 1 bytes: maybe cut */
#define LT_FILE_PATH_FAULT (1u << 1) /* path could not be read from the caller */
#define LT_FILE_NEW_TRUNC (1u << 2) /* new_path alike */
#define LT_FILE_NEW_FAULT (1u << 3)
/* path is the name of the open file the call took (fchmod, fchown, ftruncate; a
 * *at call with AT_EMPTY_PATH): its last component, from the kernel */
#define LT_FILE_PATH_FD (1u << 4)

/*
 * A file changed by name: unlink, rename, chmod, chown, link, symlink, truncate, mkdir,
 * rmdir (each syscall of the op: unlinkat, renameat2, fchmodat, ...). Paths are as the
 * caller gave them, relative to dfd (new_path to new_dfd) when not absolute; for symlink
 * path is the link's target text, new_path the link made.
 */
struct lt_file {
	struct lt_hdr hdr;
	__s32 ret; /* 0 or -errno */
	__s32 dfd; /* the directory path is relative to (-100: AT_FDCWD), or the fd the call took */
	__s32 new_dfd; /* rename, link, symlink: the one of new_path */
	__u32 mode; /* chmod, mkdir: as passed */
	__u32 owner_uid; /* chown: as passed (0xffffffff: unchanged) */
	__u32 owner_gid;
	__u32 flags; /* renameat2's RENAME_*, unlinkat's, linkat's, fchownat's AT_* */
	__u16 syscall; /* its number on this architecture */
	__u16 path_len; /* bytes in path, without the NUL */
	__u16 new_path_len;
	__u8 op; /* enum lt_file_op */
	__u8 rflags; /* LT_FILE_* */
	__u32 _pad0;
	__u64 length; /* truncate */
	char comm[LT_COMM_LEN];
	char path[LT_PATH_MAX];
	char new_path[LT_PATH_MAX];
};

/* lt_cred.op */
enum lt_cred_op {
	LT_CRED_SETUID = 1,
	LT_CRED_SETGID,
	LT_CRED_SETREUID,
	LT_CRED_SETREGID,
	LT_CRED_SETRESUID,
	LT_CRED_SETRESGID,
	LT_CRED_SETFSUID,
	LT_CRED_SETFSGID,
	LT_CRED_SETGROUPS,
	LT_CRED_CAPSET,
	LT_CRED_EXEC, /* an exec changed them (setuid, setgid, file capabilities) */
	LT_CRED_OPS,
};

/* A task's credentials, as the kernel's struct cred has them. */
struct lt_creds {
	__u32 uid, gid, suid, sgid, euid, egid, fsuid, fsgid;
	__u64 cap_effective;
	__u64 cap_permitted;
};

/*
 * A call of the setuid family, setgroups or capset (one per call, changed or not, with its
 * result), or an exec that changed the credentials. old: at the syscall's entry; new: at
 * its return (of the thread that made it).
 */
struct lt_cred {
	struct lt_hdr hdr;
	__s32 ret;
	__u16 syscall;
	__u8 op; /* enum lt_cred_op */
	__u8 _pad0;
	struct lt_creds old;
	struct lt_creds new;
	char comm[LT_COMM_LEN]; /* at the return: an exec's new image */
};

/* lt_priv.op */
enum lt_priv_op {
	LT_PRIV_PTRACE = 1, /* attach, seize, traceme */
	LT_PRIV_MOUNT,
	LT_PRIV_UMOUNT,
	LT_PRIV_BPF, /* the commands that make or attach something (LT_PRIV_BPF_CMDS) */
	LT_PRIV_MODULE_LOAD,
	LT_PRIV_MODULE_UNLOAD,
	LT_PRIV_UNSHARE,
	LT_PRIV_SETNS,
	LT_PRIV_FILELESS_EXEC, /* an exec of a memfd or of a deleted file */
	LT_PRIV_OPS,
};

/* the bpf(2) commands priv records, a bit each: MAP_CREATE, PROG_LOAD, OBJ_PIN, PROG_ATTACH,
 * PROG_DETACH, RAW_TRACEPOINT_OPEN, BTF_LOAD, LINK_CREATE, LINK_UPDATE, ENABLE_STATS,
 * ITER_CREATE, LINK_DETACH, TOKEN_CREATE */
#define LT_PRIV_BPF_CMDS                                                                  \
	((1ull << 0) | (1ull << 5) | (1ull << 6) | (1ull << 8) | (1ull << 9) | (1ull << 17) | \
	 (1ull << 18) | (1ull << 28) | (1ull << 29) | (1ull << 32) | (1ull << 33) |          \
	 (1ull << 34) | (1ull << 36))

/* lt_priv.rflags */
#define LT_PRIV_SOURCE_TRUNC (1u << 0) /* a string filled its field: maybe cut */
#define LT_PRIV_TARGET_TRUNC (1u << 1)
#define LT_PRIV_FSTYPE_TRUNC (1u << 2)
#define LT_PRIV_MEMFD (1u << 3) /* fileless exec: of a memfd (else of a deleted file) */
#define LT_PRIV_NAME_FROM_FD (1u << 4) /* module: name is the file's (finit_module) */

#define LT_PRIV_STR 256
#define LT_PRIV_FSTYPE 32
#define LT_PRIV_NAME 64

/*
 * A privileged operation, at its return: ptrace attach, mount, umount, bpf, a module loaded
 * or removed, unshare, setns; or a fileless exec. Each op fills its fields (the table in
 * loader/probes.c says which it writes), the others are zero.
 */
struct lt_priv {
	struct lt_hdr hdr;
	__s64 ret; /* 0, a fd or -errno */
	__u64 flags; /* mount's MS_*, umount's MNT_*, unshare's and setns' CLONE_NEW*, a
		      * module's flags */
	__s64 request; /* ptrace */
	__u32 target_pid; /* ptrace: the tracee (traceme: the tracer, the parent) */
	__s32 fd; /* setns, finit_module */
	__u32 bpf_cmd; /* bpf */
	__u32 bpf_type; /* bpf: prog_type (PROG_LOAD), map_type (MAP_CREATE), attach_type */
	__u16 syscall;
	__u16 source_len;
	__u16 target_len;
	__u8 op; /* enum lt_priv_op */
	__u8 rflags; /* LT_PRIV_* */
	char comm[LT_COMM_LEN];
	char name[LT_PRIV_NAME]; /* bpf: the prog's or map's name; module: its name; fileless
				  * exec: the file's name ("memfd:x") */
	char fstype[LT_PRIV_FSTYPE]; /* mount */
	char source[LT_PRIV_STR]; /* mount: the source; fileless exec: the filename exec'd */
	char target[LT_PRIV_STR]; /* mount, umount: the mount point */
};

/*
 * Value of lt_op_counts (one entry, per CPU): the records each syscall-set probe wrote, per
 * op (file, cred, priv: LT_PROBE_FILE + i), for the metrics.
 */
#define LT_OP_SLOTS 16
#define LT_OP_PROBES 3
struct lt_op_counts {
	__u64 n[LT_OP_PROBES][LT_OP_SLOTS];
};
_Static_assert(LT_FILE_OPS <= LT_OP_SLOTS && LT_CRED_OPS <= LT_OP_SLOTS &&
		       LT_PRIV_OPS <= LT_OP_SLOTS,
	       "every op has a slot");

/* lt_tcp.direction */
enum lt_tcp_dir {
	LT_TCP_CONNECT = 1,
	LT_TCP_ACCEPT = 2,
};

/* Both ends of a TCP socket; v4 addresses in the first 4 bytes. */
struct lt_tcp_addr {
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 sport; /* host byte order */
	__u16 dport;
	__u8 family; /* 4 or 6 */
	__u8 _pad0[3];
};

/*
 * A TCP connection that closed. The header's pid/tid are the owning process
 * as seen in process context (connect, or close of an accepted socket); 0
 * when never seen (e.g. reset before the owner touched it).
 */
struct lt_tcp {
	struct lt_hdr hdr;
	struct lt_tcp_addr addr;
	__u64 duration_ns; /* SYN_SENT or SYN_RECV to CLOSE */
	__u64 tx_bytes; /* payload the peer acknowledged */
	__u64 rx_bytes; /* payload received */
	__u8 direction; /* enum lt_tcp_dir */
	__u8 _pad0[7];
	char comm[LT_COMM_LEN]; /* the owner's */
};

/* A retransmitted TCP segment (header pid: the socket's owner if known, else 0). */
struct lt_tcp_retrans {
	struct lt_hdr hdr;
	struct lt_tcp_addr addr;
	__u8 state; /* the kernel's TCP state: 1 ESTABLISHED, 2 SYN_SENT, ... */
	__u8 _pad0[7];
	char comm[LT_COMM_LEN];
};

/*
 * A process (thread group) first seen by a profile under this comm: the
 * loader snapshots its mappings now, so its user frames can be symbolized
 * after it exits. Written by `lowtrace profile`/`alloc` only.
 */
struct lt_task {
	struct lt_hdr hdr;
	char comm[LT_COMM_LEN];
};

/*
 * Records of one probe this CPU did not write (the ring was full, or the
 * probe's rate limit held them back), written just before the next record
 * the probe writes on this CPU. The header is that record's writer; the
 * window is the losses' bpf_ktime_get_ns, the clock of hdr.ts_ns.
 */
struct lt_lost {
	struct lt_hdr hdr;
	__u16 probe; /* enum lt_probe_id */
	__u8 _pad0[6];
	__u64 count; /* records dropped in the window (ring full) */
	__u64 first_ts_ns; /* the first loss */
	__u64 last_ts_ns; /* the last loss */
	__u64 throttled; /* events held back by the rate limit in the window */
	/* events no program ran for (tcp closes the sweep found; the consumer writes
	 * these records, with count and throttled 0) */
	__u64 unseen;
};

/* Value of the per-CPU stats array, one slot per enum lt_probe_id. */
struct lt_stat {
	__u64 events; /* records written to the ring */
	__u64 drops; /* records lost: bpf_ringbuf_reserve failed */
	/* events a fallback program handled because the kernel had skipped the
	 * probe's main program (it was running on that CPU already) */
	__u64 recovered;
	/* exec, exit, fork: events not counted per cgroup (lt_cg_counts full) */
	__u64 cg_full;
	/* drops on this CPU not yet reported by a struct lt_lost: the window the
	 * probe's next record carries (lt_reserve) */
	__u64 lost_count;
	__u64 lost_first_ns;
	__u64 lost_last_ns;
	/* events the probe's rate limit held back (load --rate-limit), and the
	 * part of the window above that is theirs (lost_count counts both) */
	__u64 throttled;
	__u64 lost_throttled;
	/* records written short because the ring was three quarters full (exec, open) */
	__u64 shed;
	/* tcp with socket storage: connections tracked in the loader's network
	 * namespace, and those whose close a program saw (the sweep's balance) */
	__u64 opened;
	__u64 closed;
	/* tcp with the hash: connections whose close no program saw (the sweep) */
	__u64 unseen;
	/* tcp with socket storage: closes a program saw of sockets it did not track (opened
	 * before the load, or opened with no program run), and opens that found no room for
	 * their storage (counted as drops): the sweep's balance of unseen opens */
	__u64 uclosed;
	__u64 open_failed;
};

/*
 * Value of lt_tcp_conns: one tracked TCP connection (socket storage, or the hash
 * keyed by the socket's address). The sweep reads start_ns to pick the hash's older ones.
 */
struct lt_tcp_conn {
	__u64 start_ns; /* 0: closed, the entry left for the program after (progs/tcp.bpf.c) */
	__u32 pid;
	__u32 tid;
	__u8 direction;
	__u8 owner_known; /* pid/tid/comm were taken in process context */
	__u8 keep; /* the owner passed the filters */
	__u8 syn_acked; /* connect side, established: bytes_acked counted our SYN */
	__u8 last; /* the last state a program handled: the next ones compare (conn_taken) */
	__u8 listener; /* tracked so that every change leaves a trace: no record */
	__u8 by_tp; /* lt_tcp_tp handled `last`: lt_tcp after it gives the recovered back */
	__u8 _pad0[5];
	char comm[LT_COMM_LEN];
	struct lt_tcp_addr addr; /* taken at ESTABLISHED: by CLOSE the port may be released */
	__u64 cgroup_id; /* the owner's */
};

/* Value of lt_tcp_reap (one entry): hash keys the sweep found stale, for lt_tcp_reap to free. */
#define LT_REAP_BATCH 256
struct lt_tcp_reap {
	__u32 n;
	__u32 _pad0;
	__u64 keys[LT_REAP_BATCH];
};

/*
 * Value of lt_sweep (one entry): the tcp sweep's state (loader/kernel_sweep.c), written
 * by the loader (netns) and the consumer that sweeps. With socket storage (under the flock
 * of the pinned lt_tcp_sweep), unseen only grows: a connection tracked at `opened_at`'s
 * read that neither a program saw close by the next sweep nor the sweep in between found.
 */
struct lt_sweep {
	__u64 unseen; /* socket storage: tcp connections whose record is missing (the two below) */
	__u64 opened_at; /* sum of lt_stat.opened read before the last sweep ran */
	__u64 live_at; /* tracked connections that sweep found */
	__u64 sweeps; /* sweeps completed */
	__u64 last_ns; /* CLOCK_MONOTONIC of the last one: consumers sweep every LT_SWEEP_MS */
	__u64 netns; /* the loader's network namespace (inode): socket storage's is swept */
	__u64 cost_ns; /* how long the last one took: the next is due LT_SWEEP_COST times later */
	__u64 unseen_closes; /* tracked connections whose close no program saw */
	__u64 unseen_opens; /* connections whose open no program saw (never tracked) */
	/* the load's walk, after the attach: untracked connections it found, and lt_stat.uclosed
	 * and .open_failed read after it */
	__u64 base_untracked;
	__u64 base_uclosed;
	__u64 base_failed;
	__u64 based; /* 1: the load's walk was made */
};
#define LT_SWEEP_MS 2000
#define LT_SWEEP_COST 100 /* a sweep every LT_SWEEP_MS, or 100 times its own time: <= 1 % */

/*
 * Value of lt_cg_counts (key: the task's cgroup id in the identity hierarchy), per CPU: each cgroup's
 * lifecycle events, for `metrics --by`. Preallocated, LT_CG_MAX cgroups; when it is full a
 * new cgroup's events are counted in lt_stat.cg_full instead.
 */
enum lt_cg_kind { LT_CG_EXEC, LT_CG_EXIT, LT_CG_FORK, LT_CG_KINDS };
#define LT_CG_MAX 4096
struct lt_cg_count {
	__u64 n[LT_CG_KINDS];
};

/*
 * Value of lt_cg_names (key: a cgroup's id in the identity hierarchy, the one
 * records and the per-cgroup maps carry): its path below that hierarchy's root,
 * written when the cgroup is made (the cgroup_mkdir tracepoint), seeded by the
 * loader's walk for the ones that were there before. A death sets dead_ns; the
 * entry, and the cgroup's lt_cg_counts, go LT_CG_GRACE_S (load --cgroup-grace)
 * after it, at a later death (lt_cg_dead, oldest first). Preallocated, LT_CGN_MAX
 * by default (load --cgroup-cap); a cgroup made while it is full is counted in
 * lt_cg_stat.full and named by the consumer's walk instead.
 */
/*
 * The identity hierarchy (load --identity-cgroup): cgroup2, or the v1 hierarchy of one
 * of these controllers. The programs find the task's cgroup there through its css_set.
 */
enum lt_cg_ctrl {
	LT_CTRL_V2 = 0,
	LT_CTRL_PIDS,
	LT_CTRL_MEMORY,
	LT_CTRL_CPU,
	LT_CTRL_CPUACCT,
	LT_CTRL_BLKIO,
	LT_CTRL_DEVICES,
	LT_CTRL_FREEZER,
	LT_CTRL_CPUSET,
	LT_CTRL_N,
};
#define LT_CGN_MAX 8192
#define LT_CG_PATH 256
#define LT_CG_GRACE_S 300
#define LT_CGN_CUT (1u << 0) /* the path was longer than LT_CG_PATH - 1 bytes: cut */
#define LT_CGN_SEEDED (1u << 1) /* from the loader's walk, not from a mkdir */
struct lt_cg_name {
	__u64 born_ns; /* bpf_ktime_get_ns of its mkdir; 0: seeded */
	__u64 dead_ns; /* of its rmdir; 0: alive */
	__u32 hier; /* the hierarchy's id (0: cgroup2), as /proc/PID/cgroup numbers them */
	__u16 level; /* depth below the root */
	__u16 path_len; /* bytes of path, without its NUL */
	__u32 flags; /* LT_CGN_* */
	__u32 _pad0;
	char path[LT_CG_PATH]; /* "/a/b", NUL-terminated */
};

/* Value of the queue lt_cg_dead: a death whose entries are freed after the grace. */
struct lt_cg_dead {
	__u64 id;
	__u64 dead_ns;
};

/*
 * Value of lt_cg_stat: [0] the programs' (one, shared: cgroups are made and removed under one
 * kernel lock), [1] the loader's seed, written once (not added into [0]: that would race them).
 */
struct lt_cg_stat {
	__u64 born; /* mkdirs named in lt_cg_names */
	__u64 died; /* rmdirs of the identity hierarchy */
	__u64 renamed;
	__u64 full; /* mkdirs lt_cg_names had no room for */
	__u64 reaped; /* deaths whose entries the grace ended */
	__u64 queue_full; /* deaths freed at once: lt_cg_dead was full */
	__u64 other; /* mkdirs of other hierarchies (not named) */
	__u64 seeded; /* named by the loader's walk (it adds what did not fit to full) */
};

/*
 * Key of lt_drop_cg: which cgroup's task a record was lost for, per probe. An LRU of
 * LT_BLAME_MAX keys: the ones that stopped losing go first.
 */
#define LT_BLAME_MAX 1024
struct lt_blame_key {
	__u64 cgroup_id;
	__u32 probe; /* enum lt_probe_id */
	__u32 _pad0;
};
_Static_assert(sizeof(struct lt_blame_key) == 16, "lt_blame_key size");
_Static_assert(sizeof(struct lt_cg_name) == 32 + LT_CG_PATH, "lt_cg_name size");
_Static_assert(sizeof(struct lt_cg_stat) == 64, "lt_cg_stat size");

/*
 * Value of lt_drop_cg: the cgroup's losses for the probe, and its rate-limit bucket (a
 * virtual schedule: the time its next event is due; see lt_throttled). A suite before
 * rate limits had a __u64 value: drops alone.
 */
struct lt_blame_val {
	__u64 drops; /* failed ring reserves */
	__u64 throttled; /* events the rate limit held back */
	__u64 due_ns; /* rate limit: bpf_ktime_get_ns when the next event is due */
};

/*
 * Value of lt_seen, one slot per enum lt_probe_id: the losses (drops, and
 * events the kernel skipped the probe for) the last consumer of the ring has
 * reported. Only userspace writes it; the next consumer reports the rest.
 */
struct lt_seen {
	__u64 drops;
	__u64 missed;
	__u64 throttled; /* a suite before rate limits has 16-byte values: none */
	__u64 unseen; /* lt_counts.unseen */
};

/*
 * Every struct both sides share, then its members in declaration order:
 * tests/unit/test_abi.c compares each with the BPF object's BTF, and
 * progs/common.bpf.c names each struct so the object's BTF has it. A new
 * record is added here, nowhere else, for both.
 */
/* one line per struct, as the lists read */
/* clang-format off */
#define LT_ABI_RECORDS(S, M)                                                                   \
	S(lt_hdr) M(lt_hdr, type) M(lt_hdr, size) M(lt_hdr, cpu) M(lt_hdr, flags)               \
	M(lt_hdr, ts_ns) M(lt_hdr, pid) M(lt_hdr, tid) M(lt_hdr, cgroup_id)                      \
	S(lt_exec) M(lt_exec, hdr) M(lt_exec, ppid) M(lt_exec, uid) M(lt_exec, gid)             \
	M(lt_exec, argc) M(lt_exec, cgroup_id) M(lt_exec, filename_len) M(lt_exec, args_len)   \
	M(lt_exec, flags) M(lt_exec, _pad0) M(lt_exec, comm) M(lt_exec, filename)               \
	M(lt_exec, args) M(lt_exec, pid_ns) M(lt_exec, mnt_ns) M(lt_exec, net_ns)               \
	M(lt_exec, _pad1) M(lt_exec, exec_id) M(lt_exec, parent_exec_id) M(lt_exec, euid)        \
	M(lt_exec, egid) M(lt_exec, n_anc) M(lt_exec, anc_more) M(lt_exec, anc_len)             \
	M(lt_exec, _pad2) M(lt_exec, anc)                                                      \
	S(lt_anc) M(lt_anc, exec_id) M(lt_anc, pid) M(lt_anc, name_len) M(lt_anc, flags)        \
	M(lt_anc, _pad0) M(lt_anc, name)                                                       \
	S(lt_proc) M(lt_proc, exec_id) M(lt_proc, parent_exec_id) M(lt_proc, name_len)          \
	M(lt_proc, flags) M(lt_proc, _pad0) M(lt_proc, name)                                    \
	S(lt_op_counts) M(lt_op_counts, n)                                                     \
	S(lt_anc_stat) M(lt_anc_stat, execs) M(lt_anc_stat, forks) M(lt_anc_stat, freed)        \
	M(lt_anc_stat, missing) M(lt_anc_stat, unknown)                                        \
	S(lt_exit) M(lt_exit, hdr) M(lt_exit, ppid) M(lt_exit, exit_code) M(lt_exit, signal)    \
	M(lt_exit, core_dumped) M(lt_exit, _pad0) M(lt_exit, lifetime_ns) M(lt_exit, comm)      \
	S(lt_fork) M(lt_fork, hdr) M(lt_fork, child_pid) M(lt_fork, _pad0) M(lt_fork, comm)     \
	S(lt_signal) M(lt_signal, hdr) M(lt_signal, target_pid) M(lt_signal, target_tid)        \
	M(lt_signal, sig) M(lt_signal, result) M(lt_signal, group) M(lt_signal, _pad0)          \
	M(lt_signal, comm) M(lt_signal, target_comm)                                           \
	S(lt_oom) M(lt_oom, hdr) M(lt_oom, victim_pid) M(lt_oom, victim_uid) M(lt_oom, pages)   \
	M(lt_oom, total_vm) M(lt_oom, comm) M(lt_oom, victim_comm)                              \
	S(lt_open) M(lt_open, hdr) M(lt_open, ret) M(lt_open, dfd) M(lt_open, flags)            \
	M(lt_open, mode) M(lt_open, path_len) M(lt_open, syscall) M(lt_open, rflags)            \
	M(lt_open, _pad0) M(lt_open, comm) M(lt_open, path)                                     \
	S(lt_tcp_addr) M(lt_tcp_addr, saddr) M(lt_tcp_addr, daddr) M(lt_tcp_addr, sport)        \
	M(lt_tcp_addr, dport) M(lt_tcp_addr, family) M(lt_tcp_addr, _pad0)                      \
	S(lt_tcp) M(lt_tcp, hdr) M(lt_tcp, addr) M(lt_tcp, duration_ns) M(lt_tcp, tx_bytes)     \
	M(lt_tcp, rx_bytes) M(lt_tcp, direction) M(lt_tcp, _pad0) M(lt_tcp, comm)               \
	S(lt_tcp_retrans) M(lt_tcp_retrans, hdr) M(lt_tcp_retrans, addr)                        \
	M(lt_tcp_retrans, state) M(lt_tcp_retrans, _pad0) M(lt_tcp_retrans, comm)               \
	S(lt_task) M(lt_task, hdr) M(lt_task, comm)                                             \
	S(lt_file) M(lt_file, hdr) M(lt_file, ret) M(lt_file, dfd) M(lt_file, new_dfd)          \
	M(lt_file, mode) M(lt_file, owner_uid) M(lt_file, owner_gid) M(lt_file, flags)          \
	M(lt_file, syscall) M(lt_file, path_len) M(lt_file, new_path_len) M(lt_file, op)        \
	M(lt_file, rflags) M(lt_file, _pad0) M(lt_file, length) M(lt_file, comm)                \
	M(lt_file, path) M(lt_file, new_path)                                                  \
	S(lt_creds) M(lt_creds, uid) M(lt_creds, gid) M(lt_creds, suid) M(lt_creds, sgid)       \
	M(lt_creds, euid) M(lt_creds, egid) M(lt_creds, fsuid) M(lt_creds, fsgid)               \
	M(lt_creds, cap_effective) M(lt_creds, cap_permitted)                                  \
	S(lt_cred) M(lt_cred, hdr) M(lt_cred, ret) M(lt_cred, syscall) M(lt_cred, op)           \
	M(lt_cred, _pad0) M(lt_cred, old) M(lt_cred, new) M(lt_cred, comm)                      \
	S(lt_priv) M(lt_priv, hdr) M(lt_priv, ret) M(lt_priv, flags) M(lt_priv, request)        \
	M(lt_priv, target_pid) M(lt_priv, fd) M(lt_priv, bpf_cmd) M(lt_priv, bpf_type)          \
	M(lt_priv, syscall) M(lt_priv, source_len) M(lt_priv, target_len) M(lt_priv, op)        \
	M(lt_priv, rflags) M(lt_priv, comm) M(lt_priv, name) M(lt_priv, fstype)                 \
	M(lt_priv, source) M(lt_priv, target)                                                  \
	S(lt_lost) M(lt_lost, hdr) M(lt_lost, probe) M(lt_lost, _pad0) M(lt_lost, count)        \
	M(lt_lost, first_ts_ns) M(lt_lost, last_ts_ns) M(lt_lost, throttled) M(lt_lost, unseen)                    \
	S(lt_stat) M(lt_stat, events) M(lt_stat, drops) M(lt_stat, recovered)                   \
	M(lt_stat, cg_full) M(lt_stat, lost_count) M(lt_stat, lost_first_ns)                   \
	M(lt_stat, lost_last_ns) M(lt_stat, throttled) M(lt_stat, lost_throttled)               \
	M(lt_stat, shed) M(lt_stat, opened) M(lt_stat, closed) M(lt_stat, unseen)           \
	M(lt_stat, uclosed) M(lt_stat, open_failed)                                            \
	S(lt_tcp_conn) M(lt_tcp_conn, start_ns) M(lt_tcp_conn, pid) M(lt_tcp_conn, tid)         \
	M(lt_tcp_conn, direction) M(lt_tcp_conn, owner_known) M(lt_tcp_conn, keep)             \
	M(lt_tcp_conn, syn_acked) M(lt_tcp_conn, last) M(lt_tcp_conn, listener)                \
	M(lt_tcp_conn, by_tp) M(lt_tcp_conn, _pad0) M(lt_tcp_conn, comm) M(lt_tcp_conn, addr) \
	M(lt_tcp_conn, cgroup_id)                                                              \
	S(lt_tcp_reap) M(lt_tcp_reap, n) M(lt_tcp_reap, _pad0) M(lt_tcp_reap, keys)             \
	S(lt_sweep) M(lt_sweep, unseen) M(lt_sweep, opened_at) M(lt_sweep, live_at)             \
	M(lt_sweep, sweeps) M(lt_sweep, last_ns) M(lt_sweep, netns) M(lt_sweep, cost_ns)       \
	M(lt_sweep, unseen_closes) M(lt_sweep, unseen_opens) M(lt_sweep, base_untracked)        \
	M(lt_sweep, base_uclosed) M(lt_sweep, base_failed) M(lt_sweep, based)                  \
	S(lt_cg_count) M(lt_cg_count, n) S(lt_blame_key) M(lt_blame_key, cgroup_id)              \
	M(lt_blame_key, probe) M(lt_blame_key, _pad0) S(lt_blame_val) M(lt_blame_val, drops)     \
	M(lt_blame_val, throttled) M(lt_blame_val, due_ns)                                     \
	S(lt_cg_name) M(lt_cg_name, born_ns) M(lt_cg_name, dead_ns) M(lt_cg_name, hier)         \
	M(lt_cg_name, level) M(lt_cg_name, path_len) M(lt_cg_name, flags) M(lt_cg_name, _pad0)  \
	M(lt_cg_name, path) S(lt_cg_dead) M(lt_cg_dead, id) M(lt_cg_dead, dead_ns)               \
	S(lt_cg_stat) M(lt_cg_stat, born) M(lt_cg_stat, died) M(lt_cg_stat, renamed)             \
	M(lt_cg_stat, full) M(lt_cg_stat, reaped) M(lt_cg_stat, queue_full) M(lt_cg_stat, other) \
	M(lt_cg_stat, seeded)
/* clang-format on */

#define LT_ASSERT_OFF(t, m, o) _Static_assert(__builtin_offsetof(t, m) == (o), #t "." #m)

_Static_assert(sizeof(struct lt_hdr) == 32, "lt_hdr size");
LT_ASSERT_OFF(struct lt_hdr, size, 2);
LT_ASSERT_OFF(struct lt_hdr, flags, 6);
LT_ASSERT_OFF(struct lt_hdr, ts_ns, 8);
LT_ASSERT_OFF(struct lt_hdr, tid, 20);
LT_ASSERT_OFF(struct lt_hdr, cgroup_id, 24);

/* a shed exec: everything up to args, LT_SHED_ARGS of them, then pid_ns .. _pad1 */
#define LT_EXEC_NS_SIZE (__builtin_offsetof(struct lt_exec, exec_id) - __builtin_offsetof(struct lt_exec, pid_ns))
/* an LT_EXEC_ANC record's tail: pid_ns .. _pad2 */
#define LT_EXEC_TAIL_SIZE (__builtin_offsetof(struct lt_exec, anc) - __builtin_offsetof(struct lt_exec, pid_ns))
#define LT_EXEC_SHED_SIZE \
	(__builtin_offsetof(struct lt_exec, args) + LT_SHED_ARGS + LT_EXEC_NS_SIZE)
#define LT_OPEN_SHED_SIZE (__builtin_offsetof(struct lt_open, path) + LT_SHED_PATH)

_Static_assert(sizeof(struct lt_exec) == 4480 + LT_ANC_MAX * sizeof(struct lt_anc), "lt_exec size");
_Static_assert(LT_EXEC_NS_SIZE == 16 && LT_EXEC_TAIL_SIZE == 48, "exec tails");
_Static_assert(sizeof(struct lt_anc) == LT_ANC_HEAD + LT_ANC_NAME, "lt_anc size");
_Static_assert(sizeof(struct lt_proc) == 24 + LT_ANC_NAME, "lt_proc size");
LT_ASSERT_OFF(struct lt_exec, exec_id, 4448);
LT_ASSERT_OFF(struct lt_exec, anc, 4480);
_Static_assert(LT_EXEC_SHED_SIZE == 480 && LT_OPEN_SHED_SIZE == 136, "shed sizes");
LT_ASSERT_OFF(struct lt_exec, cgroup_id, 48);
LT_ASSERT_OFF(struct lt_exec, flags, 60);
LT_ASSERT_OFF(struct lt_exec, comm, 64);
LT_ASSERT_OFF(struct lt_exec, filename, 80);
LT_ASSERT_OFF(struct lt_exec, args, 336);
LT_ASSERT_OFF(struct lt_exec, pid_ns, 4432);

_Static_assert(sizeof(struct lt_exit) == 72, "lt_exit size");
LT_ASSERT_OFF(struct lt_exit, lifetime_ns, 48);
LT_ASSERT_OFF(struct lt_exit, comm, 56);

_Static_assert(sizeof(struct lt_fork) == 56, "lt_fork size");
LT_ASSERT_OFF(struct lt_fork, child_pid, 32);
LT_ASSERT_OFF(struct lt_fork, comm, 40);

_Static_assert(sizeof(struct lt_signal) == 88, "lt_signal size");
LT_ASSERT_OFF(struct lt_signal, sig, 40);
LT_ASSERT_OFF(struct lt_signal, group, 48);
LT_ASSERT_OFF(struct lt_signal, comm, 56);
LT_ASSERT_OFF(struct lt_signal, target_comm, 72);

_Static_assert(sizeof(struct lt_oom) == 88, "lt_oom size");
LT_ASSERT_OFF(struct lt_oom, pages, 40);
LT_ASSERT_OFF(struct lt_oom, comm, 56);
LT_ASSERT_OFF(struct lt_oom, victim_comm, 72);

_Static_assert(sizeof(struct lt_file) == 608, "lt_file size");
LT_ASSERT_OFF(struct lt_file, syscall, 60);
LT_ASSERT_OFF(struct lt_file, op, 66);
LT_ASSERT_OFF(struct lt_file, length, 72);
LT_ASSERT_OFF(struct lt_file, path, 96);
LT_ASSERT_OFF(struct lt_file, new_path, 352);

_Static_assert(sizeof(struct lt_creds) == 48, "lt_creds size");
_Static_assert(sizeof(struct lt_cred) == 152, "lt_cred size");
LT_ASSERT_OFF(struct lt_cred, op, 38);
LT_ASSERT_OFF(struct lt_cred, old, 40);
LT_ASSERT_OFF(struct lt_cred, new, 88);
LT_ASSERT_OFF(struct lt_cred, comm, 136);

_Static_assert(sizeof(struct lt_priv) == 704, "lt_priv size");
LT_ASSERT_OFF(struct lt_priv, target_pid, 56);
LT_ASSERT_OFF(struct lt_priv, syscall, 72);
LT_ASSERT_OFF(struct lt_priv, op, 78);
LT_ASSERT_OFF(struct lt_priv, comm, 80);
LT_ASSERT_OFF(struct lt_priv, name, 96);
LT_ASSERT_OFF(struct lt_priv, fstype, 160);
LT_ASSERT_OFF(struct lt_priv, source, 192);
LT_ASSERT_OFF(struct lt_priv, target, 448);

_Static_assert(sizeof(struct lt_open) == 328, "lt_open size");
LT_ASSERT_OFF(struct lt_open, flags, 40);
LT_ASSERT_OFF(struct lt_open, path_len, 48);
LT_ASSERT_OFF(struct lt_open, comm, 56);
LT_ASSERT_OFF(struct lt_open, path, 72);

_Static_assert(sizeof(struct lt_tcp_addr) == 40, "lt_tcp_addr size");
LT_ASSERT_OFF(struct lt_tcp_addr, sport, 32);
LT_ASSERT_OFF(struct lt_tcp_addr, family, 36);

_Static_assert(sizeof(struct lt_tcp) == 120, "lt_tcp size");
LT_ASSERT_OFF(struct lt_tcp, addr, 32);
LT_ASSERT_OFF(struct lt_tcp, duration_ns, 72);
LT_ASSERT_OFF(struct lt_tcp, direction, 96);
LT_ASSERT_OFF(struct lt_tcp, comm, 104);

_Static_assert(sizeof(struct lt_tcp_retrans) == 96, "lt_tcp_retrans size");
LT_ASSERT_OFF(struct lt_tcp_retrans, state, 72);
LT_ASSERT_OFF(struct lt_tcp_retrans, comm, 80);

_Static_assert(sizeof(struct lt_task) == 48, "lt_task size");
LT_ASSERT_OFF(struct lt_task, comm, 32);

_Static_assert(sizeof(struct lt_lost) == 80, "lt_lost size");
LT_ASSERT_OFF(struct lt_lost, probe, 32);
LT_ASSERT_OFF(struct lt_lost, count, 40);
LT_ASSERT_OFF(struct lt_lost, first_ts_ns, 48);
LT_ASSERT_OFF(struct lt_lost, last_ts_ns, 56);
LT_ASSERT_OFF(struct lt_lost, throttled, 64);
LT_ASSERT_OFF(struct lt_lost, unseen, 72);

_Static_assert(sizeof(struct lt_stat) == 120, "lt_stat size");
LT_ASSERT_OFF(struct lt_stat, opened, 80);
_Static_assert(sizeof(struct lt_sweep) == 104, "lt_sweep size");
_Static_assert(sizeof(struct lt_tcp_conn) == 96, "lt_tcp_conn size");
LT_ASSERT_OFF(struct lt_tcp_conn, addr, 44);
LT_ASSERT_OFF(struct lt_tcp_conn, cgroup_id, 88);
_Static_assert(sizeof(struct lt_tcp_reap) == 8 + 8 * LT_REAP_BATCH, "lt_tcp_reap size");
LT_ASSERT_OFF(struct lt_stat, lost_count, 32);
LT_ASSERT_OFF(struct lt_stat, throttled, 56);
_Static_assert(sizeof(struct lt_blame_val) == 24, "lt_blame_val size");
_Static_assert(sizeof(struct lt_cg_count) == 24, "lt_cg_count size");
_Static_assert(sizeof(struct lt_seen) == 32, "lt_seen size");

#endif /* LT_ABI_H */
