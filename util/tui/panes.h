#ifndef RSPROF_UTIL_TUI_PANES_H
#define RSPROF_UTIL_TUI_PANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What `rsprof top` opens over its tables for the selected row, as styled
 * lines for the pager (util/tui/pager.h): the row's source annotated (key
 * a, `rsprof annotate FILE:LINE`) and the callers of its function (key c,
 * `rsprof report --callers`). Read through the live view's own connection
 * while a recorder may still be writing. When there is nothing to show (no
 * call stacks, a location without a function), the lines say why.
 */
struct db;
struct live_row;
struct styled_text;

struct pane_ctx {
	struct db *db;
	const char *path;	/* the profile's file, for the header */
	const char *exe;	/* meta exe_path */
	bool heap;		/* the row is a heap site (heap stacks, heap columns) */
	uint64_t from_ms;	/* the window of the view (TIME_NONE: from the start) */
	bool utf8;		/* tree lines in box drawing characters */
};

/* *hot: the line to show first. 0 or -ENOMEM / -RSPROF_EDB. */
int pane__annotate(const struct pane_ctx *c, const struct live_row *r, struct styled_text *t,
		   int *hot);
int pane__callers(const struct pane_ctx *c, const struct live_row *r, struct styled_text *t);

#endif
