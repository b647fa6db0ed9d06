// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one place in the loader that talks to libbpf, part one: a suite's lifetime (checks, open,
 * configure, load, attach, pin, detach, unload). kernel_read.c reads what a loaded suite holds;
 * both are behind kernel.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_int.h"
#include "lt_unwind.h"
#include "lowtrace.h"
#include "ident.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* libbpf speaks only with -v; otherwise our one-line errors sum its failures up. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return lt_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* A clear error for missing privileges, before the kernel gives a cryptic one. */
static int check_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d) == 0 && !has_cap(d, CAP_SYS_ADMIN) &&
	    !(has_cap(d, 39 /* CAP_PERFMON */) && has_cap(d, 38 /* CAP_BPF */)))
		return lt_error(LT_ENV, "permission denied: run as root (or with CAP_BPF, "
					"CAP_PERFMON and CAP_SYS_ADMIN)");
	return LT_OK;
}

static int check_env(void)
{
	int err = check_privileges();

	if (err)
		return err;
	if (access(VMLINUX_BTF, R_OK))
		return lt_error(LT_ENV, "no kernel BTF: %s: %s (needs CONFIG_DEBUG_INFO_BTF=y)",
				VMLINUX_BTF, strerror(errno));
	return LT_OK;
}

/* bpffs is often not mounted at boot: mount it, or say why we cannot. */
static int ensure_bpffs(void)
{
	struct statfs fs;

	if (statfs(LT_PIN_ROOT, &fs) == 0 && fs.f_type == BPF_FS_MAGIC)
		return LT_OK;
	if (mount("bpf", LT_PIN_ROOT, "bpf", 0, "mode=0700"))
		return lt_error(LT_ENV, "no bpffs: cannot mount bpf at %s: %s", LT_PIN_ROOT,
				strerror(errno));
	return LT_OK;
}

/*
 * Are tracepoints preemptible here? From 7.0 a task can be preempted inside a
 * tracepoint's BPF program, holding it on that CPU (lt_claim in
 * progs/lt_takeover.bpf.h). The kernel's BTF does not tell; its version does.
 */
static bool kernel_at_least(int want_maj, int want_min)
{
	struct utsname u;
	int maj = 0, min = 0;

	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &maj, &min) == 2 &&
	       (maj > want_maj || (maj == want_maj && min >= want_min));
}

static bool tp_preemptible(void)
{
	return kernel_at_least(7, 0);
}

/*
 * Can a perf event's program be pinned (a perf-event link, 5.15+)? Then a
 * probe with programs on classic syscall tracepoints (tracepoint/syscalls/...,
 * run for their syscall only) takes those instead of its tp_btf ones on
 * sys_enter/sys_exit, run for every syscall.
 */
static bool perf_links(void)
{
	return kernel_at_least(5, 15);
}

static bool prog_on_syscall_tp(const struct bpf_program *p)
{
	return p && !strncmp(bpf_program__section_name(p), "tracepoint/syscalls/", 20);
}

