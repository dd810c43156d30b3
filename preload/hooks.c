/*
 * Allocator entry points that are not reached through malloc, hooked by
 * rewriting their entry (preload/patch.c) when the tracker starts:
 *
 *  - an executable that defines malloc itself (rustc, with jemalloc
 *    linked in): the program's references bind to its malloc, never to
 *    the tracker's, so each function of the family it defines jumps to
 *    the tracker's (preload/malloc.c), which forwards to a trampoline that
 *    does the executable's own work;
 *  - the allocators' own entry points, which programs call directly (a
 *    Rust #[global_allocator] inlines its calls to them into every
 *    caller): mimalloc's mi_malloc, mi_malloc_aligned, mi_free... in
 *    libmimalloc; jemalloc's mallocx, rallocx, sdallocx, dallocx in
 *    libjemalloc, and the same prefixed _rjem_ (tikv-jemallocator, linked
 *    into the executable: its .symtab); tcmalloc's tc_malloc, tc_free...
 *    A block then counts once whichever function of the family allocates
 *    or frees it: malloc's block freed with mi_free, mallocx's with free;
 *  - CPython's allocator of objects and memory (pymalloc serves both):
 *    not by rewriting (its callers reach pymalloc through a table of
 *    function pointers, PyObject_Malloc inlined into them) but as
 *    tracemalloc does, through its documented PyMem_GetAllocator() and
 *    PyMem_SetAllocator() for the MEM and OBJ domains: the objects are
 *    the sites, at the C line that asked for them, and pymalloc's arenas
 *    (mapped from inside) are not counted again.
 *
 * Loaded into a running process (preload/inject.c), the tracker hooks the
 * same entry points but the _rjem_ family (rsprof injects only where the
 * allocator is glibc's or a library's: util/heap/inject.c says why) and
 * CPython's, with the malloc family of that library in place of the
 * executable's; rsprof keeps every other thread stopped, none in the bytes
 * to be replaced, for the time of the rewriting.
 *
 * While a hooked function runs, its thread is marked busy: what it
 * allocates inside (malloc, the mmap of an arena) is its own business and
 * is not counted again. The blocks are counted through the live table
 * (pointer -> size, site): the allocator's blocks stay as they come.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload/heap-inject.h"
#include "preload/sys.h"
#include "preload/tracker.h"

#define CALLER(c) unwind__from_frame(&(c), __builtin_frame_address(0))

/* --- the hooks ------------------------------------------------------------ */

/* A call not counted (sampled out): its inner allocations neither. */
#define QUIET_CALL(t, expr)						\
	do {								\
		uint8_t b_ = (t)->busy;					\
		(t)->busy = 1;						\
		expr;							\
		(t)->busy = b_;						\
	} while (0)

