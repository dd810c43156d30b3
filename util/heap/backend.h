#ifndef RSPROF_UTIL_HEAP_BACKEND_H
#define RSPROF_UTIL_HEAP_BACKEND_H

#include <stdbool.h>
#include <limits.h>
#include <stdint.h>

#include <linux/types.h>
#include <sys/types.h>

#include "bpf/heap.h"
#include "util/heap/heap.h"

/*
 * Between util/heap/heap.c (what both backends share) and a backend
 * (util/heap/uprobe.c, util/heap/preload.c): its running counters per
 * stack key, the frames of a stack, its totals.
 */
struct heap_be;

/* A launch with the in-process tracker (util/heap/launch.c), read by the preload backend. */
struct heap_launch {
	char dir[PATH_MAX / 2];
	char **env;
	size_t n_env;
	unsigned int sample;
	uint64_t sample_bytes;	/* byte sampling; 0: off */
	bool inherit;		/* every process of the tree */
	int cleanup_fd;		/* the cleaner's pipe; -1: none */
	pid_t cleaner;
};

/* The backend's totals, read after its sites. */
struct heap_totals {
	int64_t live;		/* live bytes now; INT64_MIN: the sum of the sites */
	int64_t peak;
	uint64_t unknown_frees, unknown_free_bytes;
	bool free_sizes_unknown;	/* unknown_free_bytes cannot be known (not glibc's free) */
	uint64_t dropped;
	const char *probes;	/* "rust", "libc" */
	bool started;
	bool temporaries;	/* the sites' temp_count is counted (preload) */
	bool no_headers;	/* a tracker served another allocator: no block headers */
	uint64_t limited;	/* processes of the tree not tracked: an address-space limit */
};

/* A process of the tree the backend found (it made its region) or saw end. */
struct heap_proc_event {
	pid_t pid, ppid;
	bool forked;		/* a fork child that has not exec'd: its parent's code */
	bool exec;		/* an image after an exec */
	bool exited;		/* gone: its last figures are in this collect */
};

struct heap_visit {
	/*
	 * Every stack: its key, the process that allocated (0: the
	 * target's), the process whose address space its addresses are in
	 * (a fork child that exec'd since: its parent's), its running totals.
	 * cur NULL: the key is gone for good (its process ended and was read
	 * for the last time): forget it. kind: enum heap_region_kind
	 * (preload/heap-region.h), 0 for malloc.
	 */
	int (*site)(void *ctx, uint64_t key, pid_t pid, pid_t code_pid,
		    const struct heap_site *cur, unsigned int kind);
	/* a process new to the backend, or gone; before its sites */
	int (*process)(void *ctx, const struct heap_proc_event *ev);
	void *ctx;
};

struct heap_backend_ops {
	const char *name;	/* meta heap_backend */
	/* v->site for every stack, v->process for processes; stops at their error */
	int (*sites)(struct heap_be *b, const struct heap_visit *v);
	/* the frames of stack key (0-terminated ips, cand); false: not stored */
	bool (*stack)(struct heap_be *b, uint64_t key, struct heap_stack *out);
	void (*totals)(struct heap_be *b, struct heap_totals *t);
	/* record --alloc-history: the drain of the event rings; NULL: none (uprobes) */
	struct heap_history *(*history)(struct heap_be *b);
	/* Is file offset off of file path (its base name) a probed instruction?
	 * NULL: no probes (the in-process tracker) */
	bool (*probe_at)(struct heap_be *b, const char *path, uint64_t off);
	void (*delete)(struct heap_be *b);
};

extern const struct heap_backend_ops heap_uprobe_ops, heap_preload_ops, heap_inject_ops;

/* Errors printed; the backend's state in *out. */
int heap_uprobe__new(const struct heap_opts *o, struct heap_be **out);
/* Takes o->launch (or o->inject) over. */
int heap_preload__new(const struct heap_opts *o, struct heap_be **out);

#endif
