#ifndef RSPROF_UTIL_SYMBOLS_RESOLVER_H
#define RSPROF_UTIL_SYMBOLS_RESOLVER_H

#include <stdint.h>
#include <sys/types.h>

#include "util/symbols/symbol.h"

/*
 * Address to source line for one target process: the executable
 * and every shared library it maps, each with its own load bias from
 * /proc/PID/maps, through libdwfl; symbol-table names where there is no
 * DWARF; demangled names; results cached.
 *
 * The mappings are read at resolver__new() and again by
 * resolver__refresh_maps() (the recorder calls it when an address falls in
 * no known mapping, e.g. after a dlopen), and kept after the target has
 * exited, so the last checkpoint still resolves.
 */
struct resolver;
struct maps;

int resolver__new(pid_t pid, struct resolver **out);

/*
 * A resolver for mappings the caller keeps (the recorder builds them from
 * perf's mmap2 records, so an exec or a short-lived process is resolved
 * against its own images): m is taken (freed with the resolver), exe is
 * the main executable's path as mapped, pid the process whose root and
 * perf map the files are looked up in while it runs.
 */
int resolver__new_maps(pid_t pid, const char *exe, struct maps *m, struct resolver **out);

/*
 * The caller's mappings changed (a new library): m replaces the old ones
 * (taken), new modules are reported, unresolved cached addresses looked up
 * again. 0 or -errno.
 */
int resolver__set_maps(struct resolver *r, struct maps *m);
/* The mapping holding addr in the resolver's maps; NULL: none. */
const struct map *resolver__map_of(const struct resolver *r, uint64_t addr);
void resolver__delete(struct resolver *r);

/*
 * A resolver for a recorded process, which may be long gone: the mappings
 * are the profile's (its `map` table, loaded into maps, which the resolver
 * takes over and frees, also on error), the files are opened by their
 * recorded paths on this machine. exe (meta exe_path, may be NULL) is the
 * main executable, whose DWARF is read wherever it is.
 */
int resolver__new_offline(struct maps *maps, const char *exe, struct resolver **out);

/*
 * Re-read /proc/PID/maps; 0, or -errno when it cannot be read (target gone).
 * A resolver made by resolver__new_maps() does nothing here (0).
 * New modules (dlopen) are added and unresolved cached addresses looked up
 * again; after an execve() (a new /proc/PID/exe) every module and cached
 * result of the old program is dropped. Symbols returned before stay valid
 * until resolver__delete().
 */
int resolver__refresh_maps(struct resolver *r);

/*
 * The symbol of addr, from the cache or resolved now. Never NULL except on
 * -ENOMEM; an address in no mapping gives a symbol with module NULL and one
 * empty frame. The symbol belongs to the resolver (freed by
 * resolver__delete()).
 */
const struct symbol *resolver__resolve(struct resolver *r, uint64_t addr);

/*
 * Debug information of the main executable: 0 when it has DWARF line info,
 * 1 when it has only a symbol table (function-level results; the caller
 * warns), -RSPROF_ENODEBUG when it has neither. Prints nothing.
 */
int resolver__check_debuginfo(struct resolver *r);

/* The frame-pointer census of the executable's own code (frame-pointers.h); 0 or -ENOENT. */
struct fp_census;
int resolver__frame_pointers(struct resolver *r, struct fp_census *c);

/*
 * The machine code of the function (ELF symbol) holding the runtime address
 * addr, as the module file on disk holds it: [start, end) in runtime
 * addresses, bytes (end - start of them) owned by the resolver until
 * resolver__delete(). 0, or -ENOENT when addr is in no module that could be
 * opened, in no function symbol, or outside the file's code sections.
 */
struct code_range {
	uint64_t start, end;
	const unsigned char *bytes;
	const char *name;	/* the symbol's (mangled) name */
	const char *module;	/* path of the module file */
};

int resolver__code(struct resolver *r, uint64_t addr, struct code_range *out);

/*
 * The CFI rule (util/unwind/cfi.h) in effect at code address pc (for a
 * return address, ask at the call: the address - 1), read from the
 * module file's .eh_frame and cached; CFI_OTHER when unknown.
 */
uint64_t resolver__cfi_rule(struct resolver *r, uint64_t pc);

/* The mappings as last read (for the `map` table). */
/*
 * Give back the resident pages of the files read so far (they count in
 * rsprof's own resident memory); the next lookups read theirs again from
 * the page cache.
 */
void resolver__release_pages(struct resolver *r);

const struct maps *resolver__maps(const struct resolver *r);

#endif
