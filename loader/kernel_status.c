// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What `status` shows (kernel_status.h): the hooks of the pinned links, the pinned rodata
 * (filters, rate limits, state modes, identity), the counters and the map audit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kernel_int.h"
#include "kernel_status.h"
#include "kernel_sweep.h"
#include "lowtrace.h"

/* The type of a link's program, or -1. */
static int link_prog_type(const struct bpf_link_info *li)
{
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi);
	int fd = bpf_prog_get_fd_by_id(li->prog_id), t = -1;

	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &pi, &len) == 0)
		t = (int)pi.type;
	if (fd >= 0)
		close(fd);
	return t;
}

/* The hook as the kernel reports it: link type, refined by the program type. */
static const char *hook_name(const struct bpf_link_info *li)
{
	switch (li->type) {
	case BPF_LINK_TYPE_TRACING:
		switch (li->tracing.attach_type) {
		case BPF_TRACE_RAW_TP:
			return "tp_btf";
		case BPF_TRACE_FENTRY:
			return "fentry";
		case BPF_TRACE_FEXIT:
			return "fexit";
		default:
			return "tracing";
		}
	case BPF_LINK_TYPE_RAW_TRACEPOINT:
		/* newer kernels give tp_btf (a tracing program) a raw_tracepoint link */
		return link_prog_type(li) == BPF_PROG_TYPE_TRACING ? "tp_btf" : "raw_tp";
	case BPF_LINK_TYPE_PERF_EVENT:
		/* a classic tracepoint's program (open where perf links exist; *_tp) */
		return link_prog_type(li) == BPF_PROG_TYPE_TRACEPOINT ? "tracepoint" : "perf_event";
	default:
		return "other";
	}
}

static void set_state_kinds(struct lt_status *st, __u32 bits)
{
	st->state_task = bits & LT_LOCAL_TASK ? LT_KIND_LOCAL : LT_KIND_HASH;
	st->state_sk = bits & LT_LOCAL_SK ? LT_KIND_LOCAL : LT_KIND_HASH;
}

/* a variable of the pinned rodata: its name, where it goes, its size and its skeleton offset */
struct rd_var {
	const char *name;
	void *out;
	size_t size, skel_off;
	bool found;
};

/*
 * Variables of the pinned rodata, found by name in its BTF (older suites lack some).
 * Without the BTF (by id it needs CAP_SYS_ADMIN: a --pin-group reader), the skeleton's
 * layout, as for the filters (lt_read_status reads those so).
 */
static void read_rodata_vars(const struct bpf_map_info *mi, const char *rodata, struct rd_var *vars,
			     int n)
{
	struct btf *btf = mi->btf_id ? btf__load_from_kernel_by_id(mi->btf_id) : NULL;
	const struct btf_type *sec = btf ? btf__type_by_id(btf, mi->btf_value_type_id) : NULL;
	const struct btf_var_secinfo *v;

	if (!btf && mi->value_size >= sizeof(struct lowtrace__rodata)) {
		for (int k = 0; k < n; k++) {
			memcpy(vars[k].out, rodata + vars[k].skel_off, vars[k].size);
			vars[k].found = true;
		}
		return;
	}
	if (!sec || !btf_is_datasec(sec)) {
		btf__free(btf);
		return;
	}
	v = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *t = btf__type_by_id(btf, v->type);

		for (int k = 0; t && k < n; k++) {
			if (strcmp(btf__name_by_offset(btf, t->name_off), vars[k].name) ||
			    v->size != vars[k].size || v->offset + v->size > mi->value_size)
				continue;
			memcpy(vars[k].out, rodata + v->offset, v->size);
			vars[k].found = true;
		}
	}
	btf__free(btf);
}

#define RD_VAR(n, o)                                                                     \
	{                                                                                \
		.name = #n, .out = o, .size = sizeof(((struct lowtrace__rodata *)0)->n), \
		.skel_off = offsetof(struct lowtrace__rodata, n)                         \
	}

static void read_state(const struct bpf_map_info *mi, const char *rodata, struct lt_status *st)
{
	__u32 bits = 0, ctrl = 0;
	__u64 grace = 0;
	struct rd_var v[] = { RD_VAR(lt_cfg_local, &bits), RD_VAR(lt_cfg_cg_ctrl, &ctrl),
			      RD_VAR(lt_cfg_cg_grace_ns, &grace) };

	read_rodata_vars(mi, rodata, v, 3);
	if (v[0].found)
		set_state_kinds(st, bits);
	/* a suite before the identity hierarchy: its ids are cgroup2's */
	st->cg_ctrl = v[1].found && ctrl < LT_CTRL_N ? (int)ctrl : LT_CTRL_V2;
	st->cg_tracked = v[1].found;
	st->cg_grace_ns = grace;
}

/* the loaded probes' stateful maps into st->maps */
static int read_maps(struct lt_status *st)
{
	bool loaded[LT_PROBE_SLOTS];
	struct lt_maps *m;
	int err;

	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		loaded[i] = st->probe[i].loaded;
	err = lt_maps_open(&m, loaded);
	if (err)
		return err;
	err = lt_maps_read(m, true);
	if (err) {
		lt_maps_close(m);
		return lt_error(LT_FAIL, "cannot count map entries: %s", strerror(-err));
	}
	for (size_t i = 0; i < lt_maps_count(m) && st->nmaps < LT_STATUS_MAPS; i++)
		st->maps[st->nmaps++] = *lt_maps_at(m, i); /* names are the table's and libbpf's */
	lt_maps_close(m);
	return LT_OK;
}

