/*
 * The allocator the program would have without the tracker: for each
 * function of the malloc family, the first definition in the loader's
 * list of objects (its lookup order for the program's own references)
 * that is not the tracker's. glibc's for most programs; jemalloc's,
 * mimalloc's or tcmalloc's for a program linked with one (or with one in
 * LD_PRELOAD after the tracker's): the tracker forwards to that one, as
 * heaptrack does, never to glibc's behind its back (a block of one
 * allocator freed by another is a crash).
 *
 * Found by reading the loaded objects' dynamic symbol tables (their GNU
 * or SysV hash tables) through the loader's list (_r_debug), not with
 * dlsym(): no allocation and no lock, so it can run at the first malloc,
 * whatever the state of the process (before the tracker's constructor,
 * inside the loader, in a process the tracker was injected into: the
 * lookup skips the tracker's object wherever it sits in the list).
 *
 * glibc: every function found is libc.so.6's (the object that defines
 * gnu_get_libc_version: mimalloc and others define __libc_malloc too),
 * and the __libc_malloc & co. the tracker's own references are bound to
 * are libc's. The tracker then keeps its header path (preload/block.h:
 * exact for glibc's chunk layout only); any other allocator gets every
 * call forwarded to its own function unchanged and its blocks kept in the
 * side table (preload/malloc.c says why).
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "preload/tracker.h"

extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));
extern struct r_debug _r_debug;
/* glibc 2.35 and later: no lock (weak: the tracker loads into an older one) */
extern int _dl_find_object(void *pc, struct dl_find_object *o) __attribute__((weak));

struct next_alloc next_alloc;
static int next_done;		/* 1: next_alloc is set (published with release) */

/* What the lookup needs of one object. */
struct dynobj {
	uintptr_t base;
	const ElfW(Sym) *sym;
	const char *str;
	const uint32_t *gnu_hash, *hash;
	const uint16_t *versym;
};

/* d_ptr as the loader left it: relocated in a writable dynamic section,
 * as linked in a read-only one (the vDSO's). */
static uintptr_t dyn_ptr(uintptr_t base, uintptr_t v)
{
	return v < base ? v + base : v;
}

static bool dynobj_of(const struct link_map *m, struct dynobj *o)
{
	memset(o, 0, sizeof(*o));
	o->base = m->l_addr;
	if (!m->l_ld)
		return false;
	for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
		uintptr_t p = dyn_ptr(m->l_addr, d->d_un.d_ptr);

		switch (d->d_tag) {
		case DT_SYMTAB:
			o->sym = (const ElfW(Sym) *)p;
			break;
		case DT_STRTAB:
			o->str = (const char *)p;
			break;
		case DT_GNU_HASH:
			o->gnu_hash = (const uint32_t *)p;
			break;
		case DT_HASH:
			o->hash = (const uint32_t *)p;
			break;
		case DT_VERSYM:
			o->versym = (const uint16_t *)p;
			break;
		}
	}
	return o->sym && o->str && (o->gnu_hash || o->hash);
}

/* A definition the loader would bind an unversioned reference to. */
static bool sym_ok(const struct dynobj *o, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &o->sym[i];
	unsigned int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);

	if (s->st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
	    (bind != STB_GLOBAL && bind != STB_WEAK) || strcmp(o->str + s->st_name, name))
		return false;
	/* a hidden version (an old compatibility symbol) is not the default */
	return !o->versym || !(o->versym[i] & 0x8000);
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (uint8_t)*s;
		g = h & 0xf0000000;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* The symbol `name` defined by o; NULL: none. */
static const ElfW(Sym) *lookup(const struct dynobj *o, const char *name)
{
	if (o->gnu_hash) {
		const uint32_t *g = o->gnu_hash;
		uint32_t nbuckets = g[0], symoffset = g[1], bloom_size = g[2];
		const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(g + 4) + bloom_size);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = gnu_hash(name), i;

		if (!nbuckets)
			return NULL;
		i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t c = chain[i - symoffset];

			if ((c | 1) == (h | 1) && sym_ok(o, i, name))
				return &o->sym[i];
			if (c & 1)
				return NULL;
		}
	}
	{
		const uint32_t *hs = o->hash;
		uint32_t nbucket = hs[0], nchain = hs[1];
		const uint32_t *bucket = hs + 2, *chain = bucket + nbucket;

		if (!nbucket)
			return NULL;
		for (uint32_t i = bucket[sysv_hash(name) % nbucket], n = 0; i && i < nchain && n < nchain;
		     i = chain[i], n++)
			if (sym_ok(o, i, name))
				return &o->sym[i];
	}
	return NULL;
}

