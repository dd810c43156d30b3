#ifndef RSPROF_UTIL_DEMANGLE_H
#define RSPROF_UTIL_DEMANGLE_H

#include <stddef.h>

/*
 * Symbol names through libiberty's demangler: Rust legacy (_ZN...17h<hash>E)
 * and v0 (_R...), C++ (_Z...). Returns a malloc'd string (caller frees), or
 * NULL when name is not mangled.
 */
char *demangle(const char *name);

/*
 * The short form for tables (SPEC §4): no crate hashes or disambiguators,
 * generic arguments elided ("Vec<T>::push" stays readable), long paths
 * cut from the left to fit width columns ("…::parse_line"). Returns buf.
 */
char *demangle__short(const char *demangled, size_t width, char *buf, size_t len);

#endif