/* Is program k of probe i the hook this kernel gets (see perf_links)? */
static bool prog_hook_chosen(struct bpf_object *obj, size_t i, int k, bool perf)
{
	const struct bpf_program *p = bpf_object__find_program_by_name(obj, lt_probes[i].progs[k]);
	const char *sec = bpf_program__section_name(p);
	bool classic = false;

	if (prog_on_syscall_tp(p))
		return perf;
	if (strcmp(sec, "tp_btf/sys_enter") && strcmp(sec, "tp_btf/sys_exit"))
		return true;
	for (int j = 0; j < LT_PROBE_PROGS && lt_probes[i].progs[j]; j++)
		classic |= prog_on_syscall_tp(
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

/* The *_tp programs need the tracepoint's id from tracefs: mount it if no one has. */
static int ensure_tracefs(void)
{
	struct statfs fs;

	if (access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return LT_OK; /* where libbpf looks first */
	if (statfs(LT_TRACEFS, &fs) == 0 && fs.f_type == TRACEFS_MAGIC)
		return LT_OK;
	if (mount("tracefs", LT_TRACEFS, "tracefs", 0, NULL))
		return lt_error(LT_ENV, "no tracefs: cannot mount tracefs at %s: %s", LT_TRACEFS,
				strerror(errno));
	return LT_OK;
}

static int rm_tree_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	int err = 0, r;

	if (fd < 0) {
		if (unlinkat(dfd, name, 0) && errno != ENOENT)
			return -errno;
		return 0; /* a file, or already gone (an interrupted unload) */
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		r = rm_tree_at(dirfd(d), e->d_name);
		if (r)
			err = r;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT)
		err = -errno;
	return err;
}

/* A pinned suite: its links first, so the programs stop before their maps go. */
static int rm_suite(const char *dir)
{
	char links[PATH_MAX];
	int err;

	snprintf(links, sizeof(links), "%s/links", dir);
	err = rm_tree_at(AT_FDCWD, links);
	return err ? err : rm_tree_at(AT_FDCWD, dir);
}

/*
 * The pin directory changes only under a lock on bpffs' root: flock goes with
 * the process, so a loader killed half-way never keeps it. What a killed
 * loader can leave beside LT_PIN_DIR, and what the next lock holder does:
 *   lowtrace-tmp-PID  a suite being pinned, maybe incomplete: removed
 *   lowtrace-new-PID  a whole suite that was replacing LT_PIN_DIR: the replace is finished
 *   lowtrace-old-PID  a suite being unloaded: removed
 * The names carry no dots: bpffs rejects them.
 */
#define PIN_TMP "lowtrace-tmp-"
#define PIN_NEW "lowtrace-new-"
#define PIN_OLD "lowtrace-old-"
#define PIN_LEFT_MAX 32
#define PIN_PATH_MAX 64 /* LT_PIN_ROOT/<name>: short, so paths below it always fit */

static int pin_lock(bool wait)
{
	int fd = open(LT_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
		int e = errno;

		if (e == EINTR && !lt_stop)
			continue;
		close(fd);
		return -e;
	}
	return fd;
}

static void pin_path(char *buf, size_t len, const char *prefix)
{
	snprintf(buf, len, "%s/%s%d", LT_PIN_ROOT, prefix, (int)getpid());
}

static bool is_leftover(const char *name)
{
	return !strncmp(name, PIN_TMP, strlen(PIN_TMP)) ||
	       !strncmp(name, PIN_NEW, strlen(PIN_NEW)) || !strncmp(name, PIN_OLD, strlen(PIN_OLD));
}

int lt_pins_leftovers(char names[][LT_LEFTOVER_LEN], int max)
{
	DIR *d = opendir(LT_PIN_ROOT);
	struct dirent *e;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		if (is_leftover(e->d_name) && strlen(e->d_name) < LT_LEFTOVER_LEN)
			strcpy(names[n++], e->d_name);
	}
	closedir(d);
	return n;
}

/* With the lock held: finish what killed loaders left. Returns 0 or -errno. */
static int recover(void)
{
	char names[PIN_LEFT_MAX][LT_LEFTOVER_LEN];
	char path[PIN_PATH_MAX], old[PIN_PATH_MAX];
	struct stat st;
	int n = lt_pins_leftovers(names, PIN_LEFT_MAX), err = 0, r;

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%.39s", LT_PIN_ROOT,
			 names[i]); /* < LT_LEFTOVER_LEN */
		if (strncmp(names[i], PIN_NEW, strlen(PIN_NEW))) {
			r = rm_suite(path);
			if (!r)
				lt_info("removed %s, left by a loader that was killed", path);
			err = r ? r : err;
			continue;
		}
		/* the whole new suite goes in; the one it replaces goes out */
		pin_path(old, sizeof(old), PIN_OLD);
		r = 0;
		if (stat(LT_PIN_DIR, &st) == 0 && rename(LT_PIN_DIR, old))
			r = -errno;
		if (!r && rename(path, LT_PIN_DIR))
			r = -errno;
		if (!r)
			r = rm_suite(old);
		if (!r)
			lt_info("finished the replace a killed loader left half done (%s)", path);
		err = r ? r : err;
	}
	return n < 0 ? n : err;
}

/* Take the pin lock and finish what killed loaders left: an exit code; *fd holds the lock. */
static int pin_begin(int *fd)
{
	int err;

	*fd = pin_lock(true);
	if (*fd < 0)
		return lt_error(LT_FAIL, "cannot lock %s: %s", LT_PIN_ROOT, strerror(-*fd));
	err = recover();
	if (!err)
		return LT_OK;
	close(*fd);
	*fd = -1;
	return lt_error(LT_FAIL, "cannot finish what a killed loader left in %s: %s", LT_PIN_ROOT,
			strerror(-err));
}

int lt_pins_tidy(void)
{
	char names[1][LT_LEFTOVER_LEN];
	int fd, err;

	if (lt_pins_leftovers(names, 1) <= 0)
		return 0; /* the common case: nothing to do, no lock taken */
	fd = pin_lock(false);
	if (fd < 0)
		return fd == -EWOULDBLOCK ? 0 : fd; /* busy: a live loader is at work */
	err = recover();
	close(fd);
	return err;
}

/*
 * --pin-group: the group's readers (lowtrace-metrics, lowtrace-events with CAP_BPF alone) open
 * what they read with BPF_F_RDONLY, which needs read permission; the kernel opens a link or a
 * program only read-write, the ring's consumer page is mapped writable, and readers update
 * lt_seen (events), delete from lt_cg_counts (metrics) and write lt_sweep (both sweep tcp):
 * those need write permission.
 */
