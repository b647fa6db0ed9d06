/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pin directory (kernel_pin.c): unloading a pinned suite, and what a loader killed while
 * pinning, replacing or unloading left beside it (lowtrace-tmp-PID, -new-PID, -old-PID).
 * lt_unload returns an enum lt_exit_code with the error printed; the others are readers:
 * they print nothing (but the info line of what they finished) and return -errno.
 */
#ifndef LT_KERNEL_PIN_H
#define LT_KERNEL_PIN_H

int lt_unload(void);
/*
 * load and unload finish what killed loaders left under the pin lock; lt_pins_tidy does it
 * for readers when no loader holds the lock (0 or -errno), lt_pins_leftovers lists what is
 * still there (how many names, or -errno).
 */
#define LT_LEFTOVER_LEN 40
int lt_pins_tidy(void);
int lt_pins_leftovers(char names[][LT_LEFTOVER_LEN], int max);

#endif
