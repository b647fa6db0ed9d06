// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Plain map reads for the profiles' aggregates (kernel_maps.h): readers, no state.
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_maps.h"

int lt_map_each(int fd, void *key, void *next, void *val, lt_map_fn cb, void *ctx)
{
	void *cur = NULL;
	size_t ksz;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	ksz = info.key_size;
	while (bpf_map_get_next_key(fd, cur, next) == 0) {
		memcpy(key, next, ksz);
		cur = key;
		if (bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile */
		if (cb(ctx, key, val) < 0)
			break;
	}
	return 0;
}

int lt_map_lookup(int fd, const void *key, void *val)
{
	return bpf_map_lookup_elem(fd, key, val) ? -errno : 0;
}

int lt_percpu_u64(int fd, uint32_t key, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[ncpu > 0 ? ncpu : 1];

	*sum = 0;
	if (ncpu <= 0 || bpf_map_lookup_elem(fd, &key, v))
		return -errno;
	for (int c = 0; c < ncpu; c++)
		*sum += v[c];
	return 0;
}