static const char *const pin_rw_maps[] = { "lt_events", "lt_seen", "lt_cg_counts", "lt_sweep",
					   "lt_tcp_reap_keys" };

/* chown to the pin group, then its mode; nothing without --pin-group */
static int pin_perm(const struct lt_suite *s, const char *path, mode_t mode)
{
	if (!s->pin_group)
		return 0;
	if (chown(path, (uid_t)-1, s->pin_gid) || chmod(path, mode))
		return -errno;
	return 0;
}

static int pin_mkdir(const struct lt_suite *s, const char *path)
{
	if (mkdir(path, 0700))
		return -errno;
	return pin_perm(s, path, 0750);
}

static mode_t pin_map_mode(const char *name)
{
	for (size_t i = 0; i < sizeof(pin_rw_maps) / sizeof(pin_rw_maps[0]); i++)
		if (!strcmp(name, pin_rw_maps[i]))
			return 0660;
	return 0640;
}

/*
 * The group's readers must search LT_PIN_ROOT, which bpffs (systemd's mount, ensure_bpffs)
 * makes root's 0700: it becomes root:GROUP 0710 (search, no listing). Other pins there keep
 * their own modes (the kernel creates them 0600). A root already given to another group is
 * left alone: an error rather than a silent takeover.
 */
static int pin_root_search(const struct lt_suite *s)
{
	struct stat st;

	if (!s->pin_group)
		return LT_OK;
	if (stat(LT_PIN_ROOT, &st))
		return lt_error(LT_FAIL, "%s: %s", LT_PIN_ROOT, strerror(errno));
	if ((st.st_mode & S_IXOTH) || (st.st_gid == s->pin_gid && (st.st_mode & S_IXGRP)))
		return LT_OK;
	if (st.st_gid != s->pin_gid && (st.st_gid != 0 || (st.st_mode & 070)))
		return lt_error(LT_FAIL,
				"--pin-group: %s belongs to group %u (mode %04o): cannot let group "
				"%u search it",
				LT_PIN_ROOT, (unsigned int)st.st_gid,
				(unsigned int)(st.st_mode & 07777), s->pin_gid);
	if (chown(LT_PIN_ROOT, (uid_t)-1, s->pin_gid) ||
	    chmod(LT_PIN_ROOT, (st.st_mode & 07777) | S_IXGRP))
		return lt_error(LT_FAIL, "--pin-group: cannot let group %u search %s: %s",
				s->pin_gid, LT_PIN_ROOT, strerror(errno));
	return LT_OK;
}

/* the cgroup tracker's programs (progs/cgroup.bpf.c), i < 3 */
static struct bpf_program *cg_prog(struct lt_suite *s, int i)
{
	struct bpf_program *p[3] = { s->skel->progs.lt_cg_mkdir, s->skel->progs.lt_cg_rmdir,
				     s->skel->progs.lt_cg_rename };

	return p[i];
}

