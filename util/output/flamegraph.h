#ifndef RSPROF_UTIL_OUTPUT_FLAMEGRAPH_H
#define RSPROF_UTIL_OUTPUT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A flame graph as one self-contained SVG (no external file, no network):
 * the call stacks merged into a tree of frames, each as wide as its share,
 * callers below callees; a script in the document zooms into a frame on a
 * click, searches names (a regular expression) and shows each frame's
 * function, location (file:line of its call site, or of the sampled line),
 * value and share in a tooltip and the details line. Inline frames are
 * frames of their own, as `report --format folded` writes them.
 *
 * Differential: the stacks of a base (A) added with flamegraph__add_base(),
 * those of B with flamegraph__add(); widths are B's, colours the change of
 * each frame's share from A to B (red: grew, blue: shrank), frames only in
 * A are left out (their loss shows as blue in their callers).
 */
struct flamegraph;
struct prof_stack;

enum flamegraph_kind {
	FG_CPU,		/* samples */
	FG_HEAP,	/* bytes */
	FG_COUNT,	/* allocations */
};

struct flamegraph *flamegraph__new(enum flamegraph_kind kind);	/* NULL on -ENOMEM */
/* 0 or -ENOMEM; stacks with value <= 0 are left out. value: what is drawn. */
int flamegraph__add(struct flamegraph *fg, const struct prof_stack *s, int64_t value);
int flamegraph__add_base(struct flamegraph *fg, const struct prof_stack *s, int64_t value);
/* The frames drawn and those too narrow to draw (merged into their caller). */
void flamegraph__counts(const struct flamegraph *fg, uint64_t *drawn, uint64_t *hidden);
/* The document to f (title, subtitle: XML-escaped here). 0, -ENOMEM or -EIO. */
int flamegraph__write(struct flamegraph *fg, FILE *f, const char *title, const char *subtitle);
void flamegraph__delete(struct flamegraph *fg);	/* NULL ok */

#endif
