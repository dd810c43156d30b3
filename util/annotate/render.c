/*
 * The annotation as text lines: header, column names, rows.
 */
#include "util/annotate/render.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/annotate/annotate.h"
#include "util/output/format.h"
#include "util/output/styled.h"
#include "util/symbols/demangle.h"
#include "util/symbols/srcpath.h"

#define HOT_PCT 5.0
#define WARM_PCT 0.5

struct rctx {
	const struct annotation *a;
	const struct ann_view *v;
	struct styled_text *t;
	/* the metric that makes a line hot, and its total */
	enum { M_SAMPLES, M_LIVE, M_ALLOC } metric;
	double total;
	bool incl;		/* hot by what went through (the function has no numbers of its own) */
	double best;
	int *hot;
};

static double metric_of(const struct rctx *x, const struct ann_counts *c)
{
	switch (x->metric) {
	case M_SAMPLES:
		return (double)c->samples;
	case M_LIVE:
		return (double)c->live_bytes;
	default:
		return (double)c->alloc_bytes;
	}
}

static enum text_style style_of(struct rctx *x, const struct ann_counts *c,
				const struct ann_counts *incl)
{
	double m = metric_of(x, x->incl ? incl : c), pct = x->total > 0 ? 100.0 * m / x->total : 0;

	if (m > 0 && m > x->best) {
		x->best = m;
		*x->hot = x->t->n;	/* the row about to be added */
	}
	return pct >= HOT_PCT ? TS_HOT : pct >= WARM_PCT ? TS_WARM : TS_NORMAL;
}

static void pct_cell(const struct rctx *x, uint64_t samples, char *buf, size_t len)
{
	buf[0] = '\0';
	if (samples && x->a->totals.samples)
		format__pct(100.0 * samples / x->a->totals.samples, buf, len);
}

static void bytes_cell(int64_t v, char *buf, size_t len)
{
	buf[0] = '\0';
	if (v)
		format__bytes(v, buf, len);
}

/*
 * The number cells of a row: "  77.9%    1.00 MiB   12.0 MiB" as the
 * columns want; with the stacks' numbers, each beside its own:
 * "CPU%  Total%", "Live  Live tot", "Allocated  Alloc tot".
 */
static void cells(const struct rctx *x, const struct ann_counts *c, const struct ann_counts *in,
		  bool samples_col, char *buf, size_t len)
{
	char p[32] = "", n[32] = "", l[32] = "", al[32] = "", t[32] = "", lt[32] = "", at_[32] = "";
	size_t at = 0;

	if (x->v->cpu) {
		pct_cell(x, c->samples, p, sizeof(p));
		at += snprintf(buf + at, len - at, "%7s", p);
		if (x->a->incl_cpu && at < len) {
			pct_cell(x, in->samples, t, sizeof(t));
			at += snprintf(buf + at, len - at, "  %7s", t);
		}
		if (samples_col && at < len) {
			if (c->samples)
				format__count(c->samples, n, sizeof(n));
			at += snprintf(buf + at, len - at, "  %8s", n);
		}
	}
	if (x->v->heap && at < len) {
		bytes_cell(c->live_bytes, l, sizeof(l));
		bytes_cell(c->alloc_bytes, al, sizeof(al));
		if (x->a->incl_heap) {
			bytes_cell(in->live_bytes, lt, sizeof(lt));
			bytes_cell(in->alloc_bytes, at_, sizeof(at_));
			at += snprintf(buf + at, len - at, "  %10s  %10s  %10s  %10s", l, lt, al,
				       at_);
		} else {
			at += snprintf(buf + at, len - at, "  %10s  %10s", l, al);
		}
	}
	(void)at;
}

static void head_cells(const struct rctx *x, bool samples_col, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	if (x->v->cpu) {
		at += snprintf(buf + at, len - at, "%7s", "CPU%");
		if (x->a->incl_cpu && at < len)
			at += snprintf(buf + at, len - at, "  %7s", "Total%");
		if (samples_col && at < len)
			at += snprintf(buf + at, len - at, "  %8s", "Samples");
	}
	if (x->v->heap && at < len) {
		if (x->a->incl_heap)
			snprintf(buf + at, len - at, "  %10s  %10s  %10s  %10s", "Live", "Live tot",
				 "Allocated", "Alloc tot");
		else
			snprintf(buf + at, len - at, "  %10s  %10s", "Live", "Allocated");
	}
}

static const char *path_shown(const struct rctx *x, const char *file, char *buf, size_t len)
{
	if (!file)
		return "[unknown]";
	if (x->v->full_paths)
		return file;
	return srcpath__display(file, NULL, buf, len);
}

/* Columns of what went through each line are shown (the profile has stacks of that kind). */
static bool total_cols(const struct rctx *x)
{
	return (x->v->cpu && x->a->incl_cpu) || (x->v->heap && x->a->incl_heap);
}

