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

/*
 * The same from a text file of one symbol per line, the names copied:
 * KALLSYMS, /proc/kallsyms ("ADDR TYPE NAME [MODULE]", functions only: t/T/w/W),
 * or PERF_MAP, a JIT's /tmp/perf-PID.map ("START SIZE NAME", hex, the
 * name may hold spaces), read from f to its end (the caller closes it).
 * NULL when it holds no symbol (/proc/kallsyms shows zeros to those
 * kptr_restrict hides it from) or on -ENOMEM.
 */
#include <stdio.h>
enum symtab_text { SYMTAB_KALLSYMS, SYMTAB_PERF_MAP };
struct symtab *symtab__from_text(FILE *f, enum symtab_text kind);
void symtab__delete(struct symtab *st);

/*
 * The name (as in the ELF file, owned by libdwfl or the symtab) of the function holding
 * the runtime address addr, or NULL. Where several names share an address,
 * the public one wins: fewer leading underscores, then global over weak
 * over local (getpid rather than __getpid or __GI___getpid).
 */
const char *symtab__find(const struct symtab *st, uint64_t addr);

/*
 * How many function symbols of the file's own the table holds (symtab__new()
 * adds PLT stubs, "NAME@plt", which a stripped executable has too: not counted).
 */
#include <stddef.h>
size_t symtab__functions(const struct symtab *st);

/*
 * The same, with the function's runtime extent [*start, *end) (a sizeless
 * symbol ends at the next symbol). start and end may be NULL.
 */
const char *symtab__find_range(const struct symtab *st, uint64_t addr, uint64_t *start,
			       uint64_t *end);

#endif
