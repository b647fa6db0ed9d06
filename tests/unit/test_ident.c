// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Workload identity: derivation from many cgroup paths, and the cache on a
 * directory tree made here (the walk only needs directories and their inode
 * numbers): hits, rescans, negative entries, the grace period, the cap and
 * its evictions, /proc/PID/cgroup (v1) and its per-process cache.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <errno.h>

#include "ident.h"
#include "lt_abi.h"
#include "tap.h"

#define MS 1000000ull

static const char H64[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static const char UID[] = "1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b";
static const char UID_[] = "1f2e3d4c_5b6a_4789_8a9b_0c1d2e3f4a5b";

static char tmp[256];

struct want {
	const char *path, *cid, *pod, *unit;
};

static void derive_cases(void)
{
	char p[40][512];
	struct want w[40];
	int n = 0;
	char big[2048];

#define CASE(cid, pod, unit, ...)                             \
	do {                                                  \
		snprintf(p[n], sizeof(p[n]), __VA_ARGS__);    \
		w[n] = (struct want){ p[n], cid, pod, unit }; \
		n++;                                          \
	} while (0)
	char dscope[128], kscope[128], pscope[128], cscope[128], mscope[128];

	snprintf(dscope, sizeof(dscope), "docker-%s.scope", H64);
	snprintf(kscope, sizeof(kscope), "cri-containerd-%s.scope", H64);
	snprintf(pscope, sizeof(pscope), "libpod-%s.scope", H64);
	snprintf(cscope, sizeof(cscope), "crio-%s.scope", H64);
	CASE(H64, "", dscope, "/system.slice/docker-%s.scope", H64);
	CASE(H64, UID, kscope,
	     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
	     "cri-containerd-%s.scope",
	     UID_, H64);
	CASE(H64, UID, cscope, "/kubepods.slice/kubepods-pod%s.slice/crio-%s.scope", UID_, H64);
	CASE(H64, "", pscope, "/machine.slice/libpod-%s.scope", H64);
	/* conmon is podman's monitor, not the container */
	snprintf(mscope, sizeof(mscope), "libpod-conmon-%s.scope", H64);
	CASE("", "", mscope, "/machine.slice/%s/x", mscope);
	CASE("", "", "foo.service", "/system.slice/foo.service");
	CASE("", "", "session-3.scope", "/user.slice/user-0.slice/session-3.scope");
	/* innermost unit */
	CASE("", "", "inner.service", "/system.slice/outer.service/inner.service/sub");
	/* cgroupfs driver */
	CASE(H64, "", "", "/docker/%s", H64);
	CASE(H64, UID, "", "/kubepods/burstable/pod%s/%s", UID, H64);
	CASE("", UID, "", "/kubepods/besteffort/pod%s", UID);
	/* the container's own cgroups below its scope: the innermost unit */
	CASE(H64, "", "init.scope", "/system.slice/docker-%s.scope/init.scope/x", H64);
	/* malformed: short, long, upper case, not hex, bad uid */
	CASE("", "", "docker-abc.scope", "/system.slice/docker-abc.scope");
	CASE("", "", "", "/docker/%.63s", H64);
	CASE("", "", "", "/docker/%s0", H64);
	CASE("", "", "",
	     "/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef");
	CASE("", "", "",
	     "/docker/g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	CASE("", "", "", "/kubepods.slice/kubepods-podnot-a-uid.slice");
	CASE("", "", "", "/kubepods/pod%s", UID_); /* cgroupfs uids have dashes */
	CASE("", "", "", "/kubepods.slice/kubepods-pod%s.slice", UID); /* slices underscores */
	CASE("", "", "", "/");
	CASE("", "", "", "%s", "");
	CASE("", "", "", "//");
	CASE("", "", "", "/.scope");
	CASE(H64, "", "", "///docker//%s//", H64);
#undef CASE
	for (int i = 0; i < n; i++) {
		struct lt_ident id;

		memset(&id, 0x5a, sizeof(id));
		lt_ident_derive(w[i].path, strlen(w[i].path), &id);
		ok(!strcmp(id.container_id, w[i].cid) && id.cid_len == strlen(w[i].cid) &&
			   !strcmp(id.pod_uid, w[i].pod) && id.pod_len == strlen(w[i].pod) &&
			   !strcmp(id.unit, w[i].unit) && id.unit_len == strlen(w[i].unit),
		   "derive %.90s -> cid=%.8s pod=%s unit=%.30s", w[i].path, id.container_id,
		   id.pod_uid, id.unit);
	}
	/* a unit name longer than kept is not a unit; a path of 2000 bytes is read whole */
	memset(big, 'a', sizeof(big));
	memcpy(big + 1500, ".service", 8);
	big[0] = '/';
	{
		struct lt_ident id;

		lt_ident_derive(big, 1508, &id);
		ok(!id.unit_len && !id.cid_len, "a 1500-byte unit name is not kept");
		snprintf(big + 1700, 200, "/docker-%s.scope", H64);
		lt_ident_derive(big, strlen(big), &id);
		ok(id.cid_len == 64 && !strcmp(id.container_id, H64),
		   "a container scope at byte 1700 of a path is found");
		/* the length bounds the read: a NUL-free path is not overrun */
		lt_ident_derive(big + 1700, 20, &id);
		ok(!id.cid_len && !id.unit_len, "only `len` bytes are read");
	}
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t mkcg(const char *rel)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s/cg%s", tmp, rel);
	if (mkdir(p, 0755) && stat(p, &st))
		return 0;
	stat(p, &st);
	return st.st_ino;
}

static uint64_t ino_of(const char *rel)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s/cg%s", tmp, rel);
	return stat(p, &st) ? 0 : st.st_ino;
}

static void rmcg(const char *rel)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/cg%s", tmp, rel);
	rmdir(p);
}

