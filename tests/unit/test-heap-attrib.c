/*
 * The first-user-frame rule (util/heap/attrib.h) on hand-made symbol chains,
 * past allocation wrappers (util/heap/alloc-fn.h), and where the allocator
 * probes land (util/heap/alloc-syms.h).
 */
#include "util/heap/attrib.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <linux/types.h>

#include "bpf/heap.h"
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
		ok(alloc_fns__match(bi, "<hm::Mi as core::alloc::global::GlobalAlloc>::alloc"),
		   "a #[global_allocator]'s method (a pattern with a literal head and a glob)");
		ok(alloc_fns__match(bi, "hashbrown::raw::RawVecInner::grow"),
		   "a pattern with no literal head (*RawVec*)");
		ok(!alloc_fns__match(bi, "zstrdupx"), "a literal pattern: not a longer name");
		ok(!alloc_fns__match(bi, "xstrdu"), "a literal pattern: not a shorter name");
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
		is_int(alloc_fns__add(none, "arena\\*get"), 0, "a pattern with an escaped *");
		ok(alloc_fns__match(none, "arena*get"), "the escaped * matches itself");
		ok(!alloc_fns__match(none, "arena_get"), "... and nothing else");

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

	/* probe placement, bytes from Debian 12's glibc 2.36, libstdc++ 12 and rustc 1.95 */
	{
		static const uint8_t glibc_free[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0,
						      0x55, 0x48, 0x8d, 0x77, 0xf0 };
		static const uint8_t glibc_malloc[] = { 0x41, 0x54, 0x55, 0x53 };
		/* cmpb $0,x(%rip); push %r12; mov %rdx,%r12 */
		static const uint8_t glibc_pmemalign[] = { 0x80, 0x3d, 0x01, 0x02, 0x14, 0, 0,
							   0x41, 0x54, 0x49, 0x89, 0xd4 };
		/* cmpb $0,x(%rip); je +7; jmp _mid_memalign */
		static const uint8_t glibc_memalign[] = { 0x80, 0x3d, 0x71, 0x0e, 0x14, 0, 0,
							  0x74, 0x07, 0xe9, 0x32, 0xf6, 0xff, 0xff };
		static const uint8_t rust_alloc[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xe9 };
		static const uint8_t cet_free[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff,
						    0x74, 0x10, 0x53 };
		/* rustc's jemalloc: cmp $0x1001,%rdi; jae malloc_default */
		static const uint8_t je_malloc[] = { 0x48, 0x81, 0xff, 0x01, 0x10, 0, 0,
						     0x0f, 0x83, 0xb3, 0, 0, 0 };
		/* rustc's jemalloc free: seven moves and masks of other registers, cmp, jne */
		static const uint8_t je_free[] = {
			0x48, 0xc7, 0xc0, 0xb8, 0xf5, 0xff, 0xff, 0x48, 0x89, 0xfa,
			0x48, 0xc1, 0xea, 0x1e, 0x83, 0xe2, 0x0f, 0x48, 0x89, 0xf9,
			0x48, 0x81, 0xe1, 0x00, 0x00, 0x00, 0xc0, 0xc1, 0xe2, 0x04,
			0x64, 0x48, 0x39, 0x8c, 0x10, 0xb0, 0x01, 0x00, 0x00,
			0x0f, 0x85, 0x93, 0, 0, 0 };
		/* the size moved away before any branch: nothing to emulate in time */
		static const uint8_t clobber[] = { 0x48, 0x89, 0xfb, 0x31, 0xff, 0x74, 0x02, 0x55 };
		/* a loop back to the jcc: a probe there would fire twice */
		static const uint8_t loop[] = { 0x48, 0x85, 0xc0, 0x75, 0x02, 0xeb, 0xfc, 0xc3 };
		unsigned int skip;
		bool emul;

#define POINT(code, len, kind, is_free)						\
		(alloc_syms__probe_point(code, len, kind, is_free, &skip, &emul) ? -1 : (int)skip)

		is_int(POINT(glibc_free, sizeof(glibc_free), HEAP_KIND_FREE, true), 9,
		       "free: past test %%rdi,%%rdi; je to the push");
		is_int(POINT(glibc_free, sizeof(glibc_free), HEAP_KIND_MALLOC, false), 3,
		       "the NULL check is stepped over for free only (else its je)");
		is_int(POINT(glibc_malloc, sizeof(glibc_malloc), HEAP_KIND_MALLOC, false), 0,
		       "malloc starts with a push");
		ok(emul, "... which the kernel emulates");
		is_int(POINT(glibc_pmemalign, sizeof(glibc_pmemalign), HEAP_KIND_POSIX_MEMALIGN,
			     false), 7, "posix_memalign: past the cmpb");
		is_int(POINT(glibc_memalign, sizeof(glibc_memalign), HEAP_KIND_ALIGNED, false), 7,
		       "aligned_alloc: on the je after the cmpb");
		ok(emul, "... a jcc is emulated");
		is_int(POINT(rust_alloc, sizeof(rust_alloc), HEAP_KIND_MALLOC, false), 0,
		       "__rust_alloc starts with push %%rbp");
		is_int(POINT(cet_free, sizeof(cet_free), HEAP_KIND_FREE, true), 9,
		       "endbr64; test; je rel8; push");
		is_int(POINT(glibc_free, 3, HEAP_KIND_FREE, true), 0, "short code: entry");
		is_int(POINT(je_malloc, sizeof(je_malloc), HEAP_KIND_MALLOC, false), 7,
		       "rustc's jemalloc malloc: on the jae after the size check");
		ok(emul, "... emulated, not single-stepped");
		is_int(POINT(je_free, sizeof(je_free), HEAP_KIND_FREE, false), 39,
		       "rustc's jemalloc free: on the jne, %%rdi untouched until there");
		is_int(POINT(clobber, sizeof(clobber), HEAP_KIND_MALLOC, false), 0,
		       "the size register written first: the entry");
		ok(!emul, "... single-stepped, and said so");
		is_int(POINT(loop, sizeof(loop), HEAP_KIND_MALLOC, false), 0,
		       "a jcc that a later branch comes back to: the entry");
		{
			/* libstdc++ 12: operator new(size_t), operator new[](size_t) */
			static const uint8_t znwm[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff,
							0xb8, 0x01, 0, 0, 0, 0x53, 0x48 };
			static const uint8_t znam[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec,
							0x08, 0xe8, 0x13, 0x03, 0xff, 0xff };

			is_int(POINT(znwm, sizeof(znwm), HEAP_KIND_MALLOC, false), 12,
			       "operator new: past endbr64, test, mov $1,%%eax to push %%rbx");
			is_int(POINT(znam, sizeof(znam), HEAP_KIND_MALLOC, false), 0,
			       "operator new[]: %%rsp moves before its call, stay at the entry");
			ok(!emul, "... not emulated: rsprof leaves it unprobed");
		}
#undef POINT
	}
	{
		/* glibc with its debug symbols: lines, but a system library's */
		struct fake fopen_in, user, start, sysapp, alloc_fn, init, shim;
		struct alloc_fns *bi = alloc_fns__new(true);
		const struct symbol *c[4];

		mk(&fopen_in, "/usr/lib/x86_64-linux-gnu/libc.so.6", 1,
		   (const char *[]){ "./libio/iofopen.c" }, (int[]){ 65 });
		mk(&user, "/t/app", 1, (const char *[]){ "/home/u/app/main.c" }, (int[]){ 52 });
		mk(&start, "/lib/x86_64-linux-gnu/libc.so.6", 1,
		   (const char *[]){ "../sysdeps/nptl/libc_start_call_main.h" }, (int[]){ 58 });
		mk(&sysapp, "/usr/lib/firefox/libxul.so", 1,
		   (const char *[]){ "/build/firefox/dom/base/x.cpp" }, (int[]){ 9 });
		ok(!heap_attrib__is_user(&fopen_in.sym, NULL),
		   "glibc's iofopen.c with debug symbols is not the user's code");
		ok(!heap_attrib__is_user(&start.sym, NULL), "nor __libc_start_call_main in /lib");
		ok(heap_attrib__is_user(&sysapp.sym, NULL),
		   "an application's library in its own directory under /usr/lib is");
		c[0] = &fopen_in.sym;
		c[1] = &user.sym;
		c[2] = &start.sym;
		is_int(heap_attrib__site(c, 3, ATTR_FIRST_USER, bi, NULL), 1,
		       "fopen's FILE: the user's line that called fopen");

		/* Rust's runtime allocating before main: no own frame at all */
		mk(&alloc_fn, "/t/app", 1, (const char *[]){ STD "alloc/src/alloc.rs" },
		   (int[]){ 95 });
		alloc_fn.fr[0].function = (char *)"alloc::alloc::alloc";
		mk(&init, "/t/app", 1,
		   (const char *[]){ STD "std/src/sys/pal/unix/stack_overflow.rs" }, (int[]){ 179 });
		init.fr[0].function = (char *)"std::sys::pal::unix::stack_overflow::imp::init";
		mk(&shim, "/t/app", 0, NULL, NULL);
		shim.fr[0].function = (char *)"main";
		c[0] = &alloc_fn.sym;
		c[1] = &init.sym;
		c[2] = &shim.sym;
		c[3] = &start.sym;
		is_int(heap_attrib__site(c, 4, ATTR_FIRST_USER, bi, NULL), 1,
		       "no own frame: std's line that allocated, past alloc::alloc::alloc");
		c[1] = &alloc_fn.sym;
		is_int(heap_attrib__site(c, 2, ATTR_FIRST_USER, bi, NULL), 0,
		       "nothing but allocation functions: the innermost that resolves");
		alloc_fns__delete(bi);
	}
	return done_testing();
}
