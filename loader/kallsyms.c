// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel addresses for the symbolizer: /proc/kallsyms, modules and their build-ids. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "sym_int.h"

/* kallsyms has no sizes: the last symbol before another module covers at most this */
#define KSYM_TAIL (64 * 1024)

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

void kernel_reset(struct lt_syms *s)
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