static void write_file(const char *rel, const char *text)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static void cache_cases(void)
{
	struct lt_ident_cache c;
	struct lt_ident_cfg cfg = {
		.cap = 64, .rescan_ns = 100 * MS, .grace_ns = 1000 * MS, .neg_ns = 500 * MS
	};
	struct lt_ident_stats st;
	const struct lt_ident *id;
	char root[300], dk[200], kp[300], mi[400];
	uint64_t t0, did, kid, late, sid;

	snprintf(root, sizeof(root), "%s/cg", tmp);
	mkdir(root, 0755);
	mkcg("/system.slice");
	snprintf(dk, sizeof(dk), "/system.slice/docker-%s.scope", H64);
	did = mkcg(dk);
	mkcg("/kubepods.slice");
	mkcg("/kubepods.slice/kubepods-burstable.slice");
	snprintf(kp, sizeof(kp),
		 "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice", UID_);
	mkcg(kp);
	snprintf(kp + strlen(kp), sizeof(kp) - strlen(kp), "/cri-containerd-%s.scope", H64);
	kid = mkcg(kp);
	sid = mkcg("/system.slice/foo.service");
	/* a mountinfo naming our tree as the cgroup2 mount, no v1 */
	snprintf(mi, sizeof(mi), "30 1 0:26 / %s rw - cgroup2 cgroup2 rw\n", root);
	write_file("mountinfo", mi);
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	cfg.mountinfo = mi;
	ok(!lt_ident_open(&c, &cfg), "open on a made tree");
	t0 = mono();
	ok(!strcmp(lt_ident_root(&c), root) && lt_ident_v1_count(&c) == 0,
	   "the cgroup2 mount from the mountinfo (%s), no v1", lt_ident_root(&c));
	lt_ident_stats(&c, &st);
	ok(st.entries == 8 && st.rescans == 1, "the first walk saw 8 cgroups (%llu), 1 rescan",
	   (unsigned long long)st.entries);
	id = lt_ident_get(&c, did, 0, t0);
	ok(id && !strcmp(id->cgroup, dk) && !strcmp(id->container_id, H64) && !id->pod_len,
	   "docker: %s", id ? id->cgroup : "(null)");
	ok(id && id->plain == (LT_IDENT_PLAIN_CGROUP | LT_IDENT_PLAIN_UNIT),
	   "a plain path and unit: the encoders copy them");
	id = lt_ident_get(&c, kid, 0, t0);
	ok(id && !strcmp(id->cgroup, kp) && !strcmp(id->pod_uid, UID) && id->cid_len == 64,
	   "kubepods: pod %s", id ? id->pod_uid : "(null)");
	id = lt_ident_get(&c, sid, 0, t0);
	ok(id && !strcmp(id->unit, "foo.service") && !id->cid_len, "foo.service");
	id = lt_ident_get(&c, ino_of(""), 0, t0);
	ok(id && !strcmp(id->cgroup, "/") && !id->unit_len, "the root is \"/\"");
	lt_ident_stats(&c, &st);
	ok(st.hits == 4 && st.misses == 0, "4 hits, no miss");

	/* a name with a space and a quote: escaped by the encoders */
	{
		uint64_t odd = mkcg("/system.slice/a \"b.service");

		/*
		 * a record older than the last walk: its cgroup was gone by then, no
		 * rescan (a guest runs this seconds after boot: no clock underflow)
		 */
		id = lt_ident_get(&c, odd, 0, t0 > 5000 * MS ? t0 - 5000 * MS : 1);
		lt_ident_stats(&c, &st);
		ok(!id && st.rescans == 1, "a record from before the walk: unknown, no rescan");
		id = lt_ident_get(&c, odd, 0, t0 + 120 * MS);
		ok(id && !strcmp(id->unit, "a \"b.service") && !id->plain,
		   "a unit with a space and a quote: not plain");
		rmcg("/system.slice/a \"b.service");
	}
	lt_ident_close(&c);
	ok(!lt_ident_open(&c, &cfg), "open again");
	t0 = mono();

	/* a cgroup made after the walk: unknown within the rate limit, then a rescan finds it */
	late = mkcg("/system.slice/late.service");
	id = lt_ident_get(&c, late, 0, t0 + 10 * MS);
	lt_ident_stats(&c, &st);
	ok(!id && st.rescans == 1 && st.unknown == 1, "a miss within 100 ms of the walk: unknown");
	id = lt_ident_get(&c, late, 0, t0 + 150 * MS);
	lt_ident_stats(&c, &st);
	ok(id && !strcmp(id->unit, "late.service") && st.rescans == 2, "after 100 ms: rescanned");

	/* an id that does not exist: one rescan, then a negative entry until it expires */
	id = lt_ident_get(&c, 123456789, 0, t0 + 300 * MS);
	lt_ident_stats(&c, &st);
	ok(!id && st.rescans == 3, "unknown id: rescanned once");
	id = lt_ident_get(&c, 123456789, 0, t0 + 600 * MS);
	lt_ident_stats(&c, &st);
	ok(!id && st.rescans == 3, "negative entry: no rescan 300 ms later");
	id = lt_ident_get(&c, 123456789, 0, t0 + 900 * MS);
	lt_ident_stats(&c, &st);
	ok(!id && st.rescans == 4 && st.expired == 1, "negative entry expired after 500 ms");

	/* grace: a removed cgroup stays known for 1 s after a rescan misses it */
	rmcg("/system.slice/late.service");
	lt_ident_get(&c, 1, 0, t0 + 1100 * MS); /* a miss: rescan, late is gone */
	id = lt_ident_get(&c, late, 0, t0 + 1200 * MS);
	ok(id && !strcmp(id->unit, "late.service"), "removed cgroup: still known in its grace");
	lt_ident_get(&c, 2, 0, t0 + 2200 * MS); /* rescan past the grace */
	lt_ident_stats(&c, &st);
	id = lt_ident_get(&c, late, 0, t0 + 2250 * MS);
	ok(!id && st.expired >= 2, "after the grace: dropped (expired %llu)",
	   (unsigned long long)st.expired);
	lt_ident_close(&c);
	lt_ident_close(&c); /* twice is harmless */

	/* the cap: 8 entries, 24 cgroups */
	{
		struct lt_ident_cfg small = cfg;
		uint64_t ids[16];
		char rel[64];
		bool all = true;

		for (int i = 0; i < 16; i++) {
			snprintf(rel, sizeof(rel), "/w%d.service", i);
			ids[i] = mkcg(rel);
		}
		small.cap = 8;
		ok(!lt_ident_open(&c, &small), "open with a cap of 8");
		lt_ident_stats(&c, &st);
		ok(st.entries == 8 && !st.evictions, "the walk stops at the cap: %llu entries",
		   (unsigned long long)st.entries);
		t0 = mono();
		for (int i = 0; i < 16; i++) {
			snprintf(rel, sizeof(rel), "w%d.service", i);
			id = lt_ident_get(&c, ids[i], 0, t0 + (uint64_t)(i + 1) * 200 * MS);
			all = all && id && !strcmp(id->unit, rel);
			lt_ident_stats(&c, &st);
			all = all && st.entries <= 8;
		}
		lt_ident_stats(&c, &st);
		ok(all && st.evictions >= 8,
		   "each of 16 found (rescans bring evicted ones back), "
		   "never past 8 entries, %llu evictions",
		   (unsigned long long)st.evictions);
		lt_ident_close(&c);
		for (int i = 0; i < 16; i++) {
			snprintf(rel, sizeof(rel), "/w%d.service", i);
			rmcg(rel);
		}
	}
}

