// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one definition of what lt_common.bpf.h declares. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lt_abi.h"
#include "lt_prof.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} lt_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_PROBE_SLOTS);
	__type(key, __u32);
	__type(value, struct lt_stat);
} lt_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} lt_cgroup SEC(".maps");

/*
 * Profiles (profile, offcpu, alloc): created only when one of them is loaded
 * (the loader turns their creation off otherwise) and sized by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct lt_stack);
} lt_stacks SEC(".maps");

/* one stack being hashed (too big for the BPF stack); one program family runs per object */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_stack);
} lt_stack_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_PC_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lt_prof_err SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lt_task_key);
	__type(value, __u8);
} lt_prof_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lt_prof_key);
	__type(value, struct lt_prof_val);
} lt_prof SEC(".maps");

const volatile __u32 lt_cfg_tgid = 0;
const volatile __u64 lt_cfg_cgroup_id = 0;

/*
 * The loader decodes these records; naming them here keeps their layout in
 * the object's BTF for the ABI test, at the cost of 8 bytes of .rodata each.
 */
const struct lt_exec *const lt_btf_exec = 0;
const struct lt_exit *const lt_btf_exit = 0;
const struct lt_fork *const lt_btf_fork = 0;
const struct lt_signal *const lt_btf_signal = 0;
const struct lt_oom *const lt_btf_oom = 0;
const struct lt_open *const lt_btf_open = 0;
const struct lt_tcp *const lt_btf_tcp = 0;
const struct lt_tcp_retrans *const lt_btf_tcp_retrans = 0;
const struct lt_task *const lt_btf_task = 0;
const struct lt_prof_key *const lt_btf_prof_key = 0;
const struct lt_prof_val *const lt_btf_prof_val = 0;
const struct lt_al_key *const lt_btf_al_key = 0;
const struct lt_al_val *const lt_btf_al_val = 0;
const struct lt_al_live *const lt_btf_al_live = 0;

char LICENSE[] SEC("license") = "Dual BSD/GPL";
