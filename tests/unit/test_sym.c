// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Symbolizer: our own PIE functions and libc by address, unknown and anonymous addresses, the
 * caches, a child's snapshot after it exec'd and died (and a deleted file), kernel addresses, and
 * the uprobe lookup of alloc. Runs as root on /proc/self.
 */
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sym.h"
#include "tap.h"

/* a function of this (PIE) binary: big enough for an offset inside it */
__attribute__((noinline)) int lt_test_target_fn(int x)
{
	volatile int acc = x;

	for (int i = 0; i < x; i++)
		acc = acc * 31 + i;
	return acc;
}

/* a second one: another function of the same file */
__attribute__((noinline)) int lt_test_other_fn(int x)
{
	return lt_test_target_fn(x) + 1;
}

static uint64_t addr_of(void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;

	return b ? b + 1 : p;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* two paths of one file */
static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return a && b && !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

static bool is_hex_id(const char *id)
{
	if (!id || strlen(id) < 16)
		return false;
	return strspn(id, "0123456789abcdef") == strlen(id);
}

static void read_comm(pid_t pid, char *comm, size_t len)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/comm", pid);
	comm[0] = 0;
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, comm, len - 1);
	close(fd);
	comm[n > 0 ? n : 0] = 0;
	comm[strcspn(comm, "\n")] = 0;
}

static bool maps_contain(pid_t pid, const char *needle)
{
	char p[64], line[4096];
	bool found = false;
	FILE *fp;

	snprintf(p, sizeof(p), "/proc/%d/maps", pid);
	fp = fopen(p, "r");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp))
		found = strstr(line, needle) != NULL;
	fclose(fp);
	return found;
}

/* the first executable mapping of a file whose path ends with tail */
static bool exec_map(pid_t pid, const char *tail, uint64_t *start, uint64_t *pgoff)
{
	char p[64], line[4096], perms[8];
	unsigned long long s, e, off;
	bool found = false;
	FILE *fp;
	int n;

	snprintf(p, sizeof(p), "/proc/%d/maps", pid);
	fp = fopen(p, "r");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = 0;
		n = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %*u %n", &s, &e, perms, &off, &n) <
			    4 ||
		    !n || perms[2] != 'x' || !strstr(line + n, tail))
			continue;
		*start = s;
		*pgoff = off;
		found = true;
	}
	fclose(fp);
	return found;
}

