// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Container names from the runtimes' files: the three parsers on documents as the runtimes
 * write them (escapes, cut fields, malformed ones), then the cache on a tree made here that
 * stands for "/": every runtime's place, planted symlinks (out of the tree and inside it), a
 * directory and a file too big where a config should be, the retry of a container not found,
 * LRU eviction, the open budget, and no malloc on a hit or a miss after open.
 * Linked with --wrap=malloc,... (alloc_count.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc_count.h"
#include "runtime.h"
#include "tap.h"

#define SEC 1000000000ull

static char tmp[] = "/tmp/lt-runtime-XXXXXX";
static char root[300];
static struct lt_rt_meta m;

/* the n-th container id: 64 lower-case hex */
static const char *cid(unsigned int n)
{
	static char ids[8][LT_RT_CID_LEN + 1];
	static unsigned int k;
	char *s = ids[k++ % 8];

	snprintf(s, LT_RT_CID_LEN + 1, "%056x%08x", 0xabcu, n);
	memset(s, 'e', 8); /* not all zeros ahead */
	return s;
}

/* ---- the parsers ---- */

static int oci(const char *doc)
{
	return lt_rt_parse_oci(doc, strlen(doc), &m);
}

static int docker(const char *doc)
{
	return lt_rt_parse_docker(doc, strlen(doc), &m);
}

static int storage(const char *doc, const char *id)
{
	return lt_rt_parse_storage(doc, strlen(doc), id, &m);
}

/* containerd's CRI plugin: a pod's container and its sandbox */
static const char CRI_CTR[] =
	"{\"ociVersion\":\"1.1.0\",\"process\":{\"user\":{\"uid\":65532,\"gid\":65532},"
	"\"args\":[\"/coredns\",\"-conf\",\"/etc/coredns/Corefile\"],\"env\":[\"PATH=/usr/bin\","
	"\"KUBERNETES_PORT=tcp://10.96.0.1:443\"],\"cwd\":\"/\",\"capabilities\":{\"bounding\":"
	"[\"CAP_NET_BIND_SERVICE\"]},\"noNewPrivileges\":true,\"oomScoreAdj\":-997},"
	"\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"hostname\":\"\",\"mounts\":[{"
	"\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\",\"options\":[\"nosuid\","
	"\"noexec\",\"nodev\"]}],\"annotations\":{\"io.kubernetes.cri.container-name\":\"coredns\","
	"\"io.kubernetes.cri.container-type\":\"container\",\"io.kubernetes.cri.image-name\":"
	"\"registry.k8s.io/coredns/coredns:v1.10.1\",\"io.kubernetes.cri.sandbox-id\":"
	"\"2f8ce2bd696584bcc7d7c107135a38354d6766bc7ea7dd137bb4acfc92592268\","
	"\"io.kubernetes.cri.sandbox-name\":\"coredns-5d78c9869d-8xk2p\","
	"\"io.kubernetes.cri.sandbox-namespace\":\"kube-system\",\"io.kubernetes.cri.sandbox-uid\":"
	"\"01b4b887-7635-4346-9c20-58a294bbb034\"},\"linux\":{\"resources\":{\"memory\":{\"limit\":"
	"178257920},\"cpu\":{\"shares\":102,\"quota\":-1,\"period\":100000,\"realtimeRuntime\":"
	"1.5e-3}},\"cgroupsPath\":\"kubepods-burstable-pod01b4b887_7635_4346_9c20_58a294bbb034."
	"slice:"
	"cri-containerd:7be7\",\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\",\"path\":"
	"\"/proc/1234/ns/net\"}],\"maskedPaths\":[\"/proc/acpi\"],\"readonlyPaths\":[]}}\n";

static const char CRI_SANDBOX[] =
	"{\"ociVersion\":\"1.1.0\",\"process\":{\"args\":[\"/pause\"]},\"annotations\":{"
	"\"io.kubernetes.cri.container-type\":\"sandbox\",\"io.kubernetes.cri.sandbox-id\":"
	"\"2f8ce2bd696584bcc7d7c107135a38354d6766bc7ea7dd137bb4acfc92592268\","
	"\"io.kubernetes.cri.sandbox-log-directory\":\"/var/log/pods/kube-system_coredns\","
	"\"io.kubernetes.cri.sandbox-name\":\"coredns-5d78c9869d-8xk2p\","
	"\"io.kubernetes.cri.sandbox-namespace\":\"kube-system\"},\"linux\":{}}";

/* `ctr run`: no annotations at all */
static const char CTR_PLAIN[] =
	"{\"ociVersion\":\"1.0.2-dev\",\"process\":{\"args\":[\"sleep\",\"600\"]},\"root\":"
	"{\"path\":\"rootfs\"},\"linux\":{\"cgroupsPath\":\"/default/x\"}}";

static const char CRIO_CTR[] =
	"{\"ociVersion\":\"1.0.2-dev\",\"process\":{\"args\":[\"redis-server\"]},\"annotations\":{"
	"\"io.container.manager\":\"cri-o\",\"io.kubernetes.container.hash\":\"5b3fd4c4\","
	"\"io.kubernetes.container.name\":\"redis\",\"io.kubernetes.cri-o.ContainerType\":"
	"\"container\",\"io.kubernetes.cri-o.Image\":\"redis:alpine\","
	"\"io.kubernetes.cri-o.ImageName\":\"docker.io/library/redis:alpine\","
	"\"io.kubernetes.cri-o.Labels\":\"{\\\"io.kubernetes.container.name\\\":\\\"redis\\\"}\","
	"\"io.kubernetes.cri-o.Name\":\"k8s_redis_cache-0_web_5b5e07db_0\","
	"\"io.kubernetes.pod.name\":\"cache-0\",\"io.kubernetes.pod.namespace\":\"web\","
	"\"io.kubernetes.pod.uid\":\"5b5e07db-f1b9-4530-81ef-b7d04d66b83e\"}}";

/* podman 4.3.1 (Debian 12) with runc, as written on this host: no name in the spec */
static const char PODMAN_CFG[] =
	"{\"ociVersion\":\"1.0.2-dev\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":"
	"[\"sleep\",\"600\"],\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024}]"
	"},"
	"\"root\":{\"path\":\"/var/lib/containers/storage/overlay/053a/merged\"},\"hostname\":"
	"\"53eaf916084a\",\"annotations\":{\"io.container.manager\":\"libpod\","
	"\"io.kubernetes.cri-o.Created\":\"2026-12-03T14:47:10.626473522Z\","
	"\"io.kubernetes.cri-o.TTY\":\"false\",\"io.podman.annotations.autoremove\":\"FALSE\","
	"\"io.podman.annotations.init\":\"FALSE\",\"io.podman.annotations.privileged\":\"FALSE\","
	"\"io.podman.annotations.publish-all\":\"FALSE\","
	"\"org.opencontainers.image.stopSignal\":\"15\"},\"linux\":{\"cgroupsPath\":"
	"\"/libpod_parent/libpod-53eaf916\"}}";

/* podman's entry in containers/storage's containers.json, %s: its id */
#define PODMAN_ENTRY                                                                             \
	"{\"id\":\"%s\",\"names\":[\"rt-probe\"],\"image\":"                                     \
	"\"d02d3b14fa96652f51d2486d280f9d74d0cb5fa1e0c2b53645b9b7bbb63a9da7\",\"layer\":"        \
	"\"053a6491141dcea9866fc076c842c26ca60f237adf1d4daa05f8f724d0e6c28e\",\"metadata\":"     \
	"\"{\\\"image-name\\\":\\\"localhost/rt-bb:1\\\",\\\"image-id\\\":"                      \
	"\\\"d02d3b14fa96652f51d2486d280f9d74d0cb5fa1e0c2b53645b9b7bbb63a9da7\\\",\\\"name\\\":" \
	"\\\"rt-probe\\\",\\\"created-at\\\":1796309230}\",\"created\":"                         \
	"\"2026-12-03T14:47:10.629485779Z\",\"flags\":{\"MountLabel\":\"\",\"ProcessLabel\":"    \
	"\"\"}}"

#define DOCKER_DOC(name, image, labels)                                                       \
	"{\"StreamConfig\":{},\"State\":{\"Running\":true,\"Paused\":false,\"Pid\":4242,"     \
	"\"ExitCode\":0,\"StartedAt\":\"2024-05-01T10:00:00.123Z\",\"Health\":null},\"ID\":"  \
	"\"0123\",\"Created\":\"2024-05-01T09:59:59Z\",\"Managed\":false,\"Path\":\"nginx\"," \
	"\"Args\":[\"-g\",\"daemon off;\"],\"Config\":{\"Hostname\":\"web\",\"Tty\":false,"   \
	"\"Env\":[\"PATH=/usr/local/sbin\"],\"Cmd\":[\"nginx\",\"-g\",\"daemon off;\"],"      \
	"\"Image\":" image ",\"Volumes\":null,\"Entrypoint\":[\"/docker-entrypoint.sh\"],"    \
	"\"OnBuild\":null,\"Labels\":" labels ",\"StopSignal\":\"SIGQUIT\"},\"Image\":"       \
	"\"sha256:a8758716bb6aa4d90071160d27028fe4eaee7ce8166221a97d30440c8eac2be6\","        \
	"\"NetworkSettings\":{\"Bridge\":\"\",\"Ports\":{\"80/tcp\":null}},\"LogPath\":"      \
	"\"/var/lib/docker/containers/0123/0123-json.log\",\"Name\":" name ",\"Driver\":"     \
	"\"overlay2\",\"RestartCount\":0,\"MountPoints\":{},\"SecretReferences\":null}"

static void parse_oci_cases(void)
{
	ok(oci(CRI_CTR) == 1 && !strcmp(m.name, "coredns") && m.name_len == 7 &&
		   !strcmp(m.pod_name, "coredns-5d78c9869d-8xk2p") &&
		   !strcmp(m.pod_ns, "kube-system") &&
		   !strcmp(m.image, "registry.k8s.io/coredns/coredns:v1.10.1") &&
		   !strcmp(m.source, "containerd") && !m.sandbox && m.plain == 15 && !m.cut,
	   "oci: containerd CRI container (name %s, pod %s/%s, image %s)", m.name, m.pod_ns,
	   m.pod_name, m.image);
	ok(oci(CRI_SANDBOX) == 1 && !m.name_len && m.sandbox &&
		   !strcmp(m.pod_name, "coredns-5d78c9869d-8xk2p") &&
		   !strcmp(m.source, "containerd"),
	   "oci: containerd CRI sandbox: the pod, no name, flagged");
	ok(oci(CTR_PLAIN) == 0 && !m.source && !m.name_len, "oci: ctr run's spec names nothing");
	ok(oci(CRIO_CTR) == 1 && !strcmp(m.name, "redis") && !strcmp(m.pod_name, "cache-0") &&
		   !strcmp(m.pod_ns, "web") && !strcmp(m.image, "docker.io/library/redis:alpine") &&
		   !strcmp(m.source, "cri-o"),
	   "oci: CRI-O container");
	ok(oci(PODMAN_CFG) == 0 && m.source && !strcmp(m.source, "podman") && !m.name_len,
	   "oci: podman's spec: podman, but no name (it is in containers.json)");
	/* escapes: \u00e9 (2 bytes), a surrogate pair (4), \/ and \n; not plain */
	ok(oci("{\"annotations\":{\"io.kubernetes.cri.container-name\":\"caf\\u00e9\\/x\\n\","
	       "\"io.kubernetes.cri.sandbox-name\":\"p\\ud83d\\ude00\","
	       "\"io.kubernetes.cri.sandbox-namespace\":\"a b\"}}") == 1 &&
		   !strcmp(m.name, "caf\xc3\xa9/x\n") && m.name_len == 8 &&
		   !strcmp(m.pod_name, "p\xf0\x9f\x98\x80") && !strcmp(m.pod_ns, "a b") &&
		   m.plain == LT_RT_IMAGE,
	   "oci: escapes decoded (\\u00e9, a surrogate pair, \\/, \\n), such fields not plain");
	ok(oci("{\"annotations\":{\"io.kubernetes.cri.container-name\":\"ab\\u0000cd\"}}") == 1 &&
		   !strcmp(m.name, "ab") && m.cut == LT_RT_NAME,
	   "oci: a value with \\u0000 is cut there");
	ok(oci("{\"annotations\":null,\"x\":[1,-0.5,2e+3,true,false,null,{}]}") == 0,
	   "oci: annotations null, every kind of value elsewhere");
	ok(oci(" {\"annotations\":{\"io.kubernetes.cri.container-name\":7}} \n") == 0 &&
		   !m.name_len,
	   "oci: a name that is not a string is none");
}

static void parse_cut_cases(void)
{
	char doc[4096], big[301];

	memset(big, 'n', 300);
	big[300] = 0;
	snprintf(
		doc, sizeof(doc),
		"{\"annotations\":{\"io.kubernetes.cri.container-name\":\"%s\","
		"\"io.kubernetes.cri.image-name\":\"%s\",\"io.kubernetes.cri.sandbox-name\":\"%s\","
		"\"io.kubernetes.cri.sandbox-namespace\":\"%s\"}}",
		big, big, big, big);
	ok(oci(doc) == 1 && m.name_len == LT_RT_NAME_MAX && m.image_len == LT_RT_IMAGE_MAX &&
		   m.pod_name_len == LT_RT_POD_MAX && m.pod_ns_len == LT_RT_NS_MAX && m.cut == 15 &&
		   strlen(m.name) == LT_RT_NAME_MAX && strlen(m.image) == LT_RT_IMAGE_MAX &&
		   m.plain == 15,
	   "cut: every field at its size (%u %u %u %u), flagged", m.name_len, m.image_len,
	   m.pod_name_len, m.pod_ns_len);
	/* 127 bytes and a 2-byte sequence: the sequence goes whole */
	memset(big, 'a', 127);
	big[127] = 0;
	snprintf(doc, sizeof(doc),
		 "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"%s\\u00e9\"}}", big);
	ok(oci(doc) == 1 && m.name_len == 127 && m.cut == LT_RT_NAME,
	   "cut: between UTF-8 sequences (\\u escape)");
	snprintf(doc, sizeof(doc),
		 "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"%s\xc3\xa9\"}}", big);
	ok(oci(doc) == 1 && m.name_len == 127 && m.cut == LT_RT_NAME,
	   "cut: between UTF-8 sequences (raw)");
	/* docker's Name: its '/' does not count */
	memset(big, 'd', 128);
	big[128] = 0;
	snprintf(doc, sizeof(doc), "{\"Name\":\"/%s\"}", big);
	ok(docker(doc) == 1 && m.name_len == 128 && !m.cut, "cut: docker's /NAME of 128: whole");
	snprintf(doc, sizeof(doc), "{\"Name\":\"%s\xc3\xa9\"}", big + 1);
	ok(docker(doc) == 1 && m.name_len == 127 && m.cut == LT_RT_NAME,
	   "cut: docker's Name without '/' cut between sequences");
}

static void parse_docker_cases(void)
{
	static const char plain[] = DOCKER_DOC("\"/web\"", "\"nginx:1.25\"",
					       "{\"maintainer\":\"NGINX Docker Maintainers "
					       "\\u003cdocker-maint@nginx.com\\u003e\"}");
	static const char shim[] = DOCKER_DOC(
		"\"/k8s_nginx_web-7d9f_default_5b5e07db-f1b9-4530-81ef-b7d04d66b83e_0\"",
		"\"sha256:a8758716bb6aa4d90071160d27028fe4eaee7ce8166221a97d30440c8eac2be6\"",
		"{\"annotation.io.kubernetes.container.hash\":\"1b2c\","
		"\"io.kubernetes.container.name\":\"nginx\",\"io.kubernetes.docker.type\":"
		"\"container\",\"io.kubernetes.pod.name\":\"web-7d9f\",\"io.kubernetes.pod."
		"namespace\":"
		"\"default\",\"io.kubernetes.pod.uid\":\"5b5e07db-f1b9-4530-81ef-b7d04d66b83e\"}");
	static const char pause[] = DOCKER_DOC(
		"\"/k8s_POD_web-7d9f_default_5b5e07db_0\"", "\"registry.k8s.io/pause:3.9\"",
		"{\"io.kubernetes.container.name\":\"POD\",\"io.kubernetes.docker.type\":"
		"\"podsandbox\",\"io.kubernetes.pod.name\":\"web-7d9f\"}");
	static const char noimage[] = DOCKER_DOC("\"/x\"", "null", "null");

	ok(docker(plain) == 1 && !strcmp(m.name, "web") && !strcmp(m.image, "nginx:1.25") &&
		   !m.pod_name_len && !strcmp(m.source, "docker") && m.plain == 15,
	   "docker: Name without its '/', Config.Image");
	ok(docker(shim) == 1 && !strcmp(m.name, "nginx") && !strcmp(m.pod_name, "web-7d9f") &&
		   !strcmp(m.pod_ns, "default") && !strncmp(m.image, "sha256:", 7) && !m.sandbox,
	   "docker: dockershim's labels name the container and its pod");
	ok(docker(pause) == 1 && m.sandbox && !strcmp(m.name, "POD"),
	   "docker: dockershim's sandbox");
	ok(docker(noimage) == 1 && !strcmp(m.name, "x") &&
		   !strcmp(m.image,
			   "sha256:a8758716bb6aa4d90071160d27028fe4eaee7ce8166221a97d30440c8e"
			   "ac2be6"),
	   "docker: no Config.Image: the image id");
	ok(docker("{\"Config\":null,\"State\":{}}") == 0 && !m.name_len,
	   "docker: no Name: names nothing");
}

static void parse_storage_cases(void)
{
	char doc[8192], e1[1500], e2[1500];
	const char *a = cid(1), *b = cid(2);

	snprintf(e1, sizeof(e1), PODMAN_ENTRY, a);
	/* CRI-O's entry: its "name" is k8s_..., metadata-name the container's */
	snprintf(e2, sizeof(e2),
		 "{\"id\":\"%s\",\"names\":[\"k8s_redis_cache-0_web_5b5e_0\",\"x\"],\"image\":"
		 "\"7614ae94\",\"metadata\":\"{\\\"pod-name\\\":\\\"cache-0\\\",\\\"pod-id\\\":"
		 "\\\"500027\\\",\\\"image-name\\\":\\\"docker.io/library/redis:alpine\\\","
		 "\\\"name\\\":\\\"k8s_redis_cache-0_web_5b5e_0\\\",\\\"metadata-name\\\":"
		 "\\\"redis\\\"}\"}",
		 b);
	snprintf(doc, sizeof(doc), "[%s,\n%s]", e1, e2);
	ok(storage(doc, a) == 1 && !strcmp(m.name, "rt-probe") &&
		   !strcmp(m.image, "localhost/rt-bb:1") && !strcmp(m.source, "podman") &&
		   !m.pod_name_len,
	   "storage: podman's entry (name %s, image %s)", m.name, m.image);
	ok(storage(doc, b) == 1 && !strcmp(m.name, "redis") && !strcmp(m.pod_name, "cache-0") &&
		   !strcmp(m.image, "docker.io/library/redis:alpine") && !strcmp(m.source, "cri-o"),
	   "storage: CRI-O's entry: metadata-name, pod-name");
	ok(storage(doc, cid(3)) == 0 && !m.name_len, "storage: an id not in the list");
	ok(storage("[]", a) == 0, "storage: an empty list");
	/* a malformed metadata string: names[0] and the image id */
	snprintf(doc, sizeof(doc),
		 "[{\"id\":\"%s\",\"names\":[\"only\"],\"image\":\"d02d\",\"metadata\":\"{nope\"}]",
		 a);
	ok(storage(doc, a) == 1 && !strcmp(m.name, "only") && !strcmp(m.image, "d02d"),
	   "storage: metadata not JSON: names[0], the image id");
	snprintf(doc, sizeof(doc), "[%s,{\"id\":\"%s\"", e1, b);
	ok(storage(doc, a) == -EINVAL && !m.name_len,
	   "storage: a list cut short is malformed, even past the entry");
	ok(storage("{\"id\":1}", a) == -EINVAL, "storage: not an array");
}

static void parse_malformed_cases(void)
{
	static const char *const bad[] = {
		"",
		"   ",
		"[]",
		"{",
		"{\"annotations\":{}",
		"{\"a\":1,}",
		"{,\"a\":1}",
		"{\"a\" 1}",
		"{\"a\":1}x",
		"{\"a\":1}{}",
		"{\"a\":01}",
		"{\"a\":1.}",
		"{\"a\":-}",
		"{\"a\":1e}",
		"{\"a\":tru}",
		"{\"a\":[1,]}",
		"{\"a\":[,1]}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12g4\"}",
		"{\"a\":\"\\ud800\"}",
		"{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\ud800\\u0041\"}",
		"{\"a\":\"tab\there\"}",
		"{\"a\":\"\xc0\xaf\"}", /* overlong '/' */
		"{\"a\":\"\xed\xa0\x80\"}", /* a surrogate in UTF-8 */
		"{\"a\":\"\xf4\x90\x80\x80\"}", /* past U+10FFFF */
		"{\"a\":\"\xe2\x82\"}", /* a sequence cut short */
		"{\"a\":\"\xff\"}",
		"{'a':1}",
		"{\"a\":\"unterminated}",
	};
	char deep[300];
	int n = 0, i;

	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		int r = oci(bad[i]);

		if (r != -EINVAL)
			printf("# accepted: %s\n", bad[i]);
		n += r == -EINVAL;
	}
	ok(n == i, "malformed: %d of %d documents refused by the OCI parser", n, i);
	ok(lt_rt_parse_oci("{\"a\":1}\0", 8, &m) == -EINVAL, "malformed: a NUL after the value");
	ok(docker("{\"Config\":{\"Labels\":{\"a\":}}}") == -EINVAL &&
		   docker("{\"Name\":\"/x\",}") == -EINVAL,
	   "malformed: the docker parser refuses too");
	/* nesting: the top object and 63 arrays are 64 levels, one more is too deep */
	memset(deep, 0, sizeof(deep));
	strcpy(deep, "{\"x\":");
	memset(deep + 5, '[', 63);
	memset(deep + 68, ']', 63);
	strcat(deep, "}");
	ok(oci(deep) == 0, "depth: 64 levels are read");
	strcpy(deep, "{\"x\":");
	memset(deep + 5, '[', 64);
	memset(deep + 69, ']', 64);
	deep[133] = '}';
	deep[134] = 0;
	ok(oci(deep) == -EINVAL, "depth: 65 levels are refused");
}