static int pin_all(struct lt_suite *s, const char *dir)
{
	char path[PATH_MAX];
	struct bpf_map *m;
	int err;

	snprintf(path, sizeof(path), "%s/maps", dir);
	if ((err = pin_mkdir(s, dir)) || (err = pin_mkdir(s, path)))
		return err;
	snprintf(path, sizeof(path), "%s/links", dir);
	if ((err = pin_mkdir(s, path)))
		return err;
	if (s->pin_group) {
		snprintf(path, sizeof(path), "%s/progs", dir);
		if ((err = pin_mkdir(s, path)))
			return err;
	}
	bpf_object__for_each_map (m, s->skel->obj) {
		const char *name = bpf_map__name(m);
		const char *dot = strrchr(name, '.');

		if (bpf_map__fd(m) < 0)
			continue; /* not created: only a probe that is not loaded uses it */
		/* internal maps are named "<obj>.rodata": pin as "rodata" */
		name = dot ? dot + 1 : name;
		snprintf(path, sizeof(path), "%s/maps/%s", dir, name);
		err = bpf_map__pin(m, path);
		if (!err)
			err = pin_perm(s, path, pin_map_mode(name));
		if (err)
			return err;
	}
	for (int i = 0; i < 3; i++) {
		const char *name = bpf_program__name(cg_prog(s, i));

		if (!s->cg_links[i])
			continue;
		snprintf(path, sizeof(path), "%s/links/%s", dir, lt_link_name(name));
		err = bpf_link__pin(s->cg_links[i], path);
		if (!err)
			err = pin_perm(s, path, 0660);
		if (!err && s->pin_group) {
			/* its run statistics for the group's readers, as every link's */
			snprintf(path, sizeof(path), "%s/progs/%s", dir, name);
			err = bpf_program__pin(cg_prog(s, i), path);
			if (!err)
				err = pin_perm(s, path, 0660);
		}
		if (err)
			return err;
	}
	snprintf(path, sizeof(path), "%s/lost_flush", dir);
	err = bpf_program__pin(s->skel->progs.lt_lost_flush, path);
	if (!err) /* the group's events runs it to claim loss windows */
		err = pin_perm(s, path, 0660);
	if (err)
		return err;
	for (size_t i = 0; i < lt_nprobes; i++) {
		struct bpf_program *reap =
			lt_probes[i].reap
				? bpf_object__find_program_by_name(s->skel->obj, lt_probes[i].reap)
				: NULL;

		if (reap && bpf_program__fd(reap) >= 0) {
			/* the group's consumers run it: they sweep */
			snprintf(path, sizeof(path), "%s/%s", dir, lt_link_name(lt_probes[i].reap));
			err = bpf_program__pin(reap, path);
			if (!err)
				err = pin_perm(s, path, 0660);
			if (err)
				return err;
		}
		for (int k = 0; k < LT_PROBE_ITERS && lt_probes[i].iters[k]; k++) {
			if (!s->iters[lt_probes[i].id][k])
				continue;
			/* the group's consumers run it: reading the pin runs the iterator */
			snprintf(path, sizeof(path), "%s/links/%s", dir,
				 lt_link_name(lt_probes[i].iters[k]));
			err = bpf_link__pin(s->iters[lt_probes[i].id][k], path);
			if (!err)
				err = pin_perm(s, path, 0660);
			if (err)
				return err;
		}
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			const char *prog = lt_probes[i].progs[k];

			if (!s->links[lt_probes[i].id][k])
				continue;
			snprintf(path, sizeof(path), "%s/links/%s", dir, lt_link_name(prog));
			err = bpf_link__pin(s->links[lt_probes[i].id][k], path);
			if (!err)
				err = pin_perm(s, path, 0660);
			if (err)
				return err;
			if (!s->pin_group)
				continue;
			/* a link tells its program's id; without CAP_SYS_ADMIN a reader gets
			 * the program (run statistics, recursion misses) only from a pin */
			snprintf(path, sizeof(path), "%s/progs/%s", dir, prog);
			err = bpf_program__pin(bpf_object__find_program_by_name(s->skel->obj, prog),
					       path);
			if (!err)
				err = pin_perm(s, path, 0660);
			if (err)
				return err;
		}
	}
	return 0;
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

/* Is program `name` one the load options pick? (syscalls: lt_sys_c alone, or the pair) */
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

