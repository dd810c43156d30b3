#include "util/tui/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/symbols/demangle.h"
#include "util/db/read/query.h"
#include "util/duration.h"
#include "util/output/format.h"
#include "util/symbols/srcpath.h"
#include "util/tui/tui.h"

/* Header two rows, column names one; footer and key help one each. */
#define HEAD_ROWS 3
#define FOOT_ROWS 2

void top_view__init(struct top_view *v, enum top_mode mode, uint64_t window_ms, bool windowed,
		    bool by_process)
{
	memset(v, 0, sizeof(*v));
	v->mode = mode;
	v->focus = mode == TOP_HEAP;
	v->window_ms = window_ms;
	v->windowed = windowed && window_ms;
	v->by_process = by_process;
	v->rows = TOP_MIN_ROWS - HEAD_ROWS - FOOT_ROWS;
}

static const struct live_table *table_of(const struct follow *f, int i)
{
	return i ? &f->heap : &f->cpu;
}

static bool shown(const struct top_view *v, int i)
{
	return v->mode == TOP_BOTH || (v->mode == TOP_CPU) == (i == 0);
}

void top_view__query(const struct top_view *v, struct follow_query *q)
{
	memset(q, 0, sizeof(*q));
	q->window_ms = v->windowed ? v->window_ms : 0;
	q->pattern = v->filter[0] ? v->filter : NULL;
	q->by_process = v->by_process;
	for (int i = 0; i < 2; i++) {
		int want = 0;

		if (shown(v, i))
			want = v->end[i] ? -1 : v->first[i] + v->rows;
		if (i)
			q->heap_rows = want;
		else
			q->cpu_rows = want;
	}
}

const struct live_row *top_view__selected(const struct top_view *v, const struct follow *f,
					  enum live_series *kind)
{
	const struct live_table *tb;

	if (!f)
		return NULL;
	tb = table_of(f, v->focus);
	*kind = v->focus ? SERIES_HEAP : SERIES_CPU;
	if (v->sel[v->focus] < 0 || v->sel[v->focus] >= tb->n)
		return NULL;
	return &tb->rows[v->sel[v->focus]];
}