static void v1_cases(void)
{
	struct lt_ident_cache c;
	struct lt_ident_cfg cfg = { .pid_cap = 2 };
	struct lt_ident_stats st;
	const struct lt_ident *id;
	char mi[600], proc[300], txt[400];
	uint64_t t;

	/* hybrid: our tree as cgroup2, a memory v1 hierarchy beside it */
	snprintf(mi, sizeof(mi),
		 "30 1 0:26 / %s/cg rw - cgroup2 cgroup2 rw\n"
		 "31 1 0:27 / /x/memory rw - cgroup cgroup rw,memory\n"
		 "32 1 0:28 / /x/systemd rw - cgroup cgroup rw,name=systemd\n",
		 tmp);
	write_file("mountinfo", mi);
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	mkdir(proc, 0755);
	for (int pid = 10; pid <= 13; pid++) {
		snprintf(proc, sizeof(proc), "%s/proc/%d", tmp, pid);
		mkdir(proc, 0755);
	}
	snprintf(txt, sizeof(txt),
		 "5:memory:/docker/%s\n2:name=systemd:/system.slice/docker.service\n0::/\n", H64);
	write_file("proc/10/cgroup", txt);
	write_file("proc/11/cgroup",
		   "5:memory:/\n2:name=systemd:/user.slice/session-1.scope\n0::/\n");
	write_file("proc/12/cgroup", "5:memory:/\n0::/\n");
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	cfg.mountinfo = mi;
	cfg.proc = proc;
	ok(!lt_ident_open(&c, &cfg), "open hybrid");
	ok(lt_ident_v1_count(&c) == 2, "2 v1 hierarchies");
	id = lt_ident_get(&c, ino_of(""), 10, mono());
	ok(id && !strcmp(id->container_id, H64) && !strcmp(id->cgroup, "/") &&
		   !strcmp(id->unit, "docker.service"),
	   "v2 root, memory:/docker/<id>: that container, cgroup \"/\", unit from name=systemd");
	write_file("proc/10/cgroup", "0::/\n"); /* cached: not read again */
	id = lt_ident_get(&c, ino_of(""), 10, mono());
	lt_ident_stats(&c, &st);
	ok(id && id->cid_len == 64 && st.v1_lookups == 1, "second record: from the per-pid cache");
	id = lt_ident_get(&c, ino_of(""), 11, mono());
	ok(id && !id->cid_len && !strcmp(id->cgroup, "/"), "no workload in v1: the v2 identity");
	lt_ident_get(&c, ino_of(""), 12, mono());
	lt_ident_stats(&c, &st);
	ok(st.v1_entries == 2 && st.v1_evictions == 1, "per-pid cap 2: one eviction");
	write_file("proc/10/cgroup", txt); /* 10 was evicted: read again */
	t = mono();
	lt_ident_get(&c, ino_of(""), 10, t);
	lt_ident_exit(&c, 10);
	write_file("proc/10/cgroup", "5:memory:/\n0::/\n");
	id = lt_ident_get(&c, ino_of(""), 10, t + 500 * MS);
	ok(id && id->cid_len == 64, "a record 0.5 s after the exit record: the kept identity");
	id = lt_ident_get(&c, ino_of(""), 10, t + 1500 * MS);
	lt_ident_stats(&c, &st);
	ok(id && !id->cid_len && st.v1_lookups == 5,
	   "1.5 s after: dropped, read again (a new process of that pid)");
	id = lt_ident_get(&c, ino_of(""), 13, mono()); /* no file: exited before the read */
	ok(id && !id->cid_len, "a process gone before its read: the v2 identity");
	lt_ident_close(&c);

	/* pure v1: no cgroup2 mount */
	snprintf(txt, sizeof(txt),
		 "5:memory:/docker/%s\n2:name=systemd:/system.slice/docker.service\n", H64);
	write_file("proc/10/cgroup", txt);
	cfg.no_v2 = true;
	ok(!lt_ident_open(&c, &cfg), "open pure v1");
	id = lt_ident_get(&c, 0, 10, mono());
	ok(id && !strcmp(id->container_id, H64) && !strncmp(id->cgroup, "/docker/", 8),
	   "pure v1: container from /proc, cgroup %s", id ? id->cgroup : "(null)");
	id = lt_ident_get(&c, 0, 11, mono());
	ok(id && !strcmp(id->unit, "session-1.scope") &&
		   !strcmp(id->cgroup, "/user.slice/session-1.scope"),
	   "pure v1: the systemd hierarchy's path and unit");
	lt_ident_close(&c);
}

