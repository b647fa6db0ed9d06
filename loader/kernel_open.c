// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A suite opened and configured (kernel_suite.h): the programs the options pick, where
 * per-object state lives, the maps created and their sizes, the .rodata settings. Nothing is
 * in the kernel until lt_suite_load (kernel_load.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ident.h"
#include "kernel_int.h"
#include "kernel_suite.h"
#include "lowtrace.h"

/* libbpf speaks only with -v; otherwise our one-line errors sum its failures up. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return lt_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

/* Is program k of probe i the hook this kernel gets (see perf_links)? */
static bool prog_hook_chosen(struct bpf_object *obj, size_t i, int k, bool perf)
{
	const struct bpf_program *p = bpf_object__find_program_by_name(obj, lt_probes[i].progs[k]);
	const char *sec = bpf_program__section_name(p);
	bool classic = false;

	if (lt_prog_on_syscall_tp(p))
		return perf;
	if (strcmp(sec, "tp_btf/sys_enter") && strcmp(sec, "tp_btf/sys_exit"))
		return true;
	for (int j = 0; j < LT_PROBE_PROGS && lt_probes[i].progs[j]; j++)
		classic |= lt_prog_on_syscall_tp(
			bpf_object__find_program_by_name(obj, lt_probes[i].progs[j]));
	return !(classic && perf);
}

/*
 * LOWTRACE_TP_LEVEL (tests): "force" attaches the *_tp programs on any kernel;
 * "only" also makes the main and nest programs of those probes do nothing, so
 * the *_tp programs write every record.
 */
static const char *tp_level_env(void)
{
	const char *v = getenv("LOWTRACE_TP_LEVEL");

	return v && (!strcmp(v, "force") || !strcmp(v, "only")) ? v : NULL;
}

/*
 * LOWTRACE_OPEN_HOOK=tp_btf (tests only, open.bats): open on tp_btf sys_enter/sys_exit even
 * where perf links would give it the classic syscall tracepoints, so one kernel runs both hooks.
 */
static bool open_hook_tp_btf(void)
{
	const char *v = getenv("LOWTRACE_OPEN_HOOK");

	return v && !strcmp(v, "tp_btf");
}

/* Maps a probe owns are created only when one of their owners is loaded. */
static int set_autocreate(struct bpf_object *obj, uint64_t probes)
{
	for (size_t i = 0; i < lt_nprobes; i++) {
		for (int k = 0; k < LT_PROBE_OWN && lt_probes[i].own[k]; k++) {
			struct bpf_map *m = bpf_object__find_map_by_name(obj, lt_probes[i].own[k]);
			bool used = false;

			if (!m)
				return lt_error(LT_FAIL, "map %s missing from the object",
						lt_probes[i].own[k]);
			/* a map shared by several probes: created if any of them is loaded */
			for (size_t j = 0; j < lt_nprobes && !used; j++)
				for (int n = 0; n < LT_PROBE_OWN && lt_probes[j].own[n]; n++)
					if (((probes >> j) & 1) &&
					    !strcmp(lt_probes[j].own[n], lt_probes[i].own[k]))
						used = true;
			bpf_map__set_autocreate(m, used);
		}
	}
	return LT_OK;
}

/* kernel.threads-max bounds the threads that can hold state; 65536 keeps 5.10's preallocation small */
uint32_t lt_default_max_threads(void)
{
	unsigned long long n = 0;
	FILE *f = fopen("/proc/sys/kernel/threads-max", "re");

	if (f) {
		if (fscanf(f, "%llu", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n && n < LT_MAX_THREADS_CAP ? (uint32_t)n : LT_MAX_THREADS_CAP;
}

/*
 * Where per-thread and per-socket state lives (progs/lt_state.bpf.h). Task
 * and socket storage came to tracing programs together, in 5.11, with the
 * task storage map type itself: creating one such map answers for both,
 * without the kernel BTF (libbpf's probe builds its own). Kernels without them
 * get preallocated hashes: task maps are retyped, the socket map (keyed by the
 * socket's address, not an int) is created here and handed to libbpf.
 */
static bool kernel_has_local_storage(void)
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1 &&
	       libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SK_STORAGE, NULL) == 1;
}

/* The inode of this process's network namespace, 0 if it cannot tell. */
static uint32_t own_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
}

static int set_state(struct lt_suite *s, const struct lt_load_opts *o)
{
	uint32_t threads = o->max_threads ? o->max_threads : lt_default_max_threads();
	uint32_t conns = o->max_conns ? o->max_conns : LT_MAX_CONNS_DEFAULT;
	bool local = o->state != LT_STATE_HASH && kernel_has_local_storage();
	/* a *_tp program (a classic tracepoint's) cannot reach socket storage */
	bool local_sk = local && !s->sk_hash;
	struct bpf_map *m;

	if (o->state == LT_STATE_LOCAL && !local)
		return lt_error(LT_ENV, "--state local: this kernel has no task and socket storage "
					"for tracing programs (5.11+); use --state auto or hash");
	s->skel->rodata->lt_cfg_local = (local ? LT_LOCAL_TASK : 0) | (local_sk ? LT_LOCAL_SK : 0);
	s->skel->rodata->lt_cfg_netns = own_netns();
	if (local_sk)
		return LT_OK;
	bpf_object__for_each_map (m, s->skel->obj) {
		enum bpf_map_type t = bpf_map__type(m);
		int fd;

		if (t == BPF_MAP_TYPE_TASK_STORAGE && !local) {
			bpf_map__set_type(m, BPF_MAP_TYPE_HASH);
			bpf_map__set_map_flags(m, 0); /* preallocated: 5.10 tracing wants it */
			if (strcmp(bpf_map__name(m), "lt_marks")) {
				bpf_map__set_max_entries(m, threads);
			} else if (s->tp_level) {
				/* claims stay after their event: the oldest make room */
				bpf_map__set_type(m, BPF_MAP_TYPE_LRU_HASH);
				bpf_map__set_max_entries(m, threads);
			} else {
				/* per-task counts are used only where tracepoints are
				 * preemptible, which all have task storage: a token hash */
				bpf_map__set_max_entries(m, 64);
			}
		} else if (t == BPF_MAP_TYPE_SK_STORAGE && bpf_map__autocreate(m)) {
			fd = bpf_map_create(BPF_MAP_TYPE_HASH, bpf_map__name(m), sizeof(uint64_t),
					    bpf_map__value_size(m), conns, NULL);
			if (fd < 0)
				return lt_error(errno == EPERM ? LT_ENV : LT_FAIL,
						"cannot create map %s (%u entries): %s",
						bpf_map__name(m), conns, strerror(errno));
			if (bpf_map__reuse_fd(m, fd)) {
				close(fd);
				return lt_error(LT_FAIL, "cannot use map %s: %s", bpf_map__name(m),
						strerror(errno));
			}
			close(fd); /* libbpf holds its own copy */
		}
	}
	return LT_OK;
}

/*
 * syscalls keeps its histograms by number in an array, or by number and process
 * in a hash with --per-pid: the other map shrinks to one entry. --count-only
 * needs no entry time: on the bounded hash its map shrinks too.
 */
static void set_syscalls(struct lt_suite *s, const struct lt_load_opts *o)
{
	struct lowtrace *k = s->skel;

	bpf_map__set_max_entries(o->sys_per_pid ? k->maps.lt_sys_nr : k->maps.lt_sys_hist, 1);
	if (o->sys_count && bpf_map__type(k->maps.lt_sys_start) == BPF_MAP_TYPE_HASH)
		bpf_map__set_max_entries(k->maps.lt_sys_start, 1);
}

/* bio: the atomic pair's slots and array (5.12+), or the *_h pair's hashes; the other one entry */
static void set_bio(struct lt_suite *s)
{
	struct lowtrace *k = s->skel;

	if (bpf_atomics()) {
		bpf_map__set_max_entries(k->maps.lt_bio_hist, 1);
		return;
	}
	bpf_map__set_max_entries(k->maps.lt_bio_slots, 1);
	bpf_map__set_max_entries(k->maps.lt_bio_ahist, 1);
	bpf_map__set_max_entries(k->maps.lt_bio_keys, 1);
	bpf_map__set_max_entries(k->maps.lt_bio_idx, 1);
}

/* exec's ancestry: how many ancestors, the LRU of images */
static void set_ancestry(struct lt_suite *s, const struct lt_load_opts *o)
{
	s->skel->rodata->lt_cfg_ancestors = o->ancestors;
	bpf_map__set_max_entries(s->skel->maps.lt_procs,
				 o->max_procs ? o->max_procs : LT_PROCS_DEFAULT);
}

/* Load a program of the table, or not; an error when the object lacks it. */
static int autoload(struct lt_suite *s, const char *name, bool on)
{
	struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, name);

	if (!p)
		return lt_error(LT_FAIL, "program %s missing from the object", name);
	bpf_program__set_autoload(p, on);
	return LT_OK;
}

