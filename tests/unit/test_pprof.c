// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pprof writer, read back by an independent decoder: gzip -dc, then protoc with the
 * schema in tests/unit/profile.proto; the decoded text is parsed here and every id is
 * resolved through the tables. protoc --encode of that text must give the same bytes
 * (canonical protobuf). Also: dedup, 10 000 samples, write errors, and every allocation
 * failing in turn (malloc is interposed below).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pprof.h"
#include "tap.h"

/* ---- for the ENOMEM test: malloc that fails its fail_nth call from when that is set ---- */

#if defined(__SANITIZE_ADDRESS__)
#define LT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LT_ASAN 1
#endif
#endif

#ifdef LT_ASAN
/* AddressSanitizer's own allocator (gcc and clang export it under these names): glibc's memory
 * must never reach the sanitizer's free() */
#define real_malloc __interceptor_malloc
#define real_calloc __interceptor_calloc
#define real_realloc __interceptor_realloc
#else
#define real_malloc __libc_malloc
#define real_calloc __libc_calloc
#define real_realloc __libc_realloc
#endif
void *real_malloc(size_t n);
void *real_calloc(size_t n, size_t m);
void *real_realloc(void *q, size_t n);

static long alloc_calls, fail_nth;
static bool alloc_failed;

static bool fail_now(void)
{
	if (fail_nth <= 0 || ++alloc_calls != fail_nth)
		return false;
	alloc_failed = true;
	return true;
}

void *malloc(size_t n)
{
	return fail_now() ? NULL : real_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	return fail_now() ? NULL : real_calloc(n, m);
}

void *realloc(void *q, size_t n)
{
	return fail_now() ? NULL : real_realloc(q, n);
}

/* from now on the nth call fails (0: none); alloc_calls and alloc_failed tell what happened */
static void fail_alloc(long nth)
{
	if (nth) {
		alloc_calls = 0;
		alloc_failed = false;
	}
	fail_nth = nth;
}

/* ---- files and commands ---- */

static char dir[] = "/tmp/test_pprof.XXXXXX";
static char path_gz[64], path_raw[64], path_txt[64], path_re[64];

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			char *q = realloc(s, (cap = cap ? cap * 2 : 1 << 20) + 1);

			if (!q) {
				free(s);
				fclose(f);
				return NULL;
			}
			s = q;
		}
		got = fread(s + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	s[n] = 0;
	*len = n;
	return s;
}

