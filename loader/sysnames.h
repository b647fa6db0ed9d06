/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Syscall names by number, from the kernel's <asm/unistd.h> (generated at build time). */
#ifndef LT_SYSNAMES_H
#define LT_SYSNAMES_H

#include <stddef.h>
#include <stdint.h>

#include "lt_syscall_nr.h" /* LT_NSYSCALLS: numbers below it may have a name */

/* its name, NULL for a number without one */
const char *lt_syscall_known(uint32_t nr);
/* its name, else "syscall_NR" written into tmp */
const char *lt_syscall_name(uint32_t nr, char *tmp, size_t len);

#endif