/* ---- the cache on a tree ---- */

static void mkdirs(const char *rel)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

/* a file below the root, its directories made */
static void put_file(const char *fmt_rel, const char *id, const char *body, size_t len)
{
	char rel[400], dir[400], p[700];
	FILE *f;

	snprintf(rel, sizeof(rel), fmt_rel, id);
	snprintf(dir, sizeof(dir), "%s", rel);
	*strrchr(dir, '/') = 0;
	mkdirs(dir);
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	if (!f || fwrite(body, 1, len, f) != len || fclose(f))
		perror(p);
}

static void put_str(const char *fmt_rel, const char *id, const char *body)
{
	put_file(fmt_rel, id, body, strlen(body));
}

#define DOCKER_PATH "var/lib/docker/containers/%s/config.v2.json"
#define K8S_PATH "run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json"
#define CTR_PATH "run/containerd/io.containerd.runtime.v2.task/default/%s/config.json"
#define CRIO_PATH "run/containers/storage/overlay-containers/%s/userdata/config.json"
#define PODMAN_PATH "var/lib/containers/storage/overlay-containers/%s/userdata/config.json"
#define LIST_PATH "var/lib/containers/storage/overlay-containers/containers.json"

static struct lt_rt_stats stats(struct lt_rt_cache *c)
{
	struct lt_rt_stats st;