/* An allocation of `bytes` that returns a block (ARGS: the call). */
#define HOOK_ALLOC(id, PARAMS, ARGS, BYTES)				\
	static void *(*o_##id) PARAMS;					\
	static void *h_##id PARAMS					\
	{								\
		struct thread *t = &th;					\
		struct unwind_from from;				\
		enum track how;						\
		void *p;						\
									\
		/* inside the tracker or an outer counted call (the	\
		 * tracker's malloc calling mimalloc's, an alias): that	\
		 * one counts, and counts down the sampling, alone */	\
		if (t->busy)						\
			return o_##id ARGS;				\
		if (count__skip(t, (BYTES))) {				\
			QUIET_CALL(t, p = o_##id ARGS);			\
			return p;					\
		}							\
		how = tracker__begin(t);				\
		if (how != TRACK_ON)					\
			return o_##id ARGS;				\
		CALLER(from);						\
		p = o_##id ARGS;					\
		if (p && count__sampled(t, (BYTES)))			\
			malloc__tabled(t, how, p, (BYTES), &from);	\
		tracker__end(t);					\
		return p;						\
	}

/* The block p goes: off the table before the allocator has it back. */
static void untrack(struct thread *t, void *p)
{
	struct live_entry e;

	if (live__take((uintptr_t)p, &e))
		count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK);
}

#define HOOK_FREE(id, PARAMS, ARGS, PTR)				\
	static void (*o_##id) PARAMS;					\
	static void h_##id PARAMS					\
	{								\
		struct thread *t = &th;					\
		enum track how;						\
									\
		if (!(PTR) || (sample_bytes && !live__maybe((uintptr_t)(PTR)))) { \
			QUIET_CALL(t, o_##id ARGS);			\
			return;						\
		}							\
		how = tracker__begin(t);				\
		if (how != TRACK_ON) {					\
			o_##id ARGS;					\
			return;						\
		}							\
		untrack(t, (PTR));					\
		o_##id ARGS;						\
		tracker__end(t);					\
	}

/*
 * A realloc of PTR to BYTES: the old block leaves the table before the
 * call (after it, another thread may get its address) and comes back if
 * the call fails.
 */
#define HOOK_REALLOC(id, PARAMS, ARGS, PTR, BYTES)			\
	static void *(*o_##id) PARAMS;					\
	static void *h_##id PARAMS					\
	{								\
		struct thread *t = &th;					\
		struct unwind_from from;				\
		struct live_entry e, stale;				\
		enum track how = tracker__begin(t);			\
		bool had;						\
		void *p;						\
									\
		if (how != TRACK_ON)					\
			return o_##id ARGS;				\
		CALLER(from);						\
		had = (PTR) && live__take((uintptr_t)(PTR), &e);	\
		p = o_##id ARGS;					\
		if (!p && (BYTES)) {					\
			if (had && live__put(&e, &stale) < 0)		\
				count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK); \
		} else {						\
			if (had)					\
				count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK); \
			if (p && count__sampled(t, (BYTES)))		\
				malloc__tabled(t, how, p, (BYTES), &from); \
		}							\
		tracker__end(t);					\
		return p;						\
	}

static inline size_t mul_sat(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}


/* CPython: PyMemAllocatorEx (its stable ABI since 3.5), the one replaced
 * kept as each domain's context. */
struct py_alloc {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t new_size);
	void (*free)(void *ctx, void *ptr);
};

#define PY_DOMAIN_MEM	1
#define PY_DOMAIN_OBJ	2
static struct py_alloc py_old[3];

static void *py_malloc(void *ctx, size_t n);
static void *py_calloc(void *ctx, size_t k, size_t n);
static void *py_realloc(void *ctx, void *p0, size_t n);
static void py_free(void *ctx, void *p0);

#define o_py_malloc(c, n)	(((struct py_alloc *)(c))->malloc(((struct py_alloc *)(c))->ctx, n))
#define o_py_calloc(c, k, n)	(((struct py_alloc *)(c))->calloc(((struct py_alloc *)(c))->ctx, k, n))
#define o_py_realloc(c, p, n)	(((struct py_alloc *)(c))->realloc(((struct py_alloc *)(c))->ctx, p, n))
#define o_py_free(c, p)		(((struct py_alloc *)(c))->free(((struct py_alloc *)(c))->ctx, p))

#define HOOK_ALLOC_BODY(CALL, BYTES)					\
	struct thread *t = &th;						\
	struct unwind_from from;					\
	enum track how;							\
	void *p;							\
									\
	if (t->busy)							\
		return CALL;						\
	if (count__skip(t, (BYTES))) {					\
		QUIET_CALL(t, p = CALL);				\
		return p;						\
	}								\
	how = tracker__begin(t);					\
	if (how != TRACK_ON)						\
		return CALL;						\
	CALLER(from);							\
	p = CALL;							\
	if (p && count__sampled(t, (BYTES)))				\
		malloc__tabled(t, how, p, (BYTES), &from);		\
	tracker__end(t);						\
	return p;

static void *py_malloc(void *ctx, size_t n)
{
	HOOK_ALLOC_BODY(o_py_malloc(ctx, n), n)
}

static void *py_calloc(void *ctx, size_t k, size_t n)
{
	HOOK_ALLOC_BODY(o_py_calloc(ctx, k, n), mul_sat(k, n))
}

static void *py_realloc(void *ctx, void *p0, size_t n)
{
	struct thread *t = &th;
	struct unwind_from from;
	struct live_entry e, stale;
	enum track how = tracker__begin(t);
	bool had;
	void *p;

	if (how != TRACK_ON)
		return o_py_realloc(ctx, p0, n);
	CALLER(from);
	had = p0 && live__take((uintptr_t)p0, &e);
	p = o_py_realloc(ctx, p0, n);
	if (!p) {
		/* failed (CPython's realloc of 0 bytes gives a block): the old one stays */
		if (had && live__put(&e, &stale) < 0)
			count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK);
	} else {
		if (had)
			count__free(t, e.ptr, e.size, e.site, BLOCK_NO_TICK);
		if (count__sampled(t, n))
			malloc__tabled(t, how, p, n, &from);
	}
	tracker__end(t);
	return p;
}

