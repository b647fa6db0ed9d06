// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User space for the symbolizer: snapshots of /proc/PID/maps (the executable file mappings and
 * [vdso]), their files cached by identity, and user address -> frame.
 */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "lowtrace.h"
#include "rootfile.h"
#include "sym_int.h"

/* an address in no mapping of a live process re-reads its maps at most this often */
#define REFRESH_NS 1000000000ull
/*
 * A new snapshot is read again twice while the process lives: one taken in the middle of an
 * exec (new comm, ELF not mapped yet) or before ld.so mapped the libraries would otherwise miss
 * them if the process exits before the end of the run.
 */
#define RECHECKS 2
#define RECHECK_FIRST_NS 50000000ull
#define RECHECK_NEXT_NS 500000000ull

/* what is left of fd, up to max bytes, NUL-terminated; NULL and errno */
char *read_fd_max(int fd, size_t max)
{
	size_t cap = 16384, n = 0;
	char *b = NULL, *q;
	int e;

	for (;;) {
		ssize_t r;

		if (cap - n < 4096 || !b) {
			q = realloc(b, b ? cap * 2 : cap);
			if (!q) {
				e = ENOMEM;
				goto fail;
			}
			cap = b ? cap * 2 : cap;
			b = q;
		}
		r = read(fd, b + n, (n + (cap - n - 1) > max ? max - n : cap - n - 1));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			goto fail;
		}
		if (!r)
			break;
		n += (size_t)r;
		if (n >= max)
			break;
	}
	b[n] = 0;
	return b;
fail:
	free(b);
	errno = e;
	return NULL;
}

char *read_all(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	char *b;

	if (fd < 0)
		return NULL;
	b = read_fd_max(fd, SIZE_MAX - 1);
	e = errno;
	close(fd);
	errno = e;
	return b;
}

/* "/proc/PID/maps" gone: the process is */
int proc_err(int e)
{
	return e == ENOENT || e == ESRCH ? -ESRCH : -e;
}

/* one line of /proc/PID/maps (NUL-terminated, modified: " (deleted)" is cut) */
bool parse_maps_line(char *line, struct maps_line *m)
{
	unsigned long long start, end, pgoff, ino;
	size_t len;
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, m->perms, &pgoff,
		   &m->maj, &m->min, &ino, &n) < 7 ||
	    !n || end <= start)
		return false;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->ino = ino;
	m->path = line + n;
	len = strlen(m->path);
	if (len > 10 && !strcmp(m->path + len - 10, " (deleted)"))
		m->path[len - 10] = 0;
	return true;
}

/* next line of a buffer, NUL-terminated in place; NULL at the end */
char *next_line(char **cur)
{
	char *l = *cur, *nl;

	if (!*l)
		return NULL;
	nl = strchr(l, '\n');
	if (nl) {
		*nl = 0;
		*cur = nl + 1;
	} else {
		*cur = l + strlen(l);
	}
	return l;
}

static void ident_of(const struct stat *st, struct ident *id)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

/*
 * The file of a mapping, opened: /proc/PID/map_files/RANGE (the very file, deleted or not; its
 * path in mf), else PATH inside the process's root (mf ""), when it is still the same inode.
 * The fd (O_RDONLY) and its identity in *id, or -1; never a device (opening one may have
 * effects), never a file outside the process's root.
 */
