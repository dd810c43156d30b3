#ifndef RSPROF_UTIL_SYMBOLS_FILEPAGES_H
#define RSPROF_UTIL_SYMBOLS_FILEPAGES_H

#include <stddef.h>

struct Elf;

/*
 * Take the pages of a file mapped by libelf out of our RSS:
 * looking up names and lines touches pages all over a 150 MB library
 * (librustc_driver, libLLVM) and its debug file, and they stay resident
 * for the rest of the recording although the next lookups read a few.
 *
 * Only the pages that are still the file's are dropped (MADV_DONTNEED: a
 * later read faults the same bytes in from the page cache); a page libelf
 * wrote to (libelf maps MAP_PRIVATE and may update a section header in
 * place) is private memory now and is left alone, as /proc/self/pagemap
 * tells. MADV_PAGEOUT would not do: it skips the pages the target maps
 * too, and those are most of them.
 */
void filepages__release(void *start, size_t len);

/* The same for the whole file of elf, when libelf has it mapped. */
void filepages__release_elf(struct Elf *elf);

#endif