/*
 * Memory over time (bench/soak): ids of short-lived cgroups and exited processes leave the
 * cache, so a churning host keeps as many entries as live (or just gone) ones, not the cap.
 */
static void churn_cases(void)
{
	struct lt_ident_cache c;
	struct lt_ident_cfg cfg = {
		.cap = 64, .pid_cap = 64, .rescan_ns = 100 * MS, .neg_ns = 10000 * MS
	};
	struct lt_ident_stats st;
	char mi[600], proc[300];
	uint64_t t0, base;

	/* hybrid: our tree as cgroup2, a v1 hierarchy (the per-pid table is used) */
	snprintf(mi, sizeof(mi),
		 "30 1 0:26 / %s/cg rw - cgroup2 cgroup2 rw\n"
		 "31 1 0:27 / /x/memory rw - cgroup cgroup rw,memory\n",
		 tmp);
	write_file("mountinfo", mi);
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	cfg.mountinfo = mi;
	cfg.proc = proc;
	ok(!lt_ident_open(&c, &cfg), "open for churn");
	t0 = mono() + 1000 * MS; /* after the first walk */
	lt_ident_stats(&c, &st);
	base = st.entries;

	/* 40 cgroups gone before any walk saw them: a negative entry each */
	for (int i = 0; i < 40; i++)
		lt_ident_get(&c, 900000 + i, 0, t0 + (uint64_t)i * 110 * MS);
	lt_ident_stats(&c, &st);
	ok(st.entries == base + 40, "40 negative entries (%llu cached, %llu walked)",
	   (unsigned long long)st.entries, (unsigned long long)base);
	/* a rescan past their expiry drops them all, though no record asks for them again */
	lt_ident_get(&c, 990000, 0, t0 + 15000 * MS);
	lt_ident_stats(&c, &st);
	ok(st.entries == base + 1 && st.expired == 40 && !st.evictions,
	   "a rescan drops the expired ones: %llu cached, %llu expired, %llu evicted",
	   (unsigned long long)st.entries, (unsigned long long)st.expired,
	   (unsigned long long)st.evictions);

	/* an id never cached: gone once a whole walk after the reader learnt of it missed it */
	ok(!lt_ident_gone(&c, 991000, t0 + 16000 * MS), "not cached, no walk since: not gone");
	lt_ident_refresh(&c, t0 + 16100 * MS);
	ok(lt_ident_gone(&c, 991000, t0 + 16000 * MS), "not cached, a whole walk since: gone");
	ok(!lt_ident_gone(&c, 991000, t0 + 16100 * MS), "a walk at the same time: not yet");
	ok(!lt_ident_gone(&c, ino_of(""), t0), "the root is never gone");

	/* 50 processes' first records and exits: their entries go after the 1 s grace */
	for (uint32_t pid = 40000; pid < 40050; pid++) {
		lt_ident_get(&c, ino_of(""), pid, t0 + 17000 * MS);
		lt_ident_exit(&c, pid);
	}
	lt_ident_stats(&c, &st);
	ok(st.v1_entries == 50, "50 exited processes kept in their grace");
	lt_ident_get(&c, ino_of(""), 40100, t0 + 18500 * MS);
	lt_ident_stats(&c, &st);
	ok(st.v1_entries == 1 && st.v1_expired == 50 && !st.v1_evictions,
	   "a new process after the grace: %llu entries, %llu expired, %llu evicted",
	   (unsigned long long)st.v1_entries, (unsigned long long)st.v1_expired,
	   (unsigned long long)st.v1_evictions);
	/* a pid used again within the grace is a new process: its entry stays */
	lt_ident_exit(&c, 40100);
	lt_ident_get(&c, ino_of(""), 40100, t0 + 20000 * MS); /* past its grace: a new one */
	lt_ident_get(&c, ino_of(""), 40101, t0 + 20000 * MS);
	lt_ident_stats(&c, &st);
	ok(st.v1_entries == 2, "a reused pid's new entry outlives the old exit (%llu entries)",
	   (unsigned long long)st.v1_entries);
	/* more exits than the table within one grace: never past the cap */
	for (uint32_t pid = 50000; pid < 50200; pid++) {
		lt_ident_get(&c, ino_of(""), pid, t0 + 21000 * MS);
		lt_ident_exit(&c, pid);
	}
	lt_ident_stats(&c, &st);
	ok(st.v1_entries <= 64 && st.v1_evictions + st.v1_expired >= 136,
	   "200 exits within a grace, cap 64: %llu entries, %llu evicted, %llu expired",
	   (unsigned long long)st.v1_entries, (unsigned long long)st.v1_evictions,
	   (unsigned long long)st.v1_expired);
	lt_ident_close(&c);
}

