/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The commands, one family per file; main.c dispatches to them. Each parses
 * its own options (opts.h), prints its own help, and returns an exit code.
 * No command calls into another command's file.
 */
#ifndef LT_CMDS_H
#define LT_CMDS_H

int cmd_load(int argc, char **argv); /* suite.c */
int cmd_unload(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_events(int argc, char **argv); /* stream.c */
int cmd_run(int argc, char **argv);
int cmd_hist(int argc, char **argv); /* hist.c */
int cmd_top(int argc, char **argv); /* top.c */
int cmd_metrics(int argc, char **argv); /* metrics.c (and metrics_*.c, metrics.h) */
int cmd_profile(int argc, char **argv); /* profile.c */
int cmd_alloc(int argc, char **argv); /* alloc.c */

#endif
