// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Symbolizer: /proc/kallsyms for the kernel; for user space, snapshots of /proc/PID/maps whose
 * files are cached by identity (dev, inode, size, mtime) and whose ELF contents (load segments,
 * symbols) are cached by build-id, so a library mapped by a thousand processes is read once.
 * Symbols are parsed on first use; until then the file stays open, which is what lets a process
 * that exited, or a deleted file, be symbolized later.
 */
#define _GNU_SOURCE /* qsort_r */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "sym.h"

#define COMM_LEN 16
#define BUILD_ID_MAX 64 /* bytes of a build-id note we accept */
/* files held open until their symbols are parsed; past this, parse at once */
#define MAX_HELD_FDS 256
/* kallsyms has no sizes: the last symbol before another module covers at most this */
#define KSYM_TAIL (64 * 1024)
/* a symbol whose range misses the address may be nested in a bigger one just before it */
#define NESTED_LOOKBACK 4
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
#define PATH_BUF 4352 /* PATH_MAX plus a /proc/PID/root prefix */

/* ---- small containers ---- */

/* names of one symbol table; symbols refer to them by offset (the pool moves while it grows) */
struct pool {
	char *p;
	size_t len, cap;
};

static int64_t pool_add(struct pool *pl, const char *s)
{
	size_t n = strlen(s) + 1, at = pl->len;

	if (at + n > UINT32_MAX || LT_GROW(pl->p, pl->cap, at + n))
		return -1;
	memcpy(pl->p + at, s, n);
	pl->len += n;
	return (int64_t)at;
}

/* chained hash table of nodes embedded at the start of the entries; keys may collide */
struct hnode {
	struct hnode *next;
	uint64_t key;
};

struct htab {
	struct hnode **b;
	size_t nb, n;
};

static int ht_add(struct htab *t, struct hnode *e, uint64_t key)
{
	size_t i;

	if (t->n >= t->nb) {
		size_t nb = t->nb ? t->nb * 2 : 64;
		struct hnode **b = calloc(nb, sizeof(*b));

		if (!b && !t->nb)
			return -ENOMEM;
		/* without memory for a bigger table, chains just get longer */
		if (b) {
			for (i = 0; i < t->nb; i++) {
				for (struct hnode *x = t->b[i], *nx; x; x = nx) {
					nx = x->next;
					x->next = b[lt_hash_mix(x->key) & (nb - 1)];
					b[lt_hash_mix(x->key) & (nb - 1)] = x;
				}
			}
			free(t->b);
			t->b = b;
			t->nb = nb;
		}
	}
	e->key = key;
	i = lt_hash_mix(key) & (t->nb - 1);
	e->next = t->b[i];
	t->b[i] = e;
	t->n++;
	return 0;
}

/* the first entry with key after `after` (NULL: from the start) */
static struct hnode *ht_find(const struct htab *t, uint64_t key, struct hnode *after)
{
	struct hnode *e;

	if (after)
		e = after->next;
	else
		e = t->nb ? t->b[lt_hash_mix(key) & (t->nb - 1)] : NULL;
	for (; e; e = e->next)
		if (e->key == key)
			return e;
	return NULL;
}

/* ---- symbol tables ---- */

struct sym {
	uint64_t addr;
	uint64_t end; /* exclusive; while building, an unsized symbol's limit (its section end) */
	uint32_t name; /* offset in the pool */
	uint16_t mod; /* kernel: module index, 0 = vmlinux */
	uint8_t rank; /* which alias names an address: higher wins */
	uint8_t sized;
};

struct symtab {
	struct sym *v;
	size_t n, cap;
	struct pool names;
};

static void symtab_reset(struct symtab *t)
{
	t->n = 0;
	t->names.len = 0;
}

static void symtab_free(struct symtab *t)
{
	free(t->v);
	free(t->names.p);
	memset(t, 0, sizeof(*t));
}

/* aliases: a public name over an internal one (leading '_'), then global over weak over local */
static uint8_t sym_rank(const char *name, int bind)
{
	return (uint8_t)((name[0] != '_') * 4 + bind);
}

static int symtab_add(struct symtab *t, const char *name, uint64_t addr, uint64_t size,
		      uint64_t limit, uint16_t mod, uint8_t rank)
{
	int64_t at;
	struct sym *y;

	if (LT_GROW(t->v, t->cap, t->n + 1))
		return -ENOMEM;
	at = pool_add(&t->names, name);
	if (at < 0)
		return -ENOMEM;
	y = &t->v[t->n++];
	y->addr = addr;
	y->sized = size != 0;
	y->end = size ? (size > UINT64_MAX - addr ? UINT64_MAX : addr + size) : limit;
	y->name = (uint32_t)at;
	y->mod = mod;
	y->rank = rank;
	return 0;
}

