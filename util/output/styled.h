#ifndef RSPROF_UTIL_OUTPUT_STYLED_H
#define RSPROF_UTIL_OUTPUT_STYLED_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * Lines of text with one style each, made once and shown two ways: printed
 * (with ANSI colours on a terminal) or paged in the live view
 * (util/tui/pager.h). `rsprof annotate` and the panes of `rsprof top` build
 * them. Every line is made safe for a terminal when it is added: text from
 * the profile or from source files (a path, a function name, a line of
 * code) may hold escape sequences.
 */
enum text_style {
	TS_NORMAL,
	TS_HEAD,	/* headers, column names */
	TS_HOT,		/* a hot line (perf's red: >= 5 % of the total shown) */
	TS_WARM,	/* a warm line (>= 0.5 %) */
	TS_DIM,		/* notes, context */
	TS_SOURCE,	/* a source line between instructions */
};

struct styled_line {
	char *s;
	enum text_style st;
};

struct styled_text {
	struct styled_line *v;
	int n, cap;
};

/*
 * Adds one line (tabs expanded, then escaped as util/output/escape.h does:
 * control characters as \xNN). 0 or -ENOMEM.
 */
int styled__addf(struct styled_text *t, enum text_style st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int styled__vaddf(struct styled_text *t, enum text_style st, const char *fmt, va_list ap);
void styled__free(struct styled_text *t);

/* Print every line; color: ANSI SGR per style. 0 or -EIO. */
int styled__print(const struct styled_text *t, FILE *f, bool color);

/* The ANSI SGR sequence that starts a style; NULL: plain. */
const char *styled__sgr(enum text_style st);

#endif
