/*
 * The first-user-frame rule (util/heap/attrib.h) on hand-made symbol chains,
 * past allocation wrappers (util/heap/alloc-fn.h), and where the allocator
 * probes land (util/heap/alloc-syms.h).
 */
#include "util/heap/attrib.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/heap/alloc-fn.h"
#include "util/heap/alloc-syms.h"
#include "util/symbols/symbol.h"
#include "tap.h"

#define STD "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/"

/* One resolved address: n inline frames, innermost first; chosen as the
 * resolver would pick it (first non-toolchain frame, else 0). */
struct fake {
	struct symbol sym;
	struct frame fr[4];
};

static void mk(struct fake *f, const char *module, int n, const char *files[], const int lines[])
{
	memset(f, 0, sizeof(*f));
	f->sym.module = (char *)module;
	f->sym.frames = f->fr;
	f->sym.n_frames = n;
	f->sym.has_debuginfo = n > 0 && files[0];
	for (int i = 0; i < n; i++) {
		f->fr[i].file = (char *)files[i];
		f->fr[i].line = lines[i];
		f->fr[i].function = (char *)"fn";
	}
	if (n == 0) {
		f->sym.n_frames = 1;	/* unresolved: one frame of NULLs */
		f->fr[0].function = NULL;
	}
	f->sym.chosen = 0;
	for (int i = 0; i < n; i++) {
		if (files[i] && !strstr(files[i], "/rustc/") && strncmp(files[i], "/usr/include", 12)) {
			f->sym.chosen = i;
			break;
		}
	}
}