/* A reaper frees stale entries of the probe's first own map: a hash (set_state decides). */
static bool reap_usable(struct bpf_object *obj, size_t i)
{
	const struct bpf_map *m = bpf_object__find_map_by_name(obj, lt_probes[i].own[0]);
	enum bpf_map_type t = m ? bpf_map__type(m) : BPF_MAP_TYPE_UNSPEC;

	return t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_LRU_HASH;
}

/*
 * Is program `name` one the load options (syscalls: lt_sys_c alone, or the pair) or the
 * kernel (bio: its slots want BPF atomics, 5.12+; the *_h pair before) pick?
 */
static bool prog_mode_chosen(const char *name, const struct lt_load_opts *o)
{
	size_t n = strlen(name);

	if (!strncmp(name, "lt_bio_", 7))
		return bpf_atomics() != (n > 2 && !strcmp(name + n - 2, "_h"));
	if (strncmp(name, "lt_sys_", 7))
		return true;
	return o->sys_count == !strcmp(name, "lt_sys_c");
}

/*
 * --cgroup: a directory of the identity hierarchy (cgroup2's, or the v1 one mounted at mnt:
 * the same file system). Its id is its kernfs inode number.
 */
static int open_cgroup(const char *path, int ctrl, const char *mnt, uint64_t *id)
{
	struct statfs fs;
	struct stat st, root;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return lt_error(LT_USAGE, "--cgroup %s: %s", path, strerror(errno)), -1;
	if (fstatfs(fd, &fs) || fstat(fd, &st) ||
	    (ctrl == LT_CTRL_V2 ? fs.f_type != CGROUP2_SUPER_MAGIC
				: fs.f_type != CGROUP_SUPER_MAGIC || stat(mnt, &root) ||
					  root.st_dev != st.st_dev)) {
		close(fd);
		if (ctrl == LT_CTRL_V2)
			return lt_error(LT_USAGE, "--cgroup %s: not a cgroup v2 directory", path),
			       -1;
		return lt_error(LT_USAGE,
				"--cgroup %s: not a directory of the identity hierarchy (cgroup "
				"v1 %s at %s)",
				path, lt_ident_ctrl_name(ctrl), mnt),
		       -1;
	}
	*id = st.st_ino;
	return fd;
}

