#ifndef RSPROF_UTIL_TUI_CAPTURE_H
#define RSPROF_UTIL_TUI_CAPTURE_H

#include <stdio.h>

/*
 * Standard streams sent to a temporary file for a while: while the live
 * view owns the terminal, what rsprof's own threads print on stderr and what
 * a launched target prints would garble the screen. The text is kept and
 * replayed once the terminal is given back.
 */
struct capture;

enum {
	CAPTURE_STDIN = 1,	/* /dev/null */
	CAPTURE_STDOUT = 2,
	CAPTURE_STDERR = 4,
};

/* Redirect the streams of mask. NULL when it cannot (the streams are left alone). */
struct capture *capture__start(int mask);
/* Put the streams back; the captured text stays. Safe to call twice. */
void capture__end(struct capture *c);
/* capture__end(), copy the captured text to f, free. NULL ok. */
void capture__replay(struct capture *c, FILE *f);

#endif