static bool prog_mode_chosen(const char *name, const struct lt_load_opts *o)
{
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

int lt_suite_open(const struct lt_load_opts *o, struct lt_suite **out)
{
	const char *tp_env = tp_level_env();
	bool perf = perf_links();
	struct bpf_program *p;
	struct lt_suite *s;
	uint64_t cg_id = 0;
	char mnt[512];
	int ctrl;
	int cg_fd = -1, lock_fd = -1, err, ret = LT_FAIL;
	struct stat st;

	/* every check that can fail comes before anything is touched */
	err = check_env();
	if (err)
		return err;
	if (o->pin) {
		err = ensure_bpffs();
		if (err)
			return err;
		/* held until the suite is pinned (or not): loads and unloads take turns */
		err = pin_begin(&lock_fd);
		if (err)
			return err;
		if (stat(LT_PIN_DIR, &st) == 0 && !o->replace) {
			close(lock_fd);
			return lt_error(LT_ALREADY_LOADED,
					"already loaded (pinned at %s): run 'lowtrace unload' "
					"first, or load --replace",
					LT_PIN_DIR);
		}
	}
	ctrl = lt_ident_pick(o->ident_cgroup, NULL, mnt, sizeof(mnt));
	if (ctrl < 0) {
		if (lock_fd >= 0)
			close(lock_fd);
		return lt_error(LT_USAGE, "--identity-cgroup %s: %s", o->ident_cgroup,
				ctrl == -ENOENT ? "no such hierarchy is mounted"
						: "unknown hierarchy");
	}
	if (o->cgroup) {
		cg_fd = open_cgroup(o->cgroup, ctrl, mnt, &cg_id);
		if (cg_fd < 0) {
			if (lock_fd >= 0)
				close(lock_fd);
			return LT_USAGE;
		}
	}
	libbpf_set_print(libbpf_log);
	s = calloc(1, sizeof(*s));
	if (!s) {
		if (cg_fd >= 0)
			close(cg_fd);
		if (lock_fd >= 0)
			close(lock_fd);
		return lt_error(LT_FAIL, "out of memory");
	}
	s->cg_fd = cg_fd;
	s->lock_fd = lock_fd;
	s->probes = o->probes;
	s->pin = o->pin;
	s->pin_group = o->pin && o->pin_group;
	s->pin_gid = o->pin_gid;
	s->replace = o->replace;
	s->skel = lowtrace__open();
	if (!s->skel) {
		ret = lt_error(LT_FAIL, "cannot open the BPF object: %s", strerror(errno));
		goto out;
	}
	s->skel->rodata->lt_cfg_tgid = o->pid;
	s->skel->rodata->lt_cfg_cgroup_id = cg_id;
	s->skel->rodata->lt_cfg_sys_per_pid = o->sys_per_pid;
	for (int i = 0; i < LT_PROBE_SLOTS; i++)
		s->skel->rodata->lt_cfg_rate[i] = o->rate[i];
	s->skel->rodata->lt_cfg_shed = !o->no_shed;
	s->cg_ctrl = ctrl;
	snprintf(s->cg_mnt, sizeof(s->cg_mnt), "%s", mnt);
	s->skel->rodata->lt_cfg_cg_ctrl = s->cg_ctrl;
	s->skel->rodata->lt_cfg_cg_grace_ns =
		(uint64_t)(o->cg_grace_set ? o->cg_grace_s : LT_CG_GRACE_S) * 1000000000ull;
	bpf_map__set_max_entries(s->skel->maps.lt_cg_names, o->cg_cap ? o->cg_cap : LT_CGN_MAX);
	bpf_map__set_max_entries(s->skel->maps.lt_cg_dead, o->cg_cap ? o->cg_cap : LT_CGN_MAX);
	s->tp_probes = tp_level_probes(s, o, tp_preemptible() || tp_env);
	s->tp_level = s->tp_probes != 0;
	s->skel->rodata->lt_cfg_claims = s->tp_level;
	s->skel->rodata->lt_cfg_tp_only = s->tp_level && tp_env && !strcmp(tp_env, "only");
	/* lt_exit_tp claims exits in it where the classic event has no group_dead
	 * (before 6.16; forced only): a perf-run program there may use only
	 * preallocated maps (5.10 rejects the load, with a kernel warning) */
	if (s->tp_level && !tp_preemptible())
		bpf_map__set_map_flags(s->skel->maps.lt_exit_seen, 0);
	bpf_map__set_max_entries(s->skel->maps.lt_events, o->ringbuf_size);
	s->skel->rodata->lt_cfg_ring_size = o->ringbuf_size;
	err = set_autocreate(s->skel->obj, o->probes);
	/* exec, exit and fork count into it; the cgroup tracker frees a dead cgroup's there */
	bpf_map__set_autocreate(s->skel->maps.lt_cg_counts, true);
	if (!err)
		err = set_state(s, o);
	if (!err)
		set_syscalls(s, o);
	if (err) {
		ret = err;
		goto out;
	}
	/* a program outside the table would load unattached: the table names them all */
	bpf_object__for_each_program (p, s->skel->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < lt_nprobes; i++) {
		bool on = (o->probes >> i) & 1;

		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			const char *name = lt_probes[i].progs[k];

			/* a *_tp program only where its level is attached; one hook of two */
			if ((ret = autoload(s, name,
					    on &&
						    (((s->tp_probes >> i) & 1) ||
						     !lt_prog_is_tp_level(name)) &&
						    prog_hook_chosen(s->skel->obj, i, k, perf) &&
						    prog_mode_chosen(name, o))))
				goto out;
		}
		/* the sweep of socket storage; the hash has its reaper */
		for (int k = 0; k < LT_PROBE_ITERS && lt_probes[i].iters[k]; k++)
			if ((ret = autoload(s, lt_probes[i].iters[k],
					    on && !reap_usable(s->skel->obj, i))))
				goto out;
		if (lt_probes[i].reap &&
		    (ret = autoload(s, lt_probes[i].reap, on && reap_usable(s->skel->obj, i))))
			goto out;
	}
	/* never attached: the consumer runs it to announce loss windows (lt_lost_flush) */
	bpf_program__set_autoload(s->skel->progs.lt_lost_flush, true);
	/* cgroup births and deaths: every suite's identity needs them */
	for (int i = 0; i < 3; i++)
		bpf_program__set_autoload(cg_prog(s, i), true);
	/* a classic tracepoint's id is in tracefs: mounted before anything is loaded */
	bpf_object__for_each_program (p, s->skel->obj) {
		if (bpf_program__autoload(p) &&
		    !strncmp(bpf_program__section_name(p), "tracepoint/", 11) &&
		    (err = ensure_tracefs())) {
			ret = err;
			goto out;
		}
	}
	*out = s;
	return LT_OK;
out:
	lt_suite_free(s);
	return ret;
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

struct lt_uw_row *lt_suite_unwind_rows(struct lt_suite *s, uint32_t *cap)
{
	struct bpf_map *m = s->skel->maps.lt_uw_rows;
	size_t len = (size_t)bpf_map__max_entries(m) * sizeof(struct lt_uw_row);
	void *p;

	if (!s->uw_rows) {
		/* the kernel maps whole pages of an mmapable array */
		len = (len + 4095) & ~(size_t)4095;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
		if (p == MAP_FAILED)
			return NULL;
		s->uw_rows = p;
		s->uw_len = len;
	}
	*cap = bpf_map__max_entries(m);
	return s->uw_rows;
}

int lt_suite_unwind_proc(struct lt_suite *s, uint32_t tgid, const struct lt_uw_proc *p)
{
	int fd = bpf_map__fd(s->skel->maps.lt_uw_procs);

	if (!p)
		return bpf_map_delete_elem(fd, &tgid) ? -errno : 0;
	return bpf_map_update_elem(fd, &tgid, p, BPF_ANY) ? -errno : 0;
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

/*
 * Pin into a private directory, then rename: the suite appears whole or not.
 * --replace renames it to lowtrace-new-PID first (whole), then moves the old
 * suite out and the new one in, so a kill at any point leaves something the
 * next lock holder can finish (see recover).
 */
static int pin_suite(struct lt_suite *s)
{
	char tmp[PIN_PATH_MAX], new[PIN_PATH_MAX], old[PIN_PATH_MAX];
	const char *at = tmp;
	struct stat st;
	bool had_old = false;
	int err;

	pin_path(tmp, sizeof(tmp), PIN_TMP);
	pin_path(new, sizeof(new), PIN_NEW);
	pin_path(old, sizeof(old), PIN_OLD);
	err = pin_root_search(s);
	if (err)
		return err;
	err = pin_all(s, tmp);
	if (!err && s->replace) {
		if (rename(tmp, new))
			err = -errno;
		else
			at = new;
		/* the old suite goes only once the new one is attached: nothing is missed */
		if (!err && stat(LT_PIN_DIR, &st) == 0) {
			if (rename(LT_PIN_DIR, old))
				err = -errno;
			had_old = !err;
		}
	}
	if (!err && rename(at, LT_PIN_DIR))
		err = -errno;
	if (err) {
		if (had_old && rename(old, LT_PIN_DIR))
			rm_suite(old);
		rm_suite(at);
		return lt_error(err == -EEXIST || err == -ENOTEMPTY ? LT_ALREADY_LOADED : LT_FAIL,
				"cannot pin under %s: %s", LT_PIN_DIR, strerror(-err));
	}
	if (had_old && (err = rm_suite(old)))
		return lt_error(LT_FAIL, "cannot remove the replaced suite %s: %s", old,
				strerror(-err));
	return LT_OK;
}

struct seed {
	int fd;
	uint64_t seeded, full;
};

static void seed_one(void *ctx, uint64_t id, const char *path, size_t len)
{
	struct seed *sd = ctx;
	struct lt_cg_name n = { .flags = LT_CGN_SEEDED };

	if (!len) {
		path = "/";
		len = 1;
	}
	if (len >= LT_CG_PATH) {
		len = LT_CG_PATH - 1;
		n.flags |= LT_CGN_CUT;
	}
	memcpy(n.path, path, len);
	n.path_len = len;
	for (size_t i = 1; i < len; i++)
		n.level += path[i] == '/';
	n.level += len > 1;
	/* NOEXIST: a mkdir's own entry, made since the attach, is the better one */
	if (!bpf_map_update_elem(sd->fd, &id, &n, BPF_NOEXIST))
		sd->seeded++;
	else if (errno == E2BIG)
		sd->full++;
}

/*
 * The cgroup tracker first, then the names of the cgroups that were there before it (one
 * walk): in that order no cgroup made meanwhile goes unnamed.
 */
static int attach_cgroups(struct lt_suite *s)
{
	struct seed sd = { .fd = bpf_map__fd(s->skel->maps.lt_cg_names) };
	struct lt_cg_stat cs = {};
	__u32 one = 1;

	for (int i = 0; i < 3; i++) {
		s->cg_links[i] = bpf_program__attach(cg_prog(s, i));
		if (!s->cg_links[i])
			return lt_error(LT_FAIL, "cannot attach the cgroup tracker (%s): %s",
					bpf_program__name(cg_prog(s, i)), strerror(errno));
	}
	if (!s->cg_mnt[0])
		return LT_OK;
	lt_ident_walk(s->cg_mnt, seed_one, &sd);
	cs.seeded = sd.seeded;
	cs.full = sd.full;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lt_cg_stat), &one, &cs, 0))
		return lt_error(LT_FAIL, "cannot count the cgroup seed: %s", strerror(errno));
	return LT_OK;
}

