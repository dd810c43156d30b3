#ifndef RSPROF_UTIL_SYMBOLS_FUNCNAME_H
#define RSPROF_UTIL_SYMBOLS_FUNCNAME_H

/*
 * A function named by a user (`annotate score`, `report --callers leaf`)
 * against the demangled names of a profile, in three levels; the first
 * level that matches any name wins:
 *
 *   0  the full demangled name            "demo::score", "<Vec<u8>>::push"
 *   1  the short name of the tables        (demangle__short: no hashes, generics elided)
 *   2  a path suffix after "::"            "score" for "demo::score"
 */
#define FUNCNAME_LEVELS 3

/* Does name match want at level? name may be NULL (no match). */
int funcname__match(const char *name, const char *want, int level);

#endif
