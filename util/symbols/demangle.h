#ifndef RSPROF_UTIL_SYMBOLS_DEMANGLE_H
#define RSPROF_UTIL_SYMBOLS_DEMANGLE_H

#include <stddef.h>

/*
 * Symbol names through libiberty's demangler: Rust legacy (_ZN...17h<hash>E)
 * and v0 (_R...), C++ (_Z...). Returns a malloc'd string (caller frees), or
 * NULL when name is not mangled.
 */
char *demangle(const char *name);

/*
 * The short form for tables: no crate hashes or disambiguators,
 * generic arguments elided ("alloc::vec::Vec<…>::push", turbofish
 * "drop_in_place::<…>"; a qualified path "<Vec<…> as Write>::write" and
 * legacy Rust's "<impl u64>" stay), no C++ parameter list, long paths cut
 * from the left at a "::" to fit width columns ("…::parse_line"; width 0:
 * no limit), with format__ellipsis() (util/output/format.h). demangled may be NULL
 * ("[unknown]"). Returns buf, truncated to len.
 */
char *demangle__short(const char *demangled, size_t width, char *buf, size_t len);

#endif