	lt_rt_stats(c, &st);
	return st;
}

/* each runtime found in its place; the hits; the ids refused */
static void cache_runtimes(bool walk)
{
	static const char dock[] = DOCKER_DOC("\"/web\"", "\"nginx:1.25\"", "{}");
	struct lt_rt_cfg cfg = { .root = root, .no_openat2 = walk };
	struct lt_rt_cache c;
	const struct lt_rt_meta *p, *q;
	const char *how = walk ? "walk" : "openat2";
	char list[4096], e1[1500], e2[1500], bad[80] = "";
	struct lt_rt_stats st;
	bool refused;
	int k = walk ? 100 : 0;

	put_str(DOCKER_PATH, cid(k + 1), dock);
	put_str(K8S_PATH, cid(k + 2), CRI_CTR);
	put_str(CTR_PATH, cid(k + 3), CTR_PLAIN);
	put_str(CRIO_PATH, cid(k + 4), CRIO_CTR);
	put_str(PODMAN_PATH, cid(k + 5), PODMAN_CFG);
	/* both passes' podman containers */
	snprintf(e1, sizeof(e1), PODMAN_ENTRY, cid(5));
	snprintf(e2, sizeof(e2), PODMAN_ENTRY, cid(105));
	snprintf(list, sizeof(list), "[%s,%s]", e1, e2);
	put_str(LIST_PATH, "", list);

	ok(!lt_rt_open(&c, &cfg), "%s: open", how);
	p = lt_rt_get(&c, cid(k + 1), SEC);
	ok(p && !strcmp(p->name, "web") && !strcmp(p->source, "docker"), "%s: docker", how);
	q = lt_rt_get(&c, cid(k + 1), SEC + 1);
	ok(q == p && stats(&c).hits == 1 && stats(&c).misses == 1, "%s: docker again: a hit", how);
	p = lt_rt_get(&c, cid(k + 2), SEC);
	ok(p && !strcmp(p->name, "coredns") && !strcmp(p->pod_ns, "kube-system") &&
		   !strcmp(p->source, "containerd"),
	   "%s: containerd CRI (k8s.io)", how);
	p = lt_rt_get(&c, cid(k + 3), SEC);
	ok(p && !strcmp(p->name, cid(k + 3)) && p->name_len == 64 && p->plain & LT_RT_NAME &&
		   !strcmp(p->source, "containerd"),
	   "%s: ctr run (default): the containerd id is the name", how);
	p = lt_rt_get(&c, cid(k + 4), SEC);
	ok(p && !strcmp(p->name, "redis") && !strcmp(p->source, "cri-o"), "%s: CRI-O", how);
	p = lt_rt_get(&c, cid(k + 5), SEC);
	ok(p && !strcmp(p->name, "rt-probe") && !strcmp(p->image, "localhost/rt-bb:1") &&
		   !strcmp(p->source, "podman"),
	   "%s: podman, from containers.json", how);
	ok(!lt_rt_get(&c, cid(k + 6), SEC), "%s: unknown", how);
	/* the docker container's id, spoilt */
	snprintf(bad, sizeof(bad), "%s", cid(k + 1));
	bad[0] = 'E';
	refused = !lt_rt_get(&c, bad, SEC);
	bad[0] = 'e';
	bad[63] = 0;
	refused &= !lt_rt_get(&c, bad, SEC);
	bad[63] = '1';
	bad[64] = '1';
	refused &= !lt_rt_get(&c, bad, SEC);
	refused &= !lt_rt_get(&c, "../../../../etc/passwd", SEC);
	ok(refused, "%s: upper case, 63 and 65 digits, a path: refused", how);
	st = stats(&c);
	ok(st.found == 5 && st.not_found == 1 && st.bad_id == 4 && st.entries == 6 &&
		   st.cap == 4096 && st.reads == 6 && !st.skipped_link && !st.skipped_malformed,
	   "%s: stats: found %lu, not found %lu, bad ids %lu, entries %lu, reads %lu", how,
	   (unsigned long)st.found, (unsigned long)st.not_found, (unsigned long)st.bad_id,
	   (unsigned long)st.entries, (unsigned long)st.reads);
	lt_rt_close(&c);
}

