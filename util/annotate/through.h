#ifndef RSPROF_UTIL_ANNOTATE_THROUGH_H
#define RSPROF_UTIL_ANNOTATE_THROUGH_H

#include <stdbool.h>
#include <stdint.h>

#include "util/annotate/annotate.h"
#include "util/strtab.h"

/*
 * What is spent through each function, line and instruction the profile's
 * call stacks name (db_query_stacks(): CPU stacks of a `record -g`
 * profile, heap allocation stacks), callees included: perf's "children",
 * pprof's "cum". A stack counts once for each function, each line of a
 * function and each (function, address) it passes through, even when it
 * recurses. Each frame's inline chain counts for every function in it, at
 * the line that function is on.
 */
struct db;
struct query_filter;

struct through {
	struct strtab names;	/* every function the stacks name */
	bool cpu, heap;		/* stacks of that kind deeper than one frame were seen */
	void *priv;
};

/* The stacks of the window of f (its pattern is not applied). 0, -ENOMEM or -RSPROF_EDB. */
int through__load(struct db *db, const struct query_filter *f, struct through **out);
void through__delete(struct through *t);	/* NULL ok */

/* fn's inclusive numbers; false (and zeros) when no stack names fn. */
bool through__func(const struct through *t, const char *fn, struct ann_counts *c);

/*
 * The function a stack passes through at file:line (the one with the most
 * samples and allocations there), NULL when none. file as the stacks have it.
 */
const char *through__func_at(const struct through *t, const char *file, int line);

/* Each line of fn that a stack passes through, with what went through it. */
typedef int (*through_line_cb)(void *ctx, const char *file, int line, const struct ann_counts *c);
int through__lines(const struct through *t, const char *fn, through_line_cb cb, void *ctx);

/* Each address of a frame of fn (a call, or the sampled instruction), likewise. */
typedef int (*through_addr_cb)(void *ctx, uint64_t addr, const struct ann_counts *c);
int through__addrs(const struct through *t, const char *fn, through_addr_cb cb, void *ctx);

#endif