static bool same_as_file(const void *raw, size_t len, const char *path)
{
	size_t n;
	char *s = slurp(path, &n);
	bool same = s && n == len && !memcmp(s, raw, len);

	free(s);
	return same;
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

#define PROTOC "protoc -I tests/unit tests/unit/profile.proto "

/* gzip -dc of the written file, then protoc --decode and --encode of its text */
static bool decode_gz(void)
{
	return !sh("gzip -dc %s >%s", path_gz, path_raw) &&
	       !sh(PROTOC "--decode=perftools.profiles.Profile <%s >%s", path_raw, path_txt) &&
	       !sh(PROTOC "--encode=perftools.profiles.Profile <%s >%s", path_txt, path_re);
}

static int write_to(struct lt_pprof *p, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int err = fd < 0 ? -errno : lt_pprof_write(p, fd);

	if (fd >= 0)
		close(fd);
	return err;
}

/* ---- protoc's text form, parsed: enough of it to resolve every id ---- */

#define MAX_TAB 4096
#define MAX_SAMPLES 10000
#define MAX_DEPTH 64

struct dsample {
	uint64_t loc[MAX_DEPTH];
	int64_t val[4], comm, pid;
	int nloc, nval, nlabel;
	bool has_comm, has_pid;
	int64_t lkey[2], lstr[2], lnum[2]; /* labels as read, resolved at the end */
};

struct decoded {
	char *str[MAX_TAB];
	int nstr;
	int64_t st_type[4], st_unit[4], pt_type, pt_unit;
	int nst;
	struct dsample *s;
	int ns;
	struct {
		uint64_t id, mapping, address, func;
	} loc[MAX_TAB];
	int nloc;
	struct {
		uint64_t id, start, limit, offset;
		int64_t file, build_id;
		bool has_functions;
	} map[16];
	int nmap;
	struct {
		uint64_t id;
		int64_t name;
	} func[MAX_TAB];
	int nfunc;
	int64_t time_nanos, duration_nanos, period, comment[8];
	int ncomment;
	int bad; /* lines not understood, tables overflowed */
};

static void dec_field(struct decoded *d, const char *ctx, const char *key, const char *v)
{
	int64_t n = strtoll(v, NULL, 10);
	uint64_t u = strtoull(v, NULL, 10);
	struct dsample *s = d->ns ? &d->s[d->ns - 1] : NULL;

#define IS(c, k) (!strcmp(ctx, c) && !strcmp(key, k))
	if (IS("", "string_table") && d->nstr < MAX_TAB && *v == '"') {
		d->str[d->nstr] = strdup(v + 1);
		d->str[d->nstr++][strlen(v) - 2] = 0;
	} else if (IS("sample_type", "type")) {
		d->st_type[d->nst - 1] = n;
	} else if (IS("sample_type", "unit")) {
		d->st_unit[d->nst - 1] = n;
	} else if (IS("period_type", "type")) {
		d->pt_type = n;
	} else if (IS("period_type", "unit")) {
		d->pt_unit = n;
	} else if (IS("", "time_nanos")) {
		d->time_nanos = n;
	} else if (IS("", "duration_nanos")) {
		d->duration_nanos = n;
	} else if (IS("", "period")) {
		d->period = n;
	} else if (IS("", "comment") && d->ncomment < 8) {
		d->comment[d->ncomment++] = n;
	} else if (IS("sample", "location_id") && s->nloc < MAX_DEPTH) {
		s->loc[s->nloc++] = u;
	} else if (IS("sample", "value") && s->nval < 4) {
		s->val[s->nval++] = n;
	} else if (IS("label", "key")) {
		s->lkey[s->nlabel - 1] = n;
	} else if (IS("label", "str")) {
		s->lstr[s->nlabel - 1] = n;
	} else if (IS("label", "num")) {
		s->lnum[s->nlabel - 1] = n;
	} else if (IS("mapping", "id")) {
		d->map[d->nmap - 1].id = u;
	} else if (IS("mapping", "memory_start")) {
		d->map[d->nmap - 1].start = u;
	} else if (IS("mapping", "memory_limit")) {
		d->map[d->nmap - 1].limit = u;
	} else if (IS("mapping", "file_offset")) {
		d->map[d->nmap - 1].offset = u;
	} else if (IS("mapping", "filename")) {
		d->map[d->nmap - 1].file = n;
	} else if (IS("mapping", "build_id")) {
		d->map[d->nmap - 1].build_id = n;
	} else if (IS("mapping", "has_functions")) {
		d->map[d->nmap - 1].has_functions = !strcmp(v, "true");
	} else if (IS("location", "id")) {
		d->loc[d->nloc - 1].id = u;
	} else if (IS("location", "mapping_id")) {
		d->loc[d->nloc - 1].mapping = u;
	} else if (IS("location", "address")) {
		d->loc[d->nloc - 1].address = u;
	} else if (IS("line", "function_id")) {
		d->loc[d->nloc - 1].func = u;
	} else if (IS("function", "id")) {
		d->func[d->nfunc - 1].id = u;
	} else if (IS("function", "name")) {
		d->func[d->nfunc - 1].name = n;
	} else {
		printf("# not understood: %s { %s: %s }\n", ctx, key, v);
		d->bad++;
	}
#undef IS
}

/* a block opens: the entry its fields go to */
static bool dec_open(struct decoded *d, const char *name)
{
	if (!strcmp(name, "sample_type"))
		return d->nst++ < 4;
	if (!strcmp(name, "sample"))
		return d->ns++ < MAX_SAMPLES;
	if (!strcmp(name, "mapping"))
		return d->nmap++ < 16;
	if (!strcmp(name, "location"))
		return d->nloc++ < MAX_TAB;
	if (!strcmp(name, "function"))
		return d->nfunc++ < MAX_TAB;
	if (!strcmp(name, "label"))
		return d->s[d->ns - 1].nlabel++ < 2;
	return !strcmp(name, "line") || !strcmp(name, "period_type");
}

/* label keys name strings, and the string table comes last */
static void dec_labels(struct decoded *d, struct dsample *s)
{
	for (int i = 0; i < s->nlabel; i++) {
		const char *key =
			s->lkey[i] >= 0 && s->lkey[i] < d->nstr ? d->str[s->lkey[i]] : "?";

		if (!strcmp(key, "comm")) {
			s->has_comm = true;
			s->comm = s->lstr[i];
		} else if (!strcmp(key, "pid")) {
			s->has_pid = true;
			s->pid = s->lnum[i];
		} else {
			d->bad++;
		}
	}
}

static struct decoded *decode_text(const char *path)
{
	struct decoded *d = calloc(1, sizeof(*d));
	char ctx[8][32] = { "" }, *text, *line, *next;
	int depth = 0;
	size_t len;

	d->s = calloc(MAX_SAMPLES, sizeof(*d->s));
	text = slurp(path, &len);
	if (!text) {
		d->bad++;
		return d;
	}
	for (line = text; *line; line = next) {
		char *end = strchr(line, '\n'), *colon;

		next = end ? end + 1 : line + strlen(line);
		if (end)
			*end = 0;
		while (*line == ' ')
			line++;
		len = strlen(line);
		if (len > 2 && !strcmp(line + len - 2, " {")) {
			line[len - 2] = 0;
			if (depth == 7 || strlen(line) > 31 || !dec_open(d, line)) {
				d->bad++;
				break;
			}
			strcpy(ctx[++depth], line);
		} else if (!strcmp(line, "}") && depth) {
			depth--;
		} else if ((colon = strstr(line, ": "))) {
			*colon = 0;
			dec_field(d, ctx[depth], line, colon + 2);
		} else if (*line) {
			d->bad++;
		}
	}
	free(text);
	for (int i = 0; i < d->ns && i < MAX_SAMPLES; i++)
		dec_labels(d, &d->s[i]);
	return d;
}

static void decoded_free(struct decoded *d)
{
	for (int i = 0; i < d->nstr; i++)
		free(d->str[i]);
	free(d->s);
	free(d);
}

static const char *S(const struct decoded *d, int64_t i)
{
	return i >= 0 && i < d->nstr ? d->str[i] : "<bad string index>";
}

static int find_loc(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nloc; i++) {
		if (d->loc[i].id == id)
			return i;
	}
	return -1;
}

