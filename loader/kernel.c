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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_int.h"
#include "lowtrace.h"

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

static int rm_tree_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *d;
	struct dirent *e;
	int err = 0;

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
		if (rm_tree_at(dirfd(d), e->d_name))
			err = -errno;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT)
		err = -errno;
	return err;
}

static int pin_all(struct lt_suite *s, const char *dir)
{
	char path[PATH_MAX];
	struct bpf_map *m;
	int err;

	snprintf(path, sizeof(path), "%s/maps", dir);
	if (mkdir(dir, 0700) || mkdir(path, 0700))
		return -errno;
	snprintf(path, sizeof(path), "%s/links", dir);
	if (mkdir(path, 0700))
		return -errno;
	bpf_object__for_each_map (m, s->skel->obj) {
		const char *name = bpf_map__name(m);
		const char *dot = strrchr(name, '.');

		if (bpf_map__fd(m) < 0)
			continue; /* not created: only a probe that is not loaded uses it */
		/* internal maps are named "<obj>.rodata": pin as "rodata" */
		snprintf(path, sizeof(path), "%s/maps/%s", dir, dot ? dot + 1 : name);
		err = bpf_map__pin(m, path);
		if (err)
			return err;
	}
	for (size_t i = 0; i < lt_nprobes; i++) {
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			if (!s->links[lt_probes[i].id][k])
				continue;
			snprintf(path, sizeof(path), "%s/links/%s", dir,
				 lt_link_name(lt_probes[i].progs[k]));
			err = bpf_link__pin(s->links[lt_probes[i].id][k], path);
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
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].own[k]; k++) {
			struct bpf_map *m = bpf_object__find_map_by_name(obj, lt_probes[i].own[k]);
			bool used = false;

			if (!m)
				return lt_error(LT_FAIL, "map %s missing from the object",
						lt_probes[i].own[k]);
			/* a map shared by several probes: created if any of them is loaded */
			for (size_t j = 0; j < lt_nprobes && !used; j++)
				for (int n = 0; n < LT_PROBE_PROGS && lt_probes[j].own[n]; n++)
					if (((probes >> j) & 1) &&
					    !strcmp(lt_probes[j].own[n], lt_probes[i].own[k]))
						used = true;
			bpf_map__set_autocreate(m, used);
		}
	}
	return LT_OK;
}

static int open_cgroup(const char *path, uint64_t *id)
{
	struct statfs fs;
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return lt_error(LT_USAGE, "--cgroup %s: %s", path, strerror(errno)), -1;
	if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC || fstat(fd, &st)) {
		close(fd);
		return lt_error(LT_USAGE, "--cgroup %s: not a cgroup v2 directory", path), -1;
	}
	*id = st.st_ino; /* a cgroup v2 id is its kernfs inode number */
	return fd;
}

