#ifndef RSPROF_UTIL_SRCPATH_H
#define RSPROF_UTIL_SRCPATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Source paths as DWARF names them, and what rsprof shows (SPEC §4).
 */

/*
 * True when file is toolchain library source rather than the program's own
 * code: the Rust standard library (/rustc/<hash>/library/..., or
 * .../lib/rustlib/src/rust/library/...) and the C compiler's and system
 * headers (/usr/include, /usr/lib/gcc, /usr/lib/llvm-*). Dependencies from a
 * cargo registry are the user's code here (they are code the user chose).
 */
bool srcpath__is_toolchain(const char *file);

/*
 * The short form for tables: "src/parser.rs", "serde-1.0.197/src/de/mod.rs",
 * "std/src/io/mod.rs", "[libc.so.6]" (no file; module basename), "[unknown]".
 * file or module may be NULL. Returns buf.
 */
char *srcpath__display(const char *file, const char *module, char *buf, size_t len);

#endif