/* wait until the child shows comm (it exec'd) */
static bool wait_comm(pid_t pid, const char *comm)
{
	char c[32];

	for (int i = 0; i < 500; i++) {
		read_comm(pid, c, sizeof(c));
		if (!strcmp(c, comm))
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * The comm changes early in exec, before the new program's segments (and its
 * libraries) are mapped: wait for the executable mapping of `tail` too.
 */
static bool wait_exec(pid_t pid, const char *comm, const char *tail, uint64_t *start,
		      uint64_t *pgoff)
{
	if (!wait_comm(pid, comm))
		return false;
	for (int i = 0; i < 500; i++) {
		if (exec_map(pid, tail, start, pgoff))
			return true;
		usleep(10000);
	}
	return false;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* address of `name` in /proc/kallsyms (0: absent or hidden), and its module */
static uint64_t kallsyms_addr(const char *name, bool want_module, char *mod, size_t mod_len,
			      char *found_name, size_t name_len)
{
	char line[1024], n[512], m[256], t;
	unsigned long long a;
	uint64_t r = 0;
	FILE *fp = fopen("/proc/kallsyms", "r");

	if (!fp)
		return 0;
	while (!r && fgets(line, sizeof(line), fp)) {
		m[0] = 0;
		if (sscanf(line, "%llx %c %511s %255s", &a, &t, n, m) < 3 || !a)
			continue;
		if (want_module ? (!m[0] || (t != 't' && t != 'T') || !strncmp(n, "__pfx_", 6) ||
				   !strcmp(m, "[bpf]"))
				: (m[0] || strcmp(n, name)))
			continue;
		r = a;
		if (mod)
			snprintf(mod, mod_len, "%s", m);
		if (found_name)
			snprintf(found_name, name_len, "%s", n);
	}
	fclose(fp);
	return r;
}

static void test_self(struct lt_syms *s, const char *comm)
{
	uint64_t fn = addr_of((void *)lt_test_target_fn), start = 0, pgoff = 0;
	struct lt_syms_stats st;
	struct lt_frame f;
	char name[64];

	ok(lt_syms_snapshot(s, getpid(), comm) == 0, "snapshot of ourselves");
	ok(lt_syms_snapshot(s, getpid(), comm) == 0, "snapshot again");
	lt_syms_get_stats(s, &st);
	ok(st.snapshots == 1,
	   "the second snapshot of (tgid, comm) reads nothing (%" PRIu64 " reads)", st.snapshots);

	lt_syms_user(s, getpid(), comm, fn, &f);
	ok(f.func && !strcmp(f.func, "lt_test_target_fn") && f.func_off == 0 && f.addr == fn,
	   "our PIE function by its address: %s+%" PRIu64, f.func ? f.func : "(null)", f.func_off);
	ok(f.module && !strcmp(base_name(f.module), "test_sym") && f.module[0] == '/' &&
		   is_hex_id(f.build_id),
	   "module %s, build-id %s", f.module ? f.module : "(null)",
	   f.build_id ? f.build_id : "(null)");
	ok(f.map_start <= fn && fn < f.map_limit && f.mod_off == fn - f.map_start + f.map_pgoff,
	   "mapping and file offset 0x%" PRIx64, f.mod_off);
	exec_map(getpid(), "/test_sym", &start, &pgoff);
	ok(f.map_start == start && f.map_pgoff == pgoff,
	   "the mapping is the one of /proc/self/maps");
	ok(lt_frame_name(&f, name, sizeof(name)) == strlen("lt_test_target_fn") &&
		   !strcmp(name, "lt_test_target_fn"),
	   "frame name without offset");

	lt_syms_user(s, getpid(), comm, fn + 5, &f);
	ok(f.func && !strcmp(f.func, "lt_test_target_fn") && f.func_off == 5,
	   "an address inside it: func_off %" PRIu64, f.func_off);
	lt_syms_user(s, getpid(), NULL, addr_of((void *)lt_test_other_fn), &f);
	ok(f.func && !strcmp(f.func, "lt_test_other_fn") && f.func_off == 0,
	   "another function, any comm: %s", f.func ? f.func : "(null)");
	lt_syms_get_stats(s, &st);
	ok(st.elf_parsed == 1 && st.snapshots == 1,
	   "the binary's symbols were parsed once (%" PRIu64 "), maps read once (%" PRIu64 ")",
	   st.elf_parsed, st.snapshots);
}

static void test_libc(struct lt_syms *s, const char *comm)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid"), *other = dlsym(RTLD_DEFAULT, "getppid");
	struct lt_syms_stats st0, st;
	struct lt_frame f;
	Dl_info di = {};
	void *h;

	lt_syms_get_stats(s, &st0);
	ok(fn && dladdr(fn, &di) && di.dli_sname, "dladdr(getpid): %s in %s",
	   di.dli_sname ? di.dli_sname : "(null)", di.dli_fname ? di.dli_fname : "(null)");
	lt_syms_user(s, getpid(), comm, addr_of(fn), &f);
	/* an alias at the same address is as good (getpid, __getpid) */
	ok(f.func && f.func_off == 0 &&
		   (!strcmp(f.func, di.dli_sname ? di.dli_sname : "") ||
		    dlsym(RTLD_DEFAULT, f.func) == fn || ends_with(f.func, "getpid")),
	   "libc's getpid: %s+%" PRIu64, f.func ? f.func : "(null)", f.func_off);
	ok(f.module && di.dli_fname && !strcmp(base_name(f.module), base_name(di.dli_fname)) &&
		   is_hex_id(f.build_id),
	   "in %s (build-id %s)", f.module ? f.module : "(null)",
	   f.build_id ? f.build_id : "(null)");
	lt_syms_user(s, getpid(), comm, addr_of(other) + 1, &f);
	ok(f.func && f.func_off == 1, "getppid+1: %s+%" PRIu64, f.func ? f.func : "(null)",
	   f.func_off);
	lt_syms_get_stats(s, &st);
	ok(st.elf_parsed == st0.elf_parsed + 1, "libc parsed once for two lookups (%" PRIu64 ")",
	   st.elf_parsed - st0.elf_parsed);

	/* the vdso is no file: its image is read from memory */
	h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	/* arm64's vdso names its functions __kernel_* */
#ifdef __aarch64__
	fn = h ? dlsym(h, "__kernel_clock_gettime") : NULL;
#else
	fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
#endif
	if (fn) {
		lt_syms_user(s, getpid(), comm, addr_of(fn), &f);
		ok(f.module && !strcmp(f.module, "[vdso]") && f.func &&
			   strstr(f.func, "clock_gettime") && f.func_off == 0,
		   "vdso: %s in %s", f.func ? f.func : "(null)", f.module ? f.module : "(null)");
	} else {
		ok(1, "# skip no vdso (valgrind?)");
	}
	if (h)
		dlclose(h);
}

static void test_unknown(struct lt_syms *s, const char *comm)
{
	static const uint64_t bad[] = {
		0, 0x10, 0x1000, UINT64_MAX, UINT64_MAX - 4095, 0x00007fffffffffffull
	};
	char name[64];
	struct lt_frame f;
	int fails = 0;
	void *anon;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		lt_syms_user(s, getpid(), comm, bad[i], &f);
		lt_frame_name(&f, name, sizeof(name));
		fails += f.func || f.module || f.addr != bad[i] || strcmp(name, "[unknown]");
	}
	ok(!fails, "addresses in no mapping: [unknown] (%d wrong)", fails);

	/* JIT-like: anonymous, executable, after the snapshot */
	anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (anon == MAP_FAILED)
		anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	lt_syms_user(s, getpid(), comm, addr_of(anon) + 100, &f);
	lt_frame_name(&f, name, sizeof(name));
	ok(anon != MAP_FAILED && !f.func && !f.module && !strcmp(name, "[unknown]"),
	   "an anonymous mapping: %s", name);
	munmap(anon, 8192);

	lt_syms_user(s, 0, comm, 0x401000, &f);
	ok(!f.func && !f.module, "tgid 0: unknown");
	lt_syms_user(s, 0x7ffffff0, "nobody", 0x401000, &f);
	ok(!f.func && !f.module, "a pid that does not exist: unknown");
	ok(lt_syms_snapshot(s, 0x7ffffff0, "nobody") == -ESRCH, "its snapshot: -ESRCH");
	lt_syms_user(NULL, getpid(), comm, 0x1000, &f);
	ok(!f.func && !f.module, "no lt_syms: unknown");
}

