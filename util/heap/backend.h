#ifndef RSPROF_UTIL_HEAP_BACKEND_H
#define RSPROF_UTIL_HEAP_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/heap.h"
#include "util/heap/heap.h"

/*
 * Between util/heap/heap.c (what both backends share) and a backend
 * (util/heap/uprobe.c, util/heap/preload.c): its running counters per
 * stack key, the frames of a stack, its totals.
 */
struct heap_be;

/* The backend's totals, read after its sites. */
struct heap_totals {
	int64_t live;		/* live bytes now; INT64_MIN: the sum of the sites */
	int64_t peak;
	uint64_t unknown_frees, unknown_free_bytes;
	uint64_t dropped;
	const char *probes;	/* "rust", "libc" */
	bool started;
};

typedef int (*heap_site_cb)(void *ctx, uint64_t key, const struct heap_site *cur);

struct heap_backend_ops {
	const char *name;	/* meta heap_backend */
	/* cb(ctx, key, running totals) for every stack; stops at cb's error */
	int (*sites)(struct heap_be *b, heap_site_cb cb, void *ctx);
	/* the frames of stack key (0-terminated ips, cand); false: not stored */
	bool (*stack)(struct heap_be *b, uint64_t key, struct heap_stack *out);
	void (*totals)(struct heap_be *b, struct heap_totals *t);
	void (*delete)(struct heap_be *b);
};

extern const struct heap_backend_ops heap_uprobe_ops, heap_preload_ops;

/* Errors printed; the backend's state in *out. */
int heap_uprobe__new(const struct heap_opts *o, struct heap_be **out);
/* Takes o->launch over. */
int heap_preload__new(const struct heap_opts *o, struct heap_be **out);

#endif
