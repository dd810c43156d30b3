#ifndef RSPROF_UTIL_OUTPUT_TERM_H
#define RSPROF_UTIL_OUTPUT_TERM_H

#include <stdbool.h>

/*
 * Standard output as the user sees it: a terminal, or a pager that shows
 * on one (as git and perf do, long text goes through less), and whether
 * it gets colours.
 */
enum term_color {
	TERM_COLOR_AUTO,	/* on a terminal, or a pager on one */
	TERM_COLOR_ALWAYS,
	TERM_COLOR_NEVER,
};

/* "auto", "always", "never" into *c. 0 or -EINVAL. */
int term__parse_color(const char *s, enum term_color *c);
void term__set_color(enum term_color c);

/*
 * Colours on standard output: always, never, or (auto) when it is a
 * terminal or the pager's, NO_COLOR is unset or empty and TERM is set and
 * not "dumb".
 */
bool term__color(void);

/*
 * When standard output is a terminal, send it (and standard error, when
 * that is the terminal too) through the pager: $RSPROF_PAGER, else $PAGER,
 * else less; "" or "cat": none. LESS=FRX (one screen: no paging; colours
 * shown; the text stays on the screen) and LV=-c when they are unset, and
 * COLUMNS the terminal's width, as git sets them. The pager runs through
 * /bin/sh -c and is waited for when rsprof exits. 0, or -errno (then the
 * output goes on to the terminal).
 */
int term__start_pager(void);

#endif