int lt_suite_open(const struct lt_load_opts *o, struct lt_suite **out)
{
	struct bpf_program *p;
	struct lt_suite *s;
	uint64_t cg_id = 0;
	int cg_fd = -1, err, ret = LT_FAIL;
	struct stat st;

	/* every check that can fail comes before anything is touched */
	err = check_env();
	if (err)
		return err;
	if (o->pin) {
		err = ensure_bpffs();
		if (err)
			return err;
		if (stat(LT_PIN_DIR, &st) == 0 && !o->replace)
			return lt_error(LT_ALREADY_LOADED,
					"already loaded (pinned at %s): run 'lowtrace unload' "
					"first, or load --replace",
					LT_PIN_DIR);
	}
	if (o->cgroup) {
		cg_fd = open_cgroup(o->cgroup, &cg_id);
		if (cg_fd < 0)
			return LT_USAGE;
	}
	libbpf_set_print(libbpf_log);
	s = calloc(1, sizeof(*s));
	if (!s) {
		if (cg_fd >= 0)
			close(cg_fd);
		return lt_error(LT_FAIL, "out of memory");
	}
	s->cg_fd = cg_fd;
	s->probes = o->probes;
	s->pin = o->pin;
	s->replace = o->replace;
	s->skel = lowtrace__open();
	if (!s->skel) {
		ret = lt_error(LT_FAIL, "cannot open the BPF object: %s", strerror(errno));
		goto out;
	}
	s->skel->rodata->lt_cfg_tgid = o->pid;
	s->skel->rodata->lt_cfg_cgroup_id = cg_id;
	s->skel->rodata->lt_cfg_sys_per_pid = o->sys_per_pid;
	bpf_map__set_max_entries(s->skel->maps.lt_events, o->ringbuf_size);
	err = set_autocreate(s->skel->obj, o->probes);
	if (err) {
		ret = err;
		goto out;
	}
	/* a program outside the table would load unattached: the table names them all */
	bpf_object__for_each_program (p, s->skel->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < lt_nprobes; i++) {
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			p = bpf_object__find_program_by_name(s->skel->obj, lt_probes[i].progs[k]);
			if (!p) {
				ret = lt_error(LT_FAIL, "program %s missing from the object",
					       lt_probes[i].progs[k]);
				goto out;
			}
			bpf_program__set_autoload(p, (o->probes >> i) & 1);
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

void lt_suite_set_alloc(struct lt_suite *s, uint64_t mean, const uint64_t *ival, bool leaks)
{
	s->skel->rodata->lt_cfg_al_mean = mean;
	s->skel->rodata->lt_cfg_al_leaks = leaks;
	if (ival)
		memcpy((void *)s->skel->rodata->lt_cfg_al_ival, ival,
		       sizeof(s->skel->rodata->lt_cfg_al_ival));
	s->al_leaks = leaks;
}

/* Pin into a private directory, then rename: the suite appears whole or not. */
static int pin_suite(struct lt_suite *s)
{
	char tmp[64];
	struct stat st;
	int err;

	/* bpffs rejects dots in names, hence no ".tmp" */
	snprintf(tmp, sizeof(tmp), "%s/lowtrace-tmp-%d", LT_PIN_ROOT, (int)getpid());
	err = pin_all(s, tmp);
	/* --replace: the old suite goes only once the new one is attached */
	if (!err && s->replace && stat(LT_PIN_DIR, &st) == 0 && lt_unload() != LT_OK)
		err = -EBUSY;
	if (!err && rename(tmp, LT_PIN_DIR))
		err = -errno;
	if (err) {
		rm_tree_at(AT_FDCWD, tmp);
		return lt_error(err == -EEXIST || err == -ENOTEMPTY ? LT_ALREADY_LOADED : LT_FAIL,
				"cannot pin under %s: %s", LT_PIN_DIR, strerror(-err));
	}
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
	if (s->cg_fd >= 0) {
		__u32 key = 0, val = s->cg_fd;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lt_cgroup), &key, &val, 0))
			return lt_error(LT_FAIL, "cannot set the cgroup filter: %s",
					strerror(errno));
	}
	for (size_t i = 0; i < lt_nprobes; i++) {
		if (!((s->probes >> i) & 1))
			continue;
		for (int k = 0; k < LT_PROBE_PROGS && lt_probes[i].progs[k]; k++) {
			struct bpf_link **l = &s->links[lt_probes[i].id][k];
			enum bpf_prog_type t;

			p = bpf_object__find_program_by_name(s->skel->obj, lt_probes[i].progs[k]);
			t = bpf_program__type(p);
			if (t == BPF_PROG_TYPE_PERF_EVENT || t == BPF_PROG_TYPE_KPROBE)
				continue; /* lt_attach_perf, lt_attach_uprobe */
			*l = bpf_program__attach(p);
			if (*l)
				continue;
			return lt_error(LT_FAIL, "cannot attach probe %s (%s): %s",
					lt_probes[i].name, lt_probes[i].progs[k], strerror(errno));
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
	for (int i = 0; i < LT_PROBE_SLOTS; i++) {
		for (int k = 0; k < LT_PROBE_PROGS; k++) {
			bpf_link__destroy(s->links[i][k]); /* a pinned link stays attached */
			s->links[i][k] = NULL;
		}
	}
}

void lt_suite_free(struct lt_suite *s)
{
	if (!s)
		return;
	lt_suite_detach(s);
	lowtrace__destroy(s->skel);
	if (s->cg_fd >= 0)
		close(s->cg_fd);
	free(s);
}

int lt_unload(void)
{
	struct stat st;
	int err = check_privileges();

	if (err)
		return err;
	if (stat(LT_PIN_DIR, &st))
		return lt_error(errno == ENOENT ? LT_NOT_LOADED : LT_FAIL, "not loaded: %s: %s",
				LT_PIN_DIR, strerror(errno));
	/* links first so the programs stop before their maps go */
	err = rm_tree_at(AT_FDCWD, LT_PIN_DIR "/links");
	if (!err)
		err = rm_tree_at(AT_FDCWD, LT_PIN_DIR);
	if (err)
		return lt_error(LT_FAIL, "cannot remove %s: %s", LT_PIN_DIR, strerror(-err));
	return LT_OK;
}

void lt_suite_handles(struct lt_suite *s, struct lt_handles *h)
{
	h->ring_fd = bpf_map__fd(s->skel->maps.lt_events);
	h->stats_fd = bpf_map__fd(s->skel->maps.lt_stats);
	h->dir_fd = -1;
	h->suite = s;
}
