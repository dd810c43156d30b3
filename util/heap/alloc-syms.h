#ifndef RSPROF_UTIL_HEAP_ALLOC_SYMS_H
#define RSPROF_UTIL_HEAP_ALLOC_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/heap/heap.h"

/*
 * The allocator entry points of a target, found in the symbol tables of its
 * ELF files with libelf (by reading them, not by guessing names):
 *
 *  rust: __rust_alloc, __rust_alloc_zeroed, __rust_realloc, __rust_dealloc
 *        in the executable, under their plain names and under current
 *        rustc's v0-mangled ones (_RNvCs<hash>_7___rustc12___rust_alloc,
 *        i.e. __rustc::__rust_alloc);
 *  libc: malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 *        memalign in the executable when it has its own (static build),
 *        else in the allocator library it links (libjemalloc.so.2...),
 *        else in the libc it maps (or, before exec, the one it will load);
 *        and C++'s operator new in libstdc++ when the target uses it
 *        (libstdc++ keeps no frame pointers: probed there, the caller of
 *        new is the user's line; the malloc inside counts nothing more).
 *
 * A Rust program's allocator ends in malloc: only one family is probed, so
 * no allocation is counted twice.
 *
 * Each probe point is moved past instructions the kernel would have to
 * single-step (≈11 µs a hit instead of ≈1 µs for an emulated one) to the
 * first it emulates (alloc_syms__probe_point(), decoded with capstone):
 * glibc's free past its NULL check (a NULL free is nothing to count), its
 * aligned_alloc to the je after a cmpb, rustc's jemalloc malloc to the
 * jae after its size check.
 */
struct alloc_probe {
	char *path;		/* the ELF file holding the function */
	char *name;		/* the symbol as found (mangled) */
	uint64_t offset;	/* file offset of the probed instruction */
	unsigned int skip;	/* bytes skipped from the function's entry */
	unsigned int kind;	/* enum heap_kind (bpf/heap.h) */
	bool is_free;		/* entry probe only; else entry + return */
	bool optional;		/* aligned allocation, C++ new: may fail to attach */
	bool single_step;	/* no instruction the kernel emulates: ≈11 µs a call */
};

struct alloc_syms {
	const char *family;	/* "rust" or "libc" */
	/*
	 * The probed free is glibc's (its file defines __libc_free): the
	 * size of a block allocated before tracking can be read from
	 * glibc's chunk header. Not with jemalloc, mimalloc, tcmalloc...
	 */
	bool glibc_free;
	struct alloc_probe *v;
	size_t n;
};

/*
 * Find the probes of family `which` (auto: rust when the executable has the
 * Rust allocator shims, else libc). pid > 0 and !before_exec: the libc is
 * the one in /proc/PID/maps; otherwise the one the executable names in
 * DT_NEEDED, looked up where rsprof's own libc lives.
 * Returns 0, -RSPROF_ENODEBUG (no allocator symbol; printed) or -errno.
 */
int alloc_syms__find(const char *exe, pid_t pid, bool before_exec, enum heap_probes which,
		     struct alloc_syms **out);
void alloc_syms__delete(struct alloc_syms *s);

/*
 * What the executable says about its allocator, for the choice between the
 * in-process tracker and uprobes (util/heap/preload.c).
 */
struct alloc_exe {
	bool is_elf;
	bool is_static;		/* no PT_INTERP: no dynamic loader, no LD_PRELOAD */
	bool own_malloc;	/* defines and exports malloc or free: it wins over a preload */
	bool rust;		/* has the Rust allocator shims */
	bool rust_global;	/* ... and a #[global_allocator] (no __rdl_alloc, or __rg_alloc) */
	char alloc_lib[64];	/* an allocator library in DT_NEEDED (libjemalloc.so.2), or "" */
	char alloc_name[16];	/* jemalloc, mimalloc, ... when its symbols are in the executable */
};

/* Is a file of that base name an allocator library that replaces malloc (libjemalloc.so.2...)? */
bool alloc_syms__is_alloc_lib(const char *base);

/* Read exe's program headers, DT_NEEDED and symbols. 0 or -errno (printed). */
int alloc_syms__inspect(const char *exe, struct alloc_exe *info);

/*
 * Where in a function to put its probe (code: its bytes from the entry;
 * kind: enum heap_kind): *skip bytes in, at the first instruction the
 * kernel emulates (a push of a register, a nop, a relative jmp, call or
 * jcc) that every call goes through before anything changes the registers
 * the probe reads (its arguments, %rsp, %rbp) and that no branch of the
 * function comes back to; free's NULL check is stepped over first. None:
 * *skip 0 and *emulated false, the kernel single-steps the entry (≈11 µs a
 * call instead of ≈1). 0 or -errno. Exposed for the unit test.
 */
int alloc_syms__probe_point(const uint8_t *code, size_t len, unsigned int kind, bool is_free,
			    unsigned int *skip, bool *emulated);

#endif