int map_file_open(uint32_t pid, const struct maps_line *m, struct ident *id, char *mf, size_t len)
{
	struct stat st, st2;
	int n, fd, root;

	n = snprintf(mf, len, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	if (n > 0 && (size_t)n < len && !stat(mf, &st)) {
		if (!S_ISREG(st.st_mode))
			return -1;
		fd = open(mf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 && !fstat(fd, &st2) && st2.st_dev == st.st_dev &&
		    st2.st_ino == st.st_ino) {
			ident_of(&st2, id);
			return fd;
		}
		if (fd >= 0)
			close(fd);
	}
	if (len)
		mf[0] = 0;
	root = lt_proc_root(pid);
	if (root < 0)
		return -1;
	fd = lt_root_open(root, m->path, &st);
	close(root);
	if (fd < 0)
		return -1;
	if (st.st_ino != m->ino) {
		close(fd);
		return -1;
	}
	ident_of(&st, id);
	return fd;
}

static uint64_t ident_hash(const struct ident *id)
{
	return lt_hash_mix(
		id->dev ^ lt_hash_mix(id->ino ^ lt_hash_mix(id->size ^ lt_hash_mix(id->mtime_ns))));
}

static struct lt_mfile *file_new(struct lt_syms *s, const char *path, struct lt_elf *e)
{
	struct lt_mfile *f;

	if (LT_GROW(s->filev, s->filecap, s->nfile + 1))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	f->elf = e;
	s->filev[s->nfile++] = f;
	return f;
}

struct lt_mfile *file_get(struct lt_syms *s, uint32_t pid, const struct maps_line *m)
{
	char mf[PATH_BUF];
	struct ident id = { makedev(m->maj, m->min), m->ino, 0, 0 };
	struct lt_elf *e = NULL;
	struct lt_mfile *f;
	int fd = map_file_open(pid, m, &id, mf, sizeof(mf));
	uint64_t key = ident_hash(&id);

	for (struct hnode *n = NULL; (n = ht_find(&s->files, key, n));) {
		f = (struct lt_mfile *)n;
		if (f->dev != id.dev || f->ino != id.ino || f->size != id.size ||
		    f->mtime_ns != id.mtime_ns)
			continue;
		if (!strcmp(f->path, m->path)) {
			if (fd >= 0)
				close(fd);
			return f;
		}
		e = f->elf; /* a hard link: same contents, its own path */
	}
	if (e && fd >= 0)
		close(fd);
	if (!e) {
		e = elf_get(s, fd); /* takes fd */
		if (!e)
			return NULL;
	}
	f = file_new(s, m->path, e);
	if (!f)
		return NULL;
	f->dev = id.dev;
	f->ino = id.ino;
	f->size = id.size;
	f->mtime_ns = id.mtime_ns;
	ht_add(&s->files, &f->node, key); /* on failure usable, just not found again */
	return f;
}

/* [vdso]: the same image in every 64-bit process, so read our own */
struct lt_mfile *vdso_file(struct lt_syms *s, uint64_t map_len)
{
	const Elf64_Ehdr *eh;
	struct lt_elf *e;
	uint64_t len, page = (uint64_t)sysconf(_SC_PAGESIZE);
	Elf *elf;

	if (!s->vdso_tried) {
		s->vdso_tried = true;
		eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
		if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
		    eh->e_ident[EI_CLASS] != ELFCLASS64)
			return NULL;
		len = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
		if (eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize > len)
			len = eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize;
		if (len < sizeof(*eh) || len > (1 << 20))
			return NULL;
		e = elf_new(s);
		if (!e)
			return NULL;
		e->image = malloc(len);
		if (!e->image) {
			e->parsed = true;
			return NULL;
		}
		memcpy(e->image, eh, len);
		e->image_len = len;
		elf = elf_memory(e->image, len);
		if (elf) {
			e->build_id = elf_build_id(elf);
			elf_read_loads(elf, &e->loads, &e->nloads);
			elf_end(elf);
		}
		s->vdso = file_new(s, "[vdso]", e);
		if (s->vdso)
			s->vdso->size = len;
	}
	/* another vdso (a 32-bit process) has another size */
	if (!s->vdso || (s->vdso->size + page - 1) / page * page != map_len)
		return NULL;
	return s->vdso;
}

/* field 22 of a /proc/PID/stat: start time in clock ticks after boot; 0 when unreadable */
static uint64_t proc_stat_start(const char *b)
{
	const char *c = strrchr(b, ')');
	unsigned long long v = 0;

	/* fields 3..21 are skipped */
	if (!c || sscanf(c + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &v) != 1)
		v = 0;
	return v;
}

static uint64_t proc_start_time(uint32_t pid)
{
	char p[64], *b;
	uint64_t v;

	snprintf(p, sizeof(p), "/proc/%u/stat", pid);
	b = read_all(p);
	if (!b)
		return 0;
	v = proc_stat_start(b);
	free(b);
	return v;
}

