#ifndef RSPROF_UTIL_OUTPUT_FOLDED_H
#define RSPROF_UTIL_OUTPUT_FOLDED_H

#include <stdio.h>

/*
 * Brendan Gregg's folded stacks (`report --format folded`): one
 * line "outermost;...;innermost VALUE" per distinct stack of names, as
 * flamegraph.pl and speedscope read them. Stacks of different addresses
 * with the same names (two call sites in one line, one function reached
 * through different addresses) are one line, their values summed, as
 * stackcollapse-perf.pl gives them; lines in byte order of the stack.
 */
struct folded;
struct prof_stack;

struct folded *folded__new(void);	/* NULL on -ENOMEM */
/* 0 or -ENOMEM. Stacks with value <= 0 are left out. */
int folded__add(struct folded *fo, const struct prof_stack *s);
/* 0, or -EIO when writing to f failed. */
int folded__write(struct folded *fo, FILE *f);
void folded__delete(struct folded *fo);	/* NULL ok */

#endif
