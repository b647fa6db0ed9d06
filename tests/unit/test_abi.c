// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The record ABI as the BPF object's BTF describes it must equal the one
 * userspace compiles: every record's size, member count and member offsets.
 * A field added on one side only changes a size, a count or an offset.
 */
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "lt_abi.h"
#include "lt_hist.h"
#include "lt_prof.h"
#include "lt_unwind.h"
#include "tap.h"

struct member {
	const char *strct;
	const char *name;
	size_t off;
};

#define MEMBER(s, m) { #s, #m, offsetof(struct s, m) },
#define STRUCT(s) { #s, sizeof(struct s) },
#define NONE_S(s)
#define NONE_M(s, m)

/* Every member of every shared struct, in declaration order: the lists in the headers. */
static const struct member members[] = { LT_ABI_RECORDS(NONE_S, MEMBER) LT_ABI_HIST(NONE_S, MEMBER)
						 LT_ABI_PROF(NONE_S, MEMBER)
							 LT_ABI_UNWIND(NONE_S, MEMBER) };

static const struct {
	const char *name;
	size_t size;
} structs[] = { LT_ABI_RECORDS(STRUCT, NONE_M) LT_ABI_HIST(STRUCT, NONE_M)
			LT_ABI_PROF(STRUCT, NONE_M) LT_ABI_UNWIND(STRUCT, NONE_M) };

int main(int argc, char **argv)
{
	const char *obj = argc > 1 ? argv[1] : "build/lowtrace.bpf.o";
	struct btf *btf = btf__parse_elf(obj, NULL);

	ok(btf != NULL, "BTF of %s parses", obj);
	if (!btf)
		return tap_done();
	for (size_t s = 0; s < sizeof(structs) / sizeof(structs[0]); s++) {
		__s32 id = btf__find_by_name_kind(btf, structs[s].name, BTF_KIND_STRUCT);
		const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
		const struct btf_member *bm;
		size_t n = 0, matched = 0;

		ok(t != NULL, "%s is in the object's BTF", structs[s].name);
		if (!t)
			continue;
		ok(t->size == structs[s].size, "%s: BTF size %u == sizeof %zu", structs[s].name,
		   t->size, structs[s].size);
		bm = btf_members(t);
		for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
			if (strcmp(members[i].strct, structs[s].name))
				continue;
			n++;
			for (unsigned int k = 0; k < btf_vlen(t); k++) {
				const char *name = btf__name_by_offset(btf, bm[k].name_off);

				if (strcmp(name, members[i].name))
					continue;
				matched += btf_member_bit_offset(t, k) == members[i].off * 8;
				break;
			}
		}
		ok(btf_vlen(t) == n, "%s: BTF has %u members, userspace table %zu", structs[s].name,
		   btf_vlen(t), n);
		ok(matched == n, "%s: %zu of %zu member offsets equal offsetof", structs[s].name,
		   matched, n);
	}
	btf__free(btf);
	return tap_done();
}