/* exec's ancestry: its counts summed over the CPUs, its LRU's use from the map audit */
static void read_ancestry(struct lt_status *st)
{
	int fd = pin_get_ro(LT_PIN_DIR "/maps/lt_anc_stat"), n = libbpf_num_possible_cpus();
	struct lt_anc_stat *v = NULL;
	__u32 key = 0;

	if (fd >= 0 && n > 0)
		v = calloc(n, sizeof(*v));
	if (v && bpf_map_lookup_elem(fd, &key, v) == 0) {
		st->anc_known = true;
		for (int c = 0; c < n; c++) {
			st->anc.execs += v[c].execs;
			st->anc.forks += v[c].forks;
			st->anc.freed += v[c].freed;
			st->anc.missing += v[c].missing;
			st->anc.unknown += v[c].unknown;
		}
	}
	free(v);
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < st->nmaps; i++)
		if (!strcmp(st->maps[i].name, "lt_procs")) {
			st->procs = st->maps[i].entries;
			st->procs_cap = st->maps[i].max_entries;
		}
}

/* the pinned rodata: the filters, the state modes and the identity hierarchy */
void read_rodata(struct lt_status *st)
{
	static union {
		struct lowtrace__rodata r;
		char bytes[64 * 1024];
	} rodata_buf;
	char *rodata = rodata_buf.bytes;
	const struct lowtrace__rodata *cfg = &rodata_buf.r;
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi), key = 0;
	int fd = pin_get_ro(LT_PIN_DIR "/maps/rodata");

	st->cg_ctrl = LT_CTRL_V2;

	len = sizeof(mi);
	/* the section also holds static constants the skeleton's struct does not
	 * name: read the whole value, then the struct's fields at their offsets */
	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 &&
	    mi.value_size <= sizeof(rodata_buf) && mi.value_size >= sizeof(*cfg) &&
	    bpf_map_lookup_elem(fd, &key, rodata) == 0) {
		st->filter_pid = cfg->lt_cfg_tgid;
		st->filter_cgroup_id = cfg->lt_cfg_cgroup_id;
		for (int i = 0; i < LT_PROBE_SLOTS; i++)
			st->probe[i].rate = cfg->lt_cfg_rate[i];
		read_state(&mi, rodata, st);
	}
	if (fd >= 0)
		close(fd);
}

int lt_read_status(struct lt_status *st)
{
	struct bpf_map_info mi = {};
	struct lt_stats_reader sr = {};
	struct lt_sweeper *sw;
	struct lt_handles h;
	__u32 len = sizeof(mi);
	char path[PATH_MAX];
	int err, fd;

	memset(st, 0, sizeof(*st));
	err = lt_open_pinned(&h, false);
	if (err)
		return err;
	if (bpf_obj_get_info_by_fd(h.ring_fd, &mi, &len) == 0)
		st->ringbuf_size = mi.max_entries;
	read_rodata(st);
	/* a sweep first, if one is due and this user may (the tcp probe's unseen closes) */
	if (lt_sweeper_open(&sw, &h) == LT_OK) {
		lt_sweep_run(sw);
		lt_sweeper_close(sw);
	}
	err = lt_stats_open(&sr, &h);
	for (size_t i = 0; !err && i < lt_nprobes; i++) {
		struct lt_probe_status *ps = &st->probe[lt_probes[i].id];
		struct bpf_link_info li = {};

		len = sizeof(li);
		/* the first attached program's link tells the hook (one of two for open);
		 * its iterators' where all those are gone (removed by hand) */
		fd = -1;
		for (int k = 0; fd < 0 && k < LT_PROBE_PROGS + LT_PROBE_ITERS; k++) {
			const char *prog = k < LT_PROBE_PROGS
						   ? lt_probes[i].progs[k]
						   : lt_probes[i].iters[k - LT_PROBE_PROGS];

			if (!prog)
				continue;
			snprintf(path, sizeof(path), "%s/links/%s", LT_PIN_DIR, lt_link_name(prog));
			fd = bpf_obj_get(path);
			/* a syscall-set program's: one per syscall */
			for (int n = 0; fd < 0 && n < LT_PROBE_NSYS && lt_probes[i].syscalls[n];
			     n++) {
				snprintf(path, sizeof(path), "%s/links/%s-%s", LT_PIN_DIR,
					 lt_link_name(prog), lt_probes[i].syscalls[n]);
				fd = bpf_obj_get(path);
			}
		}
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &li, &len) == 0) {
			ps->loaded = true;
			ps->hook = hook_name(&li);
			ps->prog_id = li.prog_id;
		}
		if (fd >= 0)
			close(fd);
		/* or its reaper's pin (a program): loaded, hook unknown */
		if (fd < 0 && lt_probes[i].reap) {
			snprintf(path, sizeof(path), "%s/%s", LT_PIN_DIR,
				 lt_link_name(lt_probes[i].reap));
			ps->loaded = faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
			ps->hook = "-";
		}
		if (!ps->loaded)
			continue;
		err = lt_stats_read(&sr, &lt_probes[i], &ps->stat);
		if (err)
			err = lt_error(LT_FAIL, "cannot read counters: %s", strerror(-err));
	}
	lt_stats_close(&sr);
	if (!err)
		err = read_maps(st);
	if (!err && st->probe[LT_PROBE_EXEC].loaded)
		read_ancestry(st);
	lt_close_handles(&h);
	return err;
}
