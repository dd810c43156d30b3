/*
 * The pager: styled lines on the whole screen, scrolled by keys.
 */
#include "util/tui/pager.h"

#include <stdio.h>
#include <string.h>

#include "util/output/styled.h"
#include "util/tui/tui.h"

static enum tui_style tui_style_of(enum text_style st)
{
	switch (st) {
	case TS_HEAD:
	case TS_SOURCE:
		return TUI_HEAD;
	case TS_HOT:
		return TUI_HOT;
	case TS_WARM:
		return TUI_WARN;
	case TS_DIM:
		return TUI_DIM;
	default:
		return TUI_NORMAL;
	}
}

/* s without its first n code points. */
static const char *skip_cols(const char *s, int n)
{
	while (*s && n > 0) {
		s++;
		while ((*s & 0xc0) == 0x80)
			s++;
		n--;
	}
	return s;
}

static void draw(struct tui *tui, const char *title, const struct styled_text *t, int top,
		 int left)
{
	int rows, cols, body;
	char line[256];

	tui__size(tui, &rows, &cols);
	body = rows - 2;
	tui__clear(tui);
	tui__fill(tui, 0, 0, cols, TUI_TITLE);
	tui__text(tui, 0, 1, cols - 1, TUI_TITLE, title);
	snprintf(line, sizeof(line), "%d-%d of %d ", t->n ? top + 1 : 0,
		 top + body < t->n ? top + body : t->n, t->n);
	tui__text_right(tui, 0, cols - 24, 24, TUI_TITLE, line);
	for (int k = 0; k < body && top + k < t->n; k++) {
		const struct styled_line *l = &t->v[top + k];

		tui__text(tui, 1 + k, 0, cols, tui_style_of(l->st), skip_cols(l->s, left));
	}
	tui__text(tui, rows - 1, 0, cols, TUI_DIM,
		  " q/Esc close  arrows/PgUp/PgDn scroll  Tab/n next hot  N previous hot"
		  "  Home/End");
	tui__cursor(tui, false, 0, 0);
	tui__flush(tui);
}

static int next_hot(const struct styled_text *t, int from, int dir)
{
	for (int i = from + dir; i >= 0 && i < t->n; i += dir)
		if (t->v[i].st == TS_HOT)
			return i;
	return -1;
}

int pager__run(struct tui *tui, const char *title, const struct styled_text *t, int at)
{
	int top = 0, left = 0, rows, cols, body, hot;

	tui__size(tui, &rows, &cols);
	body = rows - 2 > 1 ? rows - 2 : 1;
	/* the line asked for a third down the screen, as an editor jumps */
	if (at > 0)
		top = at - body / 3;
	for (;;) {
		int key, max;

		tui__size(tui, &rows, &cols);
		body = rows - 2 > 1 ? rows - 2 : 1;
		max = t->n > body ? t->n - body : 0;
		if (top > max)
			top = max;
		if (top < 0)
			top = 0;
		draw(tui, title, t, top, left);
		key = TUI_KEY_NONE;
		while (key == TUI_KEY_NONE) {
			if (tui__interrupted())
				return 1;
			key = tui__getkey(tui, 100);
		}
		switch (key) {
		case 'q':
		case 'Q':
		case TUI_KEY_ESC:
		case TUI_KEY_ENTER:
			return 0;
		case TUI_KEY_UP:
		case 'k':
			top--;
			break;
		case TUI_KEY_DOWN:
		case 'j':
			top++;
			break;
		case TUI_KEY_PGUP:
		case 'b':
			top -= body;
			break;
		case TUI_KEY_PGDN:
		case ' ':
			top += body;
			break;
		case TUI_KEY_HOME:
		case 'g':
			top = 0;
			break;
		case TUI_KEY_END:
		case 'G':
			top = max;
			break;
		case TUI_KEY_LEFT:
			left = left > 8 ? left - 8 : 0;
			break;
		case TUI_KEY_RIGHT:
			left += 8;
			break;
		case '\t':
		case 'n':
		case 'N':
			hot = next_hot(t, top + body / 3, key == 'N' ? -1 : 1);
			if (hot >= 0)
				top = hot - body / 3;
			break;
		default:
			break;
		}
	}
}
