#ifndef RSPROF_UTIL_HEAP_ENTRY_PATCH_H
#define RSPROF_UTIL_HEAP_ENTRY_PATCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * A jump written at a function's entry (x86-64), to code of rsprof's
 * choosing, the function still callable: its first instructions moved to a
 * trampoline (relative branches and RIP-relative operands re-aimed, capstone
 * decodes them) that jumps back past them. Both live in one page near the
 * function (a rel32 jump reaches it), laid out here and mapped in the
 * process by whoever writes it there.
 */
#define ENTRY_PAGE_MAX	1024

struct entry_page {
	uint64_t addr;			/* where it will be mapped */
	unsigned char code[ENTRY_PAGE_MAX];
	size_t len;
};

struct entry_patch {
	uint64_t at;			/* the function's entry */
	unsigned char bytes[24];	/* to write there */
	size_t len;			/* the entry's first len bytes: no thread may be inside them */
	uint64_t tramp;			/* the function as it was, in the page */
};

/*
 * Plan the jump at fn (code: its size bytes, as in the process) to `to`,
 * through a stub in page p. 0, or -ENOTSUP with *why (an instruction that
 * cannot be moved, a branch into the bytes the jump takes, the page out of
 * a rel32's reach) or -ENOSPC.
 */
int entry_patch__plan(struct entry_page *p, uint64_t fn, const unsigned char *code, size_t size,
		      uint64_t to, struct entry_patch *out, const char **why);

#endif
