/*
 * A thread's stack bounds, which the frame walk stays within
 * (preload/unwind.c), learned at the thread's first tracked call from the
 * kernel alone: no call into glibc. glibc's pthread_getattr_np() would
 * tell them, but it holds the thread's own lock while it allocates (its
 * cpuset, with realloc): a thread whose first allocation is that realloc
 * would wait on itself forever if the tracker called it again from there.
 * Every thread of a Rust program built by a current rustc starts that way
 * (std asks for the new thread's stack bounds before it runs any of the
 * program's code; 1.63's std did not), as does a C thread that asks first.
 *
 * The main thread: from __libc_stack_end (its top, set by the start-up
 * code) down by RLIMIT_STACK (8 MiB at least), as the kernel lets it grow.
 * Any other thread: the mapping its stack pointer is in, asked of
 * /proc/self/maps with the PROCMAP_QUERY ioctl (Linux 6.11), or found by
 * reading the file on older kernels. glibc maps a thread's stack with its
 * guard page below (a mapping of its own: PROT_NONE) and its TLS and
 * thread descriptor at the top, so the mapping is the stack and readable
 * memory only, whoever made it (pthread_attr_setstack's memory too, as
 * long as it is a mapping of its own).
 *
 * A thread that makes its first call on another stack (a signal handler on
 * sigaltstack, a coroutine) does not learn them there: it walks no further
 * than its caller until it calls from its own stack.
 */
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "preload/sys.h"
#include "preload/tracker.h"

extern void *__libc_stack_end;

/* <linux/fs.h> of Linux 6.11 (not in the headers of older distributions). */
struct procmap_query_ {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY_		_IOWR('f', 17, struct procmap_query_)
#define PROCMAP_VMA_READABLE	0x01

/* 1: the kernel answers PROCMAP_QUERY; 0: not known yet; -1: it does not. */
static int have_query;

/* The mapping containing a, by reading the file: a line at a time, hex
 * digits as they come (a line may span two reads). */
static bool maps_read(int fd, uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
	char buf[512];
	uintptr_t v[2] = { 0, 0 };
	int field = 0;		/* 0: start, 1: end, 2: the rest of the line */
	ssize_t n;

	while ((n = sys_read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n') {
				if (field == 2 && v[0] <= a && a < v[1]) {
					*lo = v[0];
					*hi = v[1];
					return true;
				}
				v[0] = v[1] = 0;
				field = 0;
			} else if (field < 2) {
				unsigned int d;

				if (c >= '0' && c <= '9')
					d = (unsigned int)(c - '0');
				else if (c >= 'a' && c <= 'f')
					d = (unsigned int)(c - 'a' + 10);
				else {
					field++;	/* '-', then ' ' */
					continue;
				}
				v[field] = v[field] << 4 | d;
			}
		}
	}
	return false;
}

/* The readable mapping containing a: [*lo, *hi). */
static bool mapping_of(uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
	int fd = sys_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	int q = __atomic_load_n(&have_query, __ATOMIC_RELAXED);
	bool ok = false;

	if (fd < 0)
		return false;
	if (q >= 0) {
		struct procmap_query_ pq = {
			.size = sizeof(pq),
			.query_addr = a,
		};

		if (!sys_ioctl(fd, PROCMAP_QUERY_, &pq)) {
			__atomic_store_n(&have_query, 1, __ATOMIC_RELAXED);
			ok = (pq.vma_flags & PROCMAP_VMA_READABLE) && pq.vma_start <= a &&
			     a < pq.vma_end;
			*lo = pq.vma_start;
			*hi = pq.vma_end;
			sys_close(fd);
			return ok;
		}
		if (errno == ENOTTY || errno == EINVAL)
			__atomic_store_n(&have_query, -1, __ATOMIC_RELAXED);
	}
	ok = maps_read(fd, a, lo, hi);
	sys_close(fd);
	return ok;
}

enum stack_bounds stack__bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	stack_t ss;

	if (sys_gettid() == getpid()) {
		struct rlimit rl;
		uintptr_t span = 8u << 20;

		if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur > span)
			span = rl.rlim_cur;
		*hi = (uintptr_t)__libc_stack_end;
		*lo = *hi > span ? *hi - span : 0;
		return sp >= *lo && sp < *hi ? STACK_OK : STACK_OTHER;
	}
	/* on an alternate signal stack: not the thread's own */
	if (!syscall(SYS_sigaltstack, NULL, &ss) && (ss.ss_flags & SS_ONSTACK))
		return STACK_OTHER;
	return mapping_of(sp, lo, hi) ? STACK_OK : STACK_UNKNOWN;
}
