/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * bench/samples.h: records as the kernel writes them (an exec with 5 arguments and an open,
 * packed; a tcp and a signal record), for the benches that decode them (encodecost) or
 * write them into the ring (ringfill).
 */
#ifndef LT_BENCH_SAMPLES_H
#define LT_BENCH_SAMPLES_H

#include <stddef.h>
#include <string.h>

#include "lt_abi.h"

static inline void sample_exec(struct lt_exec *e)
{
	static const char args[] = "/usr/bin/git\0commit\0-m\0fix the thing\0--no-verify";

	memset(e, 0, sizeof(*e));
	e->hdr = (struct lt_hdr){ LT_TYPE_EXEC,	      sizeof(*e), 1,	LT_HDR_CGROUP,
				  123456789012345ull, 4242,	  4242, 0 };
	e->ppid = 4100;
	e->uid = 1000;
	e->gid = 1000;
	e->argc = 5;
	e->cgroup_id = 8123;
	memcpy(e->comm, "git", 4);
	memcpy(e->filename, "/usr/bin/git", 13);
	e->filename_len = 12;
	memcpy(e->args, args, sizeof(args));
	e->args_len = sizeof(args);
}

static inline void sample_open(struct lt_open *o)
{
	memset(o, 0, sizeof(*o));
	o->hdr = (struct lt_hdr){ LT_TYPE_OPEN,	      sizeof(*o), 0,   LT_HDR_CGROUP,
				  123456789012345ull, 777,	  778, 0 };
	o->ret = 3;
	o->dfd = -100;
	o->flags = 02000000 | 0100 | 01; /* O_WRONLY|O_CREAT|O_CLOEXEC */
	o->mode = 0644;
	o->syscall = LT_OPEN_OPENAT;
	memcpy(o->comm, "make", 5);
	memcpy(o->path, "/home/user/src/project/build/loader/records.o", 46);
	o->path_len = 45;
}

static inline void sample_tcp(struct lt_tcp *t)
{
	memset(t, 0, sizeof(*t));
	t->hdr = (struct lt_hdr){ LT_TYPE_TCP,	      sizeof(*t), 1,   LT_HDR_CGROUP,
				  123456789012345ull, 900,	  901, 0 };
	t->addr.family = 4;
	memcpy(t->addr.saddr, "\x0a\x00\x00\x05", 4);
	memcpy(t->addr.daddr, "\x8c\x52\x79\x04", 4);
	t->addr.sport = 51234;
	t->addr.dport = 443;
	t->direction = LT_TCP_CONNECT;
	t->tx_bytes = 1234;
	t->rx_bytes = 56789;
	t->duration_ns = 987654321;
	memcpy(t->comm, "curl", 5);
}

/* the exec as the kernel writes it (LT_EXEC_PACKED): as long as what it carries */
static inline size_t pack_exec(const struct lt_exec *e, unsigned char *out)
{
	const size_t fixed = offsetof(struct lt_exec, filename);
	size_t n = fixed, size;

	memcpy(out, e, fixed);
	memcpy(out + n, e->filename, e->filename_len + 1);
	n += e->filename_len + 1;
	memcpy(out + n, e->args, e->args_len);
	n += e->args_len;
	size = ((n + 7) & ~(size_t)7) + LT_EXEC_NS_SIZE;
	memset(out + n, 0, size - n);
	memcpy(out + size - LT_EXEC_NS_SIZE, &e->pid_ns, LT_EXEC_NS_SIZE);
	((struct lt_hdr *)(void *)out)->size = size;
	out[offsetof(struct lt_exec, flags)] |= LT_EXEC_PACKED;
	return size;
}

/* the open as the kernel writes it (LT_OPEN_PACKED): it ends after the path */
static inline size_t pack_open(const struct lt_open *o, unsigned char *out)
{
	size_t size = (offsetof(struct lt_open, path) + o->path_len + 1 + 7) & ~(size_t)7;

	memcpy(out, o, size);
	((struct lt_hdr *)(void *)out)->size = size;
	out[offsetof(struct lt_open, rflags)] |= LT_OPEN_PACKED;
	return size;
}

static inline void sample_signal(struct lt_signal *s)
{
	memset(s, 0, sizeof(*s));
	s->hdr = (struct lt_hdr){ LT_TYPE_SIGNAL,     sizeof(*s), 0,   LT_HDR_CGROUP,
				  123456789012345ull, 555,	  556, 0 };
	s->target_pid = 600;
	s->target_tid = 600;
	s->sig = 15;
	memcpy(s->comm, "kill", 5);
	memcpy(s->target_comm, "sleep", 6);
}

#endif