/* the function name of location id ("" without a line) */
static const char *loc_name(const struct decoded *d, uint64_t id)
{
	int i = find_loc(d, id);

	if (i < 0)
		return "<bad location id>";
	if (!d->loc[i].func)
		return "";
	for (int f = 0; f < d->nfunc; f++) {
		if (d->func[f].id == d->loc[i].func)
			return S(d, d->func[f].name);
	}
	return "<bad function id>";
}

/* how many string table entries are s (escaped as protoc prints them) */
static int str_count(const struct decoded *d, const char *s)
{
	int n = 0;

	for (int i = 0; i < d->nstr; i++)
		n += !strcmp(d->str[i], s);
	return n;
}

/* ---- a schema-less walk: the number of top-level fields numbered f, -1 if malformed ---- */

static int read_varint(const uint8_t *b, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *i < n && shift < 64; shift += 7) {
		uint8_t c = b[(*i)++];

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

static long count_fields(const void *raw, size_t n, unsigned int f)
{
	const uint8_t *b = raw;
	size_t i = 0;
	uint64_t tag, v;
	long c = 0;

	while (i < n) {
		if (read_varint(b, n, &i, &tag) || read_varint(b, n, &i, &v))
			return -1;
		if ((tag & 7) == 2) {
			if (v > n - i)
				return -1;
			i += v;
		} else if ((tag & 7) != 0) {
			return -1;
		}
		c += tag >> 3 == f;
	}
	return c;
}

/* ---- the small profile ---- */

#define BID1 "4f2c9a0de17b55a8c0b3e6f1d2a7c4e9b8f01234"
#define BID2 "deadbeef00112233445566778899aabbccddeeff"
#define KADDR 0xffffffff81a2b3c4ull

/* every string but "", as protoc prints them */
static const char *const small_strings[] = {
	"samples",
	"count",
	"cpu",
	"nanoseconds",
	"lowtrace profile -F 99",
	"/usr/bin/app",
	BID1,
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	BID2,
	"do_syscall_64",
	"main",
	"work",
	"__libc_start_call_main",
	"comm",
	"app",
	"pid",
	"kworker/\\357\\277\\275",
};

struct small {
	uint64_t m1, m2, m1b, kloc, u1, u1b, u2, u3, u3b, u4, u5;
};

/* the number of failures the calls reported */
static int build_small(struct lt_pprof *p, struct small *x)
{
	const int64_t v1[] = { 3, 30000000 }, v2[] = { 1, 10000000 }, v3[] = { 1, -4096 };
	int failed = 0;

	lt_pprof_sample_type(p, "samples", "count");
	lt_pprof_sample_type(p, "cpu", "nanoseconds");
	lt_pprof_period(p, "cpu", "nanoseconds", 10000000);
	lt_pprof_times(p, 1700000000123456789ll, 5000000000ll);
	lt_pprof_comment(p, "lowtrace profile -F 99");
	x->m1 = lt_pprof_mapping(p, 0x55d4a0000000, 0x55d4a0021000, 0x1000, "/usr/bin/app", BID1);
	x->m2 = lt_pprof_mapping(p, 0x7f1200000000, 0x7f12001c0000, 0x26000,
				 "/usr/lib/x86_64-linux-gnu/libc.so.6", BID2);
	x->m1b = lt_pprof_mapping(p, 0x55d4a0000000, 0x55d4a0021000, 0x1000, "/usr/bin/app", BID1);
	x->kloc = lt_pprof_location(p, 0, KADDR, "do_syscall_64");
	x->u1 = lt_pprof_location(p, x->m1, 0x55d4a0001234, "main");
	x->u2 = lt_pprof_location(p, x->m1, 0x55d4a0001300, "work");
	x->u1b = lt_pprof_location(p, x->m1, 0x55d4a0001234, "main");
	x->u5 = lt_pprof_location(p, x->m1, 0x55d4a0001240, "main");
	/* named by its second call */
	x->u3 = lt_pprof_location(p, x->m2, 0x7f1200029d90, NULL);
	x->u3b = lt_pprof_location(p, x->m2, 0x7f1200029d90, "__libc_start_call_main");
	x->u4 = lt_pprof_location(p, x->m2, 0x7f1200031000, NULL);
	failed += !x->m1 + !x->m2 + !x->m1b + !x->kloc + !x->u1 + !x->u2 + !x->u1b + !x->u5 +
		  !x->u3 + !x->u3b + !x->u4;

	failed += !!lt_pprof_sample(p, (uint64_t[]){ x->kloc, x->u2, x->u1 }, 3, v1, "app", 1234);
	failed += !!lt_pprof_sample(p, (uint64_t[]){ x->u2, x->u5, x->u1 }, 3, v2, NULL, 0);
	failed += !!lt_pprof_sample(p, (uint64_t[]){ x->u4, x->u3 }, 2, v3, "kworker/\xff", -1);
	return failed;
}

static void test_small(bool have_protoc)
{
	struct lt_pprof *p = lt_pprof_new();
	struct decoded *d;
	struct small x;
	const void *raw;
	size_t len;
	int failed = build_small(p, &x), bad, m1, m2, k;

	ok(!failed && x.m1 == x.m1b && x.m1 != x.m2 && x.u1 == x.u1b && x.u3 == x.u3b &&
		   x.u5 != x.u1,
	   "the same mapping and location give the same id, distinct ones distinct ids");
	ok(write_to(p, path_gz) == 0, "written gzip'd");
	raw = lt_pprof_raw(p, &len);
	ok(raw && len > 100 && count_fields(raw, len, 2) == 3 && count_fields(raw, len, 6) == 18,
	   "raw bytes: 3 samples, 18 strings (%zu bytes)", len);
	if (!have_protoc) {
		for (int i = 0; i < 8; i++)
			ok(1, "# skip protoc or gzip not installed (apt-get install "
			      "protobuf-compiler)");
		lt_pprof_free(p);
		return;
	}
	ok(decode_gz() && same_as_file(raw, len, path_raw),
	   "gzip -dc gives the raw bytes, protoc decodes them");
	ok(same_as_file(raw, len, path_re),
	   "protoc --encode of the decoded text gives the same bytes: canonical");
	d = decode_text(path_txt);

	bad = d->bad || d->nstr != 18 || strcmp(d->str[0], "");
	for (size_t i = 0; i < sizeof(small_strings) / sizeof(*small_strings); i++) {
		if (str_count(d, small_strings[i]) != 1) {
			printf("# string \"%s\": %d entries\n", small_strings[i],
			       str_count(d, small_strings[i]));
			bad++;
		}
	}
	ok(!bad, "string table: \"\" first, each string once, invalid UTF-8 as U+FFFD");

	ok(d->nst == 2 && !strcmp(S(d, d->st_type[0]), "samples") &&
		   !strcmp(S(d, d->st_unit[0]), "count") && !strcmp(S(d, d->st_type[1]), "cpu") &&
		   !strcmp(S(d, d->st_unit[1]), "nanoseconds") &&
		   !strcmp(S(d, d->pt_type), "cpu") && !strcmp(S(d, d->pt_unit), "nanoseconds") &&
		   d->period == 10000000 && d->time_nanos == 1700000000123456789ll &&
		   d->duration_nanos == 5000000000ll && d->ncomment == 1 &&
		   !strcmp(S(d, d->comment[0]), "lowtrace profile -F 99"),
	   "sample types, period, times, comment");

	ok(d->ns == 3 && d->s[0].nloc == 3 &&
		   !strcmp(loc_name(d, d->s[0].loc[0]), "do_syscall_64") &&
		   !strcmp(loc_name(d, d->s[0].loc[1]), "work") &&
		   !strcmp(loc_name(d, d->s[0].loc[2]), "main") && d->s[0].nval == 2 &&
		   d->s[0].val[0] == 3 && d->s[0].val[1] == 30000000 && d->s[0].has_comm &&
		   !strcmp(S(d, d->s[0].comm), "app") && d->s[0].has_pid && d->s[0].pid == 1234,
	   "sample 1: kernel and user frames leaf first, values, comm and pid labels");
	ok(d->ns == 3 && d->s[1].nloc == 3 && !strcmp(loc_name(d, d->s[1].loc[1]), "main") &&
		   d->s[1].loc[1] != d->s[1].loc[2] && d->s[1].val[1] == 10000000 &&
		   !d->s[1].has_comm && d->s[1].has_pid && d->s[1].pid == 0 && d->nfunc == 4,
	   "sample 2: two locations of one function (4 functions in all), pid 0, no comm");

	k = find_loc(d, d->ns == 3 ? d->s[2].loc[0] : 0);
	m1 = m2 = -1;
	for (int i = 0; i < d->nmap; i++) {
		if (!strcmp(S(d, d->map[i].build_id), BID1))
			m1 = i;
		if (!strcmp(S(d, d->map[i].build_id), BID2))
			m2 = i;
	}
	ok(d->ns == 3 && k >= 0 && d->nmap == 2 && m1 >= 0 && m2 >= 0 &&
		   d->loc[k].mapping == d->map[m2].id && d->loc[k].address == 0x7f1200031000 &&
		   !strcmp(loc_name(d, d->s[2].loc[0]), "") &&
		   !strcmp(loc_name(d, d->s[2].loc[1]), "__libc_start_call_main") &&
		   d->s[2].val[0] == 1 && d->s[2].val[1] == -4096 && !d->s[2].has_pid &&
		   !strcmp(S(d, d->s[2].comm), "kworker/\\357\\277\\275") &&
		   !strcmp(S(d, d->map[m2].file), "/usr/lib/x86_64-linux-gnu/libc.so.6") &&
		   d->map[m2].start == 0x7f1200000000 && d->map[m2].limit == 0x7f12001c0000 &&
		   d->map[m2].offset == 0x26000 && !d->map[m2].has_functions &&
		   !strcmp(S(d, d->map[m1].file), "/usr/bin/app") && d->map[m1].has_functions,
	   "sample 3: an unnamed frame in libc (mapping, build id, address), a negative value; "
	   "has_functions only on the fully named mapping");
	k = find_loc(d, d->ns ? d->s[0].loc[0] : 0);
	ok(k >= 0 && d->loc[k].mapping == 0 && d->loc[k].address == KADDR,
	   "the kernel frame: no mapping, its address");
	decoded_free(d);
	lt_pprof_free(p);
}

static void test_dedup(void)
{
	struct lt_pprof *p = lt_pprof_new();
	const int64_t one = 1;
	const void *raw;
	uint64_t m, l;
	size_t len;
	long before, after;

	lt_pprof_sample_type(p, "x", "x");
	lt_pprof_comment(p, "x");
	raw = lt_pprof_raw(p, &len);
	before = raw ? count_fields(raw, len, 6) : -1;
	lt_pprof_comment(p, "x");
	m = lt_pprof_mapping(p, 1, 2, 0, "x", "x");
	l = lt_pprof_location(p, m, 1, "x");
	lt_pprof_sample(p, &l, 1, &one, "x", 1);
	lt_pprof_sample(p, &l, 1, &one, "x", 1);
	raw = lt_pprof_raw(p, &len);
	after = raw ? count_fields(raw, len, 6) : -1;
	ok(before == 2 && after == 4,
	   "\"x\" used 9 times: one string table entry (\"\", x, comm, pid)");
	ok(write_to(p, "/dev/full") == -ENOSPC, "a write error is returned: -ENOSPC on /dev/full");
	ok(lt_pprof_sample(p, (uint64_t[]){ 2 }, 1, &one, NULL, -1) == -EINVAL &&
		   lt_pprof_sample(p, (uint64_t[]){ 0 }, 1, &one, NULL, -1) == -EINVAL &&
		   lt_pprof_location(p, 2, 1, "x") == 0,
	   "unknown location and mapping ids are refused");
	lt_pprof_sample_type(p, "late", "x");
	ok(write_to(p, "/dev/null") == -EINVAL,
	   "a sample type after samples: write fails with -EINVAL");
	lt_pprof_free(p);

	p = lt_pprof_new();
	ok(lt_pprof_sample(p, NULL, 0, NULL, NULL, -1) == -EINVAL, "a sample without sample types");
	lt_pprof_free(p);
}

/* ---- 10 000 samples with deep stacks (lengths past one varint byte) ---- */

#define NSAMPLES 10000
#define NPOOL 300

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_many(bool have_protoc)
{
	static const char *const comms[] = { "nginx", "postgres", "k\xc3\xa4se", "bad\xe0\x80" };
	static const char *const comms_text[] = { "nginx", "postgres", "k\\303\\244se",
						  "bad\\357\\277\\275\\357\\277\\275" };
	struct lt_pprof *p = lt_pprof_new();
	uint64_t pool[NPOOL], m[2], seed = 88172645463325252ull;
	uint64_t(*stacks)[MAX_DEPTH] = calloc(NSAMPLES, sizeof(*stacks));
	int depth[NSAMPLES], failed = 0, bad = 0, nfunc = 0;
	bool seen[2][70] = {};
	int64_t sum = 0, dsum = 0;
	struct decoded *d;
	const void *raw;
	size_t len;
	char name[32];
	FILE *f;

	lt_pprof_sample_type(p, "samples", "count");
	lt_pprof_sample_type(p, "alloc_space", "bytes");
	m[0] = lt_pprof_mapping(p, 0x400000, 0x800000, 0, "/usr/sbin/nginx", NULL);
	m[1] = lt_pprof_mapping(p, 0x7f0000000000, 0x7f0000200000, 0x1000, "/lib/libz.so", "ab");
	for (int i = 0; i < NPOOL; i++) {
		/* a third kernel, some unnamed; names repeat across locations */
		snprintf(name, sizeof(name), "%s_%d", i % 3 ? "user_fn" : "kernel_fn", i % 70);
		pool[i] = lt_pprof_location(p, i % 3 ? m[i % 2] : 0, 0x401000 + i * 0x10ull + i % 3,
					    i % 11 == 5 ? NULL : name);
		failed += !pool[i];
	}
	for (int i = 0; i < NSAMPLES; i++) {
		int64_t v[2] = { 1, (int64_t)(i % 7) * 1000003 - 3000000 };

		depth[i] = 1 + rnd(&seed) % MAX_DEPTH;
		for (int j = 0; j < depth[i]; j++)
			stacks[i][j] = pool[rnd(&seed) % NPOOL];
		sum += v[1];
		failed += !!lt_pprof_sample(p, stacks[i], depth[i], v, comms[i % 4], i % 50);
	}
	raw = lt_pprof_raw(p, &len);
	ok(!failed && raw && count_fields(raw, len, 2) == NSAMPLES &&
		   count_fields(raw, len, 4) == NPOOL,
	   "%d samples, %d locations (%zu bytes raw)", NSAMPLES, NPOOL, len);
	f = fopen(path_gz, "wb");
	ok(f && lt_pprof_write_file(p, f) == 0 && !fclose(f), "written gzip'd through a FILE *");
	if (!have_protoc) {
		for (int i = 0; i < 3; i++)
			ok(1, "# skip protoc or gzip not installed (apt-get install "
			      "protobuf-compiler)");
		lt_pprof_free(p);
		free(stacks);
		return;
	}
	ok(decode_gz() && same_as_file(raw, len, path_raw) && same_as_file(raw, len, path_re),
	   "gzip -dc gives the raw bytes; protoc decodes and re-encodes them byte for byte");
	d = decode_text(path_txt);
	bad = d->bad || d->ns != NSAMPLES;
	for (int i = 0; !bad && i < NSAMPLES; i++) {
		const struct dsample *s = &d->s[i];

		bad += s->nloc != depth[i] ||
		       memcmp(s->loc, stacks[i], depth[i] * sizeof(uint64_t)) || s->nval != 2 ||
		       s->val[0] != 1 || !s->has_comm || strcmp(S(d, s->comm), comms_text[i % 4]) ||
		       !s->has_pid || s->pid != i % 50;
		dsum += s->val[1];
	}
	ok(!bad && dsum == sum, "every stack, value and label read back (value sum %lld)",
	   (long long)dsum);
	for (int i = 0; !bad && i < NPOOL; i++) {
		snprintf(name, sizeof(name), "%s_%d", i % 3 ? "user_fn" : "kernel_fn", i % 70);
		bad += strcmp(loc_name(d, pool[i]), i % 11 == 5 ? "" : name);
		if (i % 11 != 5 && !seen[!!(i % 3)][i % 70]) {
			seen[!!(i % 3)][i % 70] = true;
			nfunc++;
		}
	}
	ok(!bad && d->nfunc == nfunc, "every location's function name read back, %d functions",
	   nfunc);
	decoded_free(d);
	lt_pprof_free(p);
	free(stacks);
}

/* ---- every allocation failing in turn: reported, never a crash or a silent loss ---- */

static void test_enomem(void)
{
	struct lt_pprof *ref = lt_pprof_new(), *p;
	const void *ref_raw, *raw = NULL;
	size_t ref_len, len = 0;
	int unreported = 0, err = 0;
	struct small x;
	long n;

	/* valgrind replaces malloc in the executable too, unless run with
	 * --soname-synonyms=somalloc=nosuchlib */
	fail_alloc(1 << 30);
	lt_pprof_free(lt_pprof_new());
	fail_alloc(0);
	if (!alloc_calls) {
		ok(1, "# skip malloc is not interposable here (valgrind: "
		      "--soname-synonyms=somalloc=nosuchlib)");
		lt_pprof_free(ref);
		return;
	}
	build_small(ref, &x);
	ref_raw = lt_pprof_raw(ref, &ref_len);
	for (n = 1;; n++) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		fail_alloc(n);
		p = lt_pprof_new();
		if (p) {
			build_small(p, &x);
			err = lt_pprof_write(p, fd);
		}
		fail_alloc(0);
		close(fd);
		if (!alloc_failed) {
			raw = lt_pprof_raw(p, &len);
			break;
		}
		/* a profile missing data is never written */
		unreported += p && err != -ENOMEM;
		lt_pprof_free(p);
	}
	ok(n > 10 && !unreported && !err && raw && len == ref_len && !memcmp(raw, ref_raw, len),
	   "each of %ld allocations failing in turn: no crash, lt_pprof_write says -ENOMEM "
	   "(%d times not); the same bytes when none fails",
	   n - 1, unreported);
	lt_pprof_free(p);
	lt_pprof_free(ref);
}

int main(void)
{
	bool have_protoc;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path_gz, sizeof(path_gz), "%s/p.pb.gz", dir);
	snprintf(path_raw, sizeof(path_raw), "%s/p.pb", dir);
	snprintf(path_txt, sizeof(path_txt), "%s/p.txt", dir);
	snprintf(path_re, sizeof(path_re), "%s/re.pb", dir);
	have_protoc = !system("command -v protoc >/dev/null && command -v gzip >/dev/null");
	if (!have_protoc)
		printf("# protoc or gzip missing: skipping the independent decoding\n");

	test_small(have_protoc);
	test_dedup();
	test_many(have_protoc);
	test_enomem();

	/* KEEP=1 leaves the files (p.pb.gz, p.pb, p.txt, re.pb) for a look */
	if (!getenv("KEEP"))
		sh("rm -rf %s%s", dir, "");
	return tap_done();
}