/* Does probe i keep state in socket storage? */
static bool probe_has_sk_storage(struct bpf_object *obj, size_t i)
{
	for (int k = 0; k < LT_PROBE_OWN && lt_probes[i].own[k]; k++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, lt_probes[i].own[k]);

		if (m && bpf_map__type(m) == BPF_MAP_TYPE_SK_STORAGE)
			return true;
	}
	return false;
}

/*
 * The loaded probes whose *_tp program is attached: all that have one, where
 * tracepoints are preemptible (or LOWTRACE_TP_LEVEL). A *_tp program cannot
 * reach socket storage: with one loaded, sockets go in the hash (sets
 * s->sk_hash), but --state local keeps them in socket storage without it.
 */
static uint64_t tp_level_probes(struct lt_suite *s, const struct lt_load_opts *o, bool wanted)
{
	uint64_t m = 0;

	for (size_t i = 0; wanted && i < lt_nprobes; i++) {
		if (!((o->probes >> i) & 1))
			continue;
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			if (!lt_prog_is_tp_level(lt_probes[i].progs[k]))
				continue;
			if (probe_has_sk_storage(s->skel->obj, i)) {
				if (o->state == LT_STATE_LOCAL)
					continue;
				s->sk_hash = true;
			}
			m |= 1ull << i;
		}
	}
	return m;
}

/*
 * The checks of the options against the machine, before anything is touched: bpffs and
 * the pin lock, held until the suite is pinned (or not: loads and unloads take turns); no
 * suite pinned there unless --replace; the identity hierarchy; --cgroup in it.
 */
static int open_checks(struct lt_suite *s, const struct lt_load_opts *o, uint64_t *cg_id)
{
	struct stat st;
	int err;

	if (o->pin) {
		err = ensure_bpffs();
		if (!err)
			err = pin_begin(&s->lock_fd);
		if (err)
			return err;
		if (stat(LT_PIN_DIR, &st) == 0 && !o->replace)
			return lt_error(LT_ALREADY_LOADED,
					"already loaded (pinned at %s): run 'lowtrace unload' "
					"first, or load --replace",
					LT_PIN_DIR);
	}
	s->cg_ctrl = lt_ident_pick(o->ident_cgroup, NULL, s->cg_mnt, sizeof(s->cg_mnt));
	if (s->cg_ctrl < 0)
		return lt_error(LT_USAGE, "--identity-cgroup %s: %s", o->ident_cgroup,
				s->cg_ctrl == -ENOENT ? "no such hierarchy is mounted"
						      : "unknown hierarchy");
	if (o->cgroup) {
		s->cg_fd = open_cgroup(o->cgroup, s->cg_ctrl, s->cg_mnt, cg_id);
		if (s->cg_fd < 0)
			return LT_USAGE;
	}
	return LT_OK;
}

