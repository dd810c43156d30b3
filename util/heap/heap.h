#ifndef RSPROF_UTIL_HEAP_HEAP_H
#define RSPROF_UTIL_HEAP_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Heap tracking (SPEC §6): the heap BPF skeleton (bpf/heap.bpf.c) loaded
 * with libbpf, uprobes on the target's allocator found in its symbol tables,
 * per-stack counters and a live-pointer map in the kernel, read as deltas
 * once per checkpoint. Only this file's .c includes heap.skel.h.
 */
struct heap;
struct resolver;
struct checkpoint;
struct alloc_fns;

enum heap_probes { HEAP_PROBES_AUTO, HEAP_PROBES_RUST, HEAP_PROBES_LIBC };
enum heap_attribution { ATTR_FIRST_USER, ATTR_CALLER, ATTR_STACK };

struct heap_opts {
	pid_t pid;
	const char *exe;		/* the target's executable (path on disk) */
	bool before_exec;		/* launched target, stopped before exec: libraries not mapped yet */
	enum heap_probes probes;
	enum heap_attribution attribution;
	unsigned int sample;		/* track one allocation in N; 1 = all */
	const struct alloc_fns *alloc_fns;	/* wrappers passed over (util/heap/alloc-fn.h);
						 * the caller's, outlives the tracker */
};

/*
 * Load and attach. Errors (printed with the reason and a hint):
 * -EPERM no BPF permission, -ENOTSUP no BTF / BPF unsupported,
 * -RSPROF_ENODEBUG no allocator symbol found in the target (exit 5 when
 * heap tracking was all the user asked for).
 */
int heap__new(const struct heap_opts *o, struct heap **out);

/*
 * Collect this checkpoint's heap deltas: reads the kernel's per-stack
 * counters, attributes each stack to a site with the resolver (first user
 * frame, caller, or innermost frame of the stack), and fills cp->heap,
 * cp->n_heap, cp->stacks, cp->n_stacks, cp->heap_dropped and
 * cp->heap_live_bytes. Stack ids are the kernel's 64-bit stack key >> 1
 * (stable across --append; any value in 0..2^63). Site and stack
 * addresses not seen before are appended to *new_addrs (realloc'd,
 * *n_new_addrs updated) so the caller writes their symbols. The arrays stay owned by h until the next call.
 */
int heap__collect(struct heap *h, struct resolver *r, struct checkpoint *cp,
		  uint64_t **new_addrs, size_t *n_new_addrs, size_t *cap_new_addrs);

struct heap_stats {
	int64_t live_bytes, peak_bytes;
	uint64_t allocs, frees;
	uint64_t unknown_frees, unknown_free_bytes;	/* memory allocated before attach */
	uint64_t dropped;	/* live map / stack map full, lost events: never silent */
	const char *probes;	/* "rust", "libc" */
	unsigned int sample;
};

void heap__stats(const struct heap *h, struct heap_stats *st);
void heap__delete(struct heap *h);

#endif
