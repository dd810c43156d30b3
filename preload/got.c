/*
 * The allocator of a running process, redirected to the tracker through
 * the GOT of every loaded object (the tracker loaded by rsprof with
 * dlopen, preload/inject.c): the way heaptrack_inject does it, since a
 * library loaded late is not in the lookup order of objects bound long
 * ago.
 *
 * Each object's relocations (DT_JMPREL and DT_RELA: the PLT's slots, the
 * GOT's GLOB_DAT slots of address-taken functions, and R_X86_64_64 words of
 * data holding a function's address) against a function of the list below
 * are looked at, for objects that do not define the function themselves.
 * A slot is redirected when it holds the function the process binds the
 * name to (glibc's, or libstdc++'s operator new), or still its own PLT
 * stub (lazy binding, not resolved yet): never a slot bound elsewhere (an
 * object's own allocator, a symbol version it asked for). Undone the same
 * way: every slot holding the tracker's function gets the process's
 * binding back.
 *
 * Writes: an aligned 8-byte store, atomic for a thread reading the slot
 * at the same time. A slot in the object's RELRO part is written only once
 * the loader has made that part read-only (its relocation is complete),
 * with mprotect() around the store; one the loader is still relocating
 * (the page still writable) is left alone. The tracker's own object, the
 * loader and the vDSO are not touched. Objects are walked with
 * dl_iterate_phdr(), whose lock keeps them from being unloaded meanwhile;
 * only at the attach and after a dlopen(), where the loader's locks are
 * free for this thread.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "preload/sys.h"
#include "preload/tracker.h"

/* glibc's malloc: a slot of the malloc family is glibc's when it points into the object holding it. */
extern void *__libc_malloc(size_t n);
extern struct r_debug _r_debug;

static struct got_fn {
	const char *name;
	uintptr_t ours;		/* the tracker's function */
	uintptr_t bound;	/* the process's binding of the name (0: none) */
} fns[] = {
	{ "malloc", 0, 0 }, { "calloc", 0, 0 }, { "realloc", 0, 0 }, { "reallocarray", 0, 0 }, { "free", 0, 0 },
	{ "memalign", 0, 0 }, { "aligned_alloc", 0, 0 }, { "posix_memalign", 0, 0 }, { "valloc", 0, 0 },
	{ "pvalloc", 0, 0 }, { "malloc_usable_size", 0, 0 },
	{ "mmap", 0, 0 }, { "mmap64", 0, 0 }, { "munmap", 0, 0 }, { "mremap", 0, 0 },
	{ "_Znwm", 0, 0 }, { "_Znam", 0, 0 }, { "_ZnwmRKSt9nothrow_t", 0, 0 }, { "_ZnamRKSt9nothrow_t", 0, 0 },
	{ "_ZnwmSt11align_val_t", 0, 0 }, { "_ZnamSt11align_val_t", 0, 0 },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", 0, 0 }, { "_ZnamSt11align_val_tRKSt9nothrow_t", 0, 0 },
	{ "dlopen", 0, 0 },
};
#define N_FNS	(sizeof(fns) / sizeof(fns[0]))

static uintptr_t self_base, ld_base;
static uintptr_t libc_lo, libc_hi;	/* glibc's mapped range */
static int got_lock;

/* Is the word at a writable as it is (tried by writing back what it holds)? */
static bool writable(uintptr_t a, uint64_t v)
{
	struct iovec local = { .iov_base = &v, .iov_len = sizeof(v) };
	struct iovec remote = { .iov_base = (void *)a, .iov_len = sizeof(v) };

	return syscall(SYS_process_vm_writev, sys_getpid(), &local, 1, &remote, 1, 0) ==
	       (long)sizeof(v);
}

/* The extent of the object at base whose headers are ph[0..n). */
static void extent(uintptr_t base, const ElfW(Phdr) *ph, int n, uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (int i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (base + ph[i].p_vaddr < *lo)
			*lo = base + ph[i].p_vaddr;
		if (base + ph[i].p_vaddr + ph[i].p_memsz > *hi)
			*hi = base + ph[i].p_vaddr + ph[i].p_memsz;
	}
}

