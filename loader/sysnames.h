/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Syscall names by number, from the kernel's <asm/unistd.h> (generated at build time). */
#ifndef LT_SYSNAMES_H
#define LT_SYSNAMES_H

#include <stddef.h>
#include <stdint.h>

/* LT_NSYSCALLS: numbers below it may have a name; LT_SYS_OTHER, the syscalls probe's
 * number for all the others, is named "other"; LT_SYS_SLOTS numbers in all */
#include "lt_syscall_nr.h"

/* its name, NULL for a number without one */
const char *lt_syscall_known(uint32_t nr);
/* its name, else "syscall_NR" written into tmp */
const char *lt_syscall_name(uint32_t nr, char *tmp, size_t len);

#endif
