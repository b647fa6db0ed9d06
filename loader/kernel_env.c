// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the machine has, checked before a suite is opened: privileges, the kernel's BTF,
 * bpffs and tracefs (mounted where missing), and the kernel version's answers that BTF does
 * not give. Exit codes with the error printed, or plain answers (kernel_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "kernel_int.h"
#include "lowtrace.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* A clear error for missing privileges, before the kernel gives a cryptic one. */
int check_privileges(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d) == 0 && !has_cap(d, CAP_SYS_ADMIN) &&
	    !(has_cap(d, 39 /* CAP_PERFMON */) && has_cap(d, 38 /* CAP_BPF */)))
		return lt_error(LT_ENV, "permission denied: run as root (or with CAP_BPF, "
					"CAP_PERFMON and CAP_SYS_ADMIN)");
	return LT_OK;
}

int check_env(void)
{
	int err = check_privileges();

	if (err)
		return err;
	if (access(VMLINUX_BTF, R_OK))
		return lt_error(LT_ENV, "no kernel BTF: %s: %s (needs CONFIG_DEBUG_INFO_BTF=y)",
				VMLINUX_BTF, strerror(errno));
	return LT_OK;
}

/* bpffs is often not mounted at boot: mount it, or say why we cannot. */
int ensure_bpffs(void)
{
	struct statfs fs;

	if (statfs(LT_PIN_ROOT, &fs) == 0 && fs.f_type == BPF_FS_MAGIC)
		return LT_OK;
	if (mount("bpf", LT_PIN_ROOT, "bpf", 0, "mode=0700"))
		return lt_error(LT_ENV, "no bpffs: cannot mount bpf at %s: %s", LT_PIN_ROOT,
				strerror(errno));
	return LT_OK;
}

/*
 * Are tracepoints preemptible here? From 7.0 a task can be preempted inside a
 * tracepoint's BPF program, holding it on that CPU (lt_claim in
 * progs/lt_takeover.bpf.h). The kernel's BTF does not tell; its version does.
 */
static bool kernel_at_least(int want_maj, int want_min)
{
	struct utsname u;
	int maj = 0, min = 0;

	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &maj, &min) == 2 &&
	       (maj > want_maj || (maj == want_maj && min >= want_min));
}

bool tp_preemptible(void)
{
	return kernel_at_least(7, 0);
}

/*
 * Can a perf event's program be pinned (a perf-event link, 5.15+)? Then a
 * probe with programs on classic syscall tracepoints (tracepoint/syscalls/...,
 * run for their syscall only) takes those instead of its tp_btf ones on
 * sys_enter/sys_exit, run for every syscall.
 */
bool perf_links(void)
{
	return kernel_at_least(5, 15);
}

/* BPF atomics beyond add (compare-and-swap, exchange): 5.12+ */
bool bpf_atomics(void)
{
	return kernel_at_least(5, 12);
}

/* The *_tp programs need the tracepoint's id from tracefs: mount it if no one has. */
int ensure_tracefs(void)
{
	struct statfs fs;

	if (access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return LT_OK; /* where libbpf looks first */
	if (statfs(LT_TRACEFS, &fs) == 0 && fs.f_type == TRACEFS_MAGIC)
		return LT_OK;
	if (mount("tracefs", LT_TRACEFS, "tracefs", 0, NULL))
		return lt_error(LT_ENV, "no tracefs: cannot mount tracefs at %s: %s", LT_TRACEFS,
				strerror(errno));
	return LT_OK;
}
