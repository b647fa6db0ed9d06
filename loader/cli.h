/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Commands that live outside main.c, and the option parsing they share with it. */
#ifndef LT_CLI_H
#define LT_CLI_H

#include <stdbool.h>
#include <stdint.h>

int cmd_profile(int argc, char **argv); /* profile.c */
int cmd_alloc(int argc, char **argv);

#endif