/* What a first record costs on this host's /proc (reported for docs/performance.md). */
static void v1_timing(void)
{
	struct lt_ident_cache c;
	struct lt_ident_cfg cfg = { .no_v2 = true };
	struct lt_ident_stats st;
	uint32_t pid = getpid();
	uint64_t t, hit;
	int n = 20000;
	char mi[300];

	/* a v1 hierarchy declared, so the read happens on any host (this process's real file) */
	write_file("mountinfo", "31 1 0:27 / /x/memory rw - cgroup cgroup rw,memory\n");
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	cfg.mountinfo = mi;
	ok(!lt_ident_open(&c, &cfg), "open with this host's /proc");
	t = mono();
	for (int i = 0; i < n; i++) {
		/* 2 s apart: past the exit grace, so each is a first record */
		lt_ident_get(&c, 0, pid, (uint64_t)(i + 1) * 2000 * MS);
		lt_ident_exit(&c, pid);
	}
	t = mono() - t;
	lt_ident_get(&c, 0, pid, (uint64_t)(n + 2) * 2000 * MS);
	hit = mono();
	for (int i = 0; i < n; i++)
		lt_ident_get(&c, 0, pid, (uint64_t)(n + 2) * 2000 * MS);
	hit = mono() - hit;
	lt_ident_stats(&c, &st);
	ok(st.v1_lookups == (uint64_t)n + 1, "%d reads of /proc/%u/cgroup", n, pid);
	printf("# first record (/proc/PID/cgroup read and parse): %llu ns; later records: %llu "
	       "ns\n",
	       (unsigned long long)(t / n), (unsigned long long)(hit / n));
	lt_ident_close(&c);
}