static int load_attach(struct lt_suite *s)
{
	struct bpf_program *p;
	int err;

	if (!s->al_leaks) {
		/* preallocated, and unused without --leaks */
		bpf_map__set_max_entries(s->skel->maps.lt_al_live, 1);
		bpf_map__set_max_entries(s->skel->maps.lt_al_pend, 1);
	}
	err = lowtrace__load(s->skel);
	if (err)
		return lt_error(err == -EPERM ? LT_ENV : LT_FAIL,
				"cannot load the BPF programs: %s%s", strerror(-err),
				lt_verbose ? "" : " (rerun with -v for the verifier log)");
	if (bpf_map__fd(s->skel->maps.lt_sweep) >= 0) {
		struct lt_sweep w = { .netns = s->skel->rodata->lt_cfg_netns };
		__u32 key = 0;

		/* whose namespace socket storage's sweep counts: sweepers elsewhere do not */
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lt_sweep), &key, &w, 0))
			return lt_error(LT_FAIL, "cannot set the tcp sweep: %s", strerror(errno));
	}
	if (s->cg_fd >= 0 && s->cg_ctrl == LT_CTRL_V2) {
		/* a v1 one is tested by id (lt_cg_under): no cgroup array */
		__u32 key = 0, val = s->cg_fd;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lt_cgroup), &key, &val, 0))
			return lt_error(LT_FAIL, "cannot set the cgroup filter: %s",
					strerror(errno));
	}
	err = attach_cgroups(s);
	if (err)
		return err;
	for (size_t i = 0; i < lt_nprobes; i++) {
		if (!((s->probes >> i) & 1))
			continue;
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			struct bpf_link **l = &s->links[lt_probes[i].id][k];
			enum bpf_prog_type t;

			p = bpf_object__find_program_by_name(s->skel->obj, lt_probes[i].progs[k]);
			t = bpf_program__type(p);
			if (!bpf_program__autoload(p))
				continue; /* a *_tp program where tracepoints are not preemptible */
			if (t == BPF_PROG_TYPE_PERF_EVENT || t == BPF_PROG_TYPE_KPROBE)
				continue; /* lt_attach_perf, lt_attach_uprobe */
			*l = bpf_program__attach(p);
			if (*l)
				continue;
			return lt_error(LT_FAIL, "cannot attach probe %s (%s): %s",
					lt_probes[i].name, lt_probes[i].progs[k], strerror(errno));
		}
		for (int k = 0; k < LT_PROBE_ITERS && lt_probes[i].iters[k]; k++) {
			p = bpf_object__find_program_by_name(s->skel->obj, lt_probes[i].iters[k]);
			if (!bpf_program__autoload(p))
				continue; /* the hash's reaper sweeps instead */
			s->iters[lt_probes[i].id][k] = bpf_program__attach_iter(p, NULL);
			if (!s->iters[lt_probes[i].id][k])
				return lt_error(LT_FAIL, "cannot attach probe %s (%s): %s",
						lt_probes[i].name, lt_probes[i].iters[k],
						strerror(errno));
		}
	}
	return s->pin ? pin_suite(s) : LT_OK;
}

