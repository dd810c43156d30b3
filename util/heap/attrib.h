#ifndef RSPROF_UTIL_HEAP_ATTRIB_H
#define RSPROF_UTIL_HEAP_ATTRIB_H

#include <stdbool.h>

#include "util/heap/heap.h"

struct symbol;

/*
 * Which frame of an allocation's call stack is the allocation's site
 * (SPEC §6, issue 3): the rule, applied in user space on the resolved stack.
 *
 * The stack is captured at the allocator's entry, innermost first: frame 0
 * is the return address into the function that called the allocator (for
 * Rust that is usually alloc::raw_vec::finish_grow or similar, for C the
 * user's function itself), then the frame-pointer chain outwards.
 * Each frame is resolved (return address - 1, the call instruction) to its
 * inline chain; the resolver marks as `chosen` the innermost inlined frame
 * whose source file is not toolchain library source.
 *
 * A frame is the program's own code when its chosen inline frame has a
 * source file and that file is not toolchain source (srcpath__is_toolchain:
 * Rust core/alloc/std, system headers). Frames without line information
 * (libc without debug info, the allocator itself, [unknown]) are not.
 * So `Vec::push` inlined into src/cache.rs:201 is a frame whose inline
 * chain goes raw_vec.rs -> vec/mod.rs -> src/cache.rs:201: own code, at
 * line 201; the finish_grow frame below it is all alloc/ source: skipped.
 *
 *  ATTR_FIRST_USER  the first own-code frame, innermost first (default);
 *                   when there is none, the innermost frame that resolves
 *                   to anything, else frame 0
 *  ATTR_CALLER      the own-code frame after that one: the caller of the
 *                   user's allocating function (for allocation wrappers
 *                   such as make_node()); the first-user frame if none
 *  ATTR_STACK       frame 0, no rule: the allocator's direct caller, as a
 *                   single-return-address tracker would see it
 *
 * Symbols may be NULL (unresolved). Returns the index of the site frame.
 */
int heap_attrib__site(const struct symbol *const *frames, int n, enum heap_attribution mode);

/* The own-code test above, for one resolved frame. */
bool heap_attrib__is_user(const struct symbol *s);

/* "first-user", "caller", "stack" to the enum; -1 when unknown. */
int heap_attrib__parse(const char *name);
const char *heap_attrib__name(enum heap_attribution mode);

#endif
