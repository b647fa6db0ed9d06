/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Symbolizer for profile and alloc: kernel addresses from /proc/kallsyms, user addresses through
 * snapshots of /proc/PID/maps and the symbol tables of the mapped ELF files (libelf). Pure layer:
 * no libbpf.
 */
#ifndef LT_SYM_H
#define LT_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* all caches: kallsyms, per-process map snapshots, ELF files by build-id */
struct lt_syms;

struct lt_syms *lt_syms_new(void);
void lt_syms_free(struct lt_syms *s);

/*
 * Snapshot /proc/TGID/maps now: the file-backed executable mappings (and [vdso]), with the
 * dev/inode, path and build-id of each file. Files are opened through /proc/TGID/map_files/ (else
 * /proc/TGID/root/PATH) and kept open until their symbols are read, so a process that exits or a
 * file that is deleted can still be symbolized. Kept per (tgid, comm): a process that exec'd keeps
 * the pre-exec snapshot under its old comm. 0 or -errno (-ESRCH: process gone); a no-op after the
 * first success for the same (tgid, comm).
 */
int lt_syms_snapshot(struct lt_syms *s, uint32_t tgid, const char *comm);

/*
 * Call every ~100 ms while snapshots are being taken: re-reads each new snapshot's process
 * 50 ms and ~550 ms after the first read (adding mappings as a refresh does), so a snapshot taken
 * mid-exec or before ld.so mapped the libraries is completed while the process still lives.
 */
void lt_syms_tick(struct lt_syms *s);

/* Strings point into the cache of the lt_syms and stay valid until lt_syms_free. */
struct lt_frame {
	const char *func; /* symbol name, NULL when unknown */
	uint64_t func_off; /* address - symbol start */
	/* full path of the file, "[kernel]", "[vdso]" or a kernel module like "[ext4]";
	 * NULL when the address is in no known mapping */
	const char *module;
	/* user: file offset of the address in module (address - map start + map pgoff);
	 * kernel: address - _text (modules: address - the module's first symbol) */
	uint64_t mod_off;
	const char *build_id; /* lowercase hex, NULL when the file has none */
	uint64_t map_start, map_limit, map_pgoff; /* the mapping (user), for pprof */
	uint64_t addr; /* the address asked for */
	bool off_unknown; /* mod_off means nothing: kallsyms addresses are hidden */
};

/*
 * Kernel address -> frame; /proc/kallsyms is read once, on first use. Addresses all zero
 * (kptr_restrict): every kernel frame is unknown, module "[kernel]" with off_unknown set.
 */
void lt_syms_kernel(struct lt_syms *s, uint64_t addr, struct lt_frame *f);
/* (Re)load the kernel symbols now from a file in kallsyms format (NULL: /proc/kallsyms), for
 * tests or a saved copy. 0 or -errno (then kernel frames are unknown). */
int lt_syms_load_kallsyms(struct lt_syms *s, const char *path);

/*
 * User address of process (tgid, comm) -> frame: the snapshot of (tgid, comm), else the newest
 * snapshot of tgid, else one taken now if the process is alive. An address in no mapping of a
 * snapshot re-reads the maps of a live process at most once a second and adds the new mappings
 * (dlopen after the snapshot), unless the process exec'd or its pid was reused. comm may be NULL
 * (any snapshot of tgid). Mappings of files the loader cannot open give module and offset only.
 */
void lt_syms_user(struct lt_syms *s, uint32_t tgid, const char *comm, uint64_t addr,
		  struct lt_frame *f);

/*
 * "func" when known (no +off), else "basename(module)+0xOFF", else "[unknown]". Returns the length
 * written; always NUL-terminated when len > 0, truncated to fit.
 */
size_t lt_frame_name(const struct lt_frame *f, char *buf, size_t len);

/*
 * Unwind tables (unwind.c, lt_unwind.h): rows compiled from each mapped file's CFI once per
 * build-id and placed into one table the caller provides (the BPF array, mmapped), by a bump
 * allocator: a file that does not fit gets no rows (frame pointers) and is counted.
 */
struct lt_uw_table {
	struct lt_uw_row *rows;
	uint32_t cap, used;
	uint64_t files; /* files with rows placed */
	uint64_t files_no_cfi; /* files with no usable CFI (no .eh_frame, unreadable): frame pointers */
	uint64_t files_full; /* files that did not fit in the table */
	uint64_t text_bytes; /* executable bytes of the files with rows */
	uint64_t build_ns; /* time spent reading CFI and compiling rows */
	uint64_t maps_over; /* executable mappings past LT_UW_MAPS in a process: frame pointers */
	uint64_t cfi_bad; /* malformed CFI entries skipped */
	uint64_t idx_rows; /* of used: the files' block indexes */
};

/*
 * The unwind view of live process tgid now: its executable file mappings (and [vdso]) in address
 * order, each with its file's rows; maps_hash (if not NULL): lt_hash_str of the maps text it is
 * made of. 0, or -ESRCH (gone), -errno.
 */
struct lt_uw_proc;
int lt_syms_unwind(struct lt_syms *s, struct lt_uw_table *t, uint32_t tgid, struct lt_uw_proc *out,
		   uint64_t *maps_hash);
/*
 * Rows the files mapped by tgid need, counting each file once across calls: to size the table
 * before it exists. The rows are built now and kept for lt_syms_unwind.
 */
uint64_t lt_syms_unwind_need(struct lt_syms *s, struct lt_uw_table *t, uint32_t tgid);

/*
 * Counters: ELF symbol tables parsed, /proc/PID/maps reads, kallsyms reads; perf maps parsed and
 * those cut (at the caps of bytes, entries or parse time, or not read again: budget spent).
 */
struct lt_syms_stats {
	uint64_t elf_parsed, snapshots, kallsyms_loads;
	uint64_t jit_read, jit_cut;
};

/* The pid in the innermost namespace: the last field of a /proc/PID/status's NSpid; 0: none. */
uint32_t lt_nspid_parse(const char *status);
void lt_syms_get_stats(const struct lt_syms *s, struct lt_syms_stats *st);

/*
 * For alloc: the file mapped by process pid that defines (exported in .dynsym, else .symtab;
 * STT_FUNC or STT_GNU_IFUNC) the function name, and the file offset of that function for a uprobe.
 * Search order as the dynamic linker binds: the main executable, the other libraries in
 * /proc/PID/maps order, then libc, then the dynamic linker, so an LD_PRELOADed allocator wins.
 * 0 and path (the plain path when it is the same file as seen by the process, else
 * /proc/PID/root/PATH, else /proc/PID/map_files/RANGE) and *off; -ESRCH: no such process; -ENOENT:
 * not found, path holds the libc (else the executable) path that was searched; -EAGAIN: not
 * found, and the process is still starting (a dynamic executable with no library mapped yet:
 * inside exec, or before its dynamic linker mapped the libraries); -ENAMETOOLONG.
 */
int lt_proc_find_func(uint32_t pid, const char *name, char *path, size_t path_len, uint64_t *off);

/* Same for one file: 0 and *off, -ENOENT (no such function or file), -ENOEXEC (not ELF), -errno. */
int lt_elf_find_func(const char *path, const char *name, uint64_t *off);

#endif
