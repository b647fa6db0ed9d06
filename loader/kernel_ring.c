// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ring's consumer (kernel_ring.h), and the claim of loss windows no record carried.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_ring.h"
#include "lowtrace.h"

/*
 * The ring, read from its mappings (not libbpf's ring_buffer, which moves the
 * consumer position past each record as it hands it out, and past the one its
 * callback refuses). `read` is the next record to hand out; the consumer
 * position the kernel sees (*cons) follows it at once, or in hold mode only
 * when the caller says the records before a position are done with
 * (lt_ring_release): records read but not yet written stay in the ring.
 */
struct lt_ring {
	int fd;
	int ep; /* an epoll set of the ring's fd: the kernel's wake-ups */
	bool hold;
	uint64_t *cons; /* the consumer page: the position the kernel sees */
	const uint64_t *prod; /* the producer page, then the data mapped twice */
	const char *data;
	uint64_t mask;
	size_t page, size;
	uint64_t read;
	lt_sample_fn cb;
	void *ctx;
};

#define RB_BUSY (1u << 31) /* BPF_RINGBUF_BUSY_BIT */
#define RB_DISCARD (1u << 30) /* BPF_RINGBUF_DISCARD_BIT */
#define RB_HDR 8 /* BPF_RINGBUF_HDR_SZ */

struct lt_ring *lt_ring_open(int fd, lt_sample_fn cb, void *ctx)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct lt_ring *r;
	void *m;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.max_entries ||
	    info.max_entries & (info.max_entries - 1)) {
		lt_error(LT_FAIL, "cannot read the ring buffer's size: %s", strerror(errno));
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		lt_error(LT_FAIL, "out of memory");
		return NULL;
	}
	r->fd = fd;
	r->ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->ep < 0 ||
	    epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN }))
		goto fail;
	r->cb = cb;
	r->ctx = ctx;
	r->page = sysconf(_SC_PAGESIZE);
	r->size = info.max_entries;
	r->mask = info.max_entries - 1;
	m = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	r->cons = m;
	m = mmap(NULL, r->page + 2 * r->size, PROT_READ, MAP_SHARED, fd, r->page);
	if (m == MAP_FAILED) {
		munmap(r->cons, r->page);
		goto fail;
	}
	r->prod = m;
	r->data = (const char *)m + r->page;
	r->read = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	return r;
fail:
	lt_error(LT_FAIL, "cannot map the ring buffer: %s", strerror(errno));
	if (r->ep >= 0)
		close(r->ep);
	free(r);
	return NULL;
}

void lt_ring_hold(struct lt_ring *r)
{
	r->hold = true;
}

uint64_t lt_ring_pos(const struct lt_ring *r)
{
	return r->read;
}

void lt_ring_release(struct lt_ring *r, uint64_t pos)
{
	/* never past what was read, never back */
	if (pos > r->read)
		pos = r->read;
	if (pos > *r->cons)
		__atomic_store_n(r->cons, pos, __ATOMIC_RELEASE);
}

/* Hand out the records written so far, up to a stop; records handed out, or the stop. */
static int ring_drain(struct lt_ring *r)
{
	uint64_t next, prod = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	int n = 0, err = 0;

	while (r->read < prod && !err) {
		const uint32_t *hdr = (const uint32_t *)(r->data + (r->read & r->mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t size = len & ~(RB_BUSY | RB_DISCARD);

		if (len & RB_BUSY)
			break; /* reserved, not yet submitted: records after it wait */
		if (size > r->size - RB_HDR)
			return -EBADMSG; /* the kernel writes no such length */
		next = r->read + ((size + RB_HDR + 7) & ~7ull);
		if (!(len & RB_DISCARD)) {
			uint64_t at = r->read;

			r->read = next; /* lt_ring_pos in the callback: this record's end */
			err = r->cb(r->ctx, (void *)(hdr + 2), size);
			if (err == LT_RING_AGAIN) {
				r->read = at;
				break;
			}
			n++;
		}
		r->read = next;
		if (!r->hold)
			__atomic_store_n(r->cons, r->read, __ATOMIC_RELEASE);
	}
	return err < 0 ? err : n;
}

int lt_ring_poll(struct lt_ring *r, int timeout_ms)
{
	uint64_t prod = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	struct epoll_event ev;
	int n = 0, m;

	/*
	 * The kernel says readable while records are held (its consumer position
	 * is behind): then a poll would not wait. Records not yet handed out: no wait.
	 */
	if (timeout_ms > 0 && r->read == prod) {
		if (*r->cons == r->read)
			n = epoll_wait(r->ep, &ev, 1, timeout_ms);
		else
			n = usleep(timeout_ms * 1000);
		if (n < 0 && errno != EINTR)
			return -errno;
		n = n < 0 ? -EINTR : 0;
	}
	/* producers wake us only when the ring fills up: drain on the timer too */
	m = ring_drain(r);
	return m ? m : n;
}

int lt_ring_wait_fd(const struct lt_ring *r, int *timeout_ms)
{
	/* records not yet handed out: no wait; held ones: the epoll set would not wait */
	if (r->read != __atomic_load_n(r->prod, __ATOMIC_ACQUIRE))
		*timeout_ms = 0;
	return *r->cons == r->read ? r->ep : -1;
}

int lt_lost_flush(const struct lt_handles *h)
{
	int ncpu = libbpf_num_possible_cpus(), left = 0;

	if (h->flush_fd < 0 || ncpu <= 0)
		return -h->flush_err;
	for (int c = 0; c < ncpu; c++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = c);

		/* ENXIO: an offline CPU, whose windows wait for it */
		if (bpf_prog_test_run_opts(h->flush_fd, &o)) {
			if (errno != ENXIO)
				return -errno;
			continue;
		}
		left += o.retval != 0;
	}
	return left;
}

void lt_ring_free(struct lt_ring *r)
{
	if (!r)
		return;
	munmap((void *)r->prod, r->page + 2 * r->size);
	munmap(r->cons, r->page);
	close(r->ep);
	free(r);
}
