#ifndef RSPROF_UTIL_TUI_PAGER_H
#define RSPROF_UTIL_TUI_PAGER_H

/*
 * A full-screen pager for styled lines (util/output/styled.h): the screen
 * of `rsprof annotate` on a terminal and the panes `rsprof top` opens over
 * its tables (annotate a row, a row's callers). A title bar, the lines,
 * the key help:
 *
 *   q, Esc, Enter        close
 *   Up/Down, j/k         a line; PgUp/PgDn, Space: a page; Home/End, g/G
 *   Left/Right           scroll sideways (long lines of code)
 *   Tab, n / N           the next / previous hot line (perf annotate's Tab)
 */
struct tui;
struct styled_text;

/*
 * Shows t until closed, starting with line `at` near the top (-1: the
 * first). Returns 0 when closed, 1 when SIGINT/SIGTERM/SIGHUP arrived.
 */
int pager__run(struct tui *tui, const char *title, const struct styled_text *t, int at);

#endif
