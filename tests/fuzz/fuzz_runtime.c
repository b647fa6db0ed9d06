// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target: the runtimes' files (runtime.h). The first byte picks the parser (its value
 * modulo 3: 0 OCI config.json, 1 docker's config.v2.json, 2 containers/storage's
 * containers.json, for the id below); the rest is the document.
 *
 * Checked, besides the sanitizers (libFuzzer's copy ends at the input's end, so a read past
 * it is caught): the answer is -EINVAL, 0 or 1, and the same twice; a malformed document
 * leaves every field empty; each field is NUL-terminated at its length, within its size,
 * valid UTF-8 without a NUL; its plain bit is right; 1 means a name or a pod. The OCI and
 * docker parsers scan with the same rules, so they refuse the same documents.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CID "53eaf916084a1c35e2f7f04dea35641d74b10ce50e0c9109b3c61e3805f4216b"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_runtime: %s\n", what);
	abort();
}

static bool utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		uint32_t cp;
		size_t k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			k = 2, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			k = 3, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			k = 4, cp = c & 0x07;
		else
			return false;
		if (i + k > n)
			return false;
		for (size_t j = 1; j < k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k;
	}
	return true;
}

static bool plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

static void field(const char *s, size_t len, size_t max, int bit, const struct lt_rt_meta *m)
{
	if (len > max || strlen(s) != len)
		fail("a field's length");
	if (!utf8_ok((const unsigned char *)s, len))
		fail("a field not valid UTF-8");
	if (!!(m->plain & bit) != plain(s, len))
		fail("a field's plain bit");
}

static void check(int r, const struct lt_rt_meta *m)
{
	if (r != -EINVAL && r != 0 && r != 1)
		fail("an answer not -EINVAL, 0 or 1");
	field(m->name, m->name_len, LT_RT_NAME_MAX, LT_RT_NAME, m);
	field(m->image, m->image_len, LT_RT_IMAGE_MAX, LT_RT_IMAGE, m);
	field(m->pod_name, m->pod_name_len, LT_RT_POD_MAX, LT_RT_POD, m);
	field(m->pod_ns, m->pod_ns_len, LT_RT_NS_MAX, LT_RT_NS, m);
	if (m->plain > 15 || m->cut > 15)
		fail("flags past the four fields");
	if (r < 0 && (m->name_len || m->image_len || m->pod_name_len || m->pod_ns_len ||
		      m->source || m->cut || m->sandbox))
		fail("a malformed document left fields");
	if (r >= 0 && r != (m->name_len || m->pod_name_len))
		fail("1 without a name or pod, or 0 with one");
	if (m->source && strcmp(m->source, "docker") && strcmp(m->source, "containerd") &&
	    strcmp(m->source, "cri-o") && strcmp(m->source, "podman"))
		fail("an unknown source");
}

static int parse(int which, const char *p, size_t n, struct lt_rt_meta *m)
{
	switch (which) {
	case 0:
		return lt_rt_parse_oci(p, n, m);
	case 1:
		return lt_rt_parse_docker(p, n, m);
	default:
		return lt_rt_parse_storage(p, n, CID, m);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lt_rt_meta a, b;
	const char *p = (const char *)data + 1;
	int which, r, r2;

	if (!size)
		return 0;
	which = data[0] % 3;
	r = parse(which, p, size - 1, &a);
	check(r, &a);
	r2 = parse(which, p, size - 1, &b);
	if (r2 != r || a.source != b.source || a.plain != b.plain || a.cut != b.cut ||
	    a.sandbox != b.sandbox || strcmp(a.name, b.name) || strcmp(a.image, b.image) ||
	    strcmp(a.pod_name, b.pod_name) || strcmp(a.pod_ns, b.pod_ns))
		fail("two answers to one document");
	if (which < 2) {
		r2 = parse(!which, p, size - 1, &b);
		check(r2, &b);
		if ((r < 0) != (r2 < 0))
			fail("the OCI and docker parsers disagree on a document's form");
	}
	return 0;
}
