// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ELF files for the symbolizer and for uprobes: build-ids, load segments, symbol tables (the
 * file's own or a -dbg package's), the cache of contents by build-id, and the lookup of one
 * exported function.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "sym_int.h"

/* files held open until their symbols are parsed; past this, parse at once */
#define MAX_HELD_FDS 256

void lib_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
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
char *elf_build_id(Elf *elf)
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

int elf_read_loads(Elf *elf, struct load **out, size_t *n)
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
bool elf_off_to_vaddr(const struct lt_elf *e, uint64_t off, uint64_t *va)
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

Elf *elf_from_fd(int fd)
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

void elf_parse(struct lt_syms *s, struct lt_elf *e)
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

struct lt_elf *elf_new(struct lt_syms *s)
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
struct lt_elf *elf_get(struct lt_syms *s, int fd)
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

/* does the ELF file at path name a dynamic linker (PT_INTERP)? */
bool elf_has_interp(const char *path)
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