/*
 * A library this process has not mapped, and a function of it: libm, unless a sanitizer's runtime
 * (which needs libm) mapped it already; NULL when every candidate is mapped.
 */
struct late_lib {
	const char *soname, *needle, *fn;
};

static const struct late_lib *late_lib(void)
{
	static const struct late_lib libs[] = {
		{ "libm.so.6", "/libm.so", "cbrt" },
		{ "libcrypt.so.1", "/libcrypt.so", "crypt" },
	};

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!maps_contain(getpid(), libs[i].needle))
			return &libs[i];
	return NULL;
}

/*
 * A child that maps a library after its snapshot and dies before symbolization: lt_syms_tick
 * re-reads a young snapshot while the process lives (the exec race of a system-wide profile);
 * without a tick the frame stays unknown.
 */
static bool young_child(struct lt_syms *s, const char *comm, const struct late_lib *lib, bool tick,
			char *name, size_t len)
{
	int go[2], back[2];
	uint64_t addr = 0;
	struct lt_frame f;
	bool good;
	pid_t pid;
	char c = 0;

	if (pipe(go) || pipe(back))
		return false;
	pid = fork();
	if (pid == 0) {
		void *h, *fn;

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		h = dlopen(lib->soname, RTLD_NOW);
		fn = h ? dlsym(h, lib->fn) : NULL;
		addr = addr_of(fn);
		if (write(back[1], &addr, sizeof(addr)) != sizeof(addr) || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	good = pid > 0 && !maps_contain(pid, lib->needle) && lt_syms_snapshot(s, pid, comm) == 0 &&
	       write(go[1], &c, 1) == 1 && read(back[0], &addr, sizeof(addr)) == sizeof(addr) &&
	       addr;
	if (good && tick) {
		usleep(60 * 1000);
		lt_syms_tick(s);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		reap(pid);
	}
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);
	lt_syms_user(s, pid, comm, addr, &f);
	lt_frame_name(&f, name, len);
	return good;
}

static void test_young(struct lt_syms *s, const char *comm)
{
	const struct late_lib *lib = late_lib();
	char name[64];

	if (!lib) {
		ok(1, "# skip libm and libcrypt are both mapped already");
		ok(1, "# skip libm and libcrypt are both mapped already");
		return;
	}
	ok(young_child(s, comm, lib, true, name, sizeof(name)) && !strcmp(name, lib->fn),
	   "%s mapped after the snapshot, a tick, then the child died: %s", lib->soname, name);
	ok(young_child(s, comm, lib, false, name, sizeof(name)) && !strcmp(name, "[unknown]"),
	   "the same without a tick: %s", name);
}

/* a library loaded after the snapshot: a miss re-reads the maps (at most once a second) */
static void test_dlopen(struct lt_syms *s, const char *comm)
{
	const struct late_lib *lib = late_lib();
	void *h = lib ? dlopen(lib->soname, RTLD_NOW) : NULL, *fn = h ? dlsym(h, lib->fn) : NULL;
	struct lt_syms_stats st0, st;
	struct lt_frame f;

	if (!lib) {
		ok(1, "# skip libm and libcrypt are both mapped already");
		return;
	}
	lt_syms_get_stats(s, &st0);
	usleep(1100 * 1000);
	if (fn)
		lt_syms_user(s, getpid(), comm, addr_of(fn), &f);
	lt_syms_get_stats(s, &st);
	ok(fn && f.func && strstr(f.func, lib->fn) && f.func_off == 0 && f.module &&
		   strstr(f.module, lib->needle) && st.snapshots == st0.snapshots + 1,
	   "dlopen'd after the snapshot: %s in %s, maps re-read %" PRIu64 " time(s)",
	   fn && f.func ? f.func : "(null)", fn && f.module ? f.module : "(null)",
	   st.snapshots - st0.snapshots);
	if (h)
		dlclose(h);
}

static void test_names(void)
{
	struct lt_frame f = { .func = "lt_test_target_fn" };
	char buf[64];

	ok(lt_frame_name(&f, buf, 4) == 3 && !strcmp(buf, "lt_"), "truncated to fit: %s", buf);
	ok(lt_frame_name(&f, buf, 0) == 0, "no room: 0");
	f = (struct lt_frame){ .module = "/usr/lib/libfoo.so.1", .mod_off = 0x1a2b };
	ok(lt_frame_name(&f, buf, sizeof(buf)) == strlen("libfoo.so.1+0x1a2b") &&
		   !strcmp(buf, "libfoo.so.1+0x1a2b"),
	   "module and offset: %s", buf);
	f = (struct lt_frame){ .module = "[kernel]", .mod_off = 0x10 };
	lt_frame_name(&f, buf, sizeof(buf));
	ok(!strcmp(buf, "[kernel]+0x10"), "kernel, no symbol: %s", buf);
	f.off_unknown = true; /* kallsyms addresses hidden */
	lt_frame_name(&f, buf, sizeof(buf));
	ok(!strcmp(buf, "[unknown]"), "hidden kallsyms: %s", buf);
	ok(lt_frame_name(NULL, buf, sizeof(buf)) == 9 && !strcmp(buf, "[unknown]"), "no frame");
}

/* a copy of /bin/sleep under /tmp; NULL when /tmp cannot hold it */
static bool copy_file(const char *from, char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out = mkstemp(to);
	bool good = in >= 0 && out >= 0;

	while (good && (n = read(in, buf, sizeof(buf))) > 0)
		good = write(out, buf, (size_t)n) == n;
	if (out >= 0)
		good = !fchmod(out, 0755) && !close(out) && good;
	if (in >= 0)
		close(in);
	return good;
}

static void test_child(struct lt_syms *s, const char *comm)
{
	uint64_t fn = addr_of((void *)lt_test_target_fn), start = 0, pgoff = 0;
	struct lt_syms_stats st0, st;
	char tmp[] = "/tmp/lt_symtestXXXXXX", tmp_comm[32], name[64], *sleep_bid = NULL;
	int go[2], ready[2];
	struct lt_frame f;
	pid_t pid;
	char c = 0;

	lt_syms_get_stats(s, &st0);
	if (pipe(go) || pipe(ready))
		return;
	pid = fork();
	if (pid == 0) {
		lt_test_target_fn(3);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	ok(pid > 0 && read(ready[0], &c, 1) == 1, "child %d started", pid);
	ok(lt_syms_snapshot(s, pid, comm) == 0, "snapshot of the child before exec (%s)", comm);
	ok(write(go[1], &c, 1) == 1 && wait_exec(pid, "sleep", "/sleep", &start, &pgoff),
	   "the child exec'd /bin/sleep");
	ok(lt_syms_snapshot(s, pid, "sleep") == 0 && exec_map(pid, "/sleep", &start, &pgoff),
	   "snapshot after exec: sleep's code at 0x%" PRIx64, start);
	reap(pid);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);

	lt_syms_user(s, pid, comm, fn + 3, &f);
	ok(f.func && !strcmp(f.func, "lt_test_target_fn") && f.func_off == 3,
	   "dead child, pre-exec comm: %s+%" PRIu64, f.func ? f.func : "(null)", f.func_off);
	lt_syms_user(s, pid, "sleep", start + 16, &f);
	lt_frame_name(&f, name, sizeof(name));
	ok(f.module && ends_with(f.module, "/sleep") && f.mod_off == pgoff + 16 &&
		   is_hex_id(f.build_id),
	   "dead child, post-exec comm: %s (%s, build-id %s)", name, f.module ? f.module : "(null)",
	   f.build_id ? f.build_id : "(null)");
	ok(f.func || !strncmp(name, "sleep+0x", 8), "named by function or module+offset: %s", name);
	sleep_bid = f.build_id ? strdup(f.build_id) : NULL;
	lt_syms_user(s, pid, "sleep", fn, &f);
	ok(!f.func || strcmp(f.func, "lt_test_target_fn"),
	   "the post-exec snapshot does not see the old image");
	lt_syms_get_stats(s, &st);
	ok(st.snapshots >= st0.snapshots + 2, "one maps read per comm (%" PRIu64 ")",
	   st.snapshots - st0.snapshots);

	/* a deleted executable: opened through /proc/PID/map_files */
	if (!copy_file("/bin/sleep", tmp)) {
		ok(1, "# skip cannot copy /bin/sleep to /tmp");
		unlink(tmp);
		free(sleep_bid);
		return;
	}
	if (pipe(go))
		return;
	pid = fork();
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		execl(tmp, "lt_symtest", "30", (char *)NULL);
		_exit(127);
	}
	snprintf(tmp_comm, sizeof(tmp_comm), "%.15s", base_name(tmp));
	start = 0;
	if (write(go[1], &c, 1) == 1 && wait_exec(pid, tmp_comm, tmp, &start, &pgoff) &&
	    !unlink(tmp) && exec_map(pid, tmp, &start, &pgoff) && maps_contain(pid, "(deleted)")) {
		ok(lt_syms_snapshot(s, pid, tmp_comm) == 0, "snapshot with a deleted executable");
		reap(pid);
		lt_syms_user(s, pid, tmp_comm, start, &f);
		ok(f.module && !strcmp(f.module, tmp) && f.mod_off == pgoff && f.build_id &&
			   sleep_bid && !strcmp(f.build_id, sleep_bid),
		   "its path without \" (deleted)\", build-id %s like /bin/sleep",
		   f.build_id ? f.build_id : "(null)");
	} else {
		ok(0, "child with a deleted executable did not start");
		reap(pid);
		unlink(tmp);
	}
	close(go[0]);
	close(go[1]);
	free(sleep_bid);
}

