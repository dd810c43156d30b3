#ifndef RSPROF_UTIL_SYMBOLS_SRCPATH_H
#define RSPROF_UTIL_SYMBOLS_SRCPATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Source paths as DWARF names them, and what rsprof shows.
 */

/*
 * True when file is toolchain library source rather than the program's own
 * code. The rule, on the path as DWARF gives it (libdw joins relative names
 * with the compilation directory):
 *
 *   Rust standard library, as rustc 1.95 remaps it:   /rustc/<hash>/...
 *   its vendored dependencies (memchr, hashbrown...): /rust/deps/...
 *   the rust-src component / a locally built std:     .../lib/rustlib/src/rust/...
 *   a distribution's rustc (Debian, Fedora):          .../rustc-<version>[-src]/library/...
 *       and the crates it vendors for std:            .../rustc-<version>[-src]/vendor/...
 *   C/C++ system and compiler headers:                /usr/include/...,
 *       /usr/local/include/..., /usr/lib/gcc/..., /usr/lib/llvm-N/...
 *
 * Dependencies from a cargo registry (~/.cargo/registry) or git checkout
 * are the user's code here: they are code the user chose. NULL is false.
 */
bool srcpath__is_toolchain(const char *file);

/*
 * The short form for tables: "src/parser.rs", "serde-1.0.197/src/de/mod.rs",
 * "std/src/io/mod.rs", "[libc.so.6]" (no file; module basename), "[unknown]".
 * file or module may be NULL. Returns buf. The rule, first match wins:
 *
 *   1. no file: "[" module basename "]" ("[vdso]" as is), or "[unknown]"
 *   2. Rust toolchain: what follows ".../library/" ("std/src/io/mod.rs",
 *      "core/src/num/uint_macros.rs"), "/rust/deps/" ("memchr-2.7.6/src/lib.rs")
 *      or a distribution's ".../rustc-<version>/vendor/" ("hashbrown/src/map.rs")
 *   3. cargo registry or git checkout: from the crate directory on
 *      (".../registry/src/<index>/serde-1.0.197/src/de/mod.rs" gives
 *      "serde-1.0.197/src/de/mod.rs"; ".../git/checkouts/<repo>/<rev>/..." likewise)
 *   4. a relative name: as is, without a leading "./"
 *   5. under the current directory: relative to it ("src/parser.rs" when
 *      run in the crate's directory)
 *   6. a path with a "src" directory: from the parent of the last "src"
 *      ("/home/me/proj/src/parser.rs" gives "proj/src/parser.rs")
 *   7. any other absolute path: the basename with its parent directory
 *      ("/usr/include/x86_64-linux-gnu/bits/stdio2.h" gives "bits/stdio2.h")
 */
char *srcpath__display(const char *file, const char *module, char *buf, size_t len);

#endif
