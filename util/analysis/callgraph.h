#ifndef RSPROF_UTIL_ANALYSIS_CALLGRAPH_H
#define RSPROF_UTIL_ANALYSIS_CALLGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "util/db/read/query.h"

/*
 * Call graphs from a profile's stacks (`report -g`, `--callers`,
 * `--callees`; the `c` key of `top`): CPU samples per stack of a
 * `record -g` profile, or live heap bytes per allocation stack, read
 * through db_query_stacks(). A stack's frames become function names
 * (inlined functions are frames of their own, as perf and pprof show them);
 * a frame without a name is "[module]".
 *
 * Per function: self (the stacks where it is the innermost frame) and
 * total, perf's "children" (the stacks it is on, counted once even when it
 * recurses). Trees rooted at one function: its callees (outermost
 * occurrence in each stack, inward; what it is left doing itself is a
 * "[self]" child) or its callers (innermost occurrence, outward). Every
 * node's value is the sum of the stacks through it, so a node's children
 * add up to it.
 */
struct db;

struct cg_func {
	char *name;
	int64_t self, total;
	const char *file;	/* where it was seen first (the heaviest stack) */
	int line;
};

struct cg_node {
	int func;		/* index in funcs; -1 for "[self]" */
	int64_t value;
	const char *file;	/* the call site (callee trees: in the parent; caller
				 * trees: in this caller), from the heaviest stack */
	int line;
	int child, next;	/* first child, next sibling (indices in nodes), -1 */
};

struct callgraph {
	bool heap;		/* values are live bytes, else samples */
	bool has_stacks;	/* the file has call stacks (else every stack is one frame) */
	int64_t total;		/* all stacks of the window */
	struct cg_func *funcs;
	int n_funcs;
	struct cg_node *nodes;	/* trees made by callgraph__tree() */
	int n_nodes;
	void *priv;
};

/* Every stack of the window of f (its pattern is not applied). 0, -ENOMEM or -RSPROF_EDB. */
int callgraph__load(struct db *db, const struct query_filter *f, bool heap,
		    struct callgraph **out);
void callgraph__delete(struct callgraph *cg);	/* NULL ok */

/*
 * The function named want (util/symbols/funcname.h levels): its index in
 * *func. Prints the error: -ENOENT (none), -RSPROF_EUSAGE (several; listed).
 */
int callgraph__find(const struct callgraph *cg, const char *want, int *func);

enum cg_dir {
	CG_CALLEES,
	CG_CALLERS,
};

/* Builds the tree of func in dir; *root is its node (value = the function's total). */
int callgraph__tree(struct callgraph *cg, int func, enum cg_dir dir, int *root);

/* Indices of funcs sorted by total, then self, largest first (malloc'd, n_funcs of them). */
int *callgraph__by_total(const struct callgraph *cg);

#endif
