// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What belongs to the whole object rather than to a probe: the record layouts and the license. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lt_abi.h"
#include "lt_prof.h"

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