/* The BPF object opened, the options in its .rodata and its maps' sizes. */
static int open_configure(struct lt_suite *s, const struct lt_load_opts *o, uint64_t cg_id)
{
	const char *tp_env = tp_level_env();
	struct lowtrace *k;
	int err;

	libbpf_set_print(libbpf_log);
	s->probes = o->probes;
	s->pin = o->pin;
	s->pin_group = o->pin && o->pin_group;
	s->pin_gid = o->pin_gid;
	s->replace = o->replace;
	s->skel = k = lowtrace__open();
	if (!k)
		return lt_error(LT_FAIL, "cannot open the BPF object: %s", strerror(errno));
	/* a replacing suite writes once it has taken over (pin_suite's handover) */
	k->data_live->lt_live = !o->replace;
	k->rodata->lt_cfg_tgid = o->pid;
	k->rodata->lt_cfg_cgroup_id = cg_id;
	k->rodata->lt_cfg_sys_per_pid = o->sys_per_pid;
	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		k->rodata->lt_cfg_rate[i] = o->rate[i];
	k->rodata->lt_cfg_shed = !o->no_shed;
	k->rodata->lt_cfg_cg_ctrl = s->cg_ctrl;
	k->rodata->lt_cfg_cg_grace_ns =
		(uint64_t)(o->cg_grace_set ? o->cg_grace_s : LT_CG_GRACE_S) * 1000000000ull;
	bpf_map__set_max_entries(k->maps.lt_cg_names, o->cg_cap ? o->cg_cap : LT_CGN_MAX);
	bpf_map__set_max_entries(k->maps.lt_cg_dead, o->cg_cap ? o->cg_cap : LT_CGN_MAX);
	s->tp_probes = tp_level_probes(s, o, tp_preemptible() || tp_env);
	s->tp_level = s->tp_probes != 0;
	k->rodata->lt_cfg_claims = s->tp_level;
	k->rodata->lt_cfg_tp_only = s->tp_level && tp_env && !strcmp(tp_env, "only");
	/* lt_exit_tp claims exits in it where the classic event has no group_dead
	 * (before 6.16; forced only): a perf-run program there may use only
	 * preallocated maps (5.10 rejects the load, with a kernel warning) */
	if (s->tp_level && !tp_preemptible())
		bpf_map__set_map_flags(k->maps.lt_exit_seen, 0);
	bpf_map__set_max_entries(k->maps.lt_events, o->ringbuf_size);
	k->rodata->lt_cfg_ring_size = o->ringbuf_size;
	err = set_autocreate(k->obj, o->probes);
	/* exec, exit and fork count into it; the cgroup tracker frees a dead cgroup's there */
	bpf_map__set_autocreate(k->maps.lt_cg_counts, true);
	if (!err)
		err = set_state(s, o);
	if (!err) {
		set_syscalls(s, o);
		set_bio(s);
		set_ancestry(s, o);
	}
	return err;
}

/*
 * Has the kernel the tracepoint a tp_btf program names (CONFIG_MODULES: module_load)? Asked
 * tracefs, not the kernel's BTF: libbpf parses that once, at load.
 */
static bool kernel_has_btf_tp(const struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p);
	char pat[PATH_MAX];
	glob_t g;
	bool has;

	if (strncmp(sec, "tp_btf/", 7))
		return true;
	if (ensure_tracefs())
		return false;
	snprintf(pat, sizeof(pat), "{/sys/kernel/debug/tracing,%s}/events/*/%s", LT_TRACEFS,
		 sec + 7);
	has = glob(pat, GLOB_BRACE | GLOB_NOSORT, NULL, &g) == 0 && g.gl_pathc > 0;
	globfree(&g);
	return has;
}