int main(void)
{
	struct fake finish_grow, grow_one, push_in_user, user_main, lang_start, libc, unk, wrapper;
	const struct symbol *chain[8];

	/* A Vec::push in src/cache.rs:201: finish_grow, grow_amortized, then
	 * the user's function with push inlined into it. */
	mk(&finish_grow, "/t/app", 2, (const char *[]){ STD "alloc/src/alloc.rs",
		STD "alloc/src/raw_vec/mod.rs" }, (int[]){ 95, 620 });
	mk(&grow_one, "/t/app", 2, (const char *[]){ STD "alloc/src/raw_vec/mod.rs",
		STD "alloc/src/raw_vec/mod.rs" }, (int[]){ 527, 491 });
	mk(&push_in_user, "/t/app", 3, (const char *[]){ STD "alloc/src/vec/mod.rs",
		STD "alloc/src/vec/mod.rs", "/home/u/app/src/cache.rs" }, (int[]){ 1029, 992, 201 });
	mk(&user_main, "/t/app", 1, (const char *[]){ "/home/u/app/src/main.rs" }, (int[]){ 12 });
	mk(&lang_start, "/t/app", 1, (const char *[]){ STD "std/src/rt.rs" }, (int[]){ 206 });
	mk(&libc, "/lib/x86_64-linux-gnu/libc.so.6", 0, NULL, NULL);
	mk(&unk, NULL, 0, NULL, NULL);

	chain[0] = &finish_grow.sym;
	chain[1] = &grow_one.sym;
	chain[2] = &push_in_user.sym;
	chain[3] = &user_main.sym;
	chain[4] = &lang_start.sym;

	ok(!heap_attrib__is_user(&finish_grow.sym, NULL),
	   "alloc/src/alloc.rs is not the user's code");
	ok(heap_attrib__is_user(&push_in_user.sym, NULL), "push inlined into src/cache.rs is");
	ok(!heap_attrib__is_user(&libc.sym, NULL), "libc without line info is not");
	ok(!heap_attrib__is_user(NULL, NULL), "an unresolved frame is not");

	is_int(heap_attrib__site(chain, 5, ATTR_FIRST_USER, NULL, NULL), 2,
	       "first-user: Vec::push lands on src/cache.rs:201, not raw_vec.rs");
	is_int(symbol__frame(chain[heap_attrib__site(chain, 5, ATTR_FIRST_USER, NULL,
						       NULL)])->line, 201,
	       "and the reported line is 201");
	is_int(heap_attrib__site(chain, 5, ATTR_CALLER, NULL, NULL), 3,
	       "caller: the user's function that called it (main.rs:12)");
	is_int(heap_attrib__site(chain, 5, ATTR_STACK, NULL, NULL), 0,
	       "stack: the allocator's direct caller");

	/* C: malloc called straight from the user's function */
	mk(&wrapper, "/t/capp", 1, (const char *[]){ "/home/u/capp/pool.c" }, (int[]){ 40 });
	chain[0] = &wrapper.sym;
	chain[1] = &user_main.sym;
	is_int(heap_attrib__site(chain, 2, ATTR_FIRST_USER, NULL, NULL), 0,
	       "C: the malloc caller itself");
	is_int(heap_attrib__site(chain, 2, ATTR_CALLER, NULL, NULL), 1,
	       "C caller: the wrapper's caller");

	/* allocations from inside libc (stdio buffers): no user frame at all */
	chain[0] = &libc.sym;
	chain[1] = &unk.sym;
	is_int(heap_attrib__site(chain, 2, ATTR_FIRST_USER, NULL, NULL), 0,
	       "no user frame: the innermost frame that resolves");
	chain[0] = &unk.sym;
	chain[1] = &lang_start.sym;
	is_int(heap_attrib__site(chain, 2, ATTR_FIRST_USER, NULL, NULL), 1, "skips an unresolved frame 0");
	chain[0] = NULL;
	chain[1] = &finish_grow.sym;
	chain[2] = &push_in_user.sym;
	is_int(heap_attrib__site(chain, 3, ATTR_FIRST_USER, NULL, NULL), 2, "NULL symbols are fine");
	is_int(heap_attrib__site(chain, 0, ATTR_FIRST_USER, NULL, NULL), 0, "an empty stack gives 0");

	/* allocation wrappers (issue 9) */
	{
		struct alloc_fns *none = alloc_fns__new(false), *bi = alloc_fns__new(true);
		struct fake zm, sds, inl, caller2;
		int d = -1;

		ok(none && bi, "alloc_fns__new");
		ok(alloc_fns__match(bi, "ztrymalloc_usable_internal"), "built-in: Redis ztrymalloc*");
		ok(alloc_fns__match(bi, "zmalloc"), "built-in: zmalloc");
		ok(alloc_fns__match(bi, "_PyMem_RawMalloc"), "built-in: CPython _PyMem_*");
		ok(alloc_fns__match(bi, "PyObject_Malloc"), "built-in: PyObject_Malloc");
		ok(!alloc_fns__match(bi, "PyUnicode_New"), "not PyUnicode_New: a real site");
		ok(!alloc_fns__match(bi, "sdsnewlen"), "not sdsnewlen");
		ok(alloc_fns__match(bi, "operator new(unsigned long)"),
		   "operator new, with its parameters");
		ok(alloc_fns__match(bi, "xmalloc(unsigned long)"), "xmalloc as a C++ name");
		ok(alloc_fns__match(bi, "alloc::raw_vec::RawVec<T,A>::grow_one"), "Rust RawVec");
		ok(!alloc_fns__match(bi, NULL), "no name: no wrapper");
		ok(!alloc_fns__match(none, "zmalloc"), "an empty list matches nothing");
		is_int(alloc_fns__add(none, "pool_*"), 0, "add a user pattern");
		is_int(alloc_fns__add(none, "  "), -EINVAL, "an empty pattern is refused");
		is_int(alloc_fns__add_list(none, "pool_*\nmy_alloc\n\n"), 0, "add a meta list");
		is_int((int)alloc_fns__n_user(none), 2, "duplicates and empty lines dropped");
		ok(alloc_fns__match(none, "pool_take"), "user glob matches");
		{
			int err = 0;
			char *l = alloc_fns__user_list(none, &err);

			is_str(l, "pool_*\nmy_alloc", "the meta list, one a line");
			free(l);
		}

		/* Redis: malloc <- ztrymalloc_usable_internal <- zmalloc <- _sdsnewlen */
		mk(&zm, "/t/redis", 2, (const char *[]){ "/b/redis/src/zmalloc.c",
			"/b/redis/src/zmalloc.c" }, (int[]){ 121, 150 });
		zm.fr[0].function = (char *)"ztrymalloc_usable_internal";
		zm.fr[1].function = (char *)"zmalloc";
		mk(&sds, "/t/redis", 1, (const char *[]){ "/b/redis/src/sds.c" }, (int[]){ 104 });
		sds.fr[0].function = (char *)"_sdsnewlen";
		mk(&caller2, "/t/redis", 1, (const char *[]){ "/b/redis/src/t_string.c" },
		   (int[]){ 77 });
		caller2.fr[0].function = (char *)"setCommand";
		chain[0] = &zm.sym;
		chain[1] = &sds.sym;
		chain[2] = &caller2.sym;
		is_int(heap_attrib__site(chain, 3, ATTR_FIRST_USER, NULL, &d), 0,
		       "no wrappers named: zmalloc.c is the site");
		is_int(d, 0, "at its chosen line");
		is_int(heap_attrib__site(chain, 3, ATTR_FIRST_USER, bi, &d), 1,
		       "built-in wrappers: sds.c");
		is_int(d, 0, "depth 0 of sds.c's frame");
		is_int(heap_attrib__site(chain, 3, ATTR_CALLER, bi, &d), 2,
		       "caller mode goes one further: t_string.c");
		is_int(heap_attrib__site(chain, 3, ATTR_STACK, bi, &d), 0, "stack: no rule");
		ok(heap_attrib__has_wrapper(&zm.sym, bi), "the zmalloc frame has a wrapper");
		ok(!heap_attrib__has_wrapper(&sds.sym, bi), "sds.c's has none");
		is_int(heap_attrib__site(chain, 1, ATTR_FIRST_USER, bi, &d), 0,
		       "only wrappers in the stack: the outermost wrapper frame");
		is_int(d, 0, "at its own line");

		/* a static wrapper inlined into its caller: one frame, two lines */
		mk(&inl, "/t/capp", 2, (const char *[]){ "/home/u/capp/xalloc.h",
			"/home/u/capp/parse.c" }, (int[]){ 12, 88 });
		inl.fr[0].function = (char *)"xmalloc";
		inl.fr[1].function = (char *)"parse";
		chain[0] = &inl.sym;
		chain[1] = &user_main.sym;
		is_int(heap_attrib__site(chain, 2, ATTR_FIRST_USER, bi, &d), 0,
		       "inlined xmalloc: the same frame");
		is_int(d, 1, "at parse.c's line (inline depth 1)");
		is_int(heap_attrib__site(chain, 2, ATTR_FIRST_USER, NULL, &d), 0,
		       "without: same frame");
		is_int(d, 0, "at xalloc.h's line");
		alloc_fns__delete(none);
		alloc_fns__delete(bi);
	}

	is_int(heap_attrib__parse("first-user"), ATTR_FIRST_USER, "parse first-user");
	is_int(heap_attrib__parse("caller"), ATTR_CALLER, "parse caller");
	is_int(heap_attrib__parse("stack"), ATTR_STACK, "parse stack");
	is_int(heap_attrib__parse("nope"), -1, "parse refuses others");
	is_str(heap_attrib__name(ATTR_CALLER), "caller", "name of caller");

	/* probe placement, bytes from Debian 12's glibc 2.36 and rustc 1.95 */
	{
		static const uint8_t glibc_free[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0,
						      0x55, 0x48, 0x8d, 0x77, 0xf0 };
		static const uint8_t glibc_malloc[] = { 0x41, 0x54, 0x55, 0x53 };
		static const uint8_t glibc_pmemalign[] = { 0x80, 0x3d, 0x01, 0x02, 0x14, 0, 0,
							   0x41, 0x54, 0x49 };
		static const uint8_t glibc_memalign[] = { 0x80, 0x3d, 0x71, 0x0e, 0x14, 0, 0,
							  0x74, 0x07, 0xe9 };
		static const uint8_t rust_alloc[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xe9 };
		static const uint8_t cet_free[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff,
						    0x74, 0x10, 0x53 };

		is_int(alloc_syms__prologue_skip(glibc_free, sizeof(glibc_free), true), 9,
		       "free: past test %%rdi,%%rdi; je to the push");
		is_int(alloc_syms__prologue_skip(glibc_free, sizeof(glibc_free), false), 0,
		       "the NULL check is skipped for free only");
		is_int(alloc_syms__prologue_skip(glibc_malloc, sizeof(glibc_malloc), false), 0,
		       "malloc starts with a push");
		is_int(alloc_syms__prologue_skip(glibc_pmemalign, sizeof(glibc_pmemalign), false), 7,
		       "posix_memalign: past the cmpb");
		is_int(alloc_syms__prologue_skip(glibc_memalign, sizeof(glibc_memalign), false), 0,
		       "aligned_alloc: a branch follows, stay at the entry");
		is_int(alloc_syms__prologue_skip(rust_alloc, sizeof(rust_alloc), false), 0,
		       "__rust_alloc starts with push %%rbp");
		is_int(alloc_syms__prologue_skip(cet_free, sizeof(cet_free), true), 9,
		       "endbr64; test; je rel8; push");
		is_int(alloc_syms__prologue_skip(glibc_free, 3, true), 0, "short code: entry");
		{
			/* libstdc++ 12: operator new(size_t), operator new[](size_t) */
			static const uint8_t znwm[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff,
							0xb8, 0x01, 0, 0, 0, 0x53, 0x48 };
			static const uint8_t znam[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec,
							0x08, 0xe8, 0x13, 0x03, 0xff, 0xff };

			is_int(alloc_syms__prologue_skip(znwm, sizeof(znwm), false), 12,
			       "operator new: past endbr64, test, mov $1,%%eax to push %%rbx");
			is_int(alloc_syms__prologue_skip(znam, sizeof(znam), false), 0,
			       "operator new[]: no push, stay at the entry");
		}
	}
	return done_testing();
}
