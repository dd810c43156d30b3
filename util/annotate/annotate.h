#ifndef RSPROF_UTIL_ANNOTATE_ANNOTATE_H
#define RSPROF_UTIL_ANNOTATE_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/db/read/addrs.h"
#include "util/db/read/query.h"

/*
 * `rsprof annotate`: a function's (or a file's) source with each line's
 * CPU samples, live and allocated heap, and optionally its machine code
 * with each instruction's samples (the profile stores one cpu_samples row
 * per sampled IP, so an instruction's count is the rows inside its bytes).
 *
 * A line's numbers are those of the addresses whose symbols row names that
 * file and line: the same rows `report` adds up, so a line's CPU share here
 * is its share there. Beside them, what went through the line (callees
 * included) from the profile's call stacks (util/annotate/through.h): any
 * function a stack names can be annotated, not only those with samples or
 * allocations of their own. The machine code is read from the module files on
 * disk, found through the profile's `map` table (which must still match
 * the files: same build), and decoded with capstone; the lines of a
 * function come from the DWARF of those files, else from the profile.
 */
struct db;
struct resolver;
struct source_paths;
struct through;

struct ann_opts {
	const char *target;		/* FUNCTION or FILE[:LINE] */
	bool insns;			/* machine code too (--asm) */
	const struct source_paths *paths;
	const char *exe;		/* meta exe_path (DWARF of the main executable) */
	int context;			/* lines around FILE:LINE when no function holds it */
};

struct ann_counts {
	uint64_t samples;
	int64_t live_bytes, alloc_bytes, alloc_count;
};

struct ann_line {
	int line;
	const char *text;	/* NULL when the source is not readable or shorter */
	struct ann_counts c;
	struct ann_counts incl;	/* through the line, callees included (the stacks' numbers) */
	bool target;		/* the LINE of FILE:LINE */
};

/* The lines shown of one source file. */
struct ann_block {
	char *file;		/* as recorded */
	char *found;		/* the file read on this machine; NULL when not found */
	int err;		/* why it could not be read (negative errno), or 0 */
	struct ann_line *lines;	/* consecutive line numbers */
	int n;
	struct ann_counts c;	/* sum of the lines */
	struct ann_counts incl;
};

struct ann_insn {
	uint64_t addr;
	int size;
	char text[224];		/* "mnemonic operands", AT&T; a call's "<target>" */
	struct ann_counts c;
	struct ann_counts incl;	/* through it: a call's callees included */
	const char *file;	/* its source line (the reported frame); NULL unknown */
	int line;
};

/* One function of machine code (an ELF symbol). */
struct ann_func {
	char *name;		/* demangled */
	char *module;
	uint64_t start, end;	/* runtime addresses, as in the profile */
	struct ann_insn *insns;
	size_t n;
	struct ann_counts c;
};

struct annotation {
	char *function;		/* the function annotated; NULL for a whole file */
	char *file;		/* the file annotated (FILE[:LINE]), else NULL */
	int line;		/* the LINE of FILE:LINE, else 0 */
	struct ann_block *blocks;
	int n_blocks;
	struct ann_func *funcs;	/* with ann_opts.insns */
	int n_funcs;
	struct ann_counts c;	/* the function's (or file's) own numbers */
	struct ann_counts incl;	/* the function's with its callees (once per stack) */
	bool incl_cpu;		/* incl has CPU numbers: the profile has `record -g` stacks */
	bool incl_heap;		/* incl has heap numbers: the profile has allocation stacks */
	struct addr_totals totals;	/* the whole window's: shares are of these */
	const char *code_note;	/* why machine code or DWARF lines are missing, or NULL */
	struct resolver *res;	/* private */
	struct source **src;	/* private: one per block */
	void *rows;		/* private */
	struct through *through;	/* private */
};

/*
 * Builds the annotation of o->target over the window of f. Errors are
 * printed: -ENOENT (no such function or file in the profile), -RSPROF_EUSAGE
 * (the name matches several; they are listed), -ENOMEM, -RSPROF_EDB.
 */
int annotation__new(struct db *db, const struct query_filter *f, const struct ann_opts *o,
		    struct annotation **out);
void annotation__delete(struct annotation *a);	/* NULL ok */

#endif