static void py_free(void *ctx, void *p0)
{
	struct thread *t = &th;
	enum track how;

	if (!p0 || (sample_bytes && !live__maybe((uintptr_t)p0))) {
		QUIET_CALL(t, o_py_free(ctx, p0));
		return;
	}
	how = tracker__begin(t);
	if (how != TRACK_ON) {
		o_py_free(ctx, p0);
		return;
	}
	untrack(t, p0);
	o_py_free(ctx, p0);
	tracker__end(t);
}

/* The allocators' own entry points (signatures as their headers give them;
 * flags and alignments passed on as they come). */
HOOK_ALLOC(mi_malloc, (size_t n), (n), n)
HOOK_ALLOC(mi_zalloc, (size_t n), (n), n)
HOOK_ALLOC(mi_malloc_small, (size_t n), (n), n)
HOOK_ALLOC(mi_zalloc_small, (size_t n), (n), n)
HOOK_ALLOC(mi_calloc, (size_t k, size_t n), (k, n), mul_sat(k, n))
HOOK_ALLOC(mi_mallocn, (size_t k, size_t n), (k, n), mul_sat(k, n))
HOOK_ALLOC(mi_malloc_aligned, (size_t n, size_t al), (n, al), n)
HOOK_ALLOC(mi_zalloc_aligned, (size_t n, size_t al), (n, al), n)
HOOK_ALLOC(mi_calloc_aligned, (size_t k, size_t n, size_t al), (k, n, al), mul_sat(k, n))
HOOK_REALLOC(mi_realloc, (void *p0, size_t n), (p0, n), p0, n)
HOOK_REALLOC(mi_reallocn, (void *p0, size_t k, size_t n), (p0, k, n), p0, mul_sat(k, n))
HOOK_REALLOC(mi_realloc_aligned, (void *p0, size_t n, size_t al), (p0, n, al), p0, n)
HOOK_FREE(mi_free, (void *p0), (p0), p0)
HOOK_FREE(mi_free_size, (void *p0, size_t n), (p0, n), p0)
HOOK_FREE(mi_free_aligned, (void *p0, size_t al), (p0, al), p0)
HOOK_FREE(mi_free_size_aligned, (void *p0, size_t n, size_t al), (p0, n, al), p0)

HOOK_ALLOC(je_mallocx, (size_t n, int fl), (n, fl), n)
HOOK_REALLOC(je_rallocx, (void *p0, size_t n, int fl), (p0, n, fl), p0, n)
HOOK_FREE(je_dallocx, (void *p0, int fl), (p0, fl), p0)
HOOK_FREE(je_sdallocx, (void *p0, size_t n, int fl), (p0, n, fl), p0)
HOOK_ALLOC(rj_malloc, (size_t n), (n), n)
HOOK_ALLOC(rj_calloc, (size_t k, size_t n), (k, n), mul_sat(k, n))
HOOK_REALLOC(rj_realloc, (void *p0, size_t n), (p0, n), p0, n)
HOOK_FREE(rj_free, (void *p0), (p0), p0)
HOOK_ALLOC(rj_mallocx, (size_t n, int fl), (n, fl), n)
HOOK_REALLOC(rj_rallocx, (void *p0, size_t n, int fl), (p0, n, fl), p0, n)
HOOK_FREE(rj_dallocx, (void *p0, int fl), (p0, fl), p0)
HOOK_FREE(rj_sdallocx, (void *p0, size_t n, int fl), (p0, n, fl), p0)
HOOK_ALLOC(rj_aligned_alloc, (size_t al, size_t n), (al, n), n)

