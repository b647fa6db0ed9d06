// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * oom: one record per OOM kill, from the mark_victim tracepoint.
 *
 * Since 6.8 the tracepoint passes the victim's task; before, only its pid.
 * There the victim's task comes from the SIGKILL the OOM killer sends it just
 * before marking it (same task, SEND_SIG_PRIV): lt_oom_kill keeps that task
 * per CPU (lt_oom_victim). bpf_core_type_matches picks the variant at load.
 */
#include "lt_common.bpf.h"
#include "lt_filter.bpf.h"
#include "lt_record.bpf.h"

typedef void (*btf_trace_mark_victim___task)(void *, struct task_struct *, uid_t);

/* before 6.2 the RSS counters were atomics in struct mm_rss_stat */
struct mm_rss_stat___old {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

/*
 * The last task SIGKILL'd with SEND_SIG_PRIV on each CPU. The OOM killer
 * sends the kill and marks the victim under task_lock(victim), a spinlock:
 * no preemption or migration between the two, so mark_victim reads the slot
 * of its own CPU, and checks the pid. Per CPU: nothing to evict.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct task_struct *);
} lt_oom_victim SEC(".maps");

static __always_inline __u64 mm_pages(struct mm_struct *mm, int i)
{
	long v;

	if (bpf_core_type_exists(struct mm_rss_stat___old)) {
		struct mm_struct___old *o = (void *)mm;

		v = BPF_CORE_READ(o, rss_stat.count[i].counter);
	} else {
		v = BPF_CORE_READ(mm, rss_stat[i].count);
	}
	return v > 0 ? v : 0;
}

static __always_inline int emit(struct task_struct *victim, __u32 victim_pid, __u32 uid)
{
	struct mm_struct *mm;
	struct lt_oom *r;

	/* --pid: the process's own kills and the kill of the process */
	if (lt_skip(NULL, victim_pid, LT_SKIP_CURRENT | LT_SKIP_CGROUP))
		return 0;
	r = lt_reserve(LT_PROBE_OOM, LT_TYPE_OOM, sizeof(*r));
	if (!r)
		return 0;
	r->victim_pid = victim_pid;
	r->victim_uid = uid;
	r->pages = 0;
	r->total_vm = 0;
	__builtin_memset(r->victim_comm, 0, sizeof(r->victim_comm));
	if (victim) {
		mm = BPF_CORE_READ(victim, mm);
		if (mm) {
			r->pages = mm_pages(mm, MM_ANONPAGES) + mm_pages(mm, MM_FILEPAGES) +
				   mm_pages(mm, MM_SHMEMPAGES);
			r->total_vm = BPF_CORE_READ(mm, total_vm);
		}
		BPF_CORE_READ_STR_INTO(&r->victim_comm, victim, comm);
	}
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	lt_submit(LT_PROBE_OOM, r);
	return 0;
}

SEC("tp_btf/mark_victim")
int lt_oom(__u64 *ctx)
{
	struct task_struct *victim, **v;
	__u32 pid, zero = 0;

	if (bpf_core_type_matches(btf_trace_mark_victim___task)) {
		victim = (struct task_struct *)ctx[0];
		return emit(victim, BPF_CORE_READ(victim, tgid), (__u32)ctx[1]);
	}
	/* older kernels: the argument is the victim's pid */
	pid = (__u32)ctx[0];
	victim = NULL;
	v = bpf_map_lookup_elem(&lt_oom_victim, &zero);
	if (v && *v && BPF_CORE_READ(*v, pid) == pid)
		victim = *v;
	if (v)
		*v = NULL;
	return emit(victim, victim ? BPF_CORE_READ(victim, tgid) : pid,
		    victim ? BPF_CORE_READ(victim, cred, uid.val) : 0);
}

SEC("tp_btf/signal_generate")
int BPF_PROG(lt_oom_kill, int sig, struct kernel_siginfo *info, struct task_struct *task)
{
	struct task_struct **v;
	__u32 zero = 0;

	if (bpf_core_type_matches(btf_trace_mark_victim___task))
		return 0; /* the tracepoint names the victim itself */
	/* the OOM killer's kill: SIGKILL with SEND_SIG_PRIV */
	if (sig != 9 || info != (void *)1)
		return 0;
	v = bpf_map_lookup_elem(&lt_oom_victim, &zero);
	if (v)
		*v = task;
	return 0;
}
