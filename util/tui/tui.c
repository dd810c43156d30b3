#include "util/tui/tui.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "util/tui/capture.h"
#include "util/error.h"
#include "util/output/escape.h"

struct tui {
	bool utf8, color, started;
	struct capture *err;	/* stderr while the screen is up, replayed at tui__stop() */
	attr_t attr[TUI_NSTYLES];
	struct sigaction old_int, old_term, old_hup;
};

static volatile sig_atomic_t interrupted;

/* For the fatal-signal path, which may only use async-signal-safe calls. */
static struct termios saved_termios;
static bool have_termios;
static const int fatal_signals[] = { SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
static struct sigaction old_fatal[sizeof(fatal_signals) / sizeof(fatal_signals[0])];

static void on_interrupt(int sig)
{
	interrupted = 1;
}

/*
 * A crash or SIGQUIT while the screen is up: give the terminal back (saved
 * modes, main screen, visible cursor) with async-signal-safe calls only,
 * then let the signal do what it does by default.
 */
static void on_fatal(int sig)
{
	static const char reset[] = "\033[0m\033[?25h\033[?1049l\r\n";
	ssize_t rc;

	if (have_termios)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
	rc = write(STDOUT_FILENO, reset, sizeof(reset) - 1);
	(void)rc;
	signal(sig, SIG_DFL);
	raise(sig);
}

bool tui__interrupted(void)
{
	return interrupted;
}

static void setup_signals(struct tui *t)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_interrupt;	/* no SA_RESTART: getch() returns at once */
	sigaction(SIGINT, &sa, &t->old_int);
	sigaction(SIGTERM, &sa, &t->old_term);
	sigaction(SIGHUP, &sa, &t->old_hup);	/* the terminal went away: finish cleanly */

	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &sa, &old_fatal[i]);
}

static void restore_signals(struct tui *t)
{
	sigaction(SIGINT, &t->old_int, NULL);
	sigaction(SIGTERM, &t->old_term, NULL);
	sigaction(SIGHUP, &t->old_hup, NULL);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &old_fatal[i], NULL);
}

static void setup_styles(struct tui *t)
{
	const char *nc = getenv("NO_COLOR");

	/* https://no-color.org: set and not empty disables colour. */
	t->color = !(nc && *nc) && has_colors() && start_color() == OK;
	if (t->color) {
		use_default_colors();
		init_pair(1, COLOR_BLACK, COLOR_CYAN);
		init_pair(2, COLOR_CYAN, -1);
		init_pair(3, COLOR_BLACK, COLOR_GREEN);
		init_pair(4, COLOR_RED, -1);
		init_pair(5, COLOR_YELLOW, -1);
		t->attr[TUI_NORMAL] = A_NORMAL;
		t->attr[TUI_TITLE] = COLOR_PAIR(1);
		t->attr[TUI_HEAD] = COLOR_PAIR(2) | A_BOLD;
		t->attr[TUI_SELECT] = COLOR_PAIR(3);
		t->attr[TUI_HOT] = COLOR_PAIR(4);
		t->attr[TUI_WARN] = COLOR_PAIR(5) | A_BOLD;
		t->attr[TUI_DIM] = A_DIM;
	} else {
		t->attr[TUI_NORMAL] = A_NORMAL;
		t->attr[TUI_TITLE] = A_REVERSE;
		t->attr[TUI_HEAD] = A_BOLD | A_UNDERLINE;
		t->attr[TUI_SELECT] = A_REVERSE;
		t->attr[TUI_HOT] = A_BOLD;
		t->attr[TUI_WARN] = A_BOLD;
		t->attr[TUI_DIM] = A_NORMAL;
	}
}

bool tui__usable(void)
{
	const char *term = getenv("TERM");

	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && term && *term &&
	       strcmp(term, "dumb");
}

int tui__start(struct tui **out)
{
	struct tui *t;
	const char *cs;

	*out = NULL;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		pr_err("the live view needs a terminal");
		pr_hint("use --stdio to print the ranking once");
		return -ENOTTY;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	/* Numbers keep their "1.5" form whatever the user's locale says. */
	setlocale(LC_NUMERIC, "C");
	t->utf8 = cs && !strcmp(cs, "UTF-8");
	have_termios = tcgetattr(STDIN_FILENO, &saved_termios) == 0;

	if (!newterm(NULL, stdout, stdin)) {
		pr_err("cannot set up the terminal '%s'", getenv("TERM") ? getenv("TERM") : "");
		pr_hint("set TERM to your terminal type, or use --stdio");
		free(t);
		return -ENOTTY;
	}
	t->started = true;
	setup_signals(t);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	leaveok(stdscr, TRUE);
	setup_styles(t);
	/* Messages printed while the screen is up would land in the middle of it. */
	t->err = capture__start(CAPTURE_STDERR);
	*out = t;
	return 0;
}

void tui__stop(struct tui *t)
{
	if (!t)
		return;
	if (t->started) {
		curs_set(1);
		endwin();
		delscreen(set_term(NULL));
		t->started = false;
		restore_signals(t);
	}
	capture__replay(t->err, stderr);
	free(t);
}

