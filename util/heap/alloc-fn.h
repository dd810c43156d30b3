#ifndef RSPROF_UTIL_HEAP_ALLOC_FN_H
#define RSPROF_UTIL_HEAP_ALLOC_FN_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Allocation wrappers: functions that only forward to the
 * allocator, and so are not an allocation's site. Valgrind massif's
 * --alloc-fn is the convention: a wrapper is named by a glob pattern
 * (fnmatch(3), no flags) on the demangled function name, and the site of
 * an allocation is found past the wrappers, outwards (util/heap/attrib.h).
 *
 * A list holds the built-in patterns (the table in alloc-fn.c: Redis,
 * CPython, GLib, xmalloc & co., strdup, C++ operator new, Rust's alloc
 * plumbing) and the user's (record --alloc-fn, stored in meta.heap_alloc_fn;
 * report --alloc-fn).
 */
struct alloc_fns;

/* An empty list, or one holding the built-in table. NULL on -ENOMEM. */
struct alloc_fns *alloc_fns__new(bool builtins);
void alloc_fns__delete(struct alloc_fns *a);	/* NULL ok */

/* Add one user pattern (copied). 0, -EINVAL for an empty one, -ENOMEM. */
int alloc_fns__add(struct alloc_fns *a, const char *pattern);

/* Add the patterns of a meta.heap_alloc_fn value (one a line). 0 or -ENOMEM. NULL ok. */
int alloc_fns__add_list(struct alloc_fns *a, const char *list);

/* The user patterns, one a line, for meta.heap_alloc_fn (malloc'd, caller frees);
 * NULL when there is none (or on -ENOMEM: *err set). */
char *alloc_fns__user_list(const struct alloc_fns *a, int *err);

/* The user patterns (not the built-in ones). */
size_t alloc_fns__n_user(const struct alloc_fns *a);

/* Is function (demangled, may be NULL: no) an allocation wrapper? */
bool alloc_fns__match(const struct alloc_fns *a, const char *function);

/* The i-th built-in pattern, or NULL past the end (for docs and tests). */
const char *alloc_fns__builtin(size_t i);

#endif