static void test_kernel(struct lt_syms *s)
{
	char mod[256], mname[512];
	uint64_t a = kallsyms_addr("schedule", false, NULL, 0, NULL, 0);
	uint64_t text = kallsyms_addr("_text", false, NULL, 0, NULL, 0), ma;
	struct lt_syms_stats st;
	struct lt_frame f;
	char name[64];

	if (!a) {
		printf("# kallsyms addresses are hidden (kptr_restrict): kernel lookups skipped\n");
		lt_syms_kernel(s, 0xffffffff81000000ull, &f);
		ok(!f.func && f.off_unknown, "# skip hidden kallsyms: every kernel frame unknown");
		return;
	}
	lt_syms_kernel(s, a, &f);
	lt_frame_name(&f, name, sizeof(name));
	ok(f.func && !strcmp(f.func, "schedule") && f.func_off == 0 && !strcmp(name, "schedule"),
	   "kernel: schedule at 0x%" PRIx64 " -> %s", a, name);
	ok(f.module && !strcmp(f.module, "[kernel]") && f.mod_off == a - text && !f.off_unknown,
	   "in [kernel] at _text+0x%" PRIx64 " (build-id %s)", f.mod_off,
	   f.build_id ? f.build_id : "(null)");
	lt_syms_kernel(s, a + 8, &f);
	ok(f.func && !strcmp(f.func, "schedule") && f.func_off == 8, "schedule+8");
	ma = kallsyms_addr(NULL, true, mod, sizeof(mod), mname, sizeof(mname));
	if (ma) {
		lt_syms_kernel(s, ma, &f);
		ok(f.func && f.func_off == 0 && f.module && !strcmp(f.module, mod),
		   "module symbol %s %s -> %s in %s", mname, mod, f.func ? f.func : "(null)",
		   f.module ? f.module : "(null)");
	} else {
		ok(1, "# skip no kernel module loaded");
	}
	lt_syms_kernel(s, 0x1000, &f);
	ok(!f.func && !f.module, "a user address is no kernel symbol");
	lt_syms_get_stats(s, &st);
	ok(st.kallsyms_loads == 1, "kallsyms read once (%" PRIu64 ")", st.kallsyms_loads);
}