int lt_suite_load(struct lt_suite *s)
{
	int ret = load_attach(s);

	/* nothing stays attached; the programs and maps go with lt_suite_free */
	if (ret)
		lt_suite_detach(s);
	if (s->cg_fd >= 0) {
		close(s->cg_fd);
		s->cg_fd = -1;
	}
	if (s->lock_fd >= 0) {
		close(s->lock_fd);
		s->lock_fd = -1;
	}
	return ret;
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

static int add_extra(struct lt_suite *s, struct bpf_link *l)
{
	if (s->nextra == LT_EXTRA_LINKS) {
		bpf_link__destroy(l);
		return -E2BIG;
	}
	s->extra[s->nextra++] = l;
	return 0;
}

/* A per-CPU sampling event at freq Hz: the fd, or -errno. */
static int open_sampler(int cpu, uint32_t type, uint64_t config, unsigned int freq)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = type,
		.config = config,
		.freq = 1,
		.sample_freq = freq,
	};
	int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int lt_attach_perf(struct lt_suite *s, const char *prog, unsigned int freq, const char **event)
{
	struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, prog);
	uint32_t type = PERF_TYPE_HARDWARE;
	uint64_t config = PERF_COUNT_HW_CPU_CYCLES;
	int ncpu = libbpf_num_possible_cpus();
	bool any = false;

	if (!p || ncpu <= 0)
		return lt_error(LT_FAIL, "program %s missing from the object", prog);
	*event = "cycles";
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct bpf_link *l;
		int fd = open_sampler(cpu, type, config, freq);

		if (fd == -ENOENT || fd == -EOPNOTSUPP) {
			if (type == PERF_TYPE_HARDWARE) {
				/* no hardware counters (a VM): the software clock */
				type = PERF_TYPE_SOFTWARE;
				config = PERF_COUNT_SW_CPU_CLOCK;
				*event = "cpu-clock";
				cpu--;
			}
			continue;
		}
		if (fd == -ENODEV)
			continue; /* a possible CPU that is not online */
		if (fd < 0)
			return lt_error(fd == -EACCES || fd == -EPERM ? LT_ENV : LT_FAIL,
					"cannot open a perf event on CPU %d: %s", cpu,
					strerror(-fd));
		l = bpf_program__attach_perf_event(p, fd);
		if (!l) {
			int e = errno;

			close(fd);
			return lt_error(LT_FAIL, "cannot attach %s to CPU %d: %s", prog, cpu,
					strerror(e));
		}
		if (add_extra(s, l))
			return lt_error(LT_FAIL, "too many links");
		any = true;
	}
	if (!any)
		return lt_error(LT_ENV, "no CPU has a %s event", *event);
	return LT_OK;
}

