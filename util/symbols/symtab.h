#ifndef RSPROF_UTIL_SYMBOLS_SYMTAB_H
#define RSPROF_UTIL_SYMBOLS_SYMTAB_H

#include <stdint.h>

/*
 * The function symbols of one module (.symtab, else .dynsym, as libdwfl
 * finds them: in the file, or in a separate debug file by build-id), sorted
 * by runtime address for binary search. dwfl_module_addrinfo() scans the
 * whole table on each call, which costs ~0.2 ms per lookup in libc.
 */
struct Dwfl_Module;
struct symtab;

/* NULL when the module has no function symbols or on -ENOMEM. */
struct symtab *symtab__new(struct Dwfl_Module *mod);
void symtab__delete(struct symtab *st);

/*
 * The name (as in the ELF file, owned by libdwfl) of the function holding
 * the runtime address addr, or NULL. Where several names share an address,
 * the public one wins: fewer leading underscores, then global over weak
 * over local (getpid rather than __getpid or __GI___getpid).
 */
const char *symtab__find(const struct symtab *st, uint64_t addr);

/*
 * The same, with the function's runtime extent [*start, *end) (a sizeless
 * symbol ends at the next symbol). start and end may be NULL.
 */
const char *symtab__find_range(const struct symtab *st, uint64_t addr, uint64_t *start,
			       uint64_t *end);

#endif