/* symlinks (out of the root, and inside it), a directory, a file too big, malformed */
static void cache_hostile(bool walk)
{
	struct lt_rt_cfg cfg = { .root = root, .no_openat2 = walk, .file_max = 4096 };
	const char *how = walk ? "walk" : "openat2";
	struct lt_rt_cache c;
	struct lt_rt_stats st;
	char p[700], t[700], big[5000];
	int k = walk ? 300 : 200;

	/* a file outside the root, and a good one inside it */
	snprintf(t, sizeof(t), "%s/outside.json", tmp);
	put_str("../outside.json", "", CRI_CTR);
	put_str(K8S_PATH, cid(k + 9), CRI_CTR);

	/* the config itself a link out of the root, and one to a file inside it */
	mkdirs("run/containerd/io.containerd.runtime.v2.task/k8s.io/x");
	snprintf(p, sizeof(p), "%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s", root,
		 cid(k + 1));
	mkdir(p, 0755);
	strcat(p, "/config.json");
	if (symlink(t, p))
		perror(p);
	snprintf(p, sizeof(p), "%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s", root,
		 cid(k + 2));
	mkdir(p, 0755);
	strcat(p, "/config.json");
	snprintf(t, sizeof(t), "../%s/config.json", cid(k + 9));
	if (symlink(t, p))
		perror(p);
	/* a directory of the path a link (inside the root) */
	snprintf(p, sizeof(p), "%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s", root,
		 cid(k + 3));
	if (symlink(cid(k + 9), p))
		perror(p);
	/* a directory where the file should be */
	mkdirs("var/lib/docker/containers/x");
	snprintf(p, sizeof(p), "%s/var/lib/docker/containers/%s/config.v2.json", root, cid(k + 4));
	mkdirs(p + strlen(root) + 1);
	/* a file over file_max, and one malformed */
	memset(big, ' ', sizeof(big));
	memcpy(big, "{}", 2);
	put_file(CRIO_PATH, cid(k + 5), big, sizeof(big));
	put_str(CRIO_PATH, cid(k + 6), "{\"annotations\":{\"io.kubernetes.pod.name\":\"x\"");

	ok(!lt_rt_open(&c, &cfg), "%s: open (file_max 4096)", how);
	ok(lt_rt_get(&c, cid(k + 9), SEC) != NULL, "%s: the links' target is read as itself", how);
	ok(!lt_rt_get(&c, cid(k + 1), SEC) && stats(&c).skipped_link == 1,
	   "%s: config.json a link out of the root: skipped", how);
	ok(!lt_rt_get(&c, cid(k + 2), SEC) && stats(&c).skipped_link == 2,
	   "%s: config.json a link inside the root: skipped", how);
	ok(!lt_rt_get(&c, cid(k + 3), SEC) && stats(&c).skipped_link == 3,
	   "%s: the container's directory a link: skipped", how);
	ok(!lt_rt_get(&c, cid(k + 4), SEC) && stats(&c).skipped_type == 1,
	   "%s: a directory for config.v2.json: skipped", how);
	ok(!lt_rt_get(&c, cid(k + 5), SEC) && stats(&c).skipped_big == 1,
	   "%s: a config of 5000 bytes: skipped", how);
	ok(!lt_rt_get(&c, cid(k + 6), SEC) && stats(&c).skipped_malformed == 1,
	   "%s: a malformed config: skipped", how);
	st = stats(&c);
	ok(st.found == 1 && st.not_found == 6 && !st.skipped_error, "%s: 1 found, 6 not", how);
	lt_rt_close(&c);
}

