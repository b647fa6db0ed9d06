// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>

#include "sysnames.h"
#include "lt_syscall_names.h"

_Static_assert(sizeof(lt_syscall_names) / sizeof(lt_syscall_names[0]) == LT_NSYSCALLS,
	       "one name slot per number");

const char *lt_syscall_known(uint32_t nr)
{
	if (nr == LT_SYS_OTHER)
		return "other";
	return nr < LT_NSYSCALLS ? lt_syscall_names[nr] : NULL;
}

const char *lt_syscall_name(uint32_t nr, char *tmp, size_t len)
{
	const char *n = lt_syscall_known(nr);

	if (n)
		return n;
	snprintf(tmp, len, "syscall_%u", nr);
	return tmp;
}