/* Probe i's programs, iterators and reaper loaded as its row and the options pick. */
static int choose_probe(struct lt_suite *s, const struct lt_load_opts *o, size_t i, bool perf)
{
	const struct lt_probe *r = &lt_probes[i];
	bool on = (o->probes >> i) & 1;
	int err;

	for (int k = 0; k < LT_PROBE_PROGS && r->progs[k]; k++) {
		const char *name = r->progs[k];
		/* a *_tp program only where its level is attached; one hook of two */
		bool pick = on && (((s->tp_probes >> i) & 1) || !lt_prog_is_tp_level(name)) &&
			    prog_hook_chosen(s->skel->obj, i, k, perf) && prog_mode_chosen(name, o);

		/* a program of what some kernels lack, where this one lacks it */
		if (pick && r->optional && !strcmp(name, r->optional))
			pick = kernel_has_btf_tp(
				bpf_object__find_program_by_name(s->skel->obj, name));

		if ((err = autoload(s, name, pick)))
			return err;
	}
	/* the sweep of socket storage; the hash has its reaper */
	for (int k = 0; k < LT_PROBE_ITERS && r->iters[k]; k++)
		if ((err = autoload(s, r->iters[k], on && !reap_usable(s->skel->obj, i))))
			return err;
	if (r->reap && (err = autoload(s, r->reap, on && reap_usable(s->skel->obj, i))))
		return err;
	return LT_OK;
}

/* The programs to load: the table's rows the options pick, and those every suite has. */
static int choose_programs(struct lt_suite *s, const struct lt_load_opts *o)
{
	/* open and the syscall-set probes have programs on classic syscall tracepoints */
	bool perf = perf_links() && !open_hook_tp_btf();
	struct bpf_program *p;
	int err;

	/* a program outside the table would load unattached: the table names them all */
	bpf_object__for_each_program (p, s->skel->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < lt_nprobes; i++)
		if ((err = choose_probe(s, o, i, perf)))
			return err;
	/* never attached: the consumer runs it to announce loss windows (lt_lost_flush) */
	bpf_program__set_autoload(s->skel->progs.lt_lost_flush, true);
	/* cgroup births and deaths: every suite's identity needs them */
	for (int i = 0; i < 3; i++)
		bpf_program__set_autoload(cg_prog(s, i), true);
	/* a classic tracepoint's id is in tracefs: mounted before anything is loaded */
	bpf_object__for_each_program (p, s->skel->obj) {
		if (bpf_program__autoload(p) &&
		    !strncmp(bpf_program__section_name(p), "tracepoint/", 11) &&
		    (err = ensure_tracefs()))
			return err;
	}
	return LT_OK;
}

int lt_suite_open(const struct lt_load_opts *o, struct lt_suite **out)
{
	struct lt_suite *s;
	uint64_t cg_id = 0;
	int err;

	/* every check that can fail comes before anything is touched */
	err = check_env();
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return lt_error(LT_FAIL, "out of memory");
	s->cg_fd = s->lock_fd = -1;
	err = open_checks(s, o, &cg_id);
	if (!err)
		err = open_configure(s, o, cg_id);
	if (!err)
		err = choose_programs(s, o);
	if (err) {
		lt_suite_free(s);
		return err;
	}
	*out = s;
	return LT_OK;
}

void lt_suite_set_stacks(struct lt_suite *s, uint32_t entries)
{
	if (entries)
		bpf_map__set_max_entries(s->skel->maps.lt_stacks, entries);
}

void lt_suite_set_unwind(struct lt_suite *s, uint32_t rows, uint32_t procs)
{
	if (!rows || !procs)
		return;
	bpf_map__set_max_entries(s->skel->maps.lt_uw_rows, rows);
	bpf_map__set_max_entries(s->skel->maps.lt_uw_procs, procs);
	s->skel->rodata->lt_cfg_unwind = true;
}

void lt_suite_set_alloc(struct lt_suite *s, uint64_t mean, const uint64_t *ival, bool leaks)
{
	s->skel->rodata->lt_cfg_al_mean = mean;
	s->skel->rodata->lt_cfg_al_leaks = leaks;
	if (ival)
		memcpy((void *)s->skel->rodata->lt_cfg_al_ival, ival,
		       sizeof(s->skel->rodata->lt_cfg_al_ival));
	s->al_leaks = leaks;
}

int lt_load(const struct lt_load_opts *o, struct lt_suite **out)
{
	struct lt_suite *s;
	int ret = lt_suite_open(o, &s);

	if (ret)
		return ret;
	ret = lt_suite_load(s);
	if (ret) {
		lt_suite_free(s);
		return ret;
	}
	*out = s;
	return LT_OK;
}
