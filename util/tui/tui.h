#ifndef RSPROF_UTIL_TUI_TUI_H
#define RSPROF_UTIL_TUI_TUI_H

#include <stdbool.h>

/*
 * The terminal for the live view (ncurses): setup and a guaranteed
 * teardown, keys, colours and line drawing.
 *
 * tui__start() takes the terminal: locale from the environment
 * (setlocale(LC_ALL, "")), ASCII line drawing unless the codeset is UTF-8,
 * colours unless NO_COLOR is set or the terminal has none. SIGINT,
 * SIGTERM and SIGHUP only set a flag (tui__interrupted()); fatal signals (SIGQUIT,
 * SIGSEGV, SIGABRT, ...) put the terminal back in its saved state before
 * the default action. While the screen is up, stderr goes to a temporary
 * file so messages from other threads cannot garble it; tui__stop() gives
 * the terminal back and replays them on the real stderr.
 */
struct tui;

/* Colour pairs the view uses; without colour they map to attributes. */
enum tui_style {
	TUI_NORMAL,
	TUI_TITLE,	/* header and footer bars */
	TUI_HEAD,	/* table column names */
	TUI_SELECT,	/* the selected row */
	TUI_HOT,	/* the top share bar */
	TUI_WARN,	/* PAUSED, finished, messages */
	TUI_DIM,	/* key help */
	TUI_NSTYLES
};

/* Special keys returned by tui__getkey() (besides plain characters). */
enum {
	TUI_KEY_NONE = -1,	/* timeout */
	TUI_KEY_ESC = 27,
	TUI_KEY_ENTER = '\n',
	TUI_KEY_UP = 0x1000,
	TUI_KEY_DOWN,
	TUI_KEY_PGUP,
	TUI_KEY_PGDN,
	TUI_KEY_HOME,
	TUI_KEY_END,
	TUI_KEY_LEFT,
	TUI_KEY_RIGHT,
	TUI_KEY_BACKSPACE,
	TUI_KEY_RESIZE,
	TUI_KEY_F1,
};

/*
 * Whether the live view can run here: stdin and stdout are terminals and
 * TERM names one that can address the cursor (not unset, not "dumb").
 */
bool tui__usable(void);

/* Returns 0, or -ENOTTY when there is no usable terminal (reported). */
int tui__start(struct tui **out);
/* Restores the terminal, replays captured stderr, frees. NULL ok; safe to call twice. */
void tui__stop(struct tui *t);

/* A key, or TUI_KEY_NONE after timeout_ms without one. */
int tui__getkey(struct tui *t, int timeout_ms);
/* SIGINT, SIGTERM or SIGHUP arrived. */
bool tui__interrupted(void);

bool tui__utf8(const struct tui *t);
bool tui__color(const struct tui *t);
void tui__size(const struct tui *t, int *rows, int *cols);

/* Drawing, in screen cells; text is cut to width w (multibyte-aware). */
void tui__clear(struct tui *t);
void tui__text(struct tui *t, int y, int x, int w, enum tui_style st, const char *s);
/* Right-aligned in w cells. */
void tui__text_right(struct tui *t, int y, int x, int w, enum tui_style st, const char *s);
void tui__fill(struct tui *t, int y, int x, int w, enum tui_style st);
void tui__hline(struct tui *t, int y, int x, int w);
void tui__vline(struct tui *t, int y, int x, int h);
/* A bar of frac (0..1) of w cells, sub-cell blocks when UTF-8. */
void tui__bar(struct tui *t, int y, int x, int w, double frac, enum tui_style st);
/* One column of a sparkline: level 0..8 (eighths), block characters or ASCII. */
void tui__spark(struct tui *t, int y, int x, int level, enum tui_style st);
/* Put the cursor after a prompt (visible) or hide it. */
void tui__cursor(struct tui *t, bool on, int y, int x);
/* Push the drawn screen to the terminal (only what changed). */
void tui__flush(struct tui *t);

#endif
