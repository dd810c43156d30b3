#ifndef RSPROF_UTIL_SYMBOLS_PLT_H
#define RSPROF_UTIL_SYMBOLS_PLT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Names for the PLT stubs of an x86-64 ELF file, as perf gives them
 * ("clock_gettime@plt"): the stubs have no symbol of their own, so the
 * nearest one before them (_init, a sizeless symbol of .init) took their
 * samples. Each stub of .plt, .plt.sec and .plt.got jumps through its GOT
 * slot (jmp *disp32(%rip), after an endbr64 or a bnd prefix); the dynamic
 * relocation of that slot (R_X86_64_JUMP_SLOT or GLOB_DAT) names the
 * function. The lazy-binding stubs of .plt when .plt.sec exists, and the
 * PLT's header, jump through no relocated slot and get no name.
 */
struct Elf;

struct plt_sym {
	uint64_t addr;		/* runtime: the file's address + bias */
	uint32_t size;
	char *name;		/* "NAME@plt", malloc'd */
};

/*
 * The stubs of elf (loaded at bias) into *out (malloc'd, *n entries; the
 * caller frees each name and the array). 0 (also when there are none, or
 * the file is not x86-64) or -ENOMEM.
 */
int plt__symbols(struct Elf *elf, uint64_t bias, struct plt_sym **out, size_t *n);

#endif
