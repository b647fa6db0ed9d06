// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pin directory (kernel_pin.h): a suite pinned whole or not at all, replaced, unloaded,
 * all under one lock on bpffs' root, and what loaders killed half-way left finished by the
 * next holder of the lock. With --pin-group, the modes that let the group's readers in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_int.h"
#include "kernel_pin.h"
#include "lowtrace.h"

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

/*
 * Whether the suite pinned at dir writes (lt_live in lt_common.bpf.h, pinned as maps/live):
 * 0 or -errno. A suite pinned before the flag has none, and one whose flag is not one
 * 32-bit word is another lowtrace's: both are left as they are (0).
 */
static int set_live(const char *dir, bool on)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi), key = 0, v = on;
	char path[PATH_MAX];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/maps/live", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		err = -errno;
	else if (mi.type == BPF_MAP_TYPE_ARRAY && mi.value_size == sizeof(v) &&
		 mi.max_entries == 1 && bpf_map_update_elem(fd, &key, &v, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

/*
 * The suite at `to` takes over from the one at `from` (if any): `to` live first, then `from`
 * not, two stores apart, so an event is written by one of them, or by both if its programs
 * run across those two stores, never by neither.
 */
static int handover(const char *to, const char *from)
{
	struct stat st;
	int err = set_live(to, true);

	if (!err && stat(from, &st) == 0)
		err = set_live(from, false);
	return err;
}

/* A pinned suite: off (set_live), then its links, so the programs stop before their maps go. */
static int rm_suite(const char *dir)
{
	char links[PATH_MAX];
	int err;

	set_live(dir, false); /* the kernel releases the links later: no record after this */
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
		r = handover(path, LT_PIN_DIR);
		if (!r && stat(LT_PIN_DIR, &st) == 0 && rename(LT_PIN_DIR, old))
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
int pin_begin(int *fd)
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

/* dir and its maps/, links/ and (for the pin group's readers) progs/ */
static int pin_dirs(const struct lt_suite *s, const char *dir)
{
	const char *sub[] = { "maps", "links", s->pin_group ? "progs" : NULL };
	char path[PATH_MAX];
	int err = pin_mkdir(s, dir);

	for (int i = 0; i < 3 && sub[i] && !err; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, sub[i]);
		err = pin_mkdir(s, path);
	}
	return err;
}

/* the maps the load created, as maps/NAME */
static int pin_maps(const struct lt_suite *s, const char *dir)
{
	char path[PATH_MAX];
	struct bpf_map *m;
	int err;

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
	return 0;
}

/* a program the pin group's readers run or read, at `path` */
static int pin_prog(const struct lt_suite *s, struct bpf_program *p, const char *path)
{
	int err = bpf_program__pin(p, path);

	return err ? err : pin_perm(s, path, 0660);
}

/* link `l` of program `name` as links/NAME; with the pin group and `p`, p as progs/NAME */
static int pin_link(const struct lt_suite *s, const char *dir, struct bpf_link *l, const char *name,
		    struct bpf_program *p)
{
	char path[PATH_MAX];
	int err;

	snprintf(path, sizeof(path), "%s/links/%s", dir, lt_link_name(name));
	err = bpf_link__pin(l, path);
	if (!err)
		err = pin_perm(s, path, 0660);
	if (err || !p || !s->pin_group)
		return err;
	/* a link tells its program's id; without CAP_SYS_ADMIN a reader gets
	 * the program (run statistics, recursion misses) only from a pin */
	snprintf(path, sizeof(path), "%s/progs/%s", dir, name);
	return pin_prog(s, p, path);
}

/* probe i's reaper, iterators and links (those its options attached) */
static int pin_probe(const struct lt_suite *s, const char *dir, size_t i)
{
	const struct lt_probe *r = &lt_probes[i];
	struct bpf_object *obj = s->skel->obj;
	struct bpf_program *reap = r->reap ? bpf_object__find_program_by_name(obj, r->reap) : NULL;
	char path[PATH_MAX];
	int err = 0;

	if (reap && bpf_program__fd(reap) >= 0) {
		/* the group's consumers run it: they sweep */
		snprintf(path, sizeof(path), "%s/%s", dir, lt_link_name(r->reap));
		err = pin_prog(s, reap, path);
	}
	/* the group's consumers run an iterator: reading its pin runs it */
	for (int k = 0; k < LT_PROBE_ITERS && r->iters[k] && !err; k++)
		if (s->iters[r->id][k])
			err = pin_link(s, dir, s->iters[r->id][k], r->iters[k], NULL);
	for (int k = 0; k < LT_PROBE_PROGS && r->progs[k] && !err; k++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, r->progs[k]);
		char name[128];
		bool set = false;

		/* a syscall-set program: each syscall's link as NAME-SYSCALL, the program once */
		for (int n = 0; n < LT_PROBE_NSYS && r->syscalls[n] && !err; n++) {
			if (!s->sys_links[r->id][k][n])
				continue;
			snprintf(name, sizeof(name), "%s-%s", r->progs[k], r->syscalls[n]);
			err = pin_link(s, dir, s->sys_links[r->id][k][n], name, NULL);
			set = true;
		}
		if (set && !err && s->pin_group) {
			snprintf(path, sizeof(path), "%s/progs/%s", dir, r->progs[k]);
			err = pin_prog(s, p, path);
		}
		if (!set && !err && s->links[r->id][k])
			err = pin_link(s, dir, s->links[r->id][k], r->progs[k], p);
	}
	return err;
}

/* Everything a reader opens or a consumer runs, pinned under dir with its mode. */
static int pin_all(struct lt_suite *s, const char *dir)
{
	char path[PATH_MAX];
	int err = pin_dirs(s, dir);

	if (!err)
		err = pin_maps(s, dir);
	for (int i = 0; i < 3 && !err; i++)
		if (s->cg_links[i])
			err = pin_link(s, dir, s->cg_links[i], bpf_program__name(cg_prog(s, i)),
				       cg_prog(s, i));
	if (!err) {
		/* the group's events runs it to claim loss windows */
		snprintf(path, sizeof(path), "%s/lost_flush", dir);
		err = pin_prog(s, s->skel->progs.lt_lost_flush, path);
	}
	for (size_t i = 0; i < lt_nprobes && !err; i++)
		err = pin_probe(s, dir, i);
	return err;
}

/*
 * Pin into a private directory, then rename: the suite appears whole or not.
 * --replace renames it to lowtrace-new-PID first (whole), then moves the old
 * suite out and the new one in, so a kill at any point leaves something the
 * next lock holder can finish (see recover).
 */
int pin_suite(struct lt_suite *s)
{
	char tmp[PIN_PATH_MAX], new[PIN_PATH_MAX], old[PIN_PATH_MAX];
	const char *at = tmp;
	struct stat st;
	bool had_old = false, handed = false;
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
		/* the new suite records from here, the old one no more: nothing missed, nothing
		 * twice; the old one's links go only after (the kernel releases them later) */
		if (!err && !(err = handover(new, LT_PIN_DIR)))
			handed = true;
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
		else if (handed)
			set_live(LT_PIN_DIR,
				 true); /* the old suite records again, then the new one goes */
		rm_suite(at);
		return lt_error(err == -EEXIST || err == -ENOTEMPTY ? LT_ALREADY_LOADED : LT_FAIL,
				"cannot pin under %s: %s", LT_PIN_DIR, strerror(-err));
	}
	if (had_old && (err = rm_suite(old)))
		return lt_error(LT_FAIL, "cannot remove the replaced suite %s: %s", old,
				strerror(-err));
	return LT_OK;
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