/* the hierarchy load picks, from mountinfos of each kind of node */
static void pick_cases(void)
{
	static const char hybrid[] =
		"31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
		"35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		"39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
		"40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
	static const char v2[] = "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
	/* Amazon Linux 2 / RHEL 7: cpu,cpuacct co-mounted, no pids, no cgroup2 */
	static const char al2[] =
		"25 1 0:21 / /sys/fs/cgroup rw - tmpfs tmpfs ro,mode=755\n"
		"26 25 0:22 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
		"29 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
		"30 25 0:26 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n";
	char mi[400], m[512];
	int r;

	snprintf(mi, sizeof(mi), "%s/mi-pick", tmp);
	write_file("mi-pick", hybrid);
	r = lt_ident_pick(NULL, mi, m, sizeof(m));
	ok(r == LT_CTRL_PIDS && !strcmp(m, "/sys/fs/cgroup/pids"),
	   "hybrid: auto picks pids (%d %s)", r, m);
	r = lt_ident_pick("cgroup2", mi, m, sizeof(m));
	ok(r == LT_CTRL_V2 && !strcmp(m, "/sys/fs/cgroup/unified"),
	   "hybrid: cgroup2 when asked (%s)", m);
	r = lt_ident_pick("memory", mi, m, sizeof(m));
	ok(r == LT_CTRL_MEMORY && !strcmp(m, "/sys/fs/cgroup/memory"), "hybrid: memory when asked");
	ok(lt_ident_pick("freezer", mi, m, sizeof(m)) == -ENOENT,
	   "an unmounted controller: ENOENT");
	ok(lt_ident_pick("net_cls", mi, m, sizeof(m)) == -EINVAL, "an unknown one: EINVAL");
	write_file("mi-pick", v2);
	r = lt_ident_pick("auto", mi, m, sizeof(m));
	ok(r == LT_CTRL_V2 && !strcmp(m, "/sys/fs/cgroup"), "cgroup2 only: cgroup2 (%d %s)", r, m);
	write_file("mi-pick", al2);
	r = lt_ident_pick(NULL, mi, m, sizeof(m));
	ok(r == LT_CTRL_CPU && !strcmp(m, "/sys/fs/cgroup/cpu,cpuacct"),
	   "cgroup v1, cpu,cpuacct co-mounted, no pids or memory: cpu's mount (%d %s)", r, m);
	r = lt_ident_pick("cpuacct", mi, m, sizeof(m));
	ok(r == LT_CTRL_CPUACCT && !strcmp(m, "/sys/fs/cgroup/cpu,cpuacct"),
	   "cpuacct: the co-mount too");
	ok(lt_ident_pick("cgroup2", mi, m, sizeof(m)) == -ENOENT, "no cgroup2 there: ENOENT");
}