int lt_attach_uprobe(struct lt_suite *s, const char *prog, int pid, const char *path, uint64_t off,
		     bool ret)
{
	struct bpf_program *p = bpf_object__find_program_by_name(s->skel->obj, prog);
	struct bpf_link *l;

	if (!p)
		return lt_error(LT_FAIL, "program %s missing from the object", prog);
	l = bpf_program__attach_uprobe(p, ret, pid, path, off);
	if (!l)
		return lt_error(LT_FAIL, "cannot attach a %s at %s+0x%llx: %s",
				ret ? "uretprobe" : "uprobe", path, (unsigned long long)off,
				strerror(errno));
	if (add_extra(s, l))
		return lt_error(LT_FAIL, "too many links");
	return LT_OK;
}

int lt_suite_map_fd(struct lt_suite *s, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, name);

	return m ? bpf_map__fd(m) : -1;
}

void lt_suite_detach(struct lt_suite *s)
{
	for (int i = 0; i < s->nextra; i++)
		bpf_link__destroy(s->extra[i]);
	s->nextra = 0;
	for (int i = 0; i < 3; i++) {
		bpf_link__destroy(s->cg_links[i]);
		s->cg_links[i] = NULL;
	}
	for (int i = 0; i < LT_PROBE_SLOTS; i++) {
		for (int k = 0; k < LT_PROBE_PROGS; k++) {
			bpf_link__destroy(s->links[i][k]); /* a pinned link stays attached */
			s->links[i][k] = NULL;
		}
		for (int k = 0; k < LT_PROBE_ITERS; k++) {
			bpf_link__destroy(s->iters[i][k]);
			s->iters[i][k] = NULL;
		}
	}
}

void lt_suite_free(struct lt_suite *s)
{
	if (!s)
		return;
	lt_suite_detach(s);
	if (s->uw_rows)
		munmap(s->uw_rows, s->uw_len);
	lowtrace__destroy(s->skel);
	if (s->cg_fd >= 0)
		close(s->cg_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s);
}

int lt_unload(void)
{
	char names[1][LT_LEFTOVER_LEN], old[PIN_PATH_MAX];
	struct stat st;
	bool left;
	int err = check_privileges(), fd;

	if (err)
		return err;
	left = lt_pins_leftovers(names, 1) > 0;
	if (stat(LT_PIN_DIR, &st) && !left)
		return lt_error(errno == ENOENT ? LT_NOT_LOADED : LT_FAIL, "not loaded: %s: %s",
				LT_PIN_DIR, strerror(errno));
	err = pin_begin(&fd);
	if (err)
		return err;
	if (stat(LT_PIN_DIR, &st)) {
		close(fd);
		if (left)
			return LT_OK; /* only leftovers, now gone */
		return lt_error(LT_NOT_LOADED, "not loaded: %s: %s", LT_PIN_DIR, strerror(ENOENT));
	}
	/* out of the way in one step: a kill from here on leaves lowtrace-old-PID */
	pin_path(old, sizeof(old), PIN_OLD);
	if (rename(LT_PIN_DIR, old))
		err = -errno;
	else
		err = rm_suite(old);
	close(fd);
	if (err)
		return lt_error(LT_FAIL, "cannot remove %s: %s", LT_PIN_DIR, strerror(-err));
	return LT_OK;
}

void lt_suite_handles(struct lt_suite *s, struct lt_handles *h)
{
	h->ring_fd = bpf_map__fd(s->skel->maps.lt_events);
	h->stats_fd = bpf_map__fd(s->skel->maps.lt_stats);
	h->seen_fd = bpf_map__fd(s->skel->maps.lt_seen);
	h->flush_fd = bpf_program__fd(s->skel->progs.lt_lost_flush);
	h->dir_fd = -1;
	h->suite = s;
}