static int map_cmp(const void *a, const void *b)
{
	const struct lt_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void copy_comm(char *dst, const char *comm)
{
	size_t n = comm ? strnlen(comm, COMM_LEN - 1) : 0;

	if (n)
		memcpy(dst, comm, n);
	dst[n] = 0;
}

/* does [start, end) overlap a mapping of sn (sorted)? */
static bool snap_overlaps(const struct lt_snap *sn, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = sn->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sn->maps[mid].start < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && sn->maps[lo - 1].end > start;
}

/*
 * A refresh only adds mappings where the snapshot had none (dlopen): a range that was remapped
 * keeps the old file, which the addresses sampled before still belong to.
 */
static int snap_merge(struct lt_snap *old, struct lt_map *maps, size_t n, struct lt_snap **out)
{
	size_t k = old->nmaps, cap = old->nmaps;

	for (size_t i = 0; i < n; i++) {
		if (snap_overlaps(old, maps[i].start, maps[i].end))
			continue;
		if (LT_GROW(old->maps, cap, k + 1))
			break;
		old->maps[k++] = maps[i];
	}
	free(maps);
	old->nmaps = k;
	qsort(old->maps, k, sizeof(*old->maps), map_cmp);
	*out = old;
	return 0;
}

static void jit_refresh(struct lt_syms *s, struct lt_snap *sn, uint32_t tgid);

/* read /proc/TGID/maps into a new snapshot, or into `old` (a refresh) */
static int snap_take(struct lt_syms *s, uint32_t tgid, const char *comm, struct lt_snap *old,
		     struct lt_snap **out)
{
	char p[64], *buf, *cur, *line;
	struct lt_map *maps = NULL;
	size_t n = 0, cap = 0;
	struct lt_snap *sn;
	struct stat exe;
	uint64_t exe_dev = 0, exe_ino = 0, start;
	bool have_exe;

	if (!tgid)
		return -ESRCH;
	snprintf(p, sizeof(p), "/proc/%u/exe", tgid);
	have_exe = !stat(p, &exe);
	if (have_exe) {
		exe_dev = exe.st_dev;
		exe_ino = exe.st_ino;
	}
	start = proc_start_time(tgid);
	snprintf(p, sizeof(p), "/proc/%u/maps", tgid);
	buf = read_all(p);
	if (!buf)
		return proc_err(errno);
	s->st.snapshots++;
	if (old &&
	    (old->exe_dev != exe_dev || old->exe_ino != exe_ino || old->start_time != start)) {
		free(buf);
		return -ESTALE; /* exec'd or another process: the old snapshot stays as it is */
	}
	cur = buf;
	while ((line = next_line(&cur))) {
		struct maps_line m;
		struct lt_mfile *f;

		if (!parse_maps_line(line, &m) || m.perms[2] != 'x')
			continue;
		if (!strcmp(m.path, "[vdso]"))
			f = vdso_file(s, m.end - m.start);
		else if (m.path[0] == '/')
			f = file_get(s, tgid, &m);
		else
			continue;
		if (!f)
			continue;
		if (LT_GROW(maps, cap, n + 1)) {
			free(buf);
			free(maps);
			return -ENOMEM;
		}
		maps[n++] = (struct lt_map){ m.start, m.end, m.pgoff, f };
	}
	free(buf);
	/* a zombie or a kernel thread: nothing to keep */
	if (!n && !have_exe) {
		free(maps);
		return -ESRCH;
	}
	qsort(maps, n, sizeof(*maps), map_cmp);
	if (old)
		return snap_merge(old, maps, n, out);
	sn = calloc(1, sizeof(*sn));
	if (!sn || LT_GROW(s->snapv, s->snapcap, s->nsnap + 1) ||
	    ht_add(&s->snaps, &sn->node, tgid)) {
		free(sn);
		free(maps);
		return -ENOMEM;
	}
	s->snapv[s->nsnap++] = sn;
	copy_comm(sn->comm, comm);
	sn->seq = ++s->seq;
	sn->maps = maps;
	sn->nmaps = n;
	sn->exe_dev = exe_dev;
	sn->exe_ino = exe_ino;
	sn->start_time = start;
	sn->read_ns = lt_now_ns(CLOCK_MONOTONIC);
	sn->rechecks = RECHECKS;
	sn->recheck_ns = sn->read_ns + RECHECK_FIRST_NS;
	jit_refresh(s, sn, tgid);
	*out = sn;
	return 0;
}

/* the snapshot of (tgid, comm), else (any_comm) the newest of tgid */
static struct lt_snap *snap_find(const struct lt_syms *s, uint32_t tgid, const char *comm,
				 bool any_comm)
{
	struct lt_snap *best = NULL, *sn;
	char c[COMM_LEN];

	copy_comm(c, comm);
	for (struct hnode *n = NULL; (n = ht_find(&s->snaps, tgid, n));) {
		sn = (struct lt_snap *)n;
		if (!strcmp(sn->comm, c))
			return sn;
		if (any_comm && (!best || sn->seq > best->seq))
			best = sn;
	}
	return best;
}

static const struct lt_map *map_find(const struct lt_snap *sn, uint64_t addr)
{
	size_t lo = upper_bound(sn->maps, sn->nmaps, sizeof(sn->maps[0]),
				offsetof(struct lt_map, start), addr);

	if (lo && addr < sn->maps[lo - 1].end)
		return &sn->maps[lo - 1];
	return NULL;
}

/* ---- JIT code: /tmp/perf-PID.map (Python -X perf, node --perf-basic-prof, JVM agents) ---- */

/*
 * The map is written by the profiled process: hostile. It is read while the process lives (at
 * its snapshot, then whenever it changed, looked at every JIT_CHECK_NS), parsed into a sorted
 * table that outlives the process, and cut at JIT_MAP_MAX bytes, JIT_ENTRIES_MAX entries or
 * JIT_PARSE_NS of parsing (JIT_PARSE_TOTAL_NS over the life of a process); each cut is counted.
 */
#define JIT_MAP_MAX (64u << 20)
#define JIT_ENTRIES_MAX (1u << 19)
#define JIT_PARSE_NS 500000000ull
#define JIT_PARSE_TOTAL_NS 2000000000ull
#define JIT_CHECK_NS 500000000ull
#define JIT_TICK_BATCH 64 /* processes looked at per tick */
#define JIT_CHUNK (256u << 10) /* read at a time; a longer line is skipped */
#define JIT_LINES_PER_CLOCK 1024 /* lines parsed between two looks at the clock */
#define NSPID_MAX_FIELDS 64 /* pid namespaces nest 32 deep */

uint32_t lt_nspid_parse(const char *status)
{
	const char *at = status;
	uint32_t last = 0;
	int fields = 0;

	if (!status)
		return 0;
	while (strncmp(at, "NSpid:", 6)) {
		at = strchr(at, '\n');
		if (!at)
			return 0;
		at++;
	}
	for (at += 6;;) {
		uint64_t v = 0;
		const char *d;

		while (*at == ' ' || *at == '\t')
			at++;
		if (!*at || *at == '\n')
			break;
		for (d = at; *at >= '0' && *at <= '9'; at++) {
			v = v * 10 + (uint64_t)(*at - '0');
			if (v > UINT32_MAX)
				return 0;
		}
		if (at == d || (*at && *at != ' ' && *at != '\t' && *at != '\n') ||
		    ++fields > NSPID_MAX_FIELDS)
			return 0;
		last = (uint32_t)v;
	}
	return last;
}

/* a small file of directory dir (a /proc/PID), NUL-terminated; NULL */
static char *read_at(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC), e;
	char *b;

	if (fd < 0)
		return NULL;
	b = read_fd_max(fd, 1 << 16);
	e = errno;
	close(fd);
	errno = e;
	return b;
}