HOOK_ALLOC(tc_malloc, (size_t n), (n), n)
HOOK_ALLOC(tc_calloc, (size_t k, size_t n), (k, n), mul_sat(k, n))
HOOK_ALLOC(tc_memalign, (size_t al, size_t n), (al, n), n)
HOOK_REALLOC(tc_realloc, (void *p0, size_t n), (p0, n), p0, n)
HOOK_FREE(tc_free, (void *p0), (p0), p0)
HOOK_FREE(tc_free_sized, (void *p0, size_t n), (p0, n), p0)

/* --- finding them ---------------------------------------------------------- */

static unsigned int hooked, refused;
/* Entries found, rewritten by hooks__apply(): an alias of one (mimalloc's
 * malloc is mi_malloc, tcmalloc's tc_delete may be tc_free) is one entry,
 * hooked by the first found. Each is tried once. */
#define FOUND_MAX HEAP_INJECT_PENDING_MAX
static struct found {
	void *fn;
	size_t size;
	void *h;
	void **orig;
	bool tried;
} found[FOUND_MAX];
static unsigned int n_found;

static void hook(void *fn, size_t size, void *h, void **orig)
{
	if (!fn)
		return;
	for (unsigned int i = 0; i < n_found; i++)
		if (found[i].fn == fn)
			return;
	if (n_found == FOUND_MAX) {
		refused++;
		return;
	}
	found[n_found++] = (struct found){ .fn = fn, .size = size, .h = h, .orig = orig };
}

/*
 * tikv-jemallocator's jemalloc, prefixed _rjem_, linked into the
 * executable (local symbols: its .symtab). Not the Rust allocator shims
 * (__rust_alloc & co.): rustc inlines them, and a #[global_allocator]'s
 * methods, into their callers, so a hook there sees some calls and not
 * others; the functions the inlined code calls (mimalloc's, jemalloc's,
 * malloc) are what the tracker hooks.
 */
enum {
	J_MALLOC, J_CALLOC, J_REALLOC, J_FREE, J_MALLOCX, J_RALLOCX, J_DALLOCX, J_SDALLOCX,
	J_ALIGNED,
	R_N
};
static const char *const rust_names[R_N] = {
	"_rjem_malloc", "_rjem_calloc", "_rjem_realloc", "_rjem_free", "_rjem_mallocx",
	"_rjem_rallocx", "_rjem_dallocx", "_rjem_sdallocx", "_rjem_aligned_alloc",
};

/*
 * Those in the executable's .symtab (read from /proc/self/exe, mapped for
 * the time of the search): addr[i], size[i] relative to the load address;
 * false: none.
 */
static bool exe_syms(uint64_t addr[R_N], uint64_t size[R_N])
{
	int fd = sys_open("/proc/self/exe", O_RDONLY | O_CLOEXEC, 0);
	off_t len;
	const uint8_t *f;
	const ElfW(Ehdr) *eh;
	const ElfW(Shdr) *sh;
	bool any = false;

	memset(addr, 0, R_N * sizeof(*addr));
	memset(size, 0, R_N * sizeof(*size));
	if (fd < 0)
		return false;
	len = lseek(fd, 0, SEEK_END);
	f = len > (off_t)sizeof(*eh) ? sys_mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0) :
				       MAP_FAILED;
	sys_close(fd);
	if (f == MAP_FAILED)
		return false;
	eh = (const ElfW(Ehdr) *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(*sh) || eh->e_shoff > (uint64_t)len ||
	    ((uint64_t)len - eh->e_shoff) / sizeof(*sh) < eh->e_shnum)
		goto out;
	sh = (const ElfW(Shdr) *)(f + eh->e_shoff);
	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		const ElfW(Shdr) *st;
		const ElfW(Sym) *sym;
		const char *str;
		uint64_t n;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		st = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > (uint64_t)len || sh[i].sh_size > (uint64_t)len - sh[i].sh_offset ||
		    st->sh_offset > (uint64_t)len || st->sh_size > (uint64_t)len - st->sh_offset ||
		    !st->sh_size || f[st->sh_offset + st->sh_size - 1])
			continue;
		sym = (const ElfW(Sym) *)(f + sh[i].sh_offset);
		str = (const char *)(f + st->sh_offset);
		n = sh[i].sh_size / sizeof(*sym);
		for (uint64_t k = 0; k < n; k++) {
			const char *name;

			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
			    sym[k].st_name >= st->sh_size)
				continue;
			name = str + sym[k].st_name;
			if (strncmp(name, "_rjem_", 6))
				continue;
			for (int r = 0; r < R_N; r++) {
				if (!addr[r] && !strcmp(name, rust_names[r])) {
					addr[r] = sym[k].st_value;
					size[r] = sym[k].st_size;
					any = true;
				}
			}
		}
	}
