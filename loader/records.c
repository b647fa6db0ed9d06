// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The probe table and each record's fields, for JSON and text output. */
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

const struct lt_probe lt_probes[] = {
	{ "exec", "lt_exec", LT_PROBE_EXEC, LT_TYPE_EXEC, sizeof(struct lt_exec), true, exec_json,
	  exec_text, "program executions with filename and argv (tp_btf)" },
	{ "exit", "lt_exit", LT_PROBE_EXIT, LT_TYPE_EXIT, sizeof(struct lt_exit), true, exit_json,
	  exit_text, "process exits with code, signal and lifetime (tp_btf)" },
	{ "fork", "lt_fork", LT_PROBE_FORK, LT_TYPE_FORK, sizeof(struct lt_fork), true, fork_json,
	  fork_text, "new processes with parent and child pid (tp_btf)" },
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

const struct lt_probe *lt_probe_by_type(unsigned int type)
{
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].type == type)
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