/* the machine's Debian multiarch directory */
#ifdef __aarch64__
#define MULTIARCH_LIB "/lib/aarch64-linux-gnu"
#else
#define MULTIARCH_LIB "/lib/x86_64-linux-gnu"
#endif

/* glibc's malloc-tracing library, an LD_PRELOAD that defines malloc and calloc, not all */
#define PRELOAD_LIB MULTIARCH_LIB "/libmemusage.so"

/* `sleep 30` with PRELOAD_LIB preloaded, stopped at its exec when traced; -1 on failure */
static pid_t spawn_preloaded(bool traced)
{
	char *const env[] = { "LD_PRELOAD=" PRELOAD_LIB, NULL };
	pid_t pid = fork();

	if (pid == 0) {
		if (traced)
			ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execle("/bin/sleep", "sleep", "30", (char *)NULL, env);
		_exit(127);
	}
	return pid;
}

/* an LD_PRELOADed malloc (glibc's libmemusage.so) wins over libc's, as in the dynamic linker */
static void test_preload(void)
{
	const char *lib = PRELOAD_LIB;
	char path[4096];
	uint64_t off = 0, off2 = 1, start, pgoff;
	pid_t pid;
	int r;

	if (access(lib, R_OK)) {
		ok(1, "# skip no %s", lib);
		return;
	}
	pid = spawn_preloaded(false);
	/*
	 * the comm changes at exec, before the dynamic linker maps the preload, then libc's code
	 * (before the exec, the forked child maps this program's libc)
	 */
	if (pid > 0 && wait_comm(pid, "sleep"))
		for (int i = 0; i < 500 && !(exec_map(pid, "/libmemusage.so", &start, &pgoff) &&
					     exec_map(pid, "/libc.so.6", &start, &pgoff));
		     i++)
			usleep(10000);
	if (pid < 0 || !exec_map(pid, "/libmemusage.so", &start, &pgoff) ||
	    !exec_map(pid, "/libc.so.6", &start, &pgoff)) {
		ok(0, "child with LD_PRELOAD did not start");
		if (pid > 0)
			reap(pid);
		return;
	}
	r = lt_proc_find_func(pid, "malloc", path, sizeof(path), &off);
	ok(r == 0 && ends_with(path, "/libmemusage.so") &&
		   !lt_elf_find_func(lib, "malloc", &off2) && off == off2,
	   "LD_PRELOAD: malloc in %s+0x%" PRIx64, path, off);
	r = lt_proc_find_func(pid, "calloc", path, sizeof(path), &off);
	ok(r == 0 && ends_with(path, "/libmemusage.so"), "and calloc: %s", path);
	r = lt_proc_find_func(pid, "posix_memalign", path, sizeof(path), &off);
	ok(r == 0 && ends_with(path, "/libc.so.6"), "what it does not define stays libc's: %s",
	   path);
	reap(pid);
}

static bool write_tmp(char *tmp, const char *text)
{
	int fd = mkstemp(tmp);
	bool good = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return good;
}