static void *sym_addr(const struct dynobj *o, const ElfW(Sym) *s)
{
	uintptr_t a = o->base + s->st_value;

	if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
		return ((void *(*)(void))a)();
	return (void *)a;
}

/* The first definition of `name` outside the tracker; *owner: its object. */
static void *find(const char *name, const struct link_map **owner)
{
	return next__find(name, (const void **)owner, NULL);
}

void *next__find(const char *name, const void **map, size_t *size)
{
	*map = NULL;
	for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
		struct dynobj o;
		const ElfW(Sym) *s;

		if (m->l_ld == _DYNAMIC || !dynobj_of(m, &o))
			continue;
		s = lookup(&o, name);
		if (s) {
			*map = m;
			if (size)
				*size = s->st_size;
			return sym_addr(&o, s);
		}
	}
	return NULL;
}

void *next__lookup(const void *map, const char *name, size_t *size)
{
	const struct link_map *m = map;
	struct dynobj o;
	const ElfW(Sym) *s;

	if (!m || m->l_ld == _DYNAMIC || !dynobj_of(m, &o) || !(s = lookup(&o, name)))
		return NULL;
	if (size)
		*size = s->st_size;
	return sym_addr(&o, s);
}

const void *next__exe(void)
{
	return _r_debug.r_map;
}

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

void next__init(void)
{
	const struct link_map *libc = NULL, *o;
	struct next_alloc n;
	void *lm;

	if (__atomic_load_n(&next_done, __ATOMIC_ACQUIRE))
		return;
	memset(&n, 0, sizeof(n));
	find("gnu_get_libc_version", &libc);
	lm = libc ? next__lookup(libc, "__libc_malloc", NULL) : NULL;
#define NEXT(field, name)						\
	do {								\
		n.field = (__typeof__(n.field))find(name, &o);		\
		if (n.field && o != libc)				\
			n.foreign = true;				\
		if (n.field && !strcmp(name, "malloc"))			\
			n.owner = o;					\
	} while (0)
	NEXT(malloc, "malloc");
	NEXT(free, "free");
	NEXT(calloc, "calloc");
	NEXT(realloc, "realloc");
	NEXT(memalign, "memalign");
	NEXT(aligned_alloc, "aligned_alloc");
	NEXT(posix_memalign, "posix_memalign");
	NEXT(valloc, "valloc");
	NEXT(pvalloc, "pvalloc");
	NEXT(usable, "malloc_usable_size");
#undef NEXT
	n.usable_own = n.usable && find("malloc_usable_size", &o) && o == n.owner;
	/* the tracker's own references to __libc_malloc & co. must land in libc */
	if (libc && (lm != (void *)__libc_malloc ||
		     next__lookup(libc, "__libc_free", NULL) != (void *)__libc_free ||
		     next__lookup(libc, "__libc_calloc", NULL) != (void *)__libc_calloc ||
		     next__lookup(libc, "__libc_realloc", NULL) != (void *)__libc_realloc ||
		     next__lookup(libc, "__libc_memalign", NULL) != (void *)__libc_memalign ||
		     next__lookup(libc, "__libc_valloc", NULL) != (void *)__libc_valloc ||
		     next__lookup(libc, "__libc_pvalloc", NULL) != (void *)__libc_pvalloc))
		n.foreign = true;
	if (!libc || !lm || !n.malloc || !n.free || !n.calloc || !n.realloc ||
	    (n.malloc == lm && !n.foreign)) {
		/* glibc's (or nothing readable: glibc's, as the library is linked) */
		n.foreign = false;
		n.malloc = __libc_malloc;
		n.free = __libc_free;
		n.calloc = __libc_calloc;
		n.realloc = __libc_realloc;
		n.memalign = __libc_memalign;
		n.valloc = __libc_valloc;
		n.pvalloc = __libc_pvalloc;
		n.usable_own = n.usable != NULL;
	}
	if (n.foreign && _dl_find_object) {
		/* its object: the mappings it makes are its heap's, not the program's */
		struct dl_find_object fo;

		if (!_dl_find_object(n.malloc, &fo)) {
			n.lo = (uintptr_t)fo.dlfo_map_start;
			n.hi = (uintptr_t)fo.dlfo_map_end;
		}
	}
	next_alloc = n;
	__atomic_store_n(&next_done, 1, __ATOMIC_RELEASE);
}
