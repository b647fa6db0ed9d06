// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ancestry's seed: the processes already running when exec is attached get an lt_procs entry
 * (their image's name from /proc/PID/exe, a kernel thread's "[comm]"), so that the first
 * execs after a load name their ancestors too. The exec probe's own programs keep the map
 * from then on (progs/exec.bpf.c); the seed runs just before they are attached (kernel_load.c
 * says why) and never replaces an entry (NOEXIST). With --replace a running process keeps the
 * entry the replaced suite had for it (its exec's real exec_id, or that suite's seed), so the
 * ids a consumer has seen stay the same across the replace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_int.h"
#include "lowtrace.h"

/* a numeric /proc entry: its pid; 0 otherwise */
static uint32_t proc_pid(const char *name)
{
	uint64_t v = 0;

	if (!*name)
		return 0;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || v > 0x3fffffff)
			return 0;
		v = v * 10 + (uint64_t)(*name - '0');
	}
	return (uint32_t)v;
}

/*
 * The name a process's image goes by: its exe link's target (the kernel's text: treated as
 * bytes, never followed), else, for a kernel thread, "[comm]". The length, 0 if neither.
 */
static size_t proc_name(int proc, uint32_t pid, char *name, size_t size, bool *cut)
{
	char path[64], comm[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%u/exe", pid);
	n = readlinkat(proc, path, name, size);
	if (n > 0) {
		*cut = (size_t)n >= size;
		return (size_t)n >= size ? size - 1 : (size_t)n;
	}
	snprintf(path, sizeof(path), "%u/comm", pid);
	fd = openat(proc, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	if (comm[n - 1] == '\n')
		n--;
	*cut = false;
	return (size_t)snprintf(name, size, "[%.*s]", (int)n, comm);
}

/* The replaced suite's lt_procs, if it has one of this layout: an fd, or -1. */
static int old_procs(const struct lt_suite *s)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int fd;

	if (!s->replace)
		return -1;
	fd = pin_get_ro(LT_PIN_DIR "/maps/lt_procs");
	if (fd < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len) || mi.key_size != sizeof(uint32_t) ||
	    mi.value_size != sizeof(struct lt_proc)) {
		close(fd); /* another lowtrace's layout: seed from /proc alone */
		return -1;
	}
	return fd;
}

/* pid's entry in the replaced suite's table, if it has a sound one */
static bool old_entry(int fd, uint32_t pid, struct lt_proc *v)
{
	return fd >= 0 && bpf_map_lookup_elem(fd, &pid, v) == 0 && v->exec_id &&
	       v->name_len < LT_ANC_NAME;
}

int lt_seed_procs(struct lt_suite *s)
{
	int fd = bpf_map__fd(s->skel->maps.lt_procs), proc, old;
	uint64_t base, i = 0;
	struct timespec ts;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return LT_OK; /* exec is not loaded */
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = proc >= 0 ? fdopendir(dup(proc)) : NULL;
	if (!d) {
		if (proc >= 0)
			close(proc);
		return lt_error(LT_ENV, "cannot read /proc for the ancestry's seed: %s",
				strerror(errno));
	}
	old = old_procs(s);
	/* the seed's exec_ids count down from now, before the attach: below every exec's */
	clock_gettime(CLOCK_BOOTTIME, &ts);
	base = ((uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec) & ~LT_EXEC_ID_CPU;
	while ((de = readdir(d))) {
		uint32_t pid = proc_pid(de->d_name);
		char buf[LT_ANC_NAME + 1];
		struct lt_proc v = {};
		bool cut = false;
		size_t n;

		if (!pid)
			continue;
		if (old_entry(old, pid, &v)) {
			bpf_map_update_elem(fd, &pid, &v, BPF_NOEXIST);
			continue;
		}
		n = proc_name(proc, pid, buf, sizeof(buf) - 1, &cut);
		if (!n)
			continue; /* gone meanwhile */
		if (n > LT_ANC_NAME - 1) {
			n = LT_ANC_NAME - 1;
			cut = true;
		}
		memcpy(v.name, buf, n);
		v.name_len = n;
		v.flags = LT_ANC_SEEDED | (cut ? LT_ANC_NAME_TRUNC : 0);
		/* counted down from the seed's time, all 12 CPU bits set: no exec's */
		v.exec_id = (base - (++i << 12)) | LT_EXEC_ID_CPU;
		/* NOEXIST: an exec since the attach wrote the better one; a full LRU makes room */
		bpf_map_update_elem(fd, &pid, &v, BPF_NOEXIST);
	}
	closedir(d);
	close(proc);
	if (old >= 0)
		close(old);
	return LT_OK;
}