struct object {
	uintptr_t base, lo, hi;
	uintptr_t relro_lo, relro_hi;	/* the pages the loader makes read-only */
	const ElfW(Phdr) *ph;
	int n_ph;
	const ElfW(Sym) *sym;
	const char *str;
	size_t strsz;
};

/* Is a inside a writable segment of o? */
static bool in_data(const struct object *o, uintptr_t a)
{
	for (int i = 0; i < o->n_ph; i++)
		if (o->ph[i].p_type == PT_LOAD && (o->ph[i].p_flags & PF_W) &&
		    a - (o->base + o->ph[i].p_vaddr) < o->ph[i].p_memsz)
			return true;
	return false;
}

/* Write v into the slot at a of o. false: left alone. */
static bool slot_write(const struct object *o, uintptr_t a, uint64_t old, uint64_t v)
{
	uintptr_t page = a & ~(uintptr_t)4095;

	if ((a & 7) || !in_data(o, a))
		return false;
	if (a < o->relro_lo || a >= o->relro_hi) {
		__atomic_store_n((uint64_t *)a, v, __ATOMIC_RELEASE);
		return true;
	}
	/* RELRO: writable still means the loader is not done with the object */
	if (writable(a, old))
		return false;
	if (sys_mprotect((void *)page, 4096, PROT_READ | PROT_WRITE))
		return false;
	__atomic_store_n((uint64_t *)a, v, __ATOMIC_RELEASE);
	sys_mprotect((void *)page, 4096, PROT_READ);
	return true;
}

static struct got_fn *fn_named(const char *s)
{
	for (size_t i = 0; i < N_FNS; i++)
		if (fns[i].ours && s[0] == fns[i].name[0] && !strcmp(s, fns[i].name))
			return &fns[i];
	return NULL;
}

/* Redirect (restore false) or restore the slot of relocation r of o. */
static size_t one(const struct object *o, const ElfW(Rela) *r, bool restore)
{
	unsigned long type = ELF64_R_TYPE(r->r_info), si = ELF64_R_SYM(r->r_info);
	const ElfW(Sym) *s;
	struct got_fn *f;
	uintptr_t a, v;

	if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64) ||
	    !si || (type == R_X86_64_64 && r->r_addend))
		return 0;
	s = &o->sym[si];
	if (s->st_name >= o->strsz)
		return 0;
	/* (a relocation against a function the object defines itself is there
	 * to be interposed, as glibc's own calls to malloc are: the slot holds
	 * the process's binding, or the object's own PLT stub) */
	f = fn_named(o->str + s->st_name);
	if (!f)
		return 0;
	a = o->base + r->r_offset;
	if (a < o->lo || a + 8 > o->hi)
		return 0;
	v = __atomic_load_n((uintptr_t *)a, __ATOMIC_ACQUIRE);
	if (restore)
		return v == f->ours && f->bound && slot_write(o, a, v, f->bound);
	if (v == f->ours || !v)
		return 0;
	/* the process's binding; glibc's function (a versioned name); its own PLT stub */
	if (v != f->bound && !(got__glibc(v) && got__glibc(f->bound)) &&
	    !(type == R_X86_64_JUMP_SLOT && v - o->lo < o->hi - o->lo &&
	      (s->st_shndx == SHN_UNDEF || v != o->base + s->st_value)))
		return 0;
	return slot_write(o, a, v, f->ours);
}

struct walk {
	bool restore;
	size_t slots, objects;
};

