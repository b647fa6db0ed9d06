// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the owner and its subscribers share (sub.h): a subscriber's filter and its hello, made
 * and checked. A pure layer (the unit tests and the fuzzer link it).
 */
#include <errno.h>
#include <string.h>

#include "lowtrace.h"
#include "sub.h"

bool lt_sub_match(const struct lt_sub_filter *f, const struct lt_probe *p, const struct lt_rec *r,
		  const struct lt_ident *id)
{
	if (f->types && !((f->types >> lt_rec_probe_type(p, r)) & 1))
		return false;
	if (p->type == LT_TYPE_LOST)
		return true;
	if (f->pid && r->hdr.pid != f->pid)
		return false;
	if (f->container[0] &&
	    (!id || strncmp(id->container_id, f->container, strlen(f->container))))
		return false;
	if (f->unit[0] && (!id || strcmp(id->unit, f->unit)))
		return false;
	if (f->cname[0] && (!id || !id->meta || strcmp(id->meta->name, f->cname)))
		return false;
	return true;
}

bool lt_sub_needs_ident(const struct lt_sub_filter *f)
{
	return f->container[0] || f->unit[0] || f->cname[0];
}

/* A string of the hello: `n` bytes of `set` (NULL: printable ASCII but '/') into out */
static bool hello_str(const char *in, size_t n, size_t max, const char *set, char *out)
{
	if (n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = in[i];

		if (set ? !strchr(set, c) || !c : c <= ' ' || c >= 0x7f || c == '/')
			return false;
	}
	memcpy(out, in, n);
	out[n] = 0;
	return true;
}

int lt_sub_hello_parse(const void *buf, size_t len, struct lt_sub_filter *f, const char **why)
{
	struct lt_sub_hello h;
	const char *s = (const char *)buf + sizeof(h);
	uint64_t known = 0;
	size_t ul;

	memset(f, 0, sizeof(*f));
	*why = "not a lowtrace subscriber's hello";
	if (len < sizeof(h))
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, LT_SUB_MAGIC, 4))
		return -EPROTO;
	if (h.version != LT_SUB_VERSION) {
		*why = "protocol version not served (this owner speaks version 1)";
		return -EPROTO;
	}
	*why = "malformed hello";
	if (h.flags || h.zero || len != sizeof(h) + h.container_len + h.unit_len + h.cname_len)
		return -EINVAL;
	for (size_t i = 0; i < lt_nprobes; i++)
		if (lt_probes[i].type)
			known |= 1ull << lt_probes[i].type;
	known |= 1ull << LT_TYPE_LOST;
	if ((h.types & ~known) || h.pid > 0x3fffffff)
		return -EINVAL;
	f->types = h.types;
	f->pid = h.pid;
	if (!hello_str(s, h.container_len, LT_IDENT_CID_LEN, "0123456789abcdef", f->container) ||
	    !hello_str(s + h.container_len, h.unit_len, LT_IDENT_UNIT_MAX, NULL, f->unit) ||
	    !hello_str(s + h.container_len + h.unit_len, h.cname_len, LT_RT_NAME_MAX, NULL,
		       f->cname))
		return -EINVAL;
	ul = strlen(f->unit);
	if (ul && !((ul > 8 && !strcmp(f->unit + ul - 8, ".service")) ||
		    (ul > 6 && !strcmp(f->unit + ul - 6, ".scope"))))
		return -EINVAL;
	return 0;
}

size_t lt_sub_hello_make(const struct lt_sub_filter *f, void *buf)
{
	struct lt_sub_hello h = { .version = LT_SUB_VERSION, .types = f->types, .pid = f->pid };
	char *s = (char *)buf + sizeof(h);

	memcpy(h.magic, LT_SUB_MAGIC, 4);
	h.container_len = strlen(f->container);
	h.unit_len = strlen(f->unit);
	h.cname_len = strlen(f->cname);
	memcpy(buf, &h, sizeof(h));
	memcpy(s, f->container, h.container_len);
	memcpy(s + h.container_len, f->unit, h.unit_len);
	memcpy(s + h.container_len + h.unit_len, f->cname, h.cname_len);
	return sizeof(h) + h.container_len + h.unit_len + h.cname_len;
}
