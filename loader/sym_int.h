/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the symbolizer: the caches of struct lt_syms and the helpers its files share
 * (sym.c: containers, symbol tables, lifetime; elf.c: ELF files; procmaps.c: /proc/PID/maps
 * snapshots; kallsyms.c: the kernel; ufind.c: uprobe targets). Not for the rest of the loader.
 */
#ifndef LT_SYM_INT_H
#define LT_SYM_INT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_unwind.h"
#include "sym.h"

#define COMM_LEN 16
#define PATH_BUF 4352 /* PATH_MAX plus a /proc/PID/root prefix */

/* ---- small containers (sym.c) ---- */

/* names of one symbol table; symbols refer to them by offset (the pool moves while it grows) */
struct pool {
	char *p;
	size_t len, cap;
};

int64_t pool_add(struct pool *pl, const char *s);

/* chained hash table of nodes embedded at the start of the entries; keys may collide */
struct hnode {
	struct hnode *next;
	uint64_t key;
};

struct htab {
	struct hnode **b;
	size_t nb, n;
};

int ht_add(struct htab *t, struct hnode *e, uint64_t key);
/* the first entry with key after `after` (NULL: from the start) */
struct hnode *ht_find(const struct htab *t, uint64_t key, struct hnode *after);

/* How many elements of a sorted array have their u64 at byte `off` <= key. */
size_t upper_bound(const void *base, size_t n, size_t stride, size_t off, uint64_t key);

/* ---- symbol tables (sym.c) ---- */

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

void symtab_reset(struct symtab *t);
void symtab_free(struct symtab *t);
/* aliases: a public name over an internal one (leading '_'), then global over weak over local */
uint8_t sym_rank(const char *name, int bind);
int symtab_add(struct symtab *t, const char *name, uint64_t addr, uint64_t size, uint64_t limit,
	       uint16_t mod, uint8_t rank);
/* sort, one entry per address (the best alias), unsized symbols up to the next one */
void symtab_finish(struct symtab *t);
const struct sym *sym_find(const struct symtab *t, uint64_t a);

/* ---- the caches ---- */

struct ident {
	uint64_t dev, ino, size, mtime_ns;
};

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
	/* unwind rows (unwind.c): built once, placed at uw_first of the table; none: uw_count 0 */
	bool uw_tried, uw_placed, uw_counted;
	uint32_t uw_first, uw_count;
	struct lt_uw_row *uw_rows; /* built, not yet placed (the table was full) */
	/* its block index (lt_cfi_index): placed in the table's rows at uw_idx_at, before them */
	uint32_t *uw_idx, uw_idx_at, uw_blk0, uw_nblk;
};

struct lt_mfile {
	struct hnode node; /* by identity */
	uint64_t dev, ino, size, mtime_ns;
	char *path; /* as the process sees it, " (deleted)" removed */
	struct lt_elf *elf;
};

struct lt_map {
	uint64_t start, end, pgoff;
	struct lt_mfile *file;
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
	/* JIT code the process names in /tmp/perf-NSPID.map (inside its root): the table read
	 * last while it lived, sorted; re-read only when the file changed (jit_id) */
	struct symtab *jit;
	struct ident jit_id;
	uint32_t nspid; /* its pid in its own namespace; 0: not read yet */
	uint64_t jit_check_ns; /* last look at the file */
	uint64_t jit_parse_ns; /* parsing spent, against a cap */
	bool jit_gone; /* the process is: the table is what it will be */
	bool jit_spent; /* the parse budget is spent (counted once) */
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
	size_t jit_next; /* the next snapshot whose perf map a tick looks at */
	struct lt_mfile **filev;
	size_t nfile, filecap;
	struct lt_elf **elfv;
	size_t nelf, elfcap;
	uint64_t seq;
	unsigned int held_fds;
	struct lt_mfile *vdso;
	bool vdso_tried;
	/* kernel */
	bool k_loaded, k_hidden;
	struct symtab ksyms;
	struct kmod *kmods;
	size_t nkmod, kmodcap, kmod_last;
	uint64_t ktext, ketext;
	struct lt_syms_stats st;
};

/* ---- ELF files (elf.c) ---- */

void lib_init(void);
/* lowercase hex of a build-id; NULL when empty, too long or out of memory */
#define BUILD_ID_MAX 64 /* bytes of a build-id note we accept */
char *hex_dup(const unsigned char *p, size_t n);
char *elf_build_id(Elf *elf);
int elf_read_loads(Elf *elf, struct load **out, size_t *n);
/* file offset -> ELF virtual address through the PT_LOAD segment holding it */
bool elf_off_to_vaddr(const struct lt_elf *e, uint64_t off, uint64_t *va);
Elf *elf_from_fd(int fd);
/* read the symbols of e now (they are read on first use) and let go of its file */
void elf_parse(struct lt_syms *s, struct lt_elf *e);
struct lt_elf *elf_new(struct lt_syms *s);
/*
 * The ELF contents of an opened file (fd is taken): the cached entry of its build-id, else a new
 * one that keeps fd until its symbols are needed. fd < 0: an entry without contents.
 */
struct lt_elf *elf_get(struct lt_syms *s, int fd);
/* does the ELF file at path name a dynamic linker (PT_INTERP)? */
bool elf_has_interp(const char *path);

/* ---- /proc (procmaps.c) ---- */

/* a whole /proc file, NUL-terminated; NULL and errno */
char *read_all(const char *path);
/* what is left of fd, at most max bytes, NUL-terminated; NULL and errno */
char *read_fd_max(int fd, size_t max);
/* "/proc/PID/maps" gone: the process is */
int proc_err(int e);

struct maps_line {
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	char *path;
};

/* one line of /proc/PID/maps (NUL-terminated, modified: " (deleted)" is cut) */
bool parse_maps_line(char *line, struct maps_line *m);
/* next line of a buffer, NUL-terminated in place; NULL at the end */
char *next_line(char **cur);

/*
 * The file of a mapping, opened: /proc/PID/map_files/RANGE (the very file, deleted or not; its
 * path in mf), else PATH inside the process's root (mf ""), when it is still the same inode.
 * The fd (O_RDONLY) and its identity in *id, or -1; never a device (opening one may have
 * effects), never a file outside the process's root.
 */
int map_file_open(uint32_t pid, const struct maps_line *m, struct ident *id, char *mf, size_t len);

/* the cached file of a mapping (its ELF contents by build-id), opened now if new; NULL: none */
struct lt_mfile *file_get(struct lt_syms *s, uint32_t pid, const struct maps_line *m);
/* the cached [vdso] image when it matches a mapping of map_len bytes, else NULL */
struct lt_mfile *vdso_file(struct lt_syms *s, uint64_t map_len);

/*
 * A perf map ("START SIZE NAME" lines, hex) from fd into t, sorted, within the caps: bytes read,
 * entries, budget_ns of parsing. True when cut at one of them.
 */
bool perfmap_parse(struct symtab *t, int fd, uint64_t budget_ns);

/* ---- kernel (kallsyms.c) ---- */

void kernel_reset(struct lt_syms *s);

#endif