static int object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct walk *w = data;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Rela) *rel[2] = { NULL, NULL };
	size_t relsz[2] = { 0, 0 };
	struct object o = { .base = info->dlpi_addr, .ph = info->dlpi_phdr,
			    .n_ph = info->dlpi_phnum };

	if (o.base == self_base || o.base == ld_base || !info->dlpi_name ||
	    !strncmp(info->dlpi_name, "linux-vdso", 10))
		return 0;
	extent(o.base, o.ph, o.n_ph, &o.lo, &o.hi);
	for (int i = 0; i < o.n_ph; i++) {
		if (o.ph[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(o.base + o.ph[i].p_vaddr);
		else if (o.ph[i].p_type == PT_GNU_RELRO) {
			o.relro_lo = (o.base + o.ph[i].p_vaddr) & ~(uintptr_t)4095;
			o.relro_hi = (o.base + o.ph[i].p_vaddr + o.ph[i].p_memsz) & ~(uintptr_t)4095;
		}
	}
	if (!dyn || o.lo >= o.hi)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: o.sym = (const void *)next__dyn_ptr(o.base, dyn->d_un.d_ptr); break;
		case DT_STRTAB: o.str = (const void *)next__dyn_ptr(o.base, dyn->d_un.d_ptr); break;
		case DT_STRSZ: o.strsz = dyn->d_un.d_val; break;
		case DT_JMPREL: rel[0] = (const void *)next__dyn_ptr(o.base, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: relsz[0] = dyn->d_un.d_val; break;
		case DT_RELA: rel[1] = (const void *)next__dyn_ptr(o.base, dyn->d_un.d_ptr); break;
		case DT_RELASZ: relsz[1] = dyn->d_un.d_val; break;
		case DT_PLTREL: if (dyn->d_un.d_val != DT_RELA) return 0; break;
		}
	}
	if (!o.sym || !o.str)
		return 0;
	w->objects++;
	for (int k = 0; k < 2; k++) {
		if (!rel[k] || (uintptr_t)rel[k] - o.lo >= o.hi - o.lo)
			continue;
		for (size_t i = 0; i < relsz[k] / sizeof(ElfW(Rela)); i++)
			w->slots += one(&o, &rel[k][i], w->restore);
	}
	return 0;
}

/* The objects holding the addresses of want[]: their base and extent. */
struct find {
	const void *want[3];
	uintptr_t base[3], lo[3], hi[3];
	int found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	uintptr_t lo, hi;

	extent(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &lo, &hi);
	for (int i = 0; i < 3; i++) {
		if ((uintptr_t)f->want[i] - lo < hi - lo) {
			f->base[i] = info->dlpi_addr;
			f->lo[i] = lo;
			f->hi[i] = hi;
			f->found |= 1 << i;
		}
	}
	return 0;
}

int got__init(void *(*ours)(const char *name))
{
	struct find f = { .want = { (const void *)got__init, (const void *)__libc_malloc,
				    &_r_debug } };

	dl_iterate_phdr(find_cb, &f);
	if (f.found != 7)
		return -1;
	self_base = f.base[0];
	libc_lo = f.lo[1];
	libc_hi = f.hi[1];
	ld_base = f.base[2];
	for (size_t i = 0; i < N_FNS; i++) {
		fns[i].ours = (uintptr_t)ours(fns[i].name);
		fns[i].bound = (uintptr_t)dlsym(RTLD_DEFAULT, fns[i].name);
		/* nothing of that name in the process; glibc's names bound
		 * elsewhere (operator new is libstdc++'s, or the program's) */
		if (!fns[i].bound || (fns[i].name[0] != '_' && !got__glibc(fns[i].bound)))
			fns[i].ours = 0;
	}
	return 0;
}

bool got__glibc(uintptr_t a)
{
	return a - libc_lo < libc_hi - libc_lo;
}

uintptr_t got__bound(const char *name)
{
	for (size_t i = 0; i < N_FNS; i++)
		if (!strcmp(fns[i].name, name))
			return fns[i].bound;
	return 0;
}

size_t got__redirect(bool restore, size_t *objects)
{
	struct walk w = { .restore = restore };

	while (__atomic_exchange_n(&got_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	dl_iterate_phdr(object_cb, &w);
	__atomic_store_n(&got_lock, 0, __ATOMIC_RELEASE);
	if (objects)
		*objects = w.objects;
	return w.slots;
}