int tui__getkey(struct tui *t, int timeout_ms)
{
	int c;

	timeout(timeout_ms);
	c = getch();
	switch (c) {
	case ERR:
		return TUI_KEY_NONE;
	case KEY_UP:
		return TUI_KEY_UP;
	case KEY_DOWN:
		return TUI_KEY_DOWN;
	case KEY_PPAGE:
		return TUI_KEY_PGUP;
	case KEY_NPAGE:
		return TUI_KEY_PGDN;
	case KEY_HOME:
		return TUI_KEY_HOME;
	case KEY_END:
		return TUI_KEY_END;
	case KEY_LEFT:
		return TUI_KEY_LEFT;
	case KEY_RIGHT:
		return TUI_KEY_RIGHT;
	case KEY_RESIZE:
		return TUI_KEY_RESIZE;
	case KEY_F(1):
		return TUI_KEY_F1;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		return TUI_KEY_BACKSPACE;
	case KEY_ENTER:
	case '\r':
	case '\n':
		return TUI_KEY_ENTER;
	default:
		return c >= KEY_MIN ? TUI_KEY_NONE : c;
	}
}

bool tui__utf8(const struct tui *t)
{
	return t->utf8;
}

bool tui__color(const struct tui *t)
{
	return t->color;
}

void tui__size(const struct tui *t, int *rows, int *cols)
{
	*rows = LINES;
	*cols = COLS;
}

void tui__clear(struct tui *t)
{
	attrset(A_NORMAL);
	erase();
}

/* s as wide characters fitting in w cells; *cells receives the width used. */
static int fit(const struct tui *t, const char *s, int w, wchar_t *wbuf, int max, int *cells)
{
	mbstate_t ps;
	int n = 0, used = 0;
	size_t left = strlen(s);

	memset(&ps, 0, sizeof(ps));
	while (left && n < max - 1) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s, left, &ps);
		int cw;

		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&ps, 0, sizeof(ps));
			wc = L'?';
			k = 1;
		}
		cw = wcwidth(wc);
		if (cw < 0) {
			wc = L'?';
			cw = 1;
		}
		if (used + cw > w)
			break;
		wbuf[n++] = wc;
		used += cw;
		s += k;
		left -= k;
	}
	wbuf[n] = 0;
	*cells = used;
	return n;
}

static void put(struct tui *t, int y, int x, int w, enum tui_style st, const char *s, bool right)
{
	wchar_t wbuf[1024];
	char esc[4096];
	int cells, n;

	if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
		return;
	if (x + w > COLS)
		w = COLS - x;
	/* names and paths come from the profile: escaped (util/output/escape.h) */
	n = fit(t, escape__str(s, esc, sizeof(esc)), w, wbuf, 1024, &cells);
	attrset(t->attr[st]);
	if (right)
		x += w - cells;
	mvaddnwstr(y, x, wbuf, n);
	attrset(A_NORMAL);
}

void tui__text(struct tui *t, int y, int x, int w, enum tui_style st, const char *s)
{
	put(t, y, x, w, st, s, false);
}

void tui__text_right(struct tui *t, int y, int x, int w, enum tui_style st, const char *s)
{
	put(t, y, x, w, st, s, true);
}

void tui__fill(struct tui *t, int y, int x, int w, enum tui_style st)
{
	if (w <= 0 || y < 0 || y >= LINES)
		return;
	if (x + w > COLS)
		w = COLS - x;
	attrset(t->attr[st]);
	mvhline(y, x, ' ', w);
	attrset(A_NORMAL);
}

void tui__hline(struct tui *t, int y, int x, int w)
{
	if (w <= 0 || y < 0 || y >= LINES)
		return;
	if (x + w > COLS)
		w = COLS - x;
	attrset(t->attr[TUI_DIM]);
	if (t->utf8)
		mvhline_set(y, x, WACS_HLINE, w);
	else
		mvhline(y, x, '-', w);
	attrset(A_NORMAL);
}

void tui__vline(struct tui *t, int y, int x, int h)
{
	if (h <= 0 || x < 0 || x >= COLS)
		return;
	if (y + h > LINES)
		h = LINES - y;
	attrset(t->attr[TUI_DIM]);
	if (t->utf8)
		mvvline_set(y, x, WACS_VLINE, h);
	else
		mvvline(y, x, '|', h);
	attrset(A_NORMAL);
}

void tui__bar(struct tui *t, int y, int x, int w, double frac, enum tui_style st)
{
	static const wchar_t eighths[] = L" ▏▎▍▌▋▊▉";
	int units, full;

	if (w <= 0 || y < 0 || y >= LINES)
		return;
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	units = (int)(frac * w * 8 + 0.5);
	full = units / 8;
	attrset(t->attr[st]);
	move(y, x);
	for (int i = 0; i < w; i++) {
		if (i < full) {
			if (t->utf8)
				addnwstr(L"█", 1);
			else
				addch('#');
		} else if (i == full && units % 8 && t->utf8) {
			addnwstr(&eighths[units % 8], 1);
		} else {
			addch(' ');
		}
	}
	attrset(A_NORMAL);
}

void tui__spark(struct tui *t, int y, int x, int level, enum tui_style st)
{
	static const wchar_t blocks[] = L" ▁▂▃▄▅▆▇█";
	static const char ascii[] = " .,:-=+*#";

	if (y < 0 || y >= LINES || x < 0 || x >= COLS)
		return;
	if (level < 0)
		level = 0;
	if (level > 8)
		level = 8;
	attrset(t->attr[st]);
	if (t->utf8)
		mvaddnwstr(y, x, &blocks[level], 1);
	else
		mvaddch(y, x, ascii[level]);
	attrset(A_NORMAL);
}

void tui__cursor(struct tui *t, bool on, int y, int x)
{
	if (on) {
		leaveok(stdscr, FALSE);
		move(y, x);
		curs_set(1);
	} else {
		leaveok(stdscr, TRUE);
		curs_set(0);
	}
}

void tui__flush(struct tui *t)
{
	refresh();
}