/* The function's numbers with its callees, and which columns are which. */
static int through_lines(struct rctx *x)
{
	const struct annotation *a = x->a;
	char s[32], c[32], l[32], al[32], buf[256];
	size_t at = 0;
	int err;

	buf[0] = '\0';
	if (a->incl_cpu && x->v->cpu) {
		s[0] = '\0';
		if (a->totals.samples)
			format__pct(100.0 * a->incl.samples / a->totals.samples, s, sizeof(s));
		at += snprintf(buf + at, sizeof(buf) - at, "  CPU %s (%s samples)",
			       a->totals.samples ? s : "-",
			       format__count(a->incl.samples, c, sizeof(c)));
	}
	if (a->incl_heap && x->v->heap && at < sizeof(buf))
		snprintf(buf + at, sizeof(buf) - at, "  live %s  allocated %s",
			 format__bytes(a->incl.live_bytes, l, sizeof(l)),
			 format__bytes(a->incl.alloc_bytes, al, sizeof(al)));
	if (!buf[0])
		return 0;
	err = styled__addf(x->t, TS_DIM, "# through:  %s  (with its callees, from the stacks)",
			   buf + 2);
	if (!err)
		err = styled__addf(x->t, TS_DIM, "# columns:  own: %s%s%s; through it, callees too:"
				   " %s%s%s",
				   x->v->cpu ? "CPU%" : "", x->v->cpu && x->v->heap ? ", " : "",
				   x->v->heap ? "Live, Allocated" : "",
				   x->v->cpu && a->incl_cpu ? "Total%" : "",
				   x->v->cpu && a->incl_cpu && x->v->heap && a->incl_heap ? ", " : "",
				   x->v->heap && a->incl_heap ? "Live tot, Alloc tot" : "");
	return err;
}

static int header(struct rctx *x)
{
	const struct annotation *a = x->a;
	char s[32], l[32], al[32], c[32], fn[512], path[1024];
	int err;

	err = styled__addf(x->t, TS_DIM, "# profile:  %s  (%s samples%s%s)", x->v->profile,
			   format__count(a->totals.samples, c, sizeof(c)),
			   a->totals.has_heap ? ", live heap " : "",
			   a->totals.has_heap ? format__bytes(a->totals.live_bytes, l, sizeof(l)) : "");
	if (!err && x->v->window)
		err = styled__addf(x->t, TS_DIM, "# window:   %s", x->v->window);
	if (!err && a->function)
		err = styled__addf(x->t, TS_DIM, "# function: %s",
				   demangle__short(a->function, 0, fn, sizeof(fn)));
	if (!err && a->file && !a->function)
		err = styled__addf(x->t, TS_DIM, "# file:     %s",
				   path_shown(x, a->file, path, sizeof(path)));
	if (!err && a->line)
		err = styled__addf(x->t, TS_DIM, "# line:     %s:%d",
				   path_shown(x, a->file, path, sizeof(path)), a->line);
	s[0] = '\0';
	if (a->totals.samples)
		format__pct(100.0 * a->c.samples / a->totals.samples, s, sizeof(s));
	if (!err)
		err = styled__addf(x->t, TS_DIM, "# total:    CPU %s (%s samples)%s%s%s%s",
				   a->totals.samples ? s : "-",
				   format__count(a->c.samples, c, sizeof(c)),
				   a->totals.has_heap ? "  live " : "",
				   a->totals.has_heap ? format__bytes(a->c.live_bytes, l, sizeof(l)) : "",
				   a->totals.has_heap ? "  allocated " : "",
				   a->totals.has_heap ? format__bytes(a->c.alloc_bytes, al, sizeof(al)) :
							"");
	for (int i = 0; !err && i < a->n_blocks; i++) {
		const struct ann_block *b = &a->blocks[i];

		if (b->found)
			err = styled__addf(x->t, TS_DIM, "# source:   %s%s%s", b->found,
					   b->err ? ": " : "", b->err ? strerror(-b->err) : "");
		else
			err = styled__addf(x->t, TS_DIM, "# source:   %s: not found here"
					   " (--source-dir DIR or --path-map OLD=NEW)", b->file);
	}
	if (!err && total_cols(x))
		err = through_lines(x);
	if (!err && a->code_note && (x->v->insns || !a->n_funcs))
		err = styled__addf(x->t, TS_DIM, "# note:     %s", a->code_note);
	return err;
}