/* a kernel that named cgroups: kname answers what no walk can find */
static int fake_calls;

static int fake_kname(void *ctx, uint64_t id, char *buf, size_t cap)
{
	const char *p = ctx;
	size_t n = strlen(p);

	fake_calls++;
	if (id != 777777 || n > cap)
		return -1;
	memcpy(buf, p, n);
	return (int)n;
}

static void kname_cases(void)
{
	char path[200], mi[400], root[300];
	struct lt_ident_cfg cfg = { .kname = fake_kname, .kctx = path, .ctrl = LT_CTRL_PIDS };
	struct lt_ident_cache c;
	struct lt_ident_stats st;
	const struct lt_ident *id;
	uint64_t t = mono();

	snprintf(path, sizeof(path), "/libpod_parent/libpod-%s", H64);
	snprintf(root, sizeof(root), "%s/pids", tmp);
	mkdir(root, 0755);
	snprintf(mi, sizeof(mi), "39 31 0:36 / %s rw - cgroup cgroup rw,pids\n", root);
	write_file("mi-kname", mi);
	snprintf(mi, sizeof(mi), "%s/mi-kname", tmp);
	cfg.mountinfo = mi;
	ok(!lt_ident_open(&c, &cfg), "open on a v1 pids hierarchy");
	ok(!strcmp(lt_ident_root(&c), root), "its root is the pids mount");
	id = lt_ident_get(&c, 777777, 4242, t);
	ok(id && !strcmp(id->cgroup, path) && !strcmp(id->container_id, H64),
	   "an id no walk finds: named by the kernel (%s)", id ? id->cgroup : "NULL");
	id = lt_ident_get(&c, 777777, 4242, t + MS);
	lt_ident_stats(&c, &st);
	ok(id && fake_calls == 1 && st.knamed == 1 && st.hits == 1,
	   "asked once, then a hit (%d calls)", fake_calls);
	ok(st.v1_lookups == 0, "a v1 identity hierarchy reads no /proc/PID/cgroup");
	ok(!lt_ident_get(&c, 888888, 4242, t + 2 * MS), "an id neither names: unknown");
	lt_ident_close(&c);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/lt-ident-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	derive_cases();
	cache_cases();
	v1_cases();
	churn_cases();
	v1_timing();
	pick_cases();
	kname_cases();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd))
			return 1;
	}
	return tap_done();
}