/* a container whose files come after its first lookup; the budget of opens */
static void cache_retry(void)
{
	struct lt_rt_cfg cfg = { .root = root };
	struct lt_rt_cache c;
	const char *id = cid(400);

	ok(!lt_rt_open(&c, &cfg), "retry: open (retry 1 s)");
	ok(!lt_rt_get(&c, id, 10 * SEC) && stats(&c).misses == 1, "retry: not there yet");
	put_str(K8S_PATH, id, CRI_CTR);
	ok(!lt_rt_get(&c, id, 10 * SEC + SEC / 2) && stats(&c).misses == 1 && stats(&c).hits == 1,
	   "retry: half a second later, still unknown (no files read)");
	ok(lt_rt_get(&c, id, 11 * SEC) && stats(&c).misses == 2 && stats(&c).found == 1,
	   "retry: a second later, found");
	ok(lt_rt_get(&c, id, 100 * SEC) && stats(&c).misses == 2,
	   "retry: found stays found (a hit)");
	lt_rt_close(&c);

	cfg.opens_max = 1;
	ok(!lt_rt_open(&c, &cfg), "budget: open (1 open a second)");
	ok(!lt_rt_get(&c, cid(401), SEC) && stats(&c).misses == 1, "budget: the first lookup runs");
	ok(!lt_rt_get(&c, id, SEC + 1) && stats(&c).deferred == 1 && stats(&c).misses == 1,
	   "budget: the second one in the same second waits");
	ok(lt_rt_get(&c, id, 2 * SEC + 1) && stats(&c).misses == 2,
	   "budget: and runs in the next second");
	lt_rt_close(&c);
}