out:
	sys_munmap((void *)f, (size_t)len);
	return any;
}

/* A jemalloc prefixed _rjem_ linked into the executable. */
static void hook_rjem(void)
{
	const struct link_map *exe = next__exe();
	uint64_t a[R_N], s[R_N];

	if (!exe || !exe_syms(a, s))
		return;
#define AT(r) (a[r] ? (void *)(exe->l_addr + a[r]) : NULL)
	hook(AT(J_MALLOC), s[J_MALLOC], (void *)h_rj_malloc, (void **)&o_rj_malloc);
	hook(AT(J_CALLOC), s[J_CALLOC], (void *)h_rj_calloc, (void **)&o_rj_calloc);
	hook(AT(J_REALLOC), s[J_REALLOC], (void *)h_rj_realloc, (void **)&o_rj_realloc);
	hook(AT(J_FREE), s[J_FREE], (void *)h_rj_free, (void **)&o_rj_free);
	hook(AT(J_MALLOCX), s[J_MALLOCX], (void *)h_rj_mallocx, (void **)&o_rj_mallocx);
	hook(AT(J_RALLOCX), s[J_RALLOCX], (void *)h_rj_rallocx, (void **)&o_rj_rallocx);
	hook(AT(J_DALLOCX), s[J_DALLOCX], (void *)h_rj_dallocx, (void **)&o_rj_dallocx);
	hook(AT(J_SDALLOCX), s[J_SDALLOCX], (void *)h_rj_sdallocx, (void **)&o_rj_sdallocx);
	hook(AT(J_ALIGNED), s[J_ALIGNED], (void *)h_rj_aligned_alloc, (void **)&o_rj_aligned_alloc);
#undef AT
}

/*
 * The malloc family of the allocator the program has instead of glibc's,
 * when its object is `owner` (NULL: any): each function it defines jumps to
 * the tracker's, which forwards to the allocator's (its trampoline).
 */
