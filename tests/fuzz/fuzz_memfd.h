/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The fuzz input as a file (a memfd at offset 0), for readers that take an fd or a path. */
#ifndef LT_FUZZ_MEMFD_H
#define LT_FUZZ_MEMFD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int fuzz_memfd(const char *name, const uint8_t *data, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0) {
			perror("write");
			abort();
		}
		off += (size_t)n;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

#endif