static void cache_lru(void)
{
	struct lt_rt_cfg cfg = { .root = root, .cap = 4 };
	struct lt_rt_cache c;
	struct lt_rt_stats st;
	bool all = true;

	for (unsigned int i = 0; i < 5; i++)
		put_str(K8S_PATH, cid(500 + i), CRI_CTR);
	ok(!lt_rt_open(&c, &cfg), "lru: open (cap 4)");
	for (unsigned int i = 0; i < 4; i++)
		all &= lt_rt_get(&c, cid(500 + i), SEC) != NULL;
	/* 500 used again: 501 is now the least recent */
	all &= lt_rt_get(&c, cid(500), SEC) != NULL;
	all &= lt_rt_get(&c, cid(504), SEC) != NULL;
	st = stats(&c);
	ok(all && st.entries == 4 && st.evictions == 1 && st.misses == 5 && st.hits == 1,
	   "lru: a fifth container evicts one (entries %lu, evictions %lu)",
	   (unsigned long)st.entries, (unsigned long)st.evictions);
	lt_rt_get(&c, cid(500), SEC);
	lt_rt_get(&c, cid(502), SEC);
	lt_rt_get(&c, cid(503), SEC);
	lt_rt_get(&c, cid(504), SEC);
	ok(stats(&c).misses == 5 && stats(&c).hits == 5, "lru: the recent four are hits");
	ok(lt_rt_get(&c, cid(501), SEC) && stats(&c).misses == 6 && stats(&c).evictions == 2,
	   "lru: the least recent was the one evicted (a miss)");
	/* many more than the cap: the index stays whole through its deletions */
	for (unsigned int r = 0; r < 3; r++)
		for (unsigned int i = 0; i < 5; i++)
			all &= lt_rt_get(&c, cid(500 + i), SEC) != NULL;
	st = stats(&c);
	ok(all && st.entries == 4 && st.found == st.misses, "lru: churn keeps every answer right");
	lt_rt_close(&c);
}