static void hook_owner_malloc(const void *owner)
{
	size_t size;
	void *fn;

#define OWNED(name, field)						\
	do {								\
		fn = next__lookup(next_alloc.owner, #name, &size);	\
		if (fn && fn == (void *)next_alloc.field)		\
			hook(fn, size, (void *)tracker_##name, (void **)&next_alloc.field); \
	} while (0)
	if (!next_alloc.foreign || !next_alloc.owner || (owner && next_alloc.owner != owner))
		return;
	OWNED(malloc, malloc);
	OWNED(free, free);
	OWNED(calloc, calloc);
	OWNED(realloc, realloc);
	OWNED(memalign, memalign);
	OWNED(aligned_alloc, aligned_alloc);
	OWNED(posix_memalign, posix_memalign);
	OWNED(valloc, valloc);
	OWNED(pvalloc, pvalloc);
#undef OWNED
}

/* The allocators' own functions, wherever they are defined (dynamic symbols). */
static void hook_apis(void)
{
	const void *map;
	size_t size;
	void *fn;

#define API(name, id)							\
	do {								\
		fn = next__find(#name, &map, &size);			\
		hook(fn, size, (void *)h_##id, (void **)&o_##id);	\
	} while (0)
	if (next__find("mi_free", &map, &size)) {
		API(mi_malloc, mi_malloc);
		API(mi_zalloc, mi_zalloc);
		API(mi_malloc_small, mi_malloc_small);
		API(mi_zalloc_small, mi_zalloc_small);
		API(mi_calloc, mi_calloc);
		API(mi_mallocn, mi_mallocn);
		API(mi_malloc_aligned, mi_malloc_aligned);
		API(mi_zalloc_aligned, mi_zalloc_aligned);
		API(mi_calloc_aligned, mi_calloc_aligned);
		API(mi_realloc, mi_realloc);
		API(mi_reallocn, mi_reallocn);
		API(mi_realloc_aligned, mi_realloc_aligned);
		API(mi_free, mi_free);
		API(mi_free_size, mi_free_size);
		API(mi_free_aligned, mi_free_aligned);
		API(mi_free_size_aligned, mi_free_size_aligned);
	}
	if (next__find("sdallocx", &map, &size)) {
		API(mallocx, je_mallocx);
		API(rallocx, je_rallocx);
		API(dallocx, je_dallocx);
		API(sdallocx, je_sdallocx);
	}
	if (next__find("tc_free", &map, &size)) {
		API(tc_malloc, tc_malloc);
		API(tc_calloc, tc_calloc);
		API(tc_memalign, tc_memalign);
		API(tc_realloc, tc_realloc);
		API(tc_free, tc_free);
		API(tc_free_sized, tc_free_sized);
	}
#undef API
}

/* CPython's allocator (the executable or libpython): each of the MEM and
 * OBJ domains wrapped, as tracemalloc wraps them. */
static void hook_python(void)
{
	void (*get)(int, struct py_alloc *), (*set)(int, struct py_alloc *);
	const void *map;
	size_t size;

	get = (__typeof__(get))next__find("PyMem_GetAllocator", &map, &size);
	set = (__typeof__(set))next__find("PyMem_SetAllocator", &map, &size);
	if (!get || !set)
		return;
	for (int d = PY_DOMAIN_MEM; d <= PY_DOMAIN_OBJ; d++) {
		struct py_alloc mine = { &py_old[d], py_malloc, py_calloc, py_realloc, py_free };

		get(d, &py_old[d]);
		if (!py_old[d].malloc || !py_old[d].calloc || !py_old[d].realloc || !py_old[d].free) {
			refused++;
			continue;
		}
		set(d, &mine);
		hooked++;
	}
}

/* The counts into the region. */
static void hooks_stats(void)
{
	if (tracker_region) {
		tracker_region->stats[HEAP_RSTAT_HOOKED] = hooked;
		tracker_region->stats[HEAP_RSTAT_HOOK_REFUSED] = refused;
	}
}

void hooks__apply(void)
{
	for (unsigned int i = 0; i < n_found; i++) {
		if (found[i].tried)
			continue;
		found[i].tried = true;
		if (patch__hook(found[i].fn, found[i].size, found[i].h, found[i].orig))
			refused++;
		else
			hooked++;
	}
	hooks_stats();
}

void hooks__init(bool patch)
{
	if (patch) {
		hook_rjem();
		hook_owner_malloc(next__exe());
		hook_apis();
		hook_python();
		hooks__apply();
	}
	hooks_stats();
}

/* Called once by dl_iterate_phdr(), whose lock keeps objects from being
 * unloaded while the loader's list is walked. */
static int find_locked(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(void)data;
	/* not CPython's: its allocator is read through a table, and a thread
	 * stopped between two of its loads would pair the old context with
	 * the new function */
	if (!got__glibc((uintptr_t)next_alloc.malloc))
		hook_owner_malloc(NULL);
	hook_apis();
	return 1;
}

size_t hooks__find_injected(uint64_t *at, size_t max)
{
	size_t n = 0;

	dl_iterate_phdr(find_locked, NULL);
	for (unsigned int i = 0; i < n_found; i++)
		if (!found[i].tried && n < max)
			at[n++] = (uintptr_t)found[i].fn;
	hooks_stats();
	return n;
}