/* kallsyms text of our own: aliases, modules, the tail of a module, hidden addresses */
static void test_kallsyms_file(void)
{
	static const char text[] = "ffffffff81000000 T _text\n"
				   "ffffffff81000000 T startup_64\n"
				   "ffffffff81000100 t __foo_local\n"
				   "ffffffff81000100 T foo\n"
				   "ffffffff81000200 W bar\n"
				   "ffffffff81000300 D some_data\n"
				   "ffffffff81000400 T _etext\n"
				   "ffffffffc0001000 t fake_fn\t[lt_fake]\n"
				   "ffffffffc0001100 T fake_last\t[lt_fake]\n"
				   "ffffffffc0001100 d fake_data\t[lt_fake]\n"
				   "ffffffffc0200000 t bpf_prog_0123456789abcdef_x\t[bpf]\n"
				   "garbage line\n"
				   "ffffffffc0300000\n";
	static const char hidden[] = "0000000000000000 T _text\n"
				     "0000000000000000 T schedule\n"
				     "0000000000000000 t fake_fn\t[lt_fake]\n";
	char tmp[] = "/tmp/lt_symksymsXXXXXX", tmp2[] = "/tmp/lt_symksymsXXXXXX", name[64];
	struct lt_syms *s = lt_syms_new();
	struct lt_frame f;

	if (!write_tmp(tmp, text) || !write_tmp(tmp2, hidden) || !s) {
		ok(0, "temporary kallsyms files");
		goto out;
	}
	ok(lt_syms_load_kallsyms(s, tmp) == 0, "kallsyms from a file");
	lt_syms_kernel(s, 0xffffffff81000000ull, &f);
	ok(f.func && !strcmp(f.func, "startup_64") && f.mod_off == 0, "alias: %s over _text",
	   f.func ? f.func : "(null)");
	lt_syms_kernel(s, 0xffffffff81000110ull, &f);
	ok(f.func && !strcmp(f.func, "foo") && f.func_off == 0x10 && f.mod_off == 0x110 &&
		   !strcmp(f.module, "[kernel]"),
	   "global foo over local __foo_local: %s+0x%" PRIx64, f.func ? f.func : "(null)",
	   f.func_off);
	lt_syms_kernel(s, 0xffffffff81000320ull, &f);
	ok(f.func && !strcmp(f.func, "bar") && f.func_off == 0x120,
	   "data symbols do not cut a function: %s+0x%" PRIx64, f.func ? f.func : "(null)",
	   f.func_off);
	lt_syms_kernel(s, 0xffffffffc0001004ull, &f);
	ok(f.func && !strcmp(f.func, "fake_fn") && f.module && !strcmp(f.module, "[lt_fake]") &&
		   f.mod_off == 4 && !f.build_id,
	   "module symbol: %s in %s, 0x%" PRIx64 " into the module", f.func ? f.func : "(null)",
	   f.module ? f.module : "(null)", f.mod_off);
	lt_syms_kernel(s, 0xffffffffc0001180ull, &f);
	ok(f.func && !strcmp(f.func, "fake_last"), "the module's last symbol");
	lt_syms_kernel(s, 0xffffffffc0101100ull, &f);
	lt_frame_name(&f, name, sizeof(name));
	ok(!f.func && !f.module && !strcmp(name, "[unknown]"),
	   "far past a module's last symbol: %s", name);
	lt_syms_kernel(s, 0xffffffffc0200008ull, &f);
	ok(f.func && !strncmp(f.func, "bpf_prog_", 9) && !strcmp(f.module, "[bpf]"),
	   "a BPF program: %s", f.func ? f.func : "(null)");
	lt_syms_kernel(s, 0xffffffff80000000ull, &f);
	ok(!f.func && !f.module, "below _text: unknown");

	ok(lt_syms_load_kallsyms(s, tmp2) == 0, "kallsyms with hidden addresses");
	lt_syms_kernel(s, 0xffffffff81000000ull, &f);
	lt_frame_name(&f, name, sizeof(name));
	ok(!f.func && f.module && !strcmp(f.module, "[kernel]") && f.off_unknown &&
		   !strcmp(name, "[unknown]"),
	   "hidden: module %s, named %s", f.module ? f.module : "(null)", name);
	ok(lt_syms_load_kallsyms(s, "/nonexistent") == -ENOENT, "missing file: -ENOENT");
	lt_syms_kernel(s, 0xffffffff81000000ull, &f);
	ok(!f.func && f.off_unknown, "then kernel frames are unknown");
out:
	unlink(tmp);
	unlink(tmp2);
	lt_syms_free(s);
}

/* a dynamic program stopped just after its exec: no library mapped yet, so -EAGAIN, not -ENOENT */
static void test_find_starting(void)
{
	char path[4096];
	uint64_t off;
	pid_t pid;
	int st, r = 0;

	pid = fork();
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFSTOPPED(st))
		r = lt_proc_find_func(pid, "malloc", path, sizeof(path), &off);
	ok(r == -EAGAIN, "a process stopped right after exec is still starting: %d", r);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
}

/*
 * ld.so maps an LD_PRELOAD before the program's libraries: stopped at each system call of a
 * preloaded start, a lookup between the preload's mapping and libc's is "still starting"
 * (-EAGAIN), never "not found" (CI once read posix_memalign as missing there), and malloc is
 * already the preload's
 */
