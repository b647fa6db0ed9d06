// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fds a consumer reads through (kernel_handles.h): an in-process suite's, or the pins'
 * with the consumer's lock on the pin directory; lt_seen, where a consumer keeps its place.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_handles.h"
#include "kernel_int.h"
#include "kernel_pin.h"
#include "lowtrace.h"

void lt_suite_handles(struct lt_suite *s, struct lt_handles *h)
{
	h->ring_fd = bpf_map__fd(s->skel->maps.lt_events);
	h->stats_fd = bpf_map__fd(s->skel->maps.lt_stats);
	h->seen_fd = bpf_map__fd(s->skel->maps.lt_seen);
	h->flush_fd = bpf_program__fd(s->skel->progs.lt_lost_flush);
	h->dir_fd = -1;
	h->suite = s;
}

/*
 * A pin this reader only reads: opened read-only, so a reader of `load --pin-group` (the
 * units' lowtrace user) needs only read permission on it (kernel_pin.c's pin modes). Links,
 * programs, the ring and the maps a reader writes are opened read-write (bpf_obj_get).
 */
int pin_get_ro(const char *path)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);

	return bpf_obj_get_opts(path, &o);
}

static int open_pinned(struct lt_handles *h, bool lock_consumer, bool quiet_busy)
{
	h->ring_fd = h->stats_fd = h->seen_fd = h->flush_fd = -1;
	h->suite = NULL;
	/* a replace a killed loader left half done: finish it, or this reader sees no suite */
	lt_pins_tidy();
	h->dir_fd = open(LT_PIN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->dir_fd < 0) {
		if (errno == EACCES || errno == EPERM)
			return lt_error(LT_ENV, "permission denied: %s (run as root)", LT_PIN_DIR);
		return lt_error(errno == ENOENT ? LT_NOT_LOADED : LT_FAIL,
				"not loaded: %s: %s (run 'lowtrace load' first)", LT_PIN_DIR,
				strerror(errno));
	}
	/* the ring has one consumer position: a second reader would split records */
	if (lock_consumer && flock(h->dir_fd, LOCK_EX | LOCK_NB)) {
		lt_close_handles(h);
		if (quiet_busy)
			return -EBUSY;
		return lt_error(LT_FAIL, "another 'lowtrace events' is reading the ring; "
					 "only one consumer at a time");
	}
	h->ring_fd = bpf_obj_get(LT_PIN_DIR "/maps/lt_events");
	h->stats_fd = pin_get_ro(LT_PIN_DIR "/maps/lt_stats");
	h->seen_fd = bpf_obj_get(LT_PIN_DIR "/maps/lt_seen");
	h->flush_fd = bpf_obj_get(LT_PIN_DIR "/lost_flush"); /* -1: an older suite */
	h->flush_err = h->flush_fd < 0 && errno != ENOENT ? errno : 0;
	if (h->seen_fd >= 0) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		/* another lowtrace's layout: start from zero rather than misread it */
		if (bpf_obj_get_info_by_fd(h->seen_fd, &mi, &len) ||
		    mi.value_size != sizeof(struct lt_seen)) {
			close(h->seen_fd);
			h->seen_fd = -1;
		}
	}
	if (h->ring_fd < 0 || h->stats_fd < 0) {
		int e = errno;

		lt_close_handles(h);
		return lt_error(e == EPERM ? LT_ENV : LT_FAIL, "cannot open the pinned maps: %s",
				strerror(e));
	}
	return LT_OK;
}

int lt_open_pinned(struct lt_handles *h, bool lock_consumer)
{
	return open_pinned(h, lock_consumer, false);
}

int lt_open_pinned_try(struct lt_handles *h)
{
	return open_pinned(h, true, true);
}

void lt_close_handles(struct lt_handles *h)
{
	if (h->dir_fd < 0)
		return; /* in-process: the suite owns the fds */
	if (h->ring_fd >= 0)
		close(h->ring_fd);
	if (h->stats_fd >= 0)
		close(h->stats_fd);
	if (h->seen_fd >= 0)
		close(h->seen_fd);
	if (h->flush_fd >= 0)
		close(h->flush_fd);
	close(h->dir_fd);
	h->ring_fd = h->stats_fd = h->seen_fd = h->flush_fd = h->dir_fd = -1;
}

bool lt_pinned_gone(const struct lt_handles *h)
{
	struct stat st, now;

	if (h->dir_fd < 0)
		return false;
	/* unload and replace move the directory away before they empty it */
	return fstat(h->dir_fd, &st) || st.st_nlink == 0 || stat(LT_PIN_DIR, &now) ||
	       now.st_ino != st.st_ino || now.st_dev != st.st_dev;
}

bool lt_pinned_removed(const struct lt_handles *h)
{
	struct stat st;

	return h->dir_fd < 0 || fstat(h->dir_fd, &st) || st.st_nlink == 0;
}

int lt_seen_read(const struct lt_handles *h, uint32_t probe, struct lt_seen *v)
{
	memset(v, 0, sizeof(*v));
	if (h->seen_fd < 0)
		return -ENOENT;
	return bpf_map_lookup_elem(h->seen_fd, &probe, v) ? -errno : 0;
}

int lt_seen_write(const struct lt_handles *h, uint32_t probe, const struct lt_seen *v)
{
	if (h->seen_fd < 0)
		return -ENOENT;
	return bpf_map_update_elem(h->seen_fd, &probe, v, BPF_ANY) ? -errno : 0;
}
