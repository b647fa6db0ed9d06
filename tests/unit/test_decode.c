// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Decoder: the fast path, older and newer producers, the 24-byte header, and rejects. */
#include <string.h>

#include "records.h"
#include "tap.h"

static struct lt_decode_stats st;
static struct lt_rec out;
static unsigned char buf[4096];

static void hdr(void *p, __u16 type, __u16 size)
{
	struct lt_hdr h = { .type = type,
			    .size = size,
			    .cpu = 1,
			    .flags = LT_HDR_CGROUP,
			    .ts_ns = 42,
			    .pid = 7,
			    .tid = 8,
			    .cgroup_id = 4242 };

	memcpy(p, &h, sizeof(h));
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

/* the header as it was before the cgroup id: type size cpu(u32) ts pid tid */
static void hdr_v0(unsigned char *p, __u16 type, __u16 size, __u32 cpu)
{
	__u64 ts = 42;
	__u32 pid = 7, tid = 8;

	memcpy(p, &type, 2);
	memcpy(p + 2, &size, 2);
	memcpy(p + 4, &cpu, 4);
	memcpy(p + 8, &ts, 8);
	memcpy(p + 16, &pid, 4);
	memcpy(p + 20, &tid, 4);
}

/* an exec record exactly as the previous loader's probes wrote it (1352 bytes) */
static void v0_exec(void)
{
	const struct lt_exec *e = (const void *)&out;
	const struct lt_probe *p;
	__u64 cg = 0x1234567890ull;
	__u32 ppid = 5, argc = 2;
	__u16 flen = 9, alen = 8;
	struct lt_decode_stats s0 = st;

	memset(buf, 0, sizeof(buf));
	hdr_v0(buf, LT_TYPE_EXEC, 1352, 1);
	memcpy(buf + 24, &ppid, 4); /* ppid uid gid argc at 24..39 */
	memcpy(buf + 36, &argc, 4);
	memcpy(buf + 40, &cg, 8); /* cgroup_id */
	memcpy(buf + 48, &flen, 2);
	memcpy(buf + 50, &alen, 2);
	memcpy(buf + 56, "sh", 3); /* comm */
	memcpy(buf + 72, "/bin/true", 10); /* filename */
	memcpy(buf + 328, "true\0-x\0", 8); /* args */
	memset(buf + 1352, 0x77, 64); /* the ring's next bytes: not this record's */
	memset(&out, 0x55, sizeof(out));
	p = lt_decode(buf, 1352, &out, &st);
	ok(p && p->type == LT_TYPE_EXEC, "24-byte-header exec decodes as exec");
	ok(e->hdr.cpu == 1 && e->hdr.ts_ns == 42 && e->hdr.pid == 7 && e->hdr.tid == 8 &&
		   e->hdr.size == 1352 + 8,
	   "24-byte header: cpu ts pid tid read, size as this layout counts it");
	ok(e->hdr.cgroup_id == cg && e->cgroup_id == cg,
	   "24-byte-header exec: cgroup id to the header");
	ok(e->ppid == 5 && e->argc == 2 && e->filename_len == 9 && e->args_len == 8 &&
		   !strcmp(e->comm, "sh") && !strcmp(e->filename, "/bin/true") &&
		   !memcmp(e->args, "true\0-x\0", 8),
	   "24-byte-header exec: every body field at its new offset");
	ok(e->pid_ns == 0 && e->mnt_ns == 0 && e->net_ns == 0,
	   "24-byte-header exec: the namespaces it lacked read as zero");
	ok(st.v0 == s0.v0 + 1 && st.fast == s0.fast && st.older == s0.older,
	   "counted as the previous layout");
}

/* a fork record of the previous layout, and one of it cut short (an older one still) */
static void v0_fork(void)
{
	const struct lt_fork *f = (const void *)&out;
	__u32 child = 321;

	memset(buf, 0, sizeof(buf));
	hdr_v0(buf, LT_TYPE_FORK, 48, 3);
	memcpy(buf + 24, &child, 4);
	memcpy(buf + 32, "parent", 7);
	memset(&out, 0x55, sizeof(out));
	ok(lt_decode(buf, 48, &out, &st) && f->child_pid == 321 && !strcmp(f->comm, "parent") &&
		   f->hdr.cgroup_id == 0 && f->hdr.flags == 0 && f->hdr.cpu == 3,
	   "24-byte-header fork: fields moved, no cgroup id");
	hdr_v0(buf, LT_TYPE_FORK, 28, 3);
	memset(&out, 0x55, sizeof(out));
	ok(lt_decode(buf, 48, &out, &st) && f->child_pid == 321 && all_zero(f->comm, LT_COMM_LEN),
	   "a short 24-byte-header fork: what it lacked reads as zero");
}

static void v0_reject(void)
{
	struct lt_decode_stats s0 = st;

	hdr_v0(buf, LT_TYPE_FORK, 20, 0);
	ok(!lt_decode(buf, 64, &out, &st) && st.rejected == s0.rejected + 1,
	   "24-byte header: a size below it is rejected");
	hdr_v0(buf, LT_TYPE_FORK, 48, 0);
	ok(!lt_decode(buf, 23, &out, &st) && st.rejected == s0.rejected + 2,
	   "a sample shorter than the 24-byte header is rejected");
	hdr_v0(buf, LT_TYPE_EXEC, 1352, 0);
	ok(!lt_decode(buf, 1000, &out, &st) && st.rejected == s0.rejected + 3,
	   "24-byte header: a size past the buffer is rejected");
}

int main(void)
{
	const struct lt_probe *p;
	struct lt_exec ex;
	struct lt_exit xt;
	struct lt_fork fk;

	/* 1. same size: one memcpy, every byte equal */
	memset(&ex, 0xab, sizeof(ex));
	hdr(&ex, LT_TYPE_EXEC, sizeof(ex));
	ex.flags = LT_EXEC_ARGS_TRUNC; /* not packed: the fixed layout */
	memset(&out, 0x55, sizeof(out));
	p = lt_decode(&ex, sizeof(ex), &out, &st);
	ok(p && p->type == LT_TYPE_EXEC, "exact-size exec decodes as exec");
	ok(!memcmp(&out, &ex, sizeof(ex)), "exact size: all %zu bytes copied", sizeof(ex));
	ok(st.fast == 1 && st.older == 0 && st.newer == 0, "exact size counted as fast path");

	/* 2. older producer: a fork record that ended before comm */
	memset(&fk, 0xcd, sizeof(fk));
	hdr(&fk, LT_TYPE_FORK, offsetof(struct lt_fork, comm));
	fk.child_pid = 99;
	memset(&out, 0x55, sizeof(out));
	p = lt_decode(&fk, sizeof(fk), &out, &st);
	ok(p && p->type == LT_TYPE_FORK, "short fork decodes as fork");
	ok(((struct lt_fork *)(void *)&out)->child_pid == 99, "short fork: known field kept");
	ok(all_zero(out.raw + offsetof(struct lt_fork, comm), LT_COMM_LEN),
	   "short fork: fields it lacked read as zero");
	ok(st.older == 1, "short record counted as older");

	/* 3. newer producer: an exit record with 40 bytes we do not know */
	memset(buf, 0xee, sizeof(buf));
	memset(&xt, 0, sizeof(xt));
	hdr(&xt, LT_TYPE_EXIT, sizeof(xt) + 40);
	xt.exit_code = 7;
	xt.signal = 9;
	memcpy(xt.comm, "abc", 4);
	memcpy(buf, &xt, sizeof(xt));
	memset(&out, 0x55, sizeof(out));
	p = lt_decode(buf, sizeof(xt) + 40, &out, &st);
	ok(p && p->type == LT_TYPE_EXIT, "long exit decodes as exit");
	ok(!memcmp(&out, &xt, sizeof(xt)), "long exit: the known part copied");
	ok(out.raw[sizeof(xt)] == 0x55, "long exit: the unknown tail is not copied");
	ok(st.newer == 1, "long record counted as newer");

	/* 4. rejects: below the header, size below header, size past the buffer */
	p = lt_decode(&xt, sizeof(struct lt_hdr) - 1, &out, &st);
	ok(!p && st.rejected == 1, "sample shorter than the header is rejected");
	hdr(buf, LT_TYPE_EXIT, sizeof(struct lt_hdr) - 8);
	p = lt_decode(buf, 64, &out, &st);
	ok(!p && st.rejected == 2, "size field below the header size is rejected");
	hdr(buf, LT_TYPE_EXEC, sizeof(struct lt_exec));
	p = lt_decode(buf, 100, &out, &st);
	ok(!p && st.rejected == 3, "size field past the buffer is rejected");

	/* 5. a type this loader does not know is skipped and counted */
	hdr(buf, 999, 64);
	p = lt_decode(buf, 64, &out, &st);
	ok(!p && st.unknown == 1, "unknown type skipped and counted");
	ok(st.fast == 1 && st.older == 1 && st.newer == 1, "rejects did not touch other counters");

	/* 6. a lost record: exact, and an older (shorter) one reads its missing tail as zero */
	{
		struct lt_lost l = { .probe = LT_PROBE_EXEC,
				     .count = 3,
				     .first_ts_ns = 10,
				     .last_ts_ns = 20,
				     .throttled = 7 };
		const struct lt_lost *o = (const void *)&out;
		struct lt_decode_stats s0 = st;

		hdr(&l, LT_TYPE_LOST, sizeof(l));
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(&l, sizeof(l), &out, &st);
		ok(p && p->type == LT_TYPE_LOST && !strcmp(p->name, "lost") &&
			   !memcmp(&out, &l, sizeof(l)) && st.fast == s0.fast + 1,
		   "a lost record decodes exactly, on the fast path");
		hdr(&l, LT_TYPE_LOST, offsetof(struct lt_lost, last_ts_ns));
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(&l, sizeof(l), &out, &st);
		ok(p && o->count == 3 && o->first_ts_ns == 10 && o->last_ts_ns == 0 &&
			   st.older == s0.older + 1,
		   "a short lost record: what it lacked reads as zero");
		/* the record before rate limits: 64 bytes, no throttled */
		hdr(&l, LT_TYPE_LOST, offsetof(struct lt_lost, throttled));
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(&l, sizeof(l), &out, &st);
		ok(p && o->count == 3 && o->last_ts_ns == 20 && o->throttled == 0,
		   "a lost record before rate limits: throttled reads as zero");
	}

	/* 6b. a shed exec: args cut at LT_SHED_ARGS, the namespace fields right after them */
	{
		static union {
			struct lt_exec e;
			unsigned char raw[LT_EXEC_SHED_SIZE];
		} u;
		struct lt_exec *e = &u.e;
		unsigned char *raw = u.raw;
		const size_t size = LT_EXEC_SHED_SIZE;
		const struct lt_exec *o = (const void *)&out;
		const __u32 ns[4] = { 11, 22, 33, 0 };
		bool zero = true;

		memset(&u, 0, sizeof(u));
		hdr(raw, LT_TYPE_EXEC, size);
		e->flags = LT_EXEC_ARGS_SHED | LT_EXEC_ARGS_TRUNC;
		memset(e->args, 'x', LT_SHED_ARGS);
		e->args_len = LT_SHED_ARGS;
		memcpy(raw + size - sizeof(ns), ns, sizeof(ns));
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(raw, size, &out, &st);
		for (size_t i = LT_SHED_ARGS; i < sizeof(o->args); i++)
			zero &= !o->args[i];
		ok(p && p->type == LT_TYPE_EXEC && o->pid_ns == 11 && o->mnt_ns == 22 &&
			   o->net_ns == 33 && o->args_len == LT_SHED_ARGS && o->args[0] == 'x' &&
			   o->args[LT_SHED_ARGS - 1] == 'x' && zero,
		   "a shed exec: its namespaces move back in place, the args after the cut are "
		   "zero");
		/* the same bytes without the flag: an older record, nothing moves */
		e->flags = 0;
		p = lt_decode(raw, size, &out, &st);
		ok(p && o->pid_ns == 0 && !memcmp(o->args + LT_SHED_ARGS, ns, sizeof(ns)),
		   "an exec as short without the shed flag is an older record: nothing moves");
	}

	/* 6c. a fixed-layout exec of 1 KiB args (before packing): namespaces its last bytes */
	{
		static union {
			struct lt_exec e;
			unsigned char raw[sizeof(struct lt_exec)];
		} u;
		struct lt_exec *e = &u.e;
		unsigned char *raw = u.raw;
		const struct lt_exec *o = (const void *)&out;
		const __u32 ns[4] = { 44, 55, 66, 0 };

		memset(&u, 0, sizeof(u));
		hdr(raw, LT_TYPE_EXEC, LT_EXEC_V1_SIZE);
		e->args_len = 1024;
		memset(e->args, 'a', 1024);
		memcpy(raw + LT_EXEC_V1_SIZE - sizeof(ns), ns, sizeof(ns));
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(raw, LT_EXEC_V1_SIZE, &out, &st);
		ok(p && o->pid_ns == 44 && o->mnt_ns == 55 && o->net_ns == 66 &&
			   o->args[1023] == 'a' && o->args_len == 1024,
		   "a 1 KiB-args exec of the fixed layout: its namespaces move to their place");
	}

	/* 6d. packed execs: filename, args, namespaces at the end; lengths authoritative */
	{
		static unsigned char raw[sizeof(struct lt_exec) + 16];
		struct lt_exec *e = (void *)raw;
		const struct lt_exec *o = (const void *)&out;
		const size_t fixed = offsetof(struct lt_exec, filename);
		static const char args[] = "sh\0-c\0true";
		const __u32 ns[4] = { 7, 8, 9, 0 };
		struct lt_decode_stats s0 = st;
		size_t size = fixed + 8 + sizeof(args) + 16;

		size = (size + 7) & ~(size_t)7;
		memset(raw, 0, sizeof(raw));
		hdr(raw, LT_TYPE_EXEC, size);
		e->flags = LT_EXEC_PACKED;
		e->argc = 3;
		memcpy(e->comm, "sh", 3);
		e->filename_len = 7;
		memcpy(raw + fixed, "/bin/sh", 8);
		e->args_len = sizeof(args);
		memcpy(raw + fixed + 8, args, sizeof(args));
		memcpy(raw + size - sizeof(ns), ns, sizeof(ns));
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(raw, size, &out, &st);
		ok(p && p->type == LT_TYPE_EXEC && !strcmp(o->filename, "/bin/sh") &&
			   o->args_len == sizeof(args) && !memcmp(o->args, args, sizeof(args)) &&
			   o->pid_ns == 7 && o->net_ns == 9 && o->argc == 3 &&
			   !strcmp(o->comm, "sh") && st.packed == s0.packed + 1,
		   "a packed exec (%zu bytes): each part in its place", size);
		/* the largest: a 255-byte filename and 4 KiB of args */
		size = fixed + 256 + LT_ARGS_MAX + 16;
		hdr(raw, LT_TYPE_EXEC, size);
		e->filename_len = 255;
		memset(raw + fixed, 'f', 255);
		raw[fixed + 255] = 0;
		e->args_len = LT_ARGS_MAX;
		memset(raw + fixed + 256, 'z', LT_ARGS_MAX);
		memcpy(raw + size - sizeof(ns), ns, sizeof(ns));
		p = lt_decode(raw, size, &out, &st);
		ok(p && strlen(o->filename) == 255 && o->args[LT_ARGS_MAX - 1] == 'z' &&
			   o->pid_ns == 7,
		   "a packed exec of 4 KiB args: all of them");
		/* lengths past the record: rejected, never read past it */
		e->args_len = LT_ARGS_MAX;
		hdr(raw, LT_TYPE_EXEC, fixed + 256 + 100 + 16);
		p = lt_decode(raw, fixed + 256 + 100 + 16, &out, &st);
		ok(!p && st.rejected == s0.rejected + 1,
		   "a packed exec whose args_len overruns it is rejected");
		e->args_len = 0;
		e->filename_len = LT_FILENAME_MAX;
		hdr(raw, LT_TYPE_EXEC, size);
		p = lt_decode(raw, size, &out, &st);
		ok(!p && st.rejected == s0.rejected + 2,
		   "a packed exec whose filename_len leaves no room for its NUL is rejected");
		e->args_len = LT_ARGS_MAX + 1;
		e->filename_len = 0;
		p = lt_decode(raw, size, &out, &st);
		ok(!p && st.rejected == s0.rejected + 3, "args_len above LT_ARGS_MAX is rejected");
	}

	/* 6e. packed execs with ancestry: ancestors packed before the 48-byte tail */
	{
		static unsigned char raw[sizeof(struct lt_exec) + 16];
		struct lt_exec *e = (void *)raw;
		const struct lt_exec *o = (const void *)&out;
		const size_t fixed = offsetof(struct lt_exec, filename);
		struct lt_decode_stats s0 = st;
		struct lt_anc a1 = { .exec_id = 41, .pid = 1, .name_len = 10 };
		struct lt_anc a2 = { .pid = 0, .flags = LT_ANC_UNKNOWN };
		/* the tail as the program writes it: pid_ns .. _pad2 */
		struct {
			__u32 ns[4];
			__u64 id, pid_id;
			__u32 euid, egid;
			__u8 n, more;
			__u16 len;
			__u32 pad;
		} tail = { { 7, 8, 9, 0 }, 42, 41, 0, 5, 2, 1, 16 + 16 + 16, 0 };
		size_t at = fixed + 8 + 8, size;

		_Static_assert(sizeof(tail) == LT_EXEC_TAIL_SIZE, "the tail");
		memset(raw, 0, sizeof(raw));
		e->flags = LT_EXEC_PACKED | LT_EXEC_ANC | LT_EXEC_FILELESS;
		e->filename_len = 7;
		memcpy(raw + fixed, "/bin/sh", 8);
		e->args_len = 3;
		memcpy(raw + fixed + 8, "sh", 3);
		/* args end at fixed + 11, zeros to fixed + 16; then a1 (16 + 16), a2 (16 + 8) */
		memcpy(raw + at, &a1, LT_ANC_HEAD);
		memcpy(raw + at + LT_ANC_HEAD, "/sbin/init", 11);
		memcpy(raw + at + 32, &a2, LT_ANC_HEAD);
		size = at + 32 + 24 + sizeof(tail);
		tail.len = 32 + 24;
		memcpy(raw + size - sizeof(tail), &tail, sizeof(tail));
		hdr(raw, LT_TYPE_EXEC, size);
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(raw, size, &out, &st);
		ok(p && !strcmp(o->filename, "/bin/sh") && o->pid_ns == 7 && o->exec_id == 42 &&
			   o->parent_exec_id == 41 && o->egid == 5 && o->n_anc == 2 &&
			   o->anc_more == 1 && o->anc[0].pid == 1 && o->anc[0].exec_id == 41 &&
			   !strcmp(o->anc[0].name, "/sbin/init") &&
			   (o->anc[1].flags & LT_ANC_UNKNOWN) && o->anc[1].name[0] == 0 &&
			   (o->flags & LT_EXEC_FILELESS) && st.packed == s0.packed + 1,
		   "a packed exec with ancestry (%zu bytes): ids, ancestors, tail in place", size);
		/* hostile counts and lengths: rejected, never read past the record */
		tail.n = LT_ANC_MAX + 1;
		memcpy(raw + size - sizeof(tail), &tail, sizeof(tail));
		ok(!lt_decode(raw, size, &out, &st), "more than LT_ANC_MAX ancestors: rejected");
		tail.n = 2;
		tail.len = 4000;
		memcpy(raw + size - sizeof(tail), &tail, sizeof(tail));
		ok(!lt_decode(raw, size, &out, &st), "anc_len past the args: rejected");
		tail.len = 32 + 24;
		tail.n = 3;
		memcpy(raw + size - sizeof(tail), &tail, sizeof(tail));
		ok(!lt_decode(raw, size, &out, &st), "an ancestor past the block: rejected");
		tail.n = 2;
		memcpy(raw + size - sizeof(tail), &tail, sizeof(tail));
		a1.name_len = LT_ANC_NAME;
		memcpy(raw + at, &a1, LT_ANC_HEAD);
		ok(!lt_decode(raw, size, &out, &st) && st.rejected == s0.rejected + 4,
		   "a name_len of LT_ANC_NAME leaves no room for its NUL: rejected");
		/* an exec of before ancestry (namespaces alone at the end): its ids read as 0 */
		e->flags = LT_EXEC_PACKED;
		size = fixed + 16 + 16;
		memcpy(raw + size - 16, tail.ns, 16);
		hdr(raw, LT_TYPE_EXEC, size);
		memset(&out, 0x55, sizeof(out));
		p = lt_decode(raw, size, &out, &st);
		ok(p && o->pid_ns == 7 && o->exec_id == 0 && o->n_anc == 0 && o->euid == 0,
		   "a packed exec of before ancestry: no ids, no ancestors");
	}

	/* 7. records of the previous layout: 24-byte header, u32 cpu, no cgroup id */
	v0_exec();
	v0_fork();
	v0_reject();
	return tap_done();
}
