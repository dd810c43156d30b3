#ifndef RSPROF_UTIL_SYMBOLS_KERNEL_H
#define RSPROF_UTIL_SYMBOLS_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "util/symbols/symbol.h"

/*
 * Kernel addresses (samples taken while the target was in a system call or
 * a fault): function names from /proc/kallsyms when it shows addresses to
 * us (root, or kernel.kptr_restrict 0), module "[kernel.kallsyms]" as perf
 * names it; otherwise one "[kernel]" for all of them.
 */
struct kernel_syms;

/* Is addr in the kernel's half of the address space (x86-64)? */
static inline bool kernel_syms__is_kernel(uint64_t addr)
{
	return addr >= 0xffff800000000000ULL;
}

/*
 * kallsyms is read now (before rsprof drops the capabilities that let it
 * see the addresses) when load, else at the first kernel address. NULL on
 * -ENOMEM.
 */
struct kernel_syms *kernel_syms__new(bool load);
/* The symbol of addr, cached; owned by k. NULL only on -ENOMEM. */
const struct symbol *kernel_syms__resolve(struct kernel_syms *k, uint64_t addr);
void kernel_syms__delete(struct kernel_syms *k);

#endif
