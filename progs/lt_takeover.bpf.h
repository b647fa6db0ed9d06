/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef LT_TAKEOVER_BPF_H
#define LT_TAKEOVER_BPF_H

#include "lt_common.bpf.h"
#include "lt_state.bpf.h"

/*
 * Takeover of a skipped event. The kernel skips a tracing program that fires
 * while it already runs on that CPU (a softirq inside it; on kernels with
 * preemptible tracepoints, another task preempted inside it) and only counts
 * it. A probe's *_nest program, attached after the main one to the same
 * tracepoint, runs the same code for exactly the events the main one did not
 * see: the main program counts each event it saw (per kind), the nest program
 * takes one back or, if there is none, handles the event itself and counts it
 * as recovered.
 *
 * Where a tracepoint calls its programs with preemption disabled (up to
 * 6.18), nothing else runs on the CPU between the two but interrupts, whose
 * own events leave the count as they found it: a per-CPU count is exact and
 * costs a lookup. Where tracepoints are preemptible (7.x: each program runs
 * with migration disabled only), the task can be preempted or moved between
 * the two, so the count is the task's own (task storage; the thread-id hash
 * where there is none), atomic since a signal can be generated in an
 * interrupt over the task's own. That costs a storage allocation per new
 * task (docs/performance.md), so it is used only there, and by signal only:
 * exec, exit and fork claim their events there instead (lt_claim, below).
 */

/* A kind per probe of LT_MARK_PROBES (lt_abi.h), LT_MARK_<NAME>: a new probe is named there. */
#define LT_MARK_KIND(p) LT_MARK_##p,
enum { LT_MARK_PROBES(LT_MARK_KIND) LT_MARK_KINDS };
#undef LT_MARK_KIND
#define LT_MARK_IS_PROBE(p) _Static_assert(LT_PROBE_##p < LT_PROBE_SLOTS, #p ": not a probe");
LT_MARK_PROBES(LT_MARK_IS_PROBE)
#undef LT_MARK_IS_PROBE

struct lt_mark {
	__u32 n[LT_MARK_KINDS];
	/* the claims of lt_claim (exec, exit, fork where tracepoints are preemptible) */
	__u32 fork_tid;
	__u32 exited;
	__u64 exec_mm;
	__u64 owner; /* the fallback hash: the thread's start time (a tid is reused) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_mark);
} lt_marks_cpu __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_mark);
} lt_marks __weak SEC(".maps");

/*
 * Is this tracing program preemptible? The kernel disabled migration for it
 * (7.x) rather than preemption for the whole tracepoint. Before the field
 * (5.10) nothing is.
 */
static __always_inline bool lt_run_preemptible(void)
{
	struct task_struct *t;

	if (!bpf_core_field_exists(struct task_struct, migration_disabled))
		return false;
	t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, migration_disabled) != 0;
}

/* The main program saw an event of `kind` (a constant). */
static __always_inline void lt_mark(__u32 kind)
{
	__u32 zero = 0;
	struct lt_mark *m;

	if (kind >= LT_MARK_KINDS)
		return;
	if (!lt_run_preemptible()) {
		m = bpf_map_lookup_elem(&lt_marks_cpu, &zero);
		if (m)
			m->n[kind]++;
		return;
	}
	m = lt_task_new(&lt_marks, lt_current(), (__u32)bpf_get_current_pid_tgid());
	if (m)
		__sync_fetch_and_add(&m->n[kind], 1);
}

/* No mark of any kind is held in `m`. */
static __always_inline bool lt_unmarked(const struct lt_mark *m)
{
	for (int k = 0; k < LT_MARK_KINDS; k++)
		if (m->n[k])
			return false;
	return true;
}