static int sym_cmp(const void *a, const void *b, void *names)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->sized != y->sized)
		return x->sized ? -1 : 1;
	return strcmp((char *)names + x->name, (char *)names + y->name);
}

/* sort, one entry per address (the best alias), unsized symbols up to the next one */
static void symtab_finish(struct symtab *t)
{
	size_t i, j, n = 0;

	if (!t->n)
		return;
	qsort_r(t->v, t->n, sizeof(*t->v), sym_cmp, t->names.p);
	for (i = 0; i < t->n; i = j) {
		struct sym best = t->v[i];

		for (j = i + 1; j < t->n && t->v[j].addr == best.addr; j++) {
			if (!best.sized && t->v[j].sized) {
				best.end = t->v[j].end;
				best.sized = 1;
			}
		}
		t->v[n++] = best;
	}
	t->n = n;
	for (i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? t->v[i + 1].addr : UINT64_MAX;

		if (!t->v[i].sized && next < t->v[i].end)
			t->v[i].end = next;
	}
	if (n < t->cap) {
		struct sym *v = realloc(t->v, n * sizeof(*v));

		if (v) {
			t->v = v;
			t->cap = n;
		}
	}
}

/* How many elements of a sorted array have their u64 at byte `off` <= key. */
static size_t upper_bound(const void *base, size_t n, size_t stride, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;

		memcpy(&v, (const char *)base + mid * stride + off, sizeof(v));
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct sym *sym_find(const struct symtab *t, uint64_t a)
{
	size_t lo = upper_bound(t->v, t->n, sizeof(t->v[0]), offsetof(struct sym, addr), a);

	for (size_t k = 0; k < NESTED_LOOKBACK && k < lo; k++) {
		const struct sym *y = &t->v[lo - 1 - k];

		if (a < y->end)
			return y;
	}
	return NULL;
}

/* ---- ELF files ---- */

struct load {
	uint64_t off, vaddr, filesz;
	bool exec;
};

struct lt_elf {
	struct hnode node; /* by build-id, when it has one */
	char *build_id;
	struct load *loads;
	size_t nloads;
	struct symtab syms;
	int fd; /* held until the symbols are parsed, else -1 */
	void *image; /* the vdso: a copy of our own */
	size_t image_len;
	bool parsed;
};

struct lt_file {
	struct hnode node; /* by identity */
	uint64_t dev, ino, size, mtime_ns;
	char *path; /* as the process sees it, " (deleted)" removed */
	struct lt_elf *elf;
};

struct lt_map {
	uint64_t start, end, pgoff;
	struct lt_file *file;
};

struct lt_snap {
	struct hnode node; /* by tgid */
	char comm[COMM_LEN];
	uint64_t seq; /* newest wins when comm does not match */
	struct lt_map *maps;
	size_t nmaps;
	/* the same process image: exe identity and start time, for refreshes */
	uint64_t exe_dev, exe_ino, start_time;
	uint64_t read_ns;
	/* re-reads left while young, and when the next is due (lt_syms_tick) */
	uint64_t recheck_ns;
	unsigned int rechecks;
};

struct kmod {
	char *name; /* "[kernel]", "[ext4]" */
	uint64_t base; /* lowest symbol */
	char *build_id;
	bool bid_read;
};

struct lt_syms {
	struct htab snaps, files, elfs;
	struct lt_snap **snapv;
	size_t nsnap, snapcap;
	size_t young; /* snapv[young..] may still have re-reads due */
	struct lt_file **filev;
	size_t nfile, filecap;
	struct lt_elf **elfv;
	size_t nelf, elfcap;
	uint64_t seq;
	unsigned int held_fds;
	struct lt_file *vdso;
	bool vdso_tried;
	/* kernel */
	bool k_loaded, k_hidden;
	struct symtab ksyms;
	struct kmod *kmods;
	size_t nkmod, kmodcap, kmod_last;
	uint64_t ktext, ketext;
	struct lt_syms_stats st;
};

static void lib_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

static char *hex_dup(const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *h;

	if (!n || n > BUILD_ID_MAX)
		return NULL;
	h = malloc(2 * n + 1);
	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		h[2 * i] = digits[p[i] >> 4];
		h[2 * i + 1] = digits[p[i] & 15];
	}
	h[2 * n] = 0;
	return h;
}

static char *notes_build_id(Elf_Data *d)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	if (!d || !d->d_buf)
		return NULL;
	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4))
			return hex_dup((unsigned char *)d->d_buf + desc_off, nh.n_descsz);
		off = next;
	}
	return NULL;
}