static void test_find_preload_starting(void)
{
	int st, r, between = 0, bad_mem = 0, bad_malloc = 0, r_after = -1;
	char path[4096], mpath[4096] = "";
	uint64_t off, start, pgoff;
	pid_t pid;

	if (access(PRELOAD_LIB, R_OK)) {
		ok(1, "# skip no %s", PRELOAD_LIB);
		return;
	}
	pid = spawn_preloaded(true);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		ok(0, "child with LD_PRELOAD did not stop at its exec");
		return;
	}
	/* every system call stop of ld.so until libc's code is mapped (a few dozen) */
	for (int i = 0; i < 2000 && !exec_map(pid, "/libc.so.6", &start, &pgoff); i++) {
		if (exec_map(pid, "/libmemusage.so", &start, &pgoff)) {
			between++;
			r = lt_proc_find_func(pid, "posix_memalign", path, sizeof(path), &off);
			bad_mem += r != -EAGAIN;
			r = lt_proc_find_func(pid, "malloc", mpath, sizeof(mpath), &off);
			bad_malloc += r != 0 || !ends_with(mpath, "/libmemusage.so");
		}
		if (ptrace(PTRACE_SYSCALL, pid, NULL, NULL) || waitpid(pid, &st, 0) != pid ||
		    !WIFSTOPPED(st))
			break;
	}
	if (exec_map(pid, "/libc.so.6", &start, &pgoff))
		r_after = lt_proc_find_func(pid, "posix_memalign", path, sizeof(path), &off);
	ok(between && !bad_mem,
	   "the preload's code mapped, libc's not yet: posix_memalign still starting at %d of %d "
	   "stops",
	   between - bad_mem, between);
	ok(between && !bad_malloc, "and malloc the preload's: %s (%d of %d stops wrong)", mpath,
	   bad_malloc, between);
	ok(r_after == 0 && ends_with(path, "/libc.so.6"),
	   "libc mapped: posix_memalign is libc's: %s", path);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/*
 * A process that execs while its maps are read (a shell's child between its redirections and
 * its exec): the files of the old image vanish from map_files under the reader. That must read
 * as "still starting" (-EAGAIN, the caller asks again), never as "no malloc" (-ENOENT). The
 * child execs this program (argument --idle: it waits to be killed) after a varying delay, so
 * some of the lookups land inside the exec; without the check 2-5 % of them did here.
 */
static void test_find_exec_race(void)
{
	/* 1 000 here; 250 in the emulated guests of make vmtest, where each takes 10 times as long */
	int n = getenv("VM_RESULTS") ? 250 : 1000;
	int found = 0, again = 0, notfound = 0, other = 0;

	for (int i = 0; i < n; i++) {
		char path[4096];
		uint64_t off;
		int go[2], r;
		pid_t pid;

		if (pipe(go))
			break;
		pid = fork();
		if (!pid) {
			char c;

			close(go[1]);
			if (read(go[0], &c, 1) == 1)
				usleep((i * 37) % 900);
			execl("/proc/self/exe", "test_sym", "--idle", (char *)NULL);
			_exit(127);
		}
		close(go[0]);
		if (pid < 0 || write(go[1], "g", 1) != 1) {
			close(go[1]);
			break;
		}
		r = lt_proc_find_func(pid, "malloc", path, sizeof(path), &off);
		found += r == 0;
		again += r == -EAGAIN;
		notfound += r == -ENOENT;
		other += r && r != -EAGAIN && r != -ENOENT;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(go[1]);
	}
	ok(found + again == n && !notfound,
	   "%d lookups racing an exec: %d found, %d still starting, %d not found, %d other", n,
	   found, again, notfound, other);
}

static void test_find_func(const char *comm)
{
	char path[4096], path2[4096];
	uint64_t off = 0, off2 = 1, fn = addr_of((void *)lt_test_target_fn);
	struct lt_syms *s;
	struct lt_frame f;
	Dl_info dl = { 0 };
	int r;

	/* the file the dynamic linker binds malloc to: libc, unless a sanitizer's runtime (in
	 * the executable or its own library) interposes it */
	r = lt_proc_find_func(getpid(), "malloc", path, sizeof(path), &off);
	ok(r == 0 && dladdr(dlsym(RTLD_DEFAULT, "malloc"), &dl) && same_file(path, dl.dli_fname) &&
		   strncmp(path, "/proc/", 6),
	   "malloc of pid %d: %s+0x%" PRIx64 " (bound in %s)", getpid(), path, off,
	   dl.dli_fname ? dl.dli_fname : "?");
	ok(lt_elf_find_func(path, "malloc", &off2) == 0 && off2 == off && off,
	   "the same offset from the file: 0x%" PRIx64, off2);

	r = lt_proc_find_func(getpid(), "lt_no_such_function", path, sizeof(path), &off);
	ok(r == -ENOENT && ends_with(path, "/libc.so.6"), "unknown function: %d, searched %s", r,
	   path);
	r = lt_proc_find_func(0x7ffffff0, "malloc", path, sizeof(path), &off);
	ok(r == -ESRCH, "no such process: %d", r);
	r = lt_proc_find_func(getpid(), "malloc", path, 4, &off);
	ok(r == -ENAMETOOLONG, "path buffer too small: %d", r);
	test_find_starting();
	test_find_exec_race();

	/* a function of the executable (in .symtab only): the exe comes first */
	r = lt_proc_find_func(getpid(), "lt_test_target_fn", path, sizeof(path), &off);
	s = lt_syms_new();
	lt_syms_user(s, getpid(), comm, fn, &f);
	ok(r == 0 && ends_with(path, "/test_sym") && f.func && off == f.mod_off,
	   "our own function: %s+0x%" PRIx64 ", the file offset of its address", path, off);
	lt_syms_free(s);

	snprintf(path2, sizeof(path2), "%s", path);
	ok(lt_elf_find_func("/nonexistent/lib.so", "malloc", &off) == -ENOENT, "no such file");
	test_preload();
	test_find_preload_starting();
	ok(lt_elf_find_func("/proc/self/status", "malloc", &off) == -ENOEXEC &&
		   lt_elf_find_func("/dev/null", "malloc", &off) == -ENOEXEC,
	   "not ELF, not a regular file");
	ok(lt_elf_find_func(path2, "lt_test_static_missing", &off) == -ENOENT, "not in the file");
}

