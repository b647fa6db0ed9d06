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
#include "tap.h"

struct member {
	const char *strct;
	const char *name;
	size_t off;
};

#define M(s, m)                               \
	{                                     \
#s, #m, offsetof(struct s, m) \
	}

/* Every member of every shared struct, in declaration order. */
static const struct member members[] = {
	M(lt_hdr, type),	  M(lt_hdr, size),	    M(lt_hdr, cpu),
	M(lt_hdr, ts_ns),	  M(lt_hdr, pid),	    M(lt_hdr, tid),

	M(lt_exec, hdr),	  M(lt_exec, ppid),	    M(lt_exec, uid),
	M(lt_exec, gid),	  M(lt_exec, argc),	    M(lt_exec, cgroup_id),
	M(lt_exec, filename_len), M(lt_exec, args_len),	    M(lt_exec, flags),
	M(lt_exec, _pad0),	  M(lt_exec, comm),	    M(lt_exec, filename),
	M(lt_exec, args),

	M(lt_exit, hdr),	  M(lt_exit, ppid),	    M(lt_exit, exit_code),
	M(lt_exit, signal),	  M(lt_exit, core_dumped),  M(lt_exit, _pad0),
	M(lt_exit, lifetime_ns),  M(lt_exit, comm),

	M(lt_fork, hdr),	  M(lt_fork, child_pid),    M(lt_fork, _pad0),
	M(lt_fork, comm),

	M(lt_signal, hdr),	  M(lt_signal, target_pid), M(lt_signal, target_tid),
	M(lt_signal, sig),	  M(lt_signal, result),	    M(lt_signal, group),
	M(lt_signal, _pad0),	  M(lt_signal, comm),	    M(lt_signal, target_comm),

	M(lt_oom, hdr),		  M(lt_oom, victim_pid),    M(lt_oom, victim_uid),
	M(lt_oom, pages),	  M(lt_oom, total_vm),	    M(lt_oom, comm),
	M(lt_oom, victim_comm),

	M(lt_open, hdr),	  M(lt_open, ret),	    M(lt_open, dfd),
	M(lt_open, flags),	  M(lt_open, mode),	    M(lt_open, path_len),
	M(lt_open, syscall),	  M(lt_open, rflags),	    M(lt_open, _pad0),
	M(lt_open, comm),	  M(lt_open, path),

	M(lt_tcp_addr, saddr),	  M(lt_tcp_addr, daddr),    M(lt_tcp_addr, sport),
	M(lt_tcp_addr, dport),	  M(lt_tcp_addr, family),   M(lt_tcp_addr, _pad0),

	M(lt_tcp, hdr),		  M(lt_tcp, addr),	    M(lt_tcp, duration_ns),
	M(lt_tcp, tx_bytes),	  M(lt_tcp, rx_bytes),	    M(lt_tcp, direction),
	M(lt_tcp, _pad0),	  M(lt_tcp, comm),

	M(lt_tcp_retrans, hdr),	  M(lt_tcp_retrans, addr),  M(lt_tcp_retrans, state),
	M(lt_tcp_retrans, _pad0), M(lt_tcp_retrans, comm),

	M(lt_hist, count),	  M(lt_hist, sum_ns),	    M(lt_hist, slot),
	M(lt_sys_key, nr),	  M(lt_sys_key, pid),	    M(lt_bio_key, dev),
	M(lt_bio_key, op),	  M(lt_bio_key, _pad0),

	M(lt_stat, events),	  M(lt_stat, drops),	    M(lt_stat, recovered),

	M(lt_task, hdr),	  M(lt_task, comm),

	M(lt_prof_key, tgid),	  M(lt_prof_key, kstack),   M(lt_prof_key, ustack),
	M(lt_prof_key, _pad0),	  M(lt_prof_key, comm),	    M(lt_prof_val, count),
	M(lt_prof_val, ns),	  M(lt_task_key, tgid),	    M(lt_task_key, comm),

	M(lt_al_key, tgid),	  M(lt_al_key, ustack),	    M(lt_al_key, caller),
	M(lt_al_val, bytes),	  M(lt_al_val, count_fp),   M(lt_al_val, samples),
	M(lt_al_live, size),	  M(lt_al_live, weight),    M(lt_al_live, site),
	M(lt_al_pend, size),	  M(lt_al_pend, weight),    M(lt_al_pend, memptr),
	M(lt_al_pend, site),	  M(lt_stack, ip),
};

static const struct {
	const char *name;
	size_t size;
} structs[] = {
	{ "lt_hdr", sizeof(struct lt_hdr) },
	{ "lt_exec", sizeof(struct lt_exec) },
	{ "lt_exit", sizeof(struct lt_exit) },
	{ "lt_fork", sizeof(struct lt_fork) },
	{ "lt_signal", sizeof(struct lt_signal) },
	{ "lt_oom", sizeof(struct lt_oom) },
	{ "lt_open", sizeof(struct lt_open) },
	{ "lt_tcp_addr", sizeof(struct lt_tcp_addr) },
	{ "lt_tcp", sizeof(struct lt_tcp) },
	{ "lt_tcp_retrans", sizeof(struct lt_tcp_retrans) },
	{ "lt_hist", sizeof(struct lt_hist) },
	{ "lt_sys_key", sizeof(struct lt_sys_key) },
	{ "lt_bio_key", sizeof(struct lt_bio_key) },
	{ "lt_stat", sizeof(struct lt_stat) },
	{ "lt_task", sizeof(struct lt_task) },
	{ "lt_prof_key", sizeof(struct lt_prof_key) },
	{ "lt_prof_val", sizeof(struct lt_prof_val) },
	{ "lt_task_key", sizeof(struct lt_task_key) },
	{ "lt_al_key", sizeof(struct lt_al_key) },
	{ "lt_al_val", sizeof(struct lt_al_val) },
	{ "lt_al_live", sizeof(struct lt_al_live) },
	{ "lt_al_pend", sizeof(struct lt_al_pend) },
	{ "lt_stack", sizeof(struct lt_stack) },
};

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