/* In a *_nest program: did the main program see this event? Takes its mark back. */
static __always_inline bool lt_marked(__u32 kind)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct lt_mark *m;

	if (kind >= LT_MARK_KINDS)
		return false;
	if (!lt_run_preemptible()) {
		m = bpf_map_lookup_elem(&lt_marks_cpu, &zero);
		if (!m || !m->n[kind])
			return false;
		m->n[kind]--;
		return true;
	}
	m = lt_task_get(&lt_marks, lt_current(), tid);
	if (!m || !m->n[kind])
		return false;
	__sync_fetch_and_add(&m->n[kind], -1);
	/* the fallback hash holds marks in flight only */
	if (!(lt_cfg_local & LT_LOCAL_TASK) && lt_unmarked(m))
		bpf_map_delete_elem(&lt_marks, &tid);
	return true;
}

/*
 * The third level. Where tracepoints are preemptible, two tasks preempted on
 * one CPU inside the main program and its nest hold both: a third task's event
 * would be lost. There the loader also attaches a *_tp program to the classic
 * tracepoint of the same event: perf runs it with preemption disabled, so no
 * preempted task can hold it. Three programs see each event and the perf one
 * can run first (load --replace, another perf user of the event registered
 * before us), so counts cannot pair them: each event has an identity (exec:
 * its new mm; exit: the thread; fork: the child's tid) and the first program
 * to claim it in the task's storage writes the record. Exec, exit and fork
 * never happen in an interrupt, so the task's own claims need no atomics.
 */
static __always_inline bool lt_claim(__u32 kind, __u64 id, bool main)
{
	struct lt_mark *m = lt_task_new(&lt_marks, lt_current(), (__u32)bpf_get_current_pid_tgid());

	/* no room for the claim: the main program writes the event, a takeover
	 * does not (else every event would be written thrice); what that loses
	 * stays in missed */
	if (!m)
		return main;
	if (!(lt_cfg_local & LT_LOCAL_TASK)) {
		struct task_struct *t = (struct task_struct *)bpf_get_current_task();
		__u64 start = BPF_CORE_READ(t, start_time);

		if (m->owner != start) { /* a dead thread's claims, under its reused tid */
			m->exec_mm = m->fork_tid = m->exited = 0;
			m->owner = start;
		}
	}
	if (kind == LT_MARK_EXEC) {
		if (m->exec_mm == id)
			return false;
		m->exec_mm = id;
	} else if (kind == LT_MARK_FORK) {
		if (m->fork_tid == (__u32)id)
			return false;
		m->fork_tid = id;
	} else if (kind == LT_MARK_EXIT) {
		if (m->exited)
			return false;
		m->exited = 1;
	}
	return true;
}

static __always_inline bool lt_claims(void)
{
	return lt_cfg_claims || lt_run_preemptible();
}

/*
 * The main program of exec, exit, fork: does it handle event `id`? Only not
 * where a *_tp program ran first and took it (and counted it recovered: the
 * count is given back, the kernel did not skip this program). A suite that is
 * not live (lt_off) claims nothing: across a replace the two suites' programs
 * run old first (tp_btf) or new first (perf), and one that claimed without
 * writing would keep its own suite's later programs from writing.
 */
static __always_inline bool lt_main_takes(__u32 probe, __u32 kind, __u64 id)
{
	struct lt_stat *st;

	if (lt_cfg_tp_only || lt_off())
		return false;
	if (!lt_claims() || lt_claim(kind, id, true))
		return true;
	st = lt_stat_slot(probe);
	if (st)
		st->recovered--; /* the sum over CPUs is what counts */
	return false;
}

/* Its nest: the event is the nest's if the main program did not see it. */
static __always_inline bool lt_nest_takes(__u32 kind, __u64 id)
{
	if (lt_cfg_tp_only)
		return false;
	if (!lt_claims())
		return !lt_marked(kind) && !lt_off(); /* the mark is taken back either way */
	return !lt_off() && lt_claim(kind, id, false);
}

/* A *_tp program: the event is its if no program of the suite claimed it first. */
static __always_inline bool lt_tp_takes(__u32 kind, __u64 id)
{
	return !lt_off() && lt_claim(kind, id, false);
}

/* The end of the main program: a per-CPU mark where claims are not used. */
static __always_inline void lt_main_done(__u32 kind)
{
	if (!lt_claims())
		lt_mark(kind);
}

#endif /* LT_TAKEOVER_BPF_H */
