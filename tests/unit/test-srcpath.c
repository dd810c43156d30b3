/*
 * srcpath__is_toolchain() and srcpath__display() on the paths that rustc
 * 1.95 and gcc 12 here put into DWARF (objdump --dwarf=decodedline).
 */
#include "util/symbols/srcpath.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "tap.h"

#define RUSTC "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/"

static void tc(const char *file, bool want)
{
	ok(srcpath__is_toolchain(file) == want, "%s is %stoolchain", file ? file : "NULL",
	   want ? "" : "not ");
}

static void disp(const char *file, const char *module, const char *want)
{
	char buf[256];

	is_str(srcpath__display(file, module, buf, sizeof(buf)), want, "display %s [%s]",
	       file ? file : "NULL", module ? module : "NULL");
}

int main(void)
{
	char cwd[PATH_MAX], path[PATH_MAX + 32], buf[8];

	tc(RUSTC "core/src/num/uint_macros.rs", true);
	tc(RUSTC "std/src/io/mod.rs", true);
	tc(RUSTC "alloc/src/raw_vec/mod.rs", true);
	tc("/rust/deps/memchr-2.7.6/src/lib.rs", true);
	tc("/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/"
	   "library/core/src/iter/range.rs", true);
	tc("/usr/src/rustc-1.63.0/library/core/src/iter/range.rs", true);
	tc("/usr/src/rustc-1.63.0/vendor/hashbrown/src/map.rs", true);
	tc("/builddir/build/BUILD/rustc-1.79.0-src/library/alloc/src/vec/mod.rs", true);
	tc("/home/u/rustc-notes/src/main.rs", false);
	tc("/usr/include/x86_64-linux-gnu/bits/stdio2.h", true);
	tc("/usr/include/c++/12/bits/stl_vector.h", true);
	tc("/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", true);
	tc("/usr/lib/llvm-14/lib/clang/14.0.6/include/stddef.h", true);
	tc("/usr/local/include/foo.h", true);
	tc("/home/u/proj/src/main.rs", false);
	tc("/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.197/src/de/mod.rs",
	   false);
	tc("tests/targets/rust_inline.rs", false);
	tc("/usr/src/app/main.c", false);
	tc(NULL, false);

	disp(RUSTC "std/src/io/mod.rs", NULL, "std/src/io/mod.rs");
	disp(RUSTC "core/src/num/uint_macros.rs", "/x/app", "core/src/num/uint_macros.rs");
	disp("/rust/deps/memchr-2.7.6/src/lib.rs", NULL, "memchr-2.7.6/src/lib.rs");
	disp("/usr/src/rustc-1.63.0/library/core/src/iter/range.rs", NULL,
	     "core/src/iter/range.rs");
	disp("/usr/src/rustc-1.63.0/vendor/hashbrown/src/map.rs", NULL, "hashbrown/src/map.rs");
	disp("/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.197/src/de/"
	     "mod.rs", NULL, "serde-1.0.197/src/de/mod.rs");
	disp("/home/u/.cargo/git/checkouts/tokio-0123abcd/8a1b2c3/tokio/src/runtime/mod.rs", NULL,
	     "tokio/src/runtime/mod.rs");
	disp("/home/u/proj/src/parser.rs", NULL, "proj/src/parser.rs");
	disp("/home/u/src/proj/src/bin/main.rs", NULL, "proj/src/bin/main.rs");
	disp("/usr/include/x86_64-linux-gnu/bits/stdio2.h", NULL, "bits/stdio2.h");
	disp("/opt/hot.c", NULL, "opt/hot.c");
	disp("/hot.c", NULL, "hot.c");
	disp("hot.c", NULL, "hot.c");
	disp("./stdlib/qsort.c", "/usr/lib/x86_64-linux-gnu/libc.so.6", "stdlib/qsort.c");
	disp(NULL, "/usr/lib/x86_64-linux-gnu/libc.so.6", "[libc.so.6]");
	disp(NULL, "[vdso]", "[vdso]");
	disp(NULL, NULL, "[unknown]");
	disp("", "", "[unknown]");

	/* under the current directory: relative to it */
	if (getcwd(cwd, sizeof(cwd))) {
		snprintf(path, sizeof(path), "%s/src/parser.rs", cwd);
		disp(path, NULL, "src/parser.rs");
		snprintf(path, sizeof(path), "%s/tests/targets/cpu_split.c", cwd);
		disp(path, NULL, "tests/targets/cpu_split.c");
	}
	/* truncates into a small buffer */
	srcpath__display("/home/u/proj/src/parser.rs", NULL, buf, sizeof(buf));
	is_str(buf, "proj/sr", "display truncates to the buffer");
	return done_testing();
}