/* from the note sections, else (no section headers) the PT_NOTE segments */
static char *elf_build_id(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t nph;
	char *id;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		id = notes_build_id(elf_getdata(scn, NULL));
		if (id)
			return id;
	}
	if (elf_getphdrnum(elf, &nph))
		return NULL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		id = notes_build_id(
			elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					     ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR));
		if (id)
			return id;
	}
	return NULL;
}

static int elf_read_loads(Elf *elf, struct load **out, size_t *n)
{
	size_t nph, cap = 0;

	*out = NULL;
	*n = 0;
	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (LT_GROW(*out, cap, *n + 1))
			return -ENOMEM;
		(*out)[(*n)++] = (struct load){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
						!!(ph.p_flags & PF_X) };
	}
	return 0;
}

/* file offset -> ELF virtual address through the PT_LOAD segment holding it */
static bool elf_off_to_vaddr(const struct lt_elf *e, uint64_t off, uint64_t *va)
{
	const struct load *best = NULL;

	for (int pass = 0; pass < 2 && !best; pass++)
		for (size_t i = 0; i < e->nloads && !best; i++) {
			const struct load *l = &e->loads[i];

			if ((pass || l->exec) && off >= l->off && off - l->off < l->filesz)
				best = l;
		}
	/* past the file bytes of a segment (page rounding): the segment before */
	for (size_t i = 0; i < e->nloads && !best; i++)
		if (e->loads[i].exec && e->loads[i].off <= off)
			best = &e->loads[i];
	if (!best)
		return false;
	*va = off - best->off + best->vaddr;
	return true;
}

/* FUNC and IFUNC symbols of the first section of `type`; 0 when it has any */
static int symtab_read(struct symtab *t, Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t nsec, nsym;
	uint64_t *sec_end;
	Elf_Data *d;
	int err = -ENOENT;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			break;
	if (!scn || elf_getshdrnum(elf, &nsec))
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !sh.sh_entsize)
		return -ENOENT;
	/* unsized symbols stop at the end of their section */
	sec_end = calloc(nsec ? nsec : 1, sizeof(*sec_end));
	if (!sec_end)
		return -ENOMEM;
	for (size_t i = 0; i < nsec; i++) {
		GElf_Shdr s2;
		Elf_Scn *x = elf_getscn(elf, i);

		if (x && gelf_getshdr(x, &s2))
			sec_end[i] = s2.sh_addr + s2.sh_size;
	}
	nsym = d->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	for (size_t i = 0; i < nsym; i++) {
		GElf_Sym y;
		const char *name, *ver;
		char plain[256];
		int st = 0;

		if (!gelf_getsym(d, (int)i, &y))
			break;
		if (GELF_ST_TYPE(y.st_info) != STT_FUNC && GELF_ST_TYPE(y.st_info) != STT_GNU_IFUNC)
			continue;
		if (y.st_shndx == SHN_UNDEF || y.st_shndx >= SHN_LORESERVE || y.st_shndx >= nsec ||
		    !y.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, y.st_name);
		if (!name || !*name)
			continue;
		/* "clock_gettime@@GLIBC_2.17" in a .symtab: one name per function, as
		 * .dynsym has it, or flame graphs split it */
		ver = strchr(name, '@');
		if (ver && ver > name && (size_t)(ver - name) < sizeof(plain)) {
			memcpy(plain, name, ver - name);
			plain[ver - name] = 0;
			name = plain;
		}
		if (GELF_ST_BIND(y.st_info) == STB_GLOBAL)
			st = 2;
		else if (GELF_ST_BIND(y.st_info) == STB_WEAK)
			st = 1;
		if (symtab_add(t, name, y.st_value, y.st_size,
			       sec_end[y.st_shndx] > y.st_value ? sec_end[y.st_shndx] : UINT64_MAX,
			       0, sym_rank(name, st))) {
			free(sec_end);
			return -ENOMEM;
		}
		err = 0;
	}
	free(sec_end);
	return err;
}

static Elf *elf_from_fd(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);

	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