bool top_view__detail_row(const struct top_view *v, struct live_row *row, enum live_series *kind)
{
	memset(row, 0, sizeof(*row));
	if (!v->detail)
		return false;
	row->file = v->d_has_file ? (char *)v->d_file : NULL;
	row->function = v->d_has_function ? (char *)v->d_function : NULL;
	row->line = v->d_line;
	*kind = v->d_table ? SERIES_HEAP : SERIES_CPU;
	return true;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The current numbers of the detail's location, or the bare location when it left the rows. */
static const struct live_row *detail_find(const struct top_view *v, const struct follow *f,
					  struct live_row *bare, enum live_series *kind)
{
	const struct live_table *tb;

	if (!top_view__detail_row(v, bare, kind))
		return NULL;
	if (!f)
		return bare;
	tb = table_of(f, v->d_table);
	for (int i = 0; i < tb->n; i++)
		if (tb->rows[i].line == bare->line && same_str(tb->rows[i].file, bare->file) &&
		    same_str(tb->rows[i].function, bare->function))
			return &tb->rows[i];
	return bare;
}

/* Keep the selection inside the rows and on screen. */
static void clamp(struct top_view *v, const struct follow *f)
{
	for (int i = 0; i < 2; i++) {
		int n = f ? table_of(f, i)->n : 0;
		bool more = f && table_of(f, i)->more;

		if (v->sel[i] >= n && !more)
			v->sel[i] = n - 1;
		if (v->sel[i] < 0)
			v->sel[i] = 0;
		if (v->first[i] > v->sel[i])
			v->first[i] = v->sel[i];
		if (v->sel[i] >= v->first[i] + v->rows)
			v->first[i] = v->sel[i] - v->rows + 1;
		if (v->first[i] < 0)
			v->first[i] = 0;
	}
}

static enum top_action prompt_key(struct top_view *v, int key)
{
	size_t len = strlen(v->edit);

	switch (key) {
	case TUI_KEY_ENTER:
		snprintf(v->filter, sizeof(v->filter), "%s", v->edit);
		v->prompt = false;
		v->sel[0] = v->sel[1] = v->first[0] = v->first[1] = 0;
		return TOP_REQUERY;
	case TUI_KEY_ESC:
		v->prompt = false;
		v->filter[0] = 0;
		return TOP_REQUERY;
	case TUI_KEY_BACKSPACE:
		if (len)
			v->edit[len - 1] = 0;
		return TOP_REDRAW;
	default:
		if (key >= 0x20 && key < 0x100 && key != 0x7f && len + 1 < sizeof(v->edit)) {
			v->edit[len] = (char)key;
			v->edit[len + 1] = 0;
			return TOP_REDRAW;
		}
		return TOP_NOTHING;
	}
}

static enum top_action move_sel(struct top_view *v, int to, const struct follow *f)
{
	int i = v->focus;

	v->end[i] = false;
	v->sel[i] = to < 0 ? 0 : to;
	clamp(v, f);
	return TOP_REQUERY;
}

enum top_action top_view__key(struct top_view *v, int key, const struct follow *f)
{
	int i = v->focus;

	if (v->prompt)
		return prompt_key(v, key);
	if (v->help && key != TUI_KEY_RESIZE) {
		v->help = false;
		if (key != 'q' && key != 'Q')
			return TOP_REDRAW;
	}
	switch (key) {
	case 'h':
	case '?':
	case TUI_KEY_F1:
		v->help = true;
		return TOP_REDRAW;
	case 'q':
	case 'Q':
		v->quit = true;
		return TOP_QUIT;
	case '1':
	case '2':
	case '3':
		v->mode = key == '1' ? TOP_CPU : key == '2' ? TOP_HEAP : TOP_BOTH;
		if (v->mode != TOP_BOTH)
			v->focus = v->mode == TOP_HEAP;
		v->detail = false;
		return TOP_REQUERY;
	case 'f':
	case '/':
		v->prompt = true;
		snprintf(v->edit, sizeof(v->edit), "%s", v->filter);
		return TOP_REDRAW;
	case TUI_KEY_ESC:
		if (v->detail) {
			v->detail = false;
			return TOP_REDRAW;
		}
		if (!v->filter[0])
			return TOP_NOTHING;
		v->filter[0] = 0;
		return TOP_REQUERY;
	case 'p':
	case ' ':
		v->paused = !v->paused;
		return TOP_REQUERY;
	case 's':
		v->by_process = !v->by_process;
		v->detail = false;
		for (int k = 0; k < 2; k++)
			v->sel[k] = v->first[k] = 0;
		return TOP_REQUERY;
	case 'w':
		if (!v->window_ms)
			v->window_ms = 10000;
		v->windowed = !v->windowed;
		return TOP_REQUERY;
	case '\t':
	case TUI_KEY_LEFT:
	case TUI_KEY_RIGHT:
		if (v->mode != TOP_BOTH)
			return TOP_NOTHING;
		v->focus = !v->focus;
		v->detail = false;
		return TOP_REDRAW;
	case TUI_KEY_ENTER:
		if (v->detail) {
			v->detail = false;
			return TOP_REDRAW;
		}
		{
			enum live_series kind;
			const struct live_row *r = top_view__selected(v, f, &kind);

			if (!r || r->pid)
				return TOP_NOTHING;	/* a process: no history by location */
			v->d_has_file = r->file;
			snprintf(v->d_file, sizeof(v->d_file), "%s", r->file ? r->file : "");
			v->d_has_function = r->function;
			snprintf(v->d_function, sizeof(v->d_function), "%s",
				 r->function ? r->function : "");
			v->d_line = r->line;
			v->d_table = v->focus;
		}
		v->detail = true;
		v->series_valid = false;
		return TOP_REQUERY;
	case 'a':
	case 'c':
		{
			enum live_series kind;
			const struct live_row *r = v->detail ? NULL : top_view__selected(v, f, &kind);

			if (!v->detail && (!r || r->pid))
				return TOP_NOTHING;
		}
		return key == 'a' ? TOP_ANNOTATE : TOP_CALLERS;
	case TUI_KEY_UP:
	case 'k':
		return move_sel(v, v->sel[i] - 1, f);
	case TUI_KEY_DOWN:
	case 'j':
		return move_sel(v, v->sel[i] + 1, f);
	case TUI_KEY_PGUP:
		v->first[i] -= v->rows;
		if (v->first[i] < 0)
			v->first[i] = 0;
		return move_sel(v, v->sel[i] - v->rows, f);
	case TUI_KEY_PGDN:
		v->first[i] += v->rows;
		return move_sel(v, v->sel[i] + v->rows, f);
	case TUI_KEY_HOME:
	case 'g':
		v->first[i] = 0;
		return move_sel(v, 0, f);
	case TUI_KEY_END:
	case 'G':
		v->end[i] = true;
		v->sel[i] = 1 << 30;	/* clamped to the last row once all are there */
		return TOP_REQUERY;
	case TUI_KEY_RESIZE:
		return TOP_REDRAW;
	default:
		return TOP_NOTHING;
	}
}

/* --- drawing ---------------------------------------------------------- */

/* "src/parser.rs:42" */
static char *loc_text(const struct live_row *r, char *buf, size_t len)
{
	char path[512];

	if (r->pid) {	/* "cpu_split [4242]" */
		snprintf(buf, len, "%s [%d]", r->function ? r->function : "?", r->pid);
		return buf;
	}
	srcpath__display(r->file, r->module, path, sizeof(path));
	if (r->file && r->line > 0)
		snprintf(buf, len, "%s:%d", path, r->line);
	else
		snprintf(buf, len, "%s", path);
	return buf;
}

/* Keep the end of a location that does not fit: "…/src/parser.rs:42". */
static const char *cut_left(const char *s, int w, char *buf, size_t len)
{
	int n = 0, ew;
	const char *p, *ell = format__ellipsis(&ew);

	for (p = s; *p; p++)
		n += ((unsigned char)*p & 0xc0) != 0x80;
	if (n <= w || w <= ew)
		return s;
	for (p = s; *p && n > w - ew; p++)
		n -= ((unsigned char)*p & 0xc0) != 0x80;
	while (((unsigned char)*p & 0xc0) == 0x80)
		p++;
	snprintf(buf, len, "%s%s", ell, p);
	return buf;
}

struct layout {
	int x, w;		/* the table's columns */
	int lead;		/* width of the number columns before the location */
	int loc_w, fn_w;
};

static void split(struct layout *l, int x, int w, int lead)
{
	int rest = w - lead;

	l->x = x;
	l->w = w;
	l->lead = lead;
	l->loc_w = rest * 55 / 100 - 1;
	l->fn_w = rest - l->loc_w - 2;
}

static void draw_loc_fn(struct tui *t, int y, const struct layout *l, const struct live_row *r,
			enum tui_style st)
{
	char loc[1024], cut[1040], fn[512];

	loc_text(r, loc, sizeof(loc));
	tui__text(t, y, l->x + l->lead, l->loc_w, st, cut_left(loc, l->loc_w, cut, sizeof(cut)));
	/* anonymous mappings, not malloc (as report --heap): the tag stays in sight */
	const char *tag = !(r->kinds & HEAP_KINDS_MMAP) ? "" :
			  r->kinds == HEAP_KINDS_MMAP ? " [mmap]" : " [heap+mmap]";
	int fw = l->fn_w - (int)strlen(tag);

	if (r->pid)	/* the executable in the function column */
		snprintf(fn, sizeof(fn), "%s", r->module && strrchr(r->module, '/') ?
			 strrchr(r->module, '/') + 1 : r->module ? r->module : "");
	else
		demangle__short(r->function, fw > 8 ? fw : 8, fn, sizeof(fn));
	snprintf(fn + strlen(fn), sizeof(fn) - strlen(fn), "%s", tag);
	tui__text(t, y, l->x + l->lead + l->loc_w + 1, l->fn_w, st, fn);
}

static void draw_empty(struct tui *t, int y, const struct layout *l, const struct top_view *v,
		       const struct follow *f, bool heap)
{
	const char *msg;

	if (!f || !f->loaded)
		msg = "reading the profile...";
	else if (heap && !f->sum.has_heap)
		msg = "no heap data: recorded without heap tracking";
	else if (v->filter[0])
		msg = "no location matches the filter (Esc clears it)";
	else if (!f->sum.checkpoints)
		msg = "waiting for the first checkpoint...";
	else
		msg = heap ? "no live heap yet" : "no samples yet";
	tui__text(t, y, l->x + 1, l->w - 1, TUI_DIM, msg);
}

static void draw_cpu(struct tui *t, const struct top_view *v, const struct follow *f,
		     int x, int w, bool wide)
{
	struct layout l;
	const struct live_table *tb = f ? &f->cpu : NULL;
	bool focus = v->mode == TOP_BOTH ? v->focus == 0 : true;
	int y0 = HEAD_ROWS - 1;

	split(&l, x, w, wide ? 7 + 10 + 13 : 7);
	tui__fill(t, y0, x, w, TUI_HEAD);
	tui__text_right(t, y0, x, 6, TUI_HEAD, "CPU%");
	if (wide) {
		tui__text_right(t, y0, x + 7, 9, TUI_HEAD, "Samples");
		tui__text(t, y0, x + 17, 12, TUI_HEAD, "Share");
	}
	tui__text(t, y0, x + l.lead, l.loc_w, TUI_HEAD, "Location");
	tui__text(t, y0, x + l.lead + l.loc_w + 1, l.fn_w, TUI_HEAD, "Function");
	if (!tb || !tb->n) {
		draw_empty(t, y0 + 1, &l, v, f, false);
		return;
	}
	for (int k = 0; k < v->rows && v->first[0] + k < tb->n; k++) {
		const struct live_row *r = &tb->rows[v->first[0] + k];
		bool sel = focus && v->first[0] + k == v->sel[0];
		enum tui_style st = sel ? TUI_SELECT : TUI_NORMAL;
		char buf[32];
		int y = y0 + 1 + k;

		if (sel)
			tui__fill(t, y, x, w, st);
		tui__text_right(t, y, x, 6, st, format__pct(r->pct, buf, sizeof(buf)));
		if (wide) {
			tui__text_right(t, y, x + 7, 9, st, format__count(r->samples, buf, sizeof(buf)));
			/* relative to the top row, as the eye compares rows */
			tui__bar(t, y, x + 17, 12, tb->rows[0].pct > 0 ? r->pct / tb->rows[0].pct : 0,
				 sel ? st : TUI_HOT);
		}
		draw_loc_fn(t, y, &l, r, st);
	}
}

static void draw_heap(struct tui *t, const struct top_view *v, const struct follow *f,
		      int x, int w, bool wide)
{
	struct layout l;
	const struct live_table *tb = f ? &f->heap : NULL;
	bool focus = v->mode == TOP_BOTH ? v->focus == 1 : true;
	int y0 = HEAD_ROWS - 1;

	split(&l, x, w, wide ? 10 + 10 + 10 : 10);
	tui__fill(t, y0, x, w, TUI_HEAD);
	tui__text_right(t, y0, x, 9, TUI_HEAD, "Live");
	if (wide) {
		tui__text_right(t, y0, x + 10, 9, TUI_HEAD, "Peak@cp");
		tui__text_right(t, y0, x + 20, 9, TUI_HEAD, "Allocs");
	}
	tui__text(t, y0, x + l.lead, l.loc_w, TUI_HEAD, "Location");
	tui__text(t, y0, x + l.lead + l.loc_w + 1, l.fn_w, TUI_HEAD, "Function");
	if (!tb || !tb->n) {
		draw_empty(t, y0 + 1, &l, v, f, true);
		return;
	}
	for (int k = 0; k < v->rows && v->first[1] + k < tb->n; k++) {
		const struct live_row *r = &tb->rows[v->first[1] + k];
		bool sel = focus && v->first[1] + k == v->sel[1];
		enum tui_style st = sel ? TUI_SELECT : TUI_NORMAL;
		char buf[32];
		int y = y0 + 1 + k;

		if (sel)
			tui__fill(t, y, x, w, st);
		tui__text_right(t, y, x, 9, st, format__bytes(r->live_bytes, buf, sizeof(buf)));
		if (wide) {
			tui__text_right(t, y, x + 10, 9, st,
					format__bytes(r->peak_bytes, buf, sizeof(buf)));
			tui__text_right(t, y, x + 20, 9, st,
					format__count(r->alloc_count, buf, sizeof(buf)));
		}
		draw_loc_fn(t, y, &l, r, st);
	}
}

static void draw_header(struct tui *t, const struct top_view *v, const struct follow *f,
			const struct top_status *st, int cols)
{
	char line[1024], el[32], win[32];
	const char *state;
	enum tui_style sst = TUI_TITLE;

	duration__format(st->elapsed_ms, el, sizeof(el));
	snprintf(line, sizeof(line), " rsprof top  PID %s  %s  %s Hz  heap %s  elapsed %s",
		 st->pid ? st->pid : "?", st->comm ? st->comm : "?", st->freq ? st->freq : "?",
		 st->heap_mode ? st->heap_mode : "?", el);
	if (v->paused) {
		state = "PAUSED";
		sst = TUI_WARN;
	} else if (st->finished) {
		state = st->state ? st->state : "finished";
	} else if (st->state) {
		state = st->state;
		sst = TUI_WARN;
	} else {
		state = st->recording ? "recording" : "following";
	}
	tui__fill(t, 0, 0, cols, TUI_TITLE);
	tui__text(t, 0, 0, cols, TUI_TITLE, line);
	snprintf(line, sizeof(line), "%s%s ", v->paused ? "" : "", state);
	tui__text_right(t, 0, cols - 30, 30, sst, line);

	if (v->windowed)
		snprintf(win, sizeof(win), "last %s", duration__format(v->window_ms, el, sizeof(el)));
	else
		snprintf(win, sizeof(win), "whole run");
	snprintf(line, sizeof(line), " file %s   window %s%s%s%s", st->output ? st->output : "?",
		 win, v->filter[0] ? "   filter \"" : "", v->filter, v->filter[0] ? "\"" : "");
	/* a large profile is read less often (util/tui/follow.h, the CPU budget) */
	if (f && follow__delay_ms(f) >= 2000) {
		size_t l = strlen(line);

		snprintf(line + l, sizeof(line) - l, "   large file: updated every %s",
			 duration__format(follow__delay_ms(f) + f->cost_ms, el, sizeof(el)));
	}
	tui__text(t, 1, 0, cols, TUI_NORMAL, line);
}

static void draw_footer(struct tui *t, const struct top_view *v, const struct follow *f,
			int rows, int cols)
{
	char line[512], a[32], b[32], c[32], d[32], e[32], r[64], rb[32];
	const struct prof_summary *s = f ? &f->sum : NULL;

	if (s) {
		double lost_pct = s->samples + s->lost_samples ?
			100.0 * s->lost_samples / (s->samples + s->lost_samples) : 0;

		/* the tracked heap beside the process's resident memory */
		r[0] = '\0';
		if (s->has_rss)
			snprintf(r, sizeof(r), " of %s resident",
				 format__bytes(s->rss_bytes, rb, sizeof(rb)));
		snprintf(line, sizeof(line),
			 " samples %s  lost %s (%.1f%%)  live heap %s%s  peak %s  checkpoints %s",
			 format__count(s->samples, a, sizeof(a)),
			 format__count(s->lost_samples, b, sizeof(b)), lost_pct,
			 s->has_heap ? format__bytes(s->live_bytes, c, sizeof(c)) : "-", r,
			 s->has_heap ? format__bytes(s->peak_bytes, d, sizeof(d)) : "-",
			 format__count(s->checkpoints, e, sizeof(e)));
	} else {
		snprintf(line, sizeof(line), " samples -  lost -  live heap -  peak -  checkpoints -");
	}
	tui__fill(t, rows - 2, 0, cols, TUI_TITLE);
	tui__text(t, rows - 2, 0, cols, TUI_TITLE, line);

	if (v->prompt) {
		snprintf(line, sizeof(line), " filter (path or function): %s", v->edit);
		tui__text(t, rows - 1, 0, cols, TUI_WARN, line);
		tui__text(t, rows - 1, cols - 28, 28, TUI_DIM, "Enter apply  Esc clear ");
		return;
	}
	if (v->detail)
		tui__text(t, rows - 1, 0, cols, TUI_DIM,
			  " q quit  h help  Esc/Enter close  p pause  w window  a annotate  c callers");
	else if (cols >= 140)
		tui__text(t, rows - 1, 0, cols, TUI_DIM,
			  " q quit  h help  1 cpu  2 heap  3 both  / filter  Esc clear  p pause"
			  "  w window  arrows scroll  Tab table  Enter detail  a annotate  c callers");
	else
		tui__text(t, rows - 1, 0, cols, TUI_DIM,
			  " q quit h help 1 cpu 2 heap 3 both / filter Esc clear p pause w window"
			  " Enter detail a annotate c callers");
}

static void draw_spark(struct tui *t, int y, int x, int w, int h, const int64_t *vals, int n)
{
	int64_t max = 0;
	int k0 = n > w ? n - w : 0;

	for (int k = k0; k < n; k++)
		if (vals[k] > max)
			max = vals[k];
	for (int k = k0; k < n; k++) {
		int level = max > 0 && vals[k] > 0 ? (int)((double)vals[k] / max * h * 8 + 0.5) : 0;

		if (vals[k] > 0 && level == 0)
			level = 1;
		for (int r = 0; r < h; r++) {
			int l = level - r * 8;

			tui__spark(t, y + h - 1 - r, x + k - k0, l < 0 ? 0 : l > 8 ? 8 : l, TUI_HOT);
		}
	}
}

static int64_t max_of(const int64_t *vals, int n)
{
	int64_t m = 0;

	for (int k = 0; k < n; k++)
		if (vals[k] > m)
			m = vals[k];
	return m;
}

static void draw_detail(struct tui *t, const struct top_view *v, const struct follow *f,
			int rows, int cols)
{
	enum live_series kind = SERIES_CPU;
	struct live_row bare;
	const struct live_row *r = detail_find(v, f, &bare, &kind);
	char line[1024], a[32], b[32], c[32], d[32], e[32], g[32];
	int y = HEAD_ROWS - 1, h;

	tui__fill(t, y, 0, cols, TUI_HEAD);
	tui__text(t, y, 1, cols - 1, TUI_HEAD, kind == SERIES_CPU ? "CPU location detail"
								  : "Heap site detail");
	y++;
	if (!r) {
		tui__text(t, y, 1, cols - 1, TUI_DIM, "nothing selected (Esc closes)");
		return;
	}
	loc_text(r, line, sizeof(line));
	tui__text(t, y++, 1, 11, TUI_DIM, "location");
	tui__text(t, y - 1, 12, cols - 13, TUI_NORMAL, line);
	tui__text(t, y++, 1, 11, TUI_DIM, "path");
	tui__text(t, y - 1, 12, cols - 13, TUI_NORMAL, r->file ? r->file : "[unknown]");
	tui__text(t, y++, 1, 11, TUI_DIM, "function");
	tui__text(t, y - 1, 12, cols - 13, TUI_NORMAL, r->function ? r->function : "[unknown]");
	tui__text(t, y++, 1, 11, TUI_DIM, "module");
	tui__text(t, y - 1, 12, cols - 13, TUI_NORMAL, r->module ? r->module : "[unknown]");
	if (kind == SERIES_CPU) {
		snprintf(line, sizeof(line), "%s samples, %s of %s", format__count(r->samples, a, 32),
			 format__pct(r->pct, b, 32), format__count(f ? f->cpu.total_samples : 0, c, 32));
		tui__text(t, y++, 1, 11, TUI_DIM, "cpu");
	} else {
		snprintf(line, sizeof(line),
			 "live %s  peak %s  allocated %s in %s  freed %s in %s",
			 format__bytes(r->live_bytes, a, 32), format__bytes(r->peak_bytes, b, 32),
			 format__bytes(r->alloc_bytes, c, 32), format__count(r->alloc_count, d, 32),
			 format__bytes(r->free_bytes, e, 32), format__count(r->free_count, g, 32));
		tui__text(t, y++, 1, 11, TUI_DIM, "heap");
	}
	tui__text(t, y - 1, 12, cols - 13, TUI_NORMAL, line);
	if (r == &bare)
		tui__text(t, y, 12, cols - 13, TUI_DIM, "(not among the rows fetched for the view)");
	y++;
	if (!v->series_valid)
		return;
	/* label, chart, time axis: between the counts and the footer */
	h = rows - FOOT_ROWS - y - 2;
	if (h > 8)
		h = 8;
	if (h < 1)
		return;
	if (kind == SERIES_CPU)
		snprintf(line, sizeof(line), "samples per checkpoint, last %d (max %s)", TOP_SERIES,
			 format__count(max_of(v->cpu_series, TOP_SERIES), a, 32));
	else
		snprintf(line, sizeof(line), "live bytes at each checkpoint, last %d (max %s)",
			 TOP_SERIES, format__bytes(max_of(v->heap_series, TOP_SERIES), a, 32));
	tui__text(t, y++, 1, cols - 2, TUI_DIM, line);
	draw_spark(t, y, 2, cols - 4, h, kind == SERIES_CPU ? v->cpu_series : v->heap_series,
		   TOP_SERIES);
	/* the time axis: the oldest checkpoint shown at the left, the last at the right */
	if (cols - 4 >= TOP_SERIES) {
		const char *iv = f ? follow__meta(f, "checkpoint_interval_ms") : NULL;
		uint64_t span = (iv ? strtoull(iv, NULL, 10) : 1000) * (TOP_SERIES - 1);

		snprintf(line, sizeof(line), "-%s", duration__format(span, a, sizeof(a)));
		tui__text(t, y + h, 2, 12, TUI_DIM, line);
		tui__text_right(t, y + h, 2, TOP_SERIES, TUI_DIM, "last checkpoint");
	}
}

static void draw_small(struct tui *t, int rows, int cols)
{
	char line[128];

	snprintf(line, sizeof(line), "terminal too small: %dx%d", cols, rows);
	tui__text(t, rows / 2 - 1, 0, cols, TUI_WARN, line);
	snprintf(line, sizeof(line), "rsprof top needs at least %dx%d", TOP_MIN_COLS, TOP_MIN_ROWS);
	tui__text(t, rows / 2, 0, cols, TUI_NORMAL, line);
	tui__text(t, rows / 2 + 1, 0, cols, TUI_DIM, "resize the window, or q to quit");
}

/* The keys, over the tables (h, ?, F1). */
static void draw_help(struct tui *t, int rows, int cols)
{
	static const char *const lines[] = {
		"rsprof top: keys",
		"",
		"  q            quit (a recording is finished and kept)",
		"  1 / 2 / 3    CPU table, heap table, both",
		"  Tab, arrows  switch between the two tables",
		"  Up/Down j/k  move the selection; PgUp/PgDn, Home/End (g/G)",
		"  Enter        detail of the selected row: its history; Esc closes",
		"  a            annotate the selected row's function",
		"  c            the callers of the selected row's function",
		"  / or f       filter by path or function; Esc clears it",
		"  p or Space   pause the display (recording goes on)",
		"  w            whole run, or the last 10 s window",
		"  s            a row per process of the tree, or per line",
		"  h, ?, F1     this help; any key closes it",
	};
	int n = (int)(sizeof(lines) / sizeof(lines[0])), w = 72, y0, x0;

	if (w > cols - 2)
		w = cols - 2;
	y0 = rows > n + 4 ? (rows - n - 2) / 2 : 0;
	x0 = (cols - w) / 2;
	for (int i = -1; i <= n; i++) {
		tui__fill(t, y0 + 1 + i, x0, w, TUI_TITLE);
		if (i >= 0 && i < n)
			tui__text(t, y0 + 1 + i, x0 + 1, w - 2, TUI_TITLE, lines[i]);
	}
}

void top_view__draw(struct top_view *v, struct tui *t, const struct follow *f,
		    const struct top_status *st)
{
	int rows, cols;

	tui__size(t, &rows, &cols);
	tui__clear(t);
	if (rows < TOP_MIN_ROWS || cols < TOP_MIN_COLS) {
		tui__cursor(t, false, 0, 0);
		draw_small(t, rows, cols);
		tui__flush(t);
		return;
	}
	v->rows = rows - HEAD_ROWS - FOOT_ROWS;
	clamp(v, f);
	draw_header(t, v, f, st, cols);
	if (v->detail) {
		draw_detail(t, v, f, rows, cols);
	} else if (v->mode == TOP_BOTH) {
		int half = (cols - 1) / 2;

		draw_cpu(t, v, f, 0, half, false);
		tui__vline(t, HEAD_ROWS - 1, half, v->rows + 1);
		draw_heap(t, v, f, half + 1, cols - half - 1, false);
	} else if (v->mode == TOP_CPU) {
		draw_cpu(t, v, f, 0, cols, true);
	} else {
		draw_heap(t, v, f, 0, cols, true);
	}
	draw_footer(t, v, f, rows, cols);
	if (v->help)
		draw_help(t, rows, cols);
	if (v->prompt)
		tui__cursor(t, true, rows - 1, 29 + (int)strlen(v->edit));
	else
		tui__cursor(t, false, 0, 0);
	tui__flush(t);
}