/* "START SIZE NAME", hex without 0x; false: not such a line */
static bool jit_line(struct symtab *t, char *line)
{
	char *end, *name;
	uint64_t start, size;

	errno = 0;
	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || *line == '-' || *line == ' ')
		return false;
	line = end + 1;
	size = strtoull(line, &end, 16);
	/* no range past the end of the address space: hostile or garbage */
	if (end == line || *end != ' ' || *line == '-' || *line == ' ' || !size || errno ||
	    size > UINT64_MAX - start)
		return false;
	name = end + 1;
	return *name && !symtab_add(t, name, start, size, 0, 0, 0);
}

bool perfmap_parse(struct symtab *t, int fd, uint64_t budget_ns)
{
	uint64_t t0 = lt_now_ns(CLOCK_MONOTONIC), total = 0, lines = 0;
	size_t have = 0;
	bool skipping = false, cut = false;
	char *buf = malloc(JIT_CHUNK + 1);

	if (!buf)
		return false;
	for (;;) {
		char *p = buf, *nl;
		ssize_t r = read(fd, buf + have, JIT_CHUNK - have);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* a last line without its newline */
			if (!r && have && !skipping) {
				buf[have] = 0;
				jit_line(t, buf);
			}
			break;
		}
		have += (size_t)r;
		total += (uint64_t)r;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			*nl = 0;
			if (!skipping)
				jit_line(t, p);
			skipping = false;
			p = nl + 1;
			if (t->n >= JIT_ENTRIES_MAX) {
				cut = true;
				goto out;
			}
			if (!(++lines % JIT_LINES_PER_CLOCK) &&
			    lt_now_ns(CLOCK_MONOTONIC) - t0 >= budget_ns) {
				cut = true;
				goto out;
			}
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == JIT_CHUNK) {
			skipping = true;
			have = 0;
		}
		if (total >= JIT_MAP_MAX) {
			cut = true;
			break;
		}
	}
