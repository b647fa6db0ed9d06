/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel layer: the only files that talk to libbpf and the bpf() syscall
 * (loader/kernel_*.c). This header only gathers the families' headers, for callers that use
 * several; each family's header says which of lowtrace.h's two conventions its functions
 * follow (an enum lt_exit_code with the error printed, or a reader's 0 or -errno).
 */
#ifndef LT_KERNEL_H
#define LT_KERNEL_H

#include "kernel_suite.h" /* open -> configure -> load, attach, free */
#include "kernel_pin.h" /* unload, what killed loaders left */
#include "kernel_maps.h" /* plain map reads (the profiles) */
#include "kernel_handles.h" /* a consumer's fds: in-process or pinned */
#include "kernel_ring.h" /* the ring's consumer, loss windows claimed */
#include "kernel_stats.h" /* a probe's counters */
#include "kernel_sweep.h" /* tcp's unseen closes */
#include "kernel_agg.h" /* aggregate probes' histograms */
#include "kernel_audit.h" /* how full the stateful maps are */
#include "kernel_cgroup.h" /* identity, per-cgroup counts and losses */
#include "kernel_status.h" /* what `status` shows */

#endif