/* a corrupt ELF mapped executable: symbolizing in it must not crash */
static void test_garbage(const char *comm)
{
	char tmp[] = "/tmp/lt_symjunkXXXXXX", buf[8192];
	struct lt_syms *s;
	struct lt_frame f;
	void *m;
	int fd = mkstemp(tmp), bad = 0;

	if (fd < 0) {
		ok(1, "# skip no /tmp");
		return;
	}
	srand(42);
	for (int round = 0; round < 8; round++) {
		int in = open("/proc/self/exe", O_RDONLY);
		ssize_t n = in >= 0 ? read(in, buf, sizeof(buf)) : -1;

		if (in >= 0)
			close(in);
		if (n != sizeof(buf))
			break;
		/* the real headers, then damage: program and section headers, notes */
		for (int k = 0; k < 40 * (round + 1); k++)
			buf[16 + rand() % (sizeof(buf) - 16)] = (char)rand();
		if (ftruncate(fd, 0) || pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf))
			break;
		m = mmap(NULL, sizeof(buf), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			ok(1, "# skip cannot map /tmp executable (noexec?)");
			break;
		}
		s = lt_syms_new();
		for (uint64_t o = 0; o < sizeof(buf); o += 512) {
			lt_syms_user(s, getpid(), comm, addr_of(m) + o, &f);
			bad += !f.module || strcmp(f.module, tmp);
		}
		lt_syms_free(s);
		munmap(m, sizeof(buf));
	}
	ok(!bad, "a damaged ELF file: module and offset, no crash (%d wrong)", bad);
	close(fd);
	unlink(tmp);
}

/* NSpid of /proc/PID/status: the last field (the innermost namespace); hostile lines give 0 */
static void test_nspid(void)
{
	static const struct {
		const char *status;
		uint32_t want;
	} c[] = {
		{ "Name:\tx\nNSpid:\t4242\n", 4242 },
		{ "Name:\tx\nNSpid:\t4242\t17\t1\nNSpgid:\t4242\t17\t1\n", 1 },
		{ "NSpid:\t4242\t17", 17 },
		{ "Name:\tNSpid: 5\nNSpid:\t9\t3\n", 3 },
		{ "Name:\tx\nNSpid:\t4294967295\n", 4294967295u },
		{ "Name:\tx\nNSpid:\t4294967296\n", 0 },
		{ "Name:\tx\nNSpid:\t99999999999999999999999\t1\n", 0 },
		{ "Name:\tx\nNSpid:\t12x\t1\n", 0 },
		{ "Name:\tx\nNSpid:\t-1\n", 0 },
		{ "Name:\tx\nNSpid:\n", 0 },
		{ "Name:\tx\n", 0 },
		{ "", 0 },
	};
	char many[1024] = "NSpid:";

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ok(lt_nspid_parse(c[i].status) == c[i].want, "NSpid case %zu: %u (got %u)", i,
		   c[i].want, lt_nspid_parse(c[i].status));
	ok(lt_nspid_parse(NULL) == 0, "NSpid of no status: 0");
	for (int i = 0; i < 65; i++)
		strcat(many, "\t7");
	ok(lt_nspid_parse(many) == 0, "NSpid with 65 fields (namespaces nest 32 deep): refused");
}

int main(int argc, char **argv)
{
	struct lt_syms *s;
	char comm[32];

	if (argc > 1 && !strcmp(argv[1], "--idle")) {
		pause(); /* test_find_exec_race's exec target */
		return 0;
	}
	s = lt_syms_new();
	setvbuf(stdout, NULL, _IOLBF, 0);
	read_comm(getpid(), comm, sizeof(comm));
	ok(s != NULL, "lt_syms_new (comm %s)", comm);
	if (!s)
		return tap_done();
	test_self(s, comm);
	test_libc(s, comm);
	test_unknown(s, comm);
	test_young(s, comm);
	test_dlopen(s, comm);
	test_names();
	test_nspid();
	test_child(s, comm);
	test_kernel(s);
	test_kallsyms_file();
	lt_syms_free(s);
	test_find_func(comm);
	test_garbage(comm);
	return tap_done();
}