out:
	free(buf);
	symtab_finish(t);
	return cut;
}

/*
 * Look at the perf map of live process tgid and read it again if it changed: opened inside
 * the process's root, named with its pid in its own namespace. A process that is gone (or whose
 * pid now names another) keeps the table read last, for good.
 */
static void jit_refresh(struct lt_syms *s, struct lt_snap *sn, uint32_t tgid)
{
	char p[64], *b;
	struct symtab *t;
	struct ident id;
	struct stat st;
	int dir, root = -1, fd = -1;
	uint64_t now = lt_now_ns(CLOCK_MONOTONIC), budget;
	bool cut;

	sn->jit_check_ns = now;
	if (sn->jit_gone)
		return;
	snprintf(p, sizeof(p), "/proc/%u", tgid);
	dir = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	b = dir >= 0 ? read_at(dir, "stat") : NULL;
	/* the same process (start time), still running the same program */
	if (!b || proc_stat_start(b) != sn->start_time || fstatat(dir, "exe", &st, 0) ||
	    st.st_dev != sn->exe_dev || st.st_ino != sn->exe_ino) {
		sn->jit_gone = true;
		goto out;
	}
	if (!sn->nspid) {
		free(b);
		b = read_at(dir, "status");
		sn->nspid = lt_nspid_parse(b);
		if (!sn->nspid)
			sn->nspid = tgid;
	}
	root = openat(dir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(p, sizeof(p), "/tmp/perf-%u.map", sn->nspid);
	fd = root >= 0 ? lt_root_open(root, p, &st) : -1;
	if (fd < 0)
		goto out; /* none (yet), or removed at exit: the table read stays */
	ident_of(&st, &id);
	if (sn->jit && !memcmp(&id, &sn->jit_id, sizeof(id)))
		goto out;
	if (sn->jit_parse_ns >= JIT_PARSE_TOTAL_NS) {
		if (!sn->jit_spent)
			s->st.jit_cut++;
		sn->jit_spent = true;
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out;
	budget = JIT_PARSE_TOTAL_NS - sn->jit_parse_ns;
	cut = perfmap_parse(t, fd, budget < JIT_PARSE_NS ? budget : JIT_PARSE_NS);
	sn->jit_parse_ns += lt_now_ns(CLOCK_MONOTONIC) - now;
	s->st.jit_read++;
	s->st.jit_cut += cut;
	if (sn->jit) {
		symtab_free(sn->jit);
		free(sn->jit);
	}
	sn->jit = t;
	sn->jit_id = id;
out:
	free(b);
	if (fd >= 0)
		close(fd);
	if (root >= 0)
		close(root);
	if (dir >= 0)
		close(dir);
}

static const struct sym *jit_find(struct lt_syms *s, struct lt_snap *sn, uint32_t tgid,
				  uint64_t addr)
{
	const struct sym *y = sn->jit ? sym_find(sn->jit, addr) : NULL;

	/* JIT code grows: an address not named yet looks at the map, at most once a second */
	if (y || sn->jit_gone || lt_now_ns(CLOCK_MONOTONIC) - sn->jit_check_ns < REFRESH_NS)
		return y;
	jit_refresh(s, sn, tgid);
	return sn->jit ? sym_find(sn->jit, addr) : NULL;
}

/* the perf maps of live processes, a few at each tick: what they name is kept if they exit */
static void jit_tick(struct lt_syms *s, uint64_t now)
{
	size_t looked = 0;

	for (size_t k = 0; k < s->nsnap && looked < JIT_TICK_BATCH; k++) {
		struct lt_snap *sn;

		if (s->jit_next >= s->nsnap)
			s->jit_next = 0;
		sn = s->snapv[s->jit_next++];
		if (sn->jit_gone || now - sn->jit_check_ns < JIT_CHECK_NS)
			continue;
		jit_refresh(s, sn, (uint32_t)sn->node.key);
		looked++;
	}
}

/* ---- public ---- */

int lt_syms_snapshot(struct lt_syms *s, uint32_t tgid, const char *comm)
{
	struct lt_snap *sn;

	if (!s)
		return -EINVAL;
	if (snap_find(s, tgid, comm, false))
		return 0;
	return snap_take(s, tgid, comm, NULL, &sn);
}

void lt_syms_tick(struct lt_syms *s)
{
	uint64_t now;

	if (!s)
		return;
	now = lt_now_ns(CLOCK_MONOTONIC);
	jit_tick(s, now);
	for (size_t i = s->young; i < s->nsnap; i++) {
		struct lt_snap *sn = s->snapv[i], *out;

		if (sn->rechecks && now >= sn->recheck_ns) {
			sn->rechecks--;
			sn->recheck_ns = now + RECHECK_NEXT_NS;
			/* gone, exec'd or pid reused: the snapshot is what it will be */
			if (snap_take(s, (uint32_t)sn->node.key, sn->comm, sn, &out))
				sn->rechecks = 0;
		}
		if (!sn->rechecks && i == s->young)
			s->young++;
	}
}

void lt_syms_user(struct lt_syms *s, uint32_t tgid, const char *comm, uint64_t addr,
		  struct lt_frame *f)
{
	const struct lt_map *m;
	struct lt_snap *sn;
	struct lt_elf *e;
	const struct sym *y;
	uint64_t va;

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	if (!s)
		return;
	sn = snap_find(s, tgid, comm, true);
	if (!sn && snap_take(s, tgid, comm, NULL, &sn))
		return;
	m = map_find(sn, addr);
	if (!m && lt_now_ns(CLOCK_MONOTONIC) - sn->read_ns >= REFRESH_NS) {
		sn->read_ns = lt_now_ns(CLOCK_MONOTONIC);
		if (!snap_take(s, tgid, comm, sn, &sn))
			m = map_find(sn, addr);
	}
	if (!m) {
		y = jit_find(s, sn, tgid, addr);
		if (y) {
			f->func = sn->jit->names.p + y->name;
			f->func_off = addr - y->addr;
			f->module = "[jit]";
			f->mod_off = addr;
		}
		return;
	}
	e = m->file->elf;
	f->module = m->file->path;
	f->build_id = e->build_id;
	f->map_start = m->start;
	f->map_limit = m->end;
	f->map_pgoff = m->pgoff;
	f->mod_off = addr - m->start + m->pgoff;
	if (!e->parsed)
		elf_parse(s, e);
	if (!elf_off_to_vaddr(e, f->mod_off, &va))
		return;
	y = sym_find(&e->syms, va);
	if (y) {
		f->func = e->syms.names.p + y->name;
		f->func_off = va - y->addr;
	}
}
