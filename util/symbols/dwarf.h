#ifndef RSPROF_UTIL_SYMBOLS_DWARF_H
#define RSPROF_UTIL_SYMBOLS_DWARF_H

#include <stdint.h>

/*
 * DWARF of one module through libdw: an address to its inline chain
 *. The resolver owns one struct dwarf_index for all modules; it
 * keeps, per compilation unit that was looked up, the sorted address ranges
 * of its functions, so that a lookup walks one function's DIE subtree
 * instead of the whole unit (dwarf_getscopes() walks the unit each time,
 * which on Rust's std unit costs milliseconds per address).
 */
struct Dwfl_Module;
struct symbol;
struct dwarf_index;

struct dwarf_index *dwarf_index__new(void);
/* NULL is fine. */
void dwarf_index__delete(struct dwarf_index *ix);

/*
 * Fill sym->frames, n_frames, chosen and mangled for the runtime address
 * addr of mod: frames[0] at the line table's file:line for addr and the
 * innermost inlined function, each outer frame at the DW_AT_call_file/line
 * of the inlined instance inside it. Names are demangled linkage names, else
 * DW_AT_name. Returns 0 when the line table knows addr, -ENOENT when the
 * module has no DWARF for it (sym untouched), -ENOMEM.
 */
int dwarf__resolve(struct dwarf_index *ix, struct Dwfl_Module *mod, uint64_t addr,
		   struct symbol *sym);

/*
 * 0 when mod has DWARF line information for a unit of the program's own
 * code (not a toolchain library unit: a Rust binary built without -g still
 * carries std's line tables), -ENOENT otherwise.
 */
int dwarf__has_own_lines(struct Dwfl_Module *mod);

#endif
