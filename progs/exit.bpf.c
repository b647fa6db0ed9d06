// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exit: one record per process, when its last thread exits. */
#include "lt_common.bpf.h"

SEC("tp_btf/sched_process_exit")
int BPF_PROG(lt_exit, struct task_struct *p)
{
	struct lt_exit *r;
	struct task_struct *leader;
	int code;

	/*
	 * signal->live reaches 0 when the last thread of the group passes
	 * do_exit; earlier threads (leader included) are not the process end.
	 * Newer kernels add a group_dead argument; reading live works on all.
	 */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (lt_skip_current())
		return 0;
	r = lt_reserve(LT_PROBE_EXIT, sizeof(*r));
	if (!r)
		return 0;
	lt_hdr_fill(&r->hdr, LT_TYPE_EXIT, sizeof(*r));
	code = BPF_CORE_READ(p, exit_code);
	r->exit_code = (code >> 8) & 0xff;
	r->signal = code & 0x7f;
	r->core_dumped = (code & 0x80) != 0;
	r->_pad0[0] = r->_pad0[1] = r->_pad0[2] = 0;
	r->ppid = BPF_CORE_READ(p, real_parent, tgid);
	leader = BPF_CORE_READ(p, group_leader);
	r->lifetime_ns = r->hdr.ts_ns - BPF_CORE_READ(leader, start_time);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	lt_submit(LT_PROBE_EXIT, r);
	return 0;
}
