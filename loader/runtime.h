/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Container names from the container runtimes' own state files on this node: a container id
 * (64 lower-case hex, as lt_ident_derive gives it) to its name, image and, under Kubernetes,
 * its pod's name and namespace. A pure layer (files only, no libbpf, never the network).
 * Everything is allocated by lt_rt_open; a lookup, hit or miss, allocates nothing.
 *
 * Where each runtime keeps what is read (paths below cfg.root, "/" by default):
 *   docker      var/lib/docker/containers/<id>/config.v2.json ("Name", "Config.Image",
 *               "Config.Labels": dockershim's io.kubernetes.* labels)
 *   containerd  run/containerd/io.containerd.runtime.v2.task/<namespace>/<id>/config.json
 *               (the OCI spec; CRI's io.kubernetes.cri.* annotations; without them, as with
 *               `ctr run`, the name is the containerd id itself)
 *   cri-o       {run,var/lib}/containers/storage/overlay-containers/<id>/userdata/config.json
 *               (io.kubernetes.container.name, io.kubernetes.pod.*, io.kubernetes.cri-o.*)
 *   podman      the same config.json (annotation io.container.manager=libpod, no name), then
 *               containers/storage's overlay-containers/containers.json: an array of
 *               {"id","names":[..],"image","metadata":"<JSON in a string: image-name, name>"}
 *
 * Files are opened below the root without following any symlink (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, else one O_NOFOLLOW component at a time), only regular files, of at
 * most cfg.file_max bytes (containers.json: cfg.storage_max). A file missing, too big, not
 * regular, behind a symlink or malformed is skipped and counted, never an error.
 */
#ifndef LT_RUNTIME_H
#define LT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LT_RT_CID_LEN 64 /* container ids: 64 lower-case hex digits */
/* bytes kept of each field (longer ones are cut at a UTF-8 boundary, and flagged) */
#define LT_RT_NAME_MAX 128
#define LT_RT_IMAGE_MAX 256
#define LT_RT_POD_MAX 128
#define LT_RT_NS_MAX 64 /* Kubernetes namespaces are DNS labels: 63 */

/* bits of lt_rt_meta.plain and .cut, one per field */
#define LT_RT_NAME 1
#define LT_RT_IMAGE 2
#define LT_RT_POD 4
#define LT_RT_NS 8

/*
 * What the runtime says of a container. Every field is NUL-terminated valid UTF-8 without a
 * NUL inside (a value with \u0000 is cut there), empty when the runtime does not say.
 * plain: the field is printable ASCII without space, '"' or '\', so encoders may copy it
 * as it is; cut: the value was longer than its field (or held a NUL), this is its start.
 */
struct lt_rt_meta {
	const char *source; /* "docker", "containerd", "cri-o", "podman"; NULL: not said */
	uint16_t image_len;
	uint8_t name_len, pod_name_len, pod_ns_len;
	uint8_t plain, cut;
	bool sandbox; /* a pod's sandbox (pause) container: pod fields, maybe no name */
	char name[LT_RT_NAME_MAX + 1];
	char image[LT_RT_IMAGE_MAX + 1];
	char pod_name[LT_RT_POD_MAX + 1];
	char pod_ns[LT_RT_NS_MAX + 1];
};

struct lt_rt_cfg {
	uint32_t cap; /* containers cached, found or not (0: 4096) */
	const char *root; /* a directory that stands for "/" (tests); NULL: "/" */
	uint64_t retry_ns; /* a container not found is looked for again after this (0: 1 s) */
	size_t file_max; /* largest config file read (0: 1 MiB) */
	size_t storage_max; /* largest containers.json read (0: 8 MiB) */
	/*
	 * files opened per second (0: 256): a lookup starts only while the second has some left
	 * and takes at most 23, so a second opens at most opens_max + 22; later lookups wait
	 */
	uint32_t opens_max;
	bool no_openat2; /* tests: the O_NOFOLLOW walk even where openat2 exists */
};

struct lt_rt_stats {
	uint64_t entries, cap; /* containers cached now (not-found ones included), the cap */
	uint64_t hits; /* answered from the cache (found or not) */
	uint64_t misses; /* looked up in the files */
	uint64_t found, not_found; /* what those lookups gave */
	uint64_t deferred; /* lookups put off: the second's opens were spent */
	uint64_t bad_id; /* ids that are not 64 lower-case hex: never used in a path */
	uint64_t evictions; /* least recently used entries dropped for new ones */
	uint64_t reads; /* files read whole */
	/* files skipped: absent ones count only when no runtime had the container (not_found) */
	uint64_t skipped_big, skipped_malformed, skipped_link, skipped_type, skipped_error;
};

struct rt_impl;
/* Opaque: everything behind one pointer, allocated by lt_rt_open. */
struct lt_rt_cache {
	struct rt_impl *impl;
};

/* Allocate everything (and open the root). 0, or -errno. Close it even when open failed. */
int lt_rt_open(struct lt_rt_cache *c, const struct lt_rt_cfg *cfg);
void lt_rt_close(struct lt_rt_cache *c);

/*
 * The container's metadata, or NULL: unknown (not found, looked up less than retry_ns ago,
 * or deferred by the open budget), or cid is not 64 lower-case hex. A found container stays
 * cached until evicted. now_ns: any monotonic clock (the records' ts_ns). The pointer is valid
 * until the next lt_rt_get.
 */
const struct lt_rt_meta *lt_rt_get(struct lt_rt_cache *c, const char *cid, uint64_t now_ns);

void lt_rt_stats(const struct lt_rt_cache *c, struct lt_rt_stats *st);

/*
 * The parsers, pure: strict JSON (RFC 8259: UTF-8 checked, nesting at most 64 deep, nothing
 * after the value), the fields found copied into *m (cleared first). Each returns 1 when the
 * document names the container (a name or a pod), 0 when it is well-formed but does not,
 * -EINVAL when it is malformed.
 */
/* An OCI runtime config.json: its annotations (containerd's CRI, CRI-O's, podman's marker). */
int lt_rt_parse_oci(const char *buf, size_t len, struct lt_rt_meta *m);
/* docker's config.v2.json. */
int lt_rt_parse_docker(const char *buf, size_t len, struct lt_rt_meta *m);
/* containers/storage's containers.json: the entry whose "id" is cid (0: none is). */
int lt_rt_parse_storage(const char *buf, size_t len, const char *cid, struct lt_rt_meta *m);

#endif