static void cache_no_malloc(void)
{
	struct lt_rt_cfg cfg = { .root = root, .cap = 8 };
	struct lt_rt_cache c;
	unsigned long a, f;
	unsigned int got = 0;

	ok(!lt_rt_open(&c, &cfg), "malloc: open");
	allocs = frees = 0;
	for (unsigned int r = 0; r < 50; r++) {
		/* found ones (each runtime), not found ones, hits, evictions */
		for (unsigned int i = 1; i <= 6; i++)
			got += lt_rt_get(&c, cid(i), (uint64_t)r * 2 * SEC) != NULL;
		for (unsigned int i = 0; i < 5; i++)
			got += lt_rt_get(&c, cid(900 + i), (uint64_t)r * 2 * SEC) != NULL;
		got += lt_rt_get(&c, cid(5), (uint64_t)r * 2 * SEC + 1) != NULL;
	}
	a = allocs;
	f = frees;
	ok(got == 50 * 6 && a == 0 && f == 0 && stats(&c).misses > 500,
	   "malloc: %lu misses, %lu hits: %lu mallocs, %lu frees", (unsigned long)stats(&c).misses,
	   (unsigned long)stats(&c).hits, a, f);
	lt_rt_close(&c);
}

int main(void)
{
	char cmd[400];

	parse_oci_cases();
	parse_cut_cases();
	parse_docker_cases();
	parse_storage_cases();
	parse_malformed_cases();

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(root, sizeof(root), "%s/root", tmp);
	mkdir(root, 0755);
	cache_runtimes(false);
	cache_runtimes(true);
	cache_hostile(false);
	cache_hostile(true);
	cache_retry();
	cache_lru();
	cache_no_malloc();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		ok(0, "rm -rf %s", tmp);
	return tap_done();
}
