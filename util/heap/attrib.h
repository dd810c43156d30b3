#ifndef RSPROF_UTIL_HEAP_ATTRIB_H
#define RSPROF_UTIL_HEAP_ATTRIB_H

#include <stdbool.h>

#include "util/heap/heap.h"

struct symbol;
struct alloc_fns;

/*
 * Which frame of an allocation's call stack is the allocation's site: the
 * rule, in one place. The recorder applies
 * it on the resolved stack when it first sees it (heap_events.addr); the
 * readers apply it again on the stored stack when an allocation wrapper
 * (util/heap/alloc-fn.h) is in the way (util/db/read/query-reattrib.c).
 *
 * The stack is captured at the allocator's entry, innermost first: frame 0
 * is the return address into the function that called the allocator (for
 * Rust that is usually alloc::raw_vec::finish_grow or similar, for C the
 * user's function itself), then the frame-pointer chain outwards, then
 * return addresses the stack scan found (util/heap/heap.c).
 * Each frame is resolved (return address - 1, the call instruction) to its
 * inline chain; the resolver marks as `chosen` the innermost inlined frame
 * whose source file is not toolchain library source.
 *
 * An inline frame is the program's own code when it has a source file
 * and a line, and the file is not toolchain source (srcpath__is_toolchain:
 * Rust core/alloc/std, system headers), and its function is not an
 * allocation wrapper (fns: NULL for none). Frames without line information
 * (libc without debug info, the allocator itself, [unknown]) are not, nor
 * are the frames of a shared library the system installed (right in /lib,
 * /usr/lib, lib64, or their multiarch directory: glibc, libstdc++, with
 * their debug symbols installed or not).
 * A physical frame is own code when one of its inline frames, from the
 * chosen one outwards, is: the first such is the site's line. So
 * `Vec::push` inlined into src/cache.rs:201 is a frame whose inline chain
 * goes raw_vec.rs -> vec/mod.rs -> src/cache.rs:201: own code, at line 201;
 * the finish_grow frame below it is all alloc/ source: skipped. A static
 * xmalloc() inlined into parse() gives parse()'s line that called it.
 *
 * Wrappers are passed over only next to the allocator (massif's rule): the
 * first own frame from the innermost outwards ends the search, so a
 * wrapper's name further out changes nothing.
 *
 *  ATTR_FIRST_USER  the first own-code frame, innermost first (default);
 *                   when there is none: the outermost wrapper frame of the
 *                   run next to the allocator, else the innermost frame
 *                   that resolves and is no allocation function by name
 *                   (Rust's runtime allocating: std's own line), else
 *                   the innermost that resolves to anything, else frame 0
 *  ATTR_CALLER      the own-code frame after that one: the caller of the
 *                   user's allocating function; the first-user frame if none
 *  ATTR_STACK       frame 0, no rule: the allocator's direct caller, as a
 *                   single-return-address tracker would see it
 *
 * Symbols may be NULL (unresolved). Returns the index of the site frame;
 * *depth (may be NULL) gets the index of the site's line in that frame's
 * inline chain (its chosen frame when no own frame applies).
 */
int heap_attrib__site(const struct symbol *const *frames, int n, enum heap_attribution mode,
		      const struct alloc_fns *fns, int *depth);

/*
 * The own-code line after the one at (frame, depth), outwards: the next
 * own inline frame of the same frame, else the first own one of the frames
 * after it. Returns its frame index (*out_depth its inline depth), or -1.
 * What called a site, for report's hint about unnamed wrappers.
 */
int heap_attrib__next_own(const struct symbol *const *frames, int n, int frame, int depth,
			  const struct alloc_fns *fns, int *out_depth);

/*
 * The own-code test above, for one resolved frame: the index in s->frames
 * of its first own inline frame from s->chosen outwards, or -1.
 */
int heap_attrib__own_depth(const struct symbol *s, const struct alloc_fns *fns);

/* heap_attrib__own_depth() >= 0. */
bool heap_attrib__is_user(const struct symbol *s, const struct alloc_fns *fns);

/* Is any inline frame of s, from s->chosen outwards, an allocation wrapper? */
bool heap_attrib__has_wrapper(const struct symbol *s, const struct alloc_fns *fns);

/* "first-user", "caller", "stack" to the enum; -1 when unknown. */
int heap_attrib__parse(const char *name);
const char *heap_attrib__name(enum heap_attribution mode);

#endif