static int source_rows(struct rctx *x)
{
	char num[128], head[128];
	int err = 0;

	head_cells(x, false, head, sizeof(head));
	for (int i = 0; i < x->a->n_blocks && !err; i++) {
		const struct ann_block *b = &x->a->blocks[i];
		char path[1024];

		err = styled__addf(x->t, TS_NORMAL, "%s", "");
		if (!err && x->a->n_blocks > 1)
			err = styled__addf(x->t, TS_HEAD, "%s",
					   path_shown(x, b->file, path, sizeof(path)));
		if (!err)
			err = styled__addf(x->t, TS_HEAD, "%s  %5s  Source", head, "Line");
		for (int k = 0; k < b->n && !err; k++) {
			const struct ann_line *l = &b->lines[k];
			enum text_style st = style_of(x, &l->c, &l->incl);

			cells(x, &l->c, &l->incl, false, num, sizeof(num));
			/* the gutter: > the line asked for, * hot (visible without colour) */
			err = styled__addf(x->t, st, "%s %c%5d  %s", num,
					   l->target ? '>' : st == TS_HOT ? '*' : ' ', l->line,
					   l->text ? l->text : "");
		}
	}
	return err;
}

/* The text of a source line, when one of the blocks holds it. */
static const char *line_text(const struct annotation *a, const char *file, int line)
{
	for (int i = 0; file && i < a->n_blocks; i++) {
		const struct ann_block *b = &a->blocks[i];
		int at = line - (b->n ? b->lines[0].line : 0);

		if (!strcmp(b->file, file) && at >= 0 && at < b->n)
			return b->lines[at].text;
	}
	return NULL;
}

static int insn_rows(struct rctx *x)
{
	char num[128], head[128], pad[128], path[1024], fn[512];
	int err = 0;

	head_cells(x, true, head, sizeof(head));
	snprintf(pad, sizeof(pad), "%*s", (int)strlen(head), "");
	for (int i = 0; i < x->a->n_funcs && !err; i++) {
		const struct ann_func *f = &x->a->funcs[i];
		const char *last_file = NULL;
		int last_line = -1;

		err = styled__addf(x->t, TS_NORMAL, "%s", "");
		if (!err)
			err = styled__addf(x->t, TS_HEAD, "%s  [%s]  %#llx..%#llx",
					   demangle__short(f->name, 0, fn, sizeof(fn)),
					   path_shown(x, f->module, path, sizeof(path)),
					   (unsigned long long)f->start, (unsigned long long)f->end);
		if (!err)
			err = styled__addf(x->t, TS_HEAD, "%s  %14s  Instruction", head, "Address");
		for (size_t k = 0; k < f->n && !err; k++) {
			const struct ann_insn *in = &f->insns[k];
			enum text_style st;

			/* line 0 is the compiler's "no line": the code stays under the last one */
			if (in->line && (in->line != last_line || (in->file != last_file &&
			    (!in->file || !last_file || strcmp(in->file, last_file))))) {
				const char *text = line_text(x->a, in->file, in->line);

				last_file = in->file;
				last_line = in->line;
				err = styled__addf(x->t, TS_SOURCE, "%s  %14s  %s:%d  %s", pad, "",
						   path_shown(x, in->file, path, sizeof(path)), in->line,
						   text ? text : "");
				if (err)
					break;
			}
			st = style_of(x, &in->c, &in->incl);
			cells(x, &in->c, &in->incl, true, num, sizeof(num));
			err = styled__addf(x->t, st, "%s  %13llx:  %s", num,
					   (unsigned long long)in->addr, in->text);
		}
	}
	if (!err && !x->a->n_funcs)
		err = styled__addf(x->t, TS_DIM, "(no machine code to show)");
	return err;
}

int annotation__render(const struct annotation *a, const struct ann_view *v,
		       struct styled_text *t, int *hot)
{
	struct rctx x = { .a = a, .v = v, .t = t, .hot = hot };
	int err;

	*hot = -1;
	if (v->cpu && a->c.samples) {
		x.metric = M_SAMPLES;
		x.total = (double)a->c.samples;
	} else if (v->heap && a->c.live_bytes > 0) {
		x.metric = M_LIVE;
		x.total = (double)a->c.live_bytes;
	} else if (v->heap && a->c.alloc_bytes > 0) {
		x.metric = M_ALLOC;
		x.total = (double)a->c.alloc_bytes;
	} else if (v->cpu && a->incl_cpu && a->incl.samples) {
		/* nothing of its own: hot by what its lines call */
		x.metric = M_SAMPLES;
		x.total = (double)a->incl.samples;
		x.incl = true;
	} else if (v->heap && a->incl_heap && a->incl.live_bytes > 0) {
		x.metric = M_LIVE;
		x.total = (double)a->incl.live_bytes;
		x.incl = true;
	} else {
		x.metric = M_ALLOC;
		x.total = (double)(a->incl_heap ? a->incl.alloc_bytes : 0);
		x.incl = a->incl_heap;
	}
	err = header(&x);
	if (!err)
		err = v->insns ? insn_rows(&x) : source_rows(&x);
	return err;
}
