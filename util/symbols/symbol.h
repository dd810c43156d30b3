#ifndef RSPROF_UTIL_SYMBOLS_SYMBOL_H
#define RSPROF_UTIL_SYMBOLS_SYMBOL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What one code address of the target means: its inline chain and the frame
 * of the user's own code that rsprof reports.
 *
 * frames[0] is the innermost inlined location (where the instruction's line
 * table entry points), frames[n_frames - 1] the outermost (the real,
 * out-of-line function). frames[chosen] is the first frame, going outward,
 * whose file is not toolchain library source (Rust core/alloc/std, system
 * headers) and whose line is not 0 (the compiler's "no line"); else the
 * first such frame with line 0; when every frame is toolchain source,
 * chosen is 0.
 * file is the full path as DWARF names it (NULL when unknown), function the
 * demangled name (NULL when unknown).
 */
struct frame {
	char *file;
	int line;		/* 0 when unknown */
	char *function;
};

struct symbol {
	uint64_t addr;		/* the address as the target saw it (runtime, ASLR included) */
	char *module;		/* path of the mapped object, NULL when in no mapping */
	char *mangled;		/* linkage name of the outermost function, NULL if none */
	struct frame *frames;
	int n_frames;		/* >= 1; an unresolved address has one frame of NULLs */
	int chosen;
	int decl_line;		/* where the outermost function is declared (DWARF), 0 unknown */
	bool has_debuginfo;	/* false: function from the symbol table only, no line */
};

/* The reported frame. */
static inline const struct frame *symbol__frame(const struct symbol *s)
{
	return &s->frames[s->chosen];
}

/* A deep copy of s under address addr (it owns nothing of s's); NULL: no memory. */
struct symbol *symbol__copy(const struct symbol *s, uint64_t addr);

/* Frees the strings, the frames and s itself; NULL is fine. */
void symbol__delete(struct symbol *s);

#endif