/* the .symtab of /usr/lib/debug/.build-id/xx/rest.debug (Debian's -dbg packages) */
static int debug_symtab(struct symtab *t, const char *build_id)
{
	char p[256];
	char *id;
	Elf *elf;
	int fd, err = -ENOENT;

	if (strlen(build_id) < 4)
		return -ENOENT;
	snprintf(p, sizeof(p), "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	elf = elf_from_fd(fd);
	if (elf) {
		id = elf_build_id(elf);
		if (id && !strcmp(id, build_id))
			err = symtab_read(t, elf, SHT_SYMTAB);
		free(id);
		elf_end(elf);
	}
	close(fd);
	return err;
}

static void elf_parse(struct lt_syms *s, struct lt_elf *e)
{
	Elf *elf = NULL;

	e->parsed = true;
	s->st.elf_parsed++;
	if (e->fd >= 0)
		elf = elf_from_fd(e->fd);
	else if (e->image)
		elf = elf_memory(e->image, e->image_len);
	if (elf) {
		if (!e->build_id || debug_symtab(&e->syms, e->build_id)) {
			symtab_reset(&e->syms);
			if (symtab_read(&e->syms, elf, SHT_SYMTAB)) {
				symtab_reset(&e->syms);
				if (symtab_read(&e->syms, elf, SHT_DYNSYM))
					symtab_reset(&e->syms);
			}
		}
		symtab_finish(&e->syms);
		elf_end(elf);
	}
	if (e->fd >= 0) {
		close(e->fd);
		e->fd = -1;
		s->held_fds--;
	}
	free(e->image);
	e->image = NULL;
}

static struct lt_elf *elf_new(struct lt_syms *s)
{
	struct lt_elf *e;

	if (LT_GROW(s->elfv, s->elfcap, s->nelf + 1))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = -1;
	s->elfv[s->nelf++] = e;
	return e;
}

/*
 * The ELF contents of an opened file (fd is taken): the cached entry of its build-id, else a new
 * one that keeps fd until its symbols are needed. fd < 0: an entry without contents.
 */
static struct lt_elf *elf_get(struct lt_syms *s, int fd)
{
	struct lt_elf *e;
	Elf *elf = fd >= 0 ? elf_from_fd(fd) : NULL;
	char *id = elf ? elf_build_id(elf) : NULL;

	if (id) {
		for (struct hnode *n = NULL; (n = ht_find(&s->elfs, lt_hash_str(id), n));) {
			e = (struct lt_elf *)n;
			if (!strcmp(e->build_id, id)) {
				free(id);
				elf_end(elf);
				close(fd);
				return e;
			}
		}
	}
	e = elf_new(s);
	if (!e || (elf && elf_read_loads(elf, &e->loads, &e->nloads))) {
		if (e)
			e->parsed = true;
		free(id);
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		return e;
	}
	if (elf)
		elf_end(elf);
	e->build_id = id;
	if (id && ht_add(&s->elfs, &e->node, lt_hash_str(id))) {
		free(id);
		e->build_id = NULL;
	}
	if (!elf) {
		if (fd >= 0)
			close(fd);
		e->parsed = true;
		return e;
	}
	e->fd = fd;
	s->held_fds++;
	if (s->held_fds > MAX_HELD_FDS)
		elf_parse(s, e);
	return e;
}

/* ---- /proc ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* a whole /proc file, NUL-terminated; NULL and errno */
static char *read_all(const char *path)
{
	size_t cap = 16384, n = 0;
	char *b = NULL, *q;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return NULL;
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
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			goto fail;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = 0;
	return b;
fail:
	free(b);
	close(fd);
	errno = e;
	return NULL;
}

/* "/proc/PID/maps" gone: the process is */
static int proc_err(int e)
{
	return e == ENOENT || e == ESRCH ? -ESRCH : -e;
}

struct maps_line {
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	char *path;
};

/* one line of /proc/PID/maps (NUL-terminated, modified: " (deleted)" is cut) */
static bool parse_maps_line(char *line, struct maps_line *m)
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
static char *next_line(char **cur)
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

struct ident {
	uint64_t dev, ino, size, mtime_ns;
};

static void ident_of(const struct stat *st, struct ident *id)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

/*
 * Where the loader can open the file of a mapping: /proc/PID/map_files/RANGE (the very file,
 * deleted or not), else /proc/PID/root/PATH when it is still the same inode. 0 and its identity
 * in *id, or -1; never a device (opening one may have effects).
 */
static int map_file_path(uint32_t pid, const struct maps_line *m, char *buf, size_t len,
			 struct ident *id)
{
	struct stat st;
	int n;

	n = snprintf(buf, len, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	if (n > 0 && (size_t)n < len && !stat(buf, &st)) {
		if (!S_ISREG(st.st_mode))
			return -1;
		ident_of(&st, id);
		return 0;
	}
	n = snprintf(buf, len, "/proc/%u/root%s", pid, m->path);
	if (n > 0 && (size_t)n < len && !stat(buf, &st) && st.st_ino == m->ino &&
	    S_ISREG(st.st_mode)) {
		ident_of(&st, id);
		return 0;
	}
	return -1;
}

static uint64_t ident_hash(const struct ident *id)
{
	return lt_hash_mix(
		id->dev ^ lt_hash_mix(id->ino ^ lt_hash_mix(id->size ^ lt_hash_mix(id->mtime_ns))));
}

static struct lt_file *file_new(struct lt_syms *s, const char *path, struct lt_elf *e)
{
	struct lt_file *f;

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

static struct lt_file *file_get(struct lt_syms *s, uint32_t pid, const struct maps_line *m)
{
	char open_path[PATH_BUF];
	struct ident id = { makedev(m->maj, m->min), m->ino, 0, 0 };
	struct lt_elf *e = NULL;
	struct lt_file *f;
	bool can_open = !map_file_path(pid, m, open_path, sizeof(open_path), &id);
	uint64_t key = ident_hash(&id);

	for (struct hnode *n = NULL; (n = ht_find(&s->files, key, n));) {
		f = (struct lt_file *)n;
		if (f->dev != id.dev || f->ino != id.ino || f->size != id.size ||
		    f->mtime_ns != id.mtime_ns)
			continue;
		if (!strcmp(f->path, m->path))
			return f;
		e = f->elf; /* a hard link: same contents, its own path */
	}
	if (!e) {
		e = elf_get(s, can_open ? open(open_path, O_RDONLY | O_CLOEXEC) : -1);
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
static struct lt_file *vdso_file(struct lt_syms *s, uint64_t map_len)
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

/* field 22 of /proc/PID/stat: start time in clock ticks after boot */
static uint64_t proc_start_time(uint32_t pid)
{
	char p[64], *b, *c;
	unsigned long long v = 0;

	snprintf(p, sizeof(p), "/proc/%u/stat", pid);
	b = read_all(p);
	if (!b)
		return 0;
	c = strrchr(b, ')');
	/* fields 3..21 are skipped */
	if (c && sscanf(c + 1,
			" %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			"%*d %*d %*d %llu",
			&v) != 1)
		v = 0;
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
		struct lt_file *f;

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
	sn->read_ns = now_ns();
	sn->rechecks = RECHECKS;
	sn->recheck_ns = sn->read_ns + RECHECK_FIRST_NS;
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

/* ---- public: lifetime, user space ---- */

static void kernel_reset(struct lt_syms *s);

struct lt_syms *lt_syms_new(void)
{
	lib_init();
	return calloc(1, sizeof(struct lt_syms));
}

void lt_syms_free(struct lt_syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nsnap; i++) {
		free(s->snapv[i]->maps);
		free(s->snapv[i]);
	}
	for (size_t i = 0; i < s->nfile; i++) {
		free(s->filev[i]->path);
		free(s->filev[i]);
	}
	for (size_t i = 0; i < s->nelf; i++) {
		struct lt_elf *e = s->elfv[i];

		if (e->fd >= 0)
			close(e->fd);
		free(e->build_id);
		free(e->loads);
		free(e->image);
		symtab_free(&e->syms);
		free(e);
	}
	kernel_reset(s);
	free(s->kmods);
	free(s->snapv);
	free(s->filev);
	free(s->elfv);
	free(s->snaps.b);
	free(s->files.b);
	free(s->elfs.b);
	free(s);
}

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

	if (!s || s->young == s->nsnap)
		return;
	now = now_ns();
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
	if (!m && now_ns() - sn->read_ns >= REFRESH_NS) {
		sn->read_ns = now_ns();
		if (!snap_take(s, tgid, comm, sn, &sn))
			m = map_find(sn, addr);
	}
	if (!m)
		return;
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

size_t lt_frame_name(const struct lt_frame *f, char *buf, size_t len)
{
	const char *base;
	int n;

	if (!buf || !len)
		return 0;
	if (f && f->func) {
		n = snprintf(buf, len, "%s", f->func);
	} else if (f && f->module && !f->off_unknown) {
		base = strrchr(f->module, '/');
		base = base && base[1] ? base + 1 : f->module;
		n = snprintf(buf, len, "%s+0x%" PRIx64, base, f->mod_off);
	} else {
		n = snprintf(buf, len, "[unknown]");
	}
	if (n < 0) {
		buf[0] = 0;
		return 0;
	}
	return (size_t)n < len ? (size_t)n : len - 1;
}

void lt_syms_get_stats(const struct lt_syms *s, struct lt_syms_stats *st)
{
	if (s)
		*st = s->st;
	else
		memset(st, 0, sizeof(*st));
}

/* ---- kernel ---- */

/* the GNU build-id in a raw note blob (/sys/kernel/notes, a module's notes) */
static char *raw_notes_build_id(const unsigned char *p, size_t n)
{
	size_t off = 0;

	while (n - off >= 12 && off < n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off, next;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		desc_off = name_off + (((size_t)namesz + 3) & ~(size_t)3);
		next = desc_off + (((size_t)descsz + 3) & ~(size_t)3);
		if (desc_off > n || descsz > n - desc_off)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4))
			return hex_dup(p + desc_off, descsz);
		off = next;
	}
	return NULL;
}

static char *file_build_id(const char *path)
{
	unsigned char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? raw_notes_build_id(buf, (size_t)n) : NULL;
}

static const char *kmod_build_id(struct lt_syms *s, uint16_t i)
{
	struct kmod *k = &s->kmods[i];
	char p[320];

	if (!k->bid_read) {
		k->bid_read = true;
		if (!i) {
			k->build_id = file_build_id("/sys/kernel/notes");
		} else if (strlen(k->name) < 200) {
			snprintf(p, sizeof(p), "/sys/module/%.*s/notes/.note.gnu.build-id",
				 (int)strlen(k->name) - 2, k->name + 1);
			k->build_id = file_build_id(p);
		}
	}
	return k->build_id;
}

static int kmod_index(struct lt_syms *s, const char *name, size_t len, uint16_t *idx)
{
	size_t last = s->kmod_last;
	char *copy;

	if (last && last < s->nkmod && !strncmp(s->kmods[last].name + 1, name, len) &&
	    s->kmods[last].name[len + 1] == ']' && !s->kmods[last].name[len + 2]) {
		*idx = (uint16_t)last;
		return 0;
	}
	for (size_t i = 1; i < s->nkmod; i++) {
		if (!strncmp(s->kmods[i].name + 1, name, len) && s->kmods[i].name[len + 1] == ']' &&
		    !s->kmods[i].name[len + 2]) {
			s->kmod_last = i;
			*idx = (uint16_t)i;
			return 0;
		}
	}
	if (s->nkmod >= UINT16_MAX || LT_GROW(s->kmods, s->kmodcap, s->nkmod + 1))
		return -ENOMEM;
	copy = malloc(len + 3);
	if (!copy)
		return -ENOMEM;
	copy[0] = '[';
	memcpy(copy + 1, name, len);
	copy[len + 1] = ']';
	copy[len + 2] = 0;
	s->kmods[s->nkmod] = (struct kmod){ .name = copy, .base = UINT64_MAX };
	s->kmod_last = s->nkmod;
	*idx = (uint16_t)s->nkmod++;
	return 0;
}

static void kernel_reset(struct lt_syms *s)
{
	for (size_t i = 0; i < s->nkmod; i++) {
		free(s->kmods[i].name);
		free(s->kmods[i].build_id);
	}
	s->nkmod = 0;
	s->kmod_last = 0;
	s->ktext = 0;
	s->ketext = 0;
	symtab_free(&s->ksyms);
}

static int kallsyms_load(struct lt_syms *s, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	bool nonzero = false;
	FILE *fp;

	kernel_reset(s);
	s->k_loaded = true;
	s->k_hidden = true;
	s->st.kallsyms_loads++;
	if (LT_GROW(s->kmods, s->kmodcap, 1))
		return -ENOMEM;
	s->kmods[0] = (struct kmod){ .name = strdup("[kernel]"), .base = UINT64_MAX };
	if (!s->kmods[0].name)
		return -ENOMEM;
	s->nkmod = 1;
	fp = fopen(path, "re");
	if (!fp)
		return -errno;
	/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t ext4_fill_super\t[ext4]" */
	while (getline(&line, &cap, fp) > 0) {
		char *p, *name, *mod;
		uint64_t addr = strtoull(line, &p, 16);
		uint16_t mi = 0;
		char type;

		if (p == line || *p != ' ' || !p[1])
			continue;
		type = p[1];
		name = p + 2;
		if (*name++ != ' ')
			continue;
		p = name + strcspn(name, " \t\n");
		mod = p + strspn(p, " \t");
		*p = 0;
		nonzero |= addr != 0;
		if (*mod == '[') {
			size_t ml = strcspn(mod + 1, "]");

			if (!ml || kmod_index(s, mod + 1, ml, &mi))
				continue;
		} else if (!strcmp(name, "_text")) {
			s->ktext = addr;
		} else if (!strcmp(name, "_etext")) {
			s->ketext = addr;
		}
		if (!strchr("tTwW", type) || !*name || !addr)
			continue;
		if (symtab_add(&s->ksyms, name, addr, 0, UINT64_MAX, mi,
			       sym_rank(name, type == 'T' || type == 'W' ? 2 : 0)))
			break;
		if (addr < s->kmods[mi].base)
			s->kmods[mi].base = addr;
	}
	free(line);
	fclose(fp);
	if (!nonzero) {
		symtab_free(&s->ksyms);
		return 0;
	}
	s->k_hidden = false;
	symtab_finish(&s->ksyms);
	for (size_t i = 0; i < s->ksyms.n; i++) {
		struct sym *y = &s->ksyms.v[i];

		if ((i + 1 == s->ksyms.n || s->ksyms.v[i + 1].mod != y->mod) &&
		    y->end - y->addr > KSYM_TAIL)
			y->end = y->addr + KSYM_TAIL;
	}
	return 0;
}

int lt_syms_load_kallsyms(struct lt_syms *s, const char *path)
{
	return s ? kallsyms_load(s, path ? path : "/proc/kallsyms") : -EINVAL;
}

void lt_syms_kernel(struct lt_syms *s, uint64_t addr, struct lt_frame *f)
{
	const struct sym *y;

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	if (!s)
		return;
	if (!s->k_loaded)
		kallsyms_load(s, "/proc/kallsyms");
	if (s->k_hidden) {
		f->module = s->nkmod ? s->kmods[0].name : NULL;
		f->off_unknown = true;
		return;
	}
	y = sym_find(&s->ksyms, addr);
	if (y) {
		f->func = s->ksyms.names.p + y->name;
		f->func_off = addr - y->addr;
		f->module = s->kmods[y->mod].name;
		f->mod_off = addr - (y->mod ? s->kmods[y->mod].base : s->ktext);
		f->build_id = kmod_build_id(s, y->mod);
	} else if (s->ktext && addr >= s->ktext && addr < s->ketext) {
		f->module = s->kmods[0].name;
		f->mod_off = addr - s->ktext;
		f->build_id = kmod_build_id(s, 0);
	}
}

/* ---- function lookup for uprobes (alloc) ---- */

/* vaddr -> file offset through the PT_LOAD segment holding it */
static int vaddr_to_off(Elf *elf, uint64_t va, uint64_t *off)
{
	struct load *loads;
	size_t n;
	int err = -ENOENT;

	if (elf_read_loads(elf, &loads, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		if (va >= loads[i].vaddr && va - loads[i].vaddr < loads[i].filesz) {
			*off = va - loads[i].vaddr + loads[i].off;
			err = 0;
			break;
		}
	}
	free(loads);
	return err;
}

/* defined, exported FUNC/IFUNC `name` in the first section of `type`: its value */
static int find_sym(Elf *elf, Elf64_Word type, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL, *vscn = NULL;
	Elf_Data *d, *vd = NULL;
	GElf_Shdr sh, vsh;
	size_t nsym;
	bool found = false;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			break;
	if (!scn)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return -ENOENT;
	/* symbol versions: a default version (no hidden bit) is what an unversioned lookup binds */
	if (type == SHT_DYNSYM) {
		while ((vscn = elf_nextscn(elf, vscn)))
			if (gelf_getshdr(vscn, &vsh) && vsh.sh_type == SHT_GNU_versym)
				break;
		vd = vscn ? elf_getdata(vscn, NULL) : NULL;
	}
	nsym = d->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	for (size_t i = 0; i < nsym; i++) {
		GElf_Sym y;
		GElf_Versym v;
		const char *n;
		int t, b, vis;

		if (!gelf_getsym(d, (int)i, &y))
			break;
		t = GELF_ST_TYPE(y.st_info);
		b = GELF_ST_BIND(y.st_info);
		vis = GELF_ST_VISIBILITY(y.st_other);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || (b != STB_GLOBAL && b != STB_WEAK) ||
		    (vis != STV_DEFAULT && vis != STV_PROTECTED) || y.st_shndx == SHN_UNDEF ||
		    y.st_shndx >= SHN_LORESERVE || !y.st_value)
			continue;
		n = elf_strptr(elf, sh.sh_link, y.st_name);
		if (!n || strcmp(n, name))
			continue;
		*value = y.st_value;
		found = true;
		if (!vd || !gelf_getversym(vd, (int)i, &v) || !(v & 0x8000))
			return 0;
	}
	return found ? 0 : -ENOENT;
}

int lt_elf_find_func(const char *path, const char *name, uint64_t *off)
{
	struct stat st;
	uint64_t va;
	Elf *elf;
	int fd, err;

	lib_init();
	if (!path || !name || !*name)
		return -EINVAL;
	/* a device or a FIFO is no ELF file, and opening one may have effects or block */
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	elf = elf_from_fd(fd);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	err = find_sym(elf, SHT_DYNSYM, name, &va);
	if (err)
		err = find_sym(elf, SHT_SYMTAB, name, &va);
	if (!err)
		err = vaddr_to_off(elf, va, off);
	elf_end(elf);
	close(fd);
	return err;
}

enum { CLASS_EXE, CLASS_LIB, CLASS_LIBC, CLASS_LDSO, NCLASS };

/* libc last (an LD_PRELOADed or linked allocator wins), the dynamic linker after it */
static int lib_class(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc.musl-", 10) ||
	    !strncmp(b, "ld-musl-", 8) || (!strncmp(b, "libc-", 5) && strstr(b, ".so")))
		return CLASS_LIBC;
	if (!strncmp(b, "ld-linux", 8) || !strncmp(b, "ld.so", 5) || !strncmp(b, "ld64.so", 7) ||
	    (!strncmp(b, "ld-", 3) && isdigit((unsigned char)b[3])))
		return CLASS_LDSO;
	return CLASS_LIB;
}

struct cand {
	struct maps_line m;
	char open_path[PATH_BUF];
	struct ident id;
	bool can_open;
	int cls;
};

static bool same_file(const char *path, const struct ident *id)
{
	struct stat st;

	return !stat(path, &st) && st.st_dev == id->dev && st.st_ino == id->ino;
}

/* the path the loader should name: the plain path if it is the same file, else a /proc one */
static int loader_path(uint32_t pid, const struct cand *c, char *out, size_t len)
{
	char root[PATH_BUF];
	const char *p = c->m.path;
	int n;

	if (c->can_open && !same_file(c->m.path, &c->id)) {
		n = snprintf(root, sizeof(root), "/proc/%u/root%s", pid, c->m.path);
		p = n > 0 && (size_t)n < sizeof(root) && same_file(root, &c->id) ? root
										 : c->open_path;
	}
	n = snprintf(out, len, "%s", p);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* does the ELF file at path name a dynamic linker (PT_INTERP)? */
static bool elf_has_interp(const char *path)
{
	bool found = false;
	size_t nph;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	elf = elf_from_fd(fd);
	if (elf && !elf_getphdrnum(elf, &nph))
		for (size_t i = 0; i < nph && !found; i++) {
			GElf_Phdr ph;

			found = gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP;
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

int lt_proc_find_func(uint32_t pid, const char *name, char *path, size_t path_len, uint64_t *off)
{
	char p[64], *buf, *cur, *line;
	struct cand *cands = NULL;
	size_t n = 0, cap = 0;
	struct stat exe;
	bool have_exe, starting = true;
	int err = -ENOENT, fallback = -1;

	lib_init();
	if (path && path_len)
		path[0] = 0;
	if (!name || !*name || !path || !path_len || !off)
		return -EINVAL;
	if (!pid)
		return -ESRCH;
	snprintf(p, sizeof(p), "/proc/%u/maps", pid);
	buf = read_all(p);
	if (!buf)
		return proc_err(errno);
	snprintf(p, sizeof(p), "/proc/%u/exe", pid);
	have_exe = !stat(p, &exe);
	cur = buf;
	/* distinct files with an executable mapping, in maps order */
	while ((line = next_line(&cur))) {
		struct maps_line m;
		struct cand *c;
		bool dup = false;

		if (!parse_maps_line(line, &m) || m.perms[2] != 'x' || m.path[0] != '/')
			continue;
		for (size_t i = 0; i < n && !dup; i++)
			dup = cands[i].m.ino == m.ino && cands[i].m.maj == m.maj &&
			      cands[i].m.min == m.min && !strcmp(cands[i].m.path, m.path);
		if (dup)
			continue;
		if (LT_GROW(cands, cap, n + 1)) {
			err = -ENOMEM;
			goto out;
		}
		c = &cands[n++];
		c->m = m;
		c->can_open = !map_file_path(pid, &m, c->open_path, sizeof(c->open_path), &c->id);
		if (have_exe && (c->can_open ? c->id.dev == exe.st_dev && c->id.ino == exe.st_ino
					     : m.ino == exe.st_ino))
			c->cls = CLASS_EXE;
		else
			c->cls = lib_class(m.path);
	}
	for (int cls = 0; cls < NCLASS; cls++) {
		for (size_t i = 0; i < n; i++) {
			struct cand *c = &cands[i];

			if (c->cls != cls)
				continue;
			if ((cls == CLASS_LIBC && (fallback < 0 || cands[fallback].cls != cls)) ||
			    (cls == CLASS_EXE && fallback < 0))
				fallback = (int)i;
			if (lt_elf_find_func(c->can_open ? c->open_path : c->m.path, name, off))
				continue;
			err = loader_path(pid, c, path, path_len);
			goto out;
		}
	}
	/* not found: name the library the caller expected it in */
	if (fallback >= 0 && loader_path(pid, &cands[fallback], path, path_len))
		path[0] = 0;
	/* a dynamic executable with no library mapped: exec or ld.so has not finished */
	for (size_t i = 0; i < n && starting; i++)
		starting = cands[i].cls == CLASS_EXE || cands[i].cls == CLASS_LDSO;
	/* p still names /proc/PID/exe */
	if (starting && have_exe && elf_has_interp(p))
		err = -EAGAIN;
out:
	/* the strings of m point into buf */
	free(cands);
	free(buf);
	return err;
}
