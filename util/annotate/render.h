#ifndef RSPROF_UTIL_ANNOTATE_RENDER_H
#define RSPROF_UTIL_ANNOTATE_RENDER_H

#include <stdbool.h>

/*
 * An annotation as styled lines (util/output/styled.h), printed by
 * `rsprof annotate --stdio` and paged by `rsprof annotate` on a terminal
 * and by the `a` key of `rsprof top`.
 *
 * Source view: CPU% (of every sample in the window, as `report` shows it),
 * Live and Allocated heap bytes, the line number and the line. Machine code
 * (--asm): each function's instructions with CPU%, their samples (and heap
 * of the allocation calls), the source line printed where it changes.
 * Lines holding >= 5 % of the function's (or file's) total are hot, >= 0.5 %
 * warm (perf annotate's colours).
 */
struct annotation;
struct styled_text;

struct ann_view {
	bool cpu, heap;		/* which columns */
	bool insns;		/* machine code instead of source lines */
	bool full_paths;	/* paths as recorded */
	const char *profile;	/* the profile's path, for the header */
	const char *window;	/* the time window shown ("1s..5s", "heap at 2s"), NULL: all */
};

/* *hot: the index in t of the hottest row (-1 when none). 0 or -ENOMEM. */
int annotation__render(const struct annotation *a, const struct ann_view *v,
		       struct styled_text *t, int *hot);

#endif
