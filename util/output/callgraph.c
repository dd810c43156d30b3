/*
 * Call graph output: trees with tree lines, the children view, CSV, JSON.
 */
#include "util/output/callgraph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/output/format.h"
#include "util/output/styled.h"
#include "util/symbols/demangle.h"
#include "util/symbols/srcpath.h"

#define MAX_DEPTH 64

struct row {
	char *name;		/* tree lines + function */
	int plen;		/* bytes of tree lines before the function */
	double share, of_all;
	int64_t value;
	char site[1100];
	int depth;
};

struct rows {
	struct row *v;
	int n, cap;
};

static const char *func_name(const struct callgraph *cg, int func, enum cg_dir dir)
{
	if (func >= 0)
		return cg->funcs[func].name;
	return dir == CG_CALLEES ? "[self]" : "[no caller]";
}

static void site_text(const char *file, int line, bool full, char *buf, size_t len)
{
	char path[1024];

	if (!file) {
		buf[0] = '\0';
		return;
	}
	if (full)
		snprintf(path, sizeof(path), "%s", file);
	else
		srcpath__display(file, NULL, path, sizeof(path));
	if (line > 0)
		snprintf(buf, len, "%s:%d", path, line);
	else
		snprintf(buf, len, "%s", path);
}

static const char *value_text(const struct callgraph *cg, int64_t v, char *buf, size_t len)
{
	return cg->heap ? format__bytes(v, buf, len) : format__count((uint64_t)v, buf, len);
}

static int val_cmp(const void *x, const void *y, void *ctx)
{
	const struct callgraph *cg = ctx;
	const struct cg_node *a = &cg->nodes[*(const int *)x], *b = &cg->nodes[*(const int *)y];

	if (a->value != b->value)
		return a->value < b->value ? 1 : -1;
	return (a->func > b->func) - (a->func < b->func);
}

/* The children of node, largest first, into v (malloc'd); their count. */
static int children(const struct callgraph *cg, int node, int **v)
{
	int n = 0;

	for (int c = cg->nodes[node].child; c >= 0; c = cg->nodes[c].next)
		n++;
	*v = malloc((n + 1) * sizeof(int));
	if (!*v)
		return -ENOMEM;
	n = 0;
	for (int c = cg->nodes[node].child; c >= 0; c = cg->nodes[c].next)
		(*v)[n++] = c;
	qsort_r(*v, n, sizeof(int), val_cmp, (void *)cg);
	return n;
}

struct walk {
	const struct callgraph *cg;
	const struct cg_view *v;
	enum cg_dir dir;
	double base;		/* share of this */
	struct rows *out;
	bool last[MAX_DEPTH];	/* per depth: the node is its parent's last child */
};

static int rows_add(struct rows *r, struct row *w)
{
	if (ALLOC_GROW(r->v, r->n + 1, r->cap, 64)) {
		free(w->name);
		return -ENOMEM;
	}
	r->v[r->n++] = *w;
	return 0;
}

static int walk(struct walk *w, int node, int depth, int indent)
{
	const struct cg_node *n = &w->cg->nodes[node];
	char fn[512], prefix[4 * MAX_DEPTH * 4] = "";
	size_t at = 0;
	struct row r = { .depth = depth, .value = n->value };
	int *kids = NULL, nk, err = 0;

	r.share = w->base > 0 ? 100.0 * n->value / w->base : 0;
	r.of_all = w->cg->total > 0 ? 100.0 * n->value / w->cg->total : 0;
	for (int d = 1; d <= indent; d++) {
		const char *seg;

		if (d < indent)
			seg = w->last[d] ? "   " : w->v->utf8 ? "\u2502  " : "|  ";
		else
			seg = w->last[d] ? (w->v->utf8 ? "\u2514\u2500 " : "`- ") :
					   (w->v->utf8 ? "\u251c\u2500 " : "|- ");
		at += snprintf(prefix + at, sizeof(prefix) - at, "%s", seg);
	}
	demangle__short(func_name(w->cg, n->func, w->dir), 0, fn, sizeof(fn));
	if (asprintf(&r.name, "%s%s", prefix, fn) < 0)
		return -ENOMEM;
	r.plen = (int)at;
	site_text(n->file, n->line, w->v->full_paths, r.site, sizeof(r.site));
	err = rows_add(w->out, &r);
	if (err || depth + 1 >= MAX_DEPTH || (w->v->max_depth && depth >= w->v->max_depth))
		return err;
	nk = children(w->cg, node, &kids);
	if (nk < 0)
		return nk;
	/* children below the threshold go, as perf's callchain percent limit */
	while (nk > 0 && w->base > 0 && 100.0 * w->cg->nodes[kids[nk - 1]].value / w->base <
	       w->v->threshold)
		nk--;
	for (int i = 0; i < nk && !err; i++) {
		w->last[indent + 1] = i == nk - 1;
		err = walk(w, kids[i], depth + 1, indent + 1);
	}
	free(kids);
	return err;
}

static void rows_free(struct rows *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int tree_rows(const struct callgraph *cg, int root, enum cg_dir dir,
		     const struct cg_view *v, double base, struct rows *out)
{
	struct walk w = { .cg = cg, .v = v, .dir = dir, .base = base, .out = out };

	return walk(&w, root, 0, 0);
}

static int name_width(const struct rows *r, int from)
{
	int w = 8;

	for (int i = from; i < r->n; i++)
		if (format__width(r->v[i].name) > w)
			w = format__width(r->v[i].name);
	return w > 100 ? 100 : w;
}

static int site_width(const struct rows *r, int from)
{
	int w = 0;

	for (int i = from; i < r->n; i++)
		if (format__width(r->v[i].site) > w)
			w = format__width(r->v[i].site);
	return w;
}

/*
 * A name column of *nw and a call-site column of *sw columns shortened to
 * fit avail columns (the two blanks between them included): the sites
 * keep at least two fifths, the names what is left, neither under 16.
 */
static void split_width(int avail, int *nw, int *sw)
{
	int budget = avail - 2, smin;

	if (*nw + *sw <= budget)
		return;
	smin = budget * 2 / 5 > 20 ? budget * 2 / 5 : 20;
	smin = *sw < smin ? *sw : smin;
	if (*nw > budget - smin)
		*nw = budget - smin > 16 ? budget - smin : 16;
	if (*sw > budget - *nw)
		*sw = budget - *nw > 16 ? budget - *nw : 16;
}

/* The name and call-site widths of rows (from `from` on) within avail columns. */
static void fit(const struct rows *r, int from, int avail, int *nw, int *sw)
{
	*nw = name_width(r, from);
	*sw = site_width(r, from);
	split_width(avail, nw, sw);
}

static int view_width(const struct cg_view *v)
{
	return v->width > 0 ? v->width : format__term_width();
}

/*
 * A row's tree lines and its function cut to w columns; the name when it
 * fits. Tree lines deeper than half the column keep their end (the
 * branch to this row), cut on the left.
 */
static const char *fit_name(const struct row *x, int w, char *buf, size_t len)
{
	char prefix[4 * MAX_DEPTH * 4];
	size_t pl;
	int pw;

	if (format__width(x->name) <= w || (size_t)x->plen >= sizeof(prefix))
		return x->name;
	memcpy(prefix, x->name, (size_t)x->plen);
	prefix[x->plen] = '\0';
	if (format__width(prefix) > w / 2) {
		char whole[sizeof(prefix)];

		memcpy(whole, prefix, (size_t)x->plen + 1);
		format__cut(whole, w / 2, TABLE_TRUNC_LEFT, prefix, sizeof(prefix));
	}
	pw = format__width(prefix);
	pl = strlen(prefix);
	if (len <= pl)
		return x->name;
	memcpy(buf, prefix, pl);
	format__cut(x->name + x->plen, w - pw > 4 ? w - pw : 4, TABLE_TRUNC_NAME, buf + pl,
		    len - pl);
	return buf;
}

int callgraph__render_tree(const struct callgraph *cg, int root, enum cg_dir dir,
			   const struct cg_view *v, struct styled_text *t)
{
	struct rows r = { 0 };
	char a[32], b[32], name[1024], site[1100];
	int err, w, sw;

	err = tree_rows(cg, root, dir, v, (double)cg->nodes[root].value, &r);
	if (err)
		goto out;
	fit(&r, 0, view_width(v) - 7 - 2 - 10 - 2, &w, &sw);
	err = styled__addf(t, TS_DIM, "# %s of %s: %s %s, %s of all",
			   dir == CG_CALLERS ? "callers" : "callees",
			   demangle__short(cg->funcs[cg->nodes[root].func].name, 0, (char[512]){ 0 },
					   512),
			   value_text(cg, cg->nodes[root].value, a, sizeof(a)),
			   cg->heap ? "live" : "samples",
			   format__pct(cg->total ? 100.0 * cg->nodes[root].value / cg->total : 0, b,
				       sizeof(b)));
	if (!err)
		err = styled__addf(t, TS_HEAD, "%7s  %10s  %-*s  %s", "Share",
				   cg->heap ? "Live" : "Samples", w,
				   dir == CG_CALLERS ? "Caller" : "Callee", "Call site");
	for (int i = 0; i < r.n && !err; i++) {
		const struct row *x = &r.v[i];
		const char *nm = fit_name(x, w, name, sizeof(name));
		int pad = w - format__width(nm);

		err = styled__addf(t, i == 0 ? TS_HEAD : x->share >= 5.0 ? TS_NORMAL : TS_DIM,
				   "%7s  %10s  %s%*s  %s", format__pct(x->share, a, sizeof(a)),
				   value_text(cg, x->value, b, sizeof(b)), nm, pad > 0 ? pad : 0,
				   "", format__cut(x->site, sw, TABLE_TRUNC_LEFT, site, sizeof(site)));
	}
out:
	rows_free(&r);
	return err;
}

int callgraph__render_children(struct callgraph *cg, const struct cg_view *v,
			       struct styled_text *t)
{
	int *order = callgraph__by_total(cg);
	int n = cg->n_funcs, err = 0, fw, sw;
	char c[32], s[32], val[32], site[1100], site2[1100], name[1024];

	if (!order)
		return -ENOMEM;
	if (v->limit > 0 && n > v->limit)
		n = v->limit;
	err = styled__addf(t, TS_HEAD, "%8s  %7s  %10s  %s", "Children", "Self",
			   cg->heap ? "Live" : "Samples", "Function / callees");
	for (int i = 0; i < n && !err; i++) {
		const struct cg_func *f = &cg->funcs[order[i]];
		struct rows r = { 0 };
		char fn[512];
		int root, w;

		format__pct(cg->total ? 100.0 * f->total / cg->total : 0, c, sizeof(c));
		format__pct(cg->total ? 100.0 * f->self / cg->total : 0, s, sizeof(s));
		site_text(f->file, f->line, v->full_paths, site, sizeof(site));
		if (cg->total && 100.0 * f->total / cg->total < v->threshold)
			break;
		err = styled__addf(t, i ? TS_NORMAL : TS_NORMAL, "%s", "");
		demangle__short(f->name, 0, fn, sizeof(fn));
		/* the function and its site on one line within the width */
		fw = format__width(fn);
		sw = format__width(site);
		split_width(view_width(v) - 8 - 2 - 7 - 2 - 10 - 2, &fw, &sw);
		if (!err)
			err = styled__addf(t, TS_HOT, "%8s  %7s  %10s  %s  %s", c, s,
					   value_text(cg, f->total, val, sizeof(val)),
					   format__cut(fn, fw, TABLE_TRUNC_NAME, name, sizeof(name)),
					   format__cut(site, sw, TABLE_TRUNC_LEFT, site2, sizeof(site2)));
		if (err)
			break;
		/* its callees, when it calls anything */
		if (f->total == f->self)
			continue;
		err = callgraph__tree(cg, order[i], CG_CALLEES, &root);
		if (!err)
			err = tree_rows(cg, root, CG_CALLEES, v, (double)cg->total, &r);
		fit(&r, 1, view_width(v) - 8 - 2 - 7 - 2 - 10 - 2, &w, &sw);
		for (int k = 1; k < r.n && !err; k++) {
			const struct row *x = &r.v[k];
			const char *nm = fit_name(x, w, name, sizeof(name));
			int pad = w - format__width(nm);

			err = styled__addf(t, TS_NORMAL, "%8s  %7s  %10s  %s%*s  %s",
					   format__pct(x->of_all, c, sizeof(c)), "",
					   value_text(cg, x->value, val, sizeof(val)), nm,
					   pad > 0 ? pad : 0, "",
					   format__cut(x->site, sw, TABLE_TRUNC_LEFT, site2,
						       sizeof(site2)));
		}
		rows_free(&r);
	}
	free(order);
	return err;
}

static void csv_rows(const struct rows *r, FILE *f)
{
	for (int i = 0; i < r->n; i++) {
		const struct row *x = &r->v[i];

		fprintf(f, "%d,", x->depth);
		/* the tree lines are for the eye only */
		format__csv_field(f, x->name + x->plen);
		fprintf(f, ",%lld,%.4f,%.4f,", (long long)x->value, x->share, x->of_all);
		format__csv_field(f, x->site);
		fputc('\n', f);
	}
}

int callgraph__csv_tree(const struct callgraph *cg, int root, enum cg_dir dir,
			const struct cg_view *v, FILE *f)
{
	struct rows r = { 0 };
	int err;

	fputs("depth,function,value,share_pct,pct_of_all,call_site\n", f);
	err = tree_rows(cg, root, dir, v, (double)cg->nodes[root].value, &r);
	if (!err)
		csv_rows(&r, f);
	rows_free(&r);
	return err;
}

static void json_node(const struct callgraph *cg, int node, enum cg_dir dir, double base,
		      const struct cg_view *v, struct json *j, int depth, const char *key)
{
	const struct cg_node *n = &cg->nodes[node];
	char site[1100];
	int *kids = NULL, nk;

	json__begin_object(j, key);
	json__string(j, "function", n->func >= 0 ? cg->funcs[n->func].name : NULL);
	if (n->func < 0)
		json__string(j, "what", func_name(cg, n->func, dir));
	json__int(j, "value", n->value);
	json__double(j, "share_pct", base > 0 ? 100.0 * n->value / base : 0);
	json__double(j, "pct_of_all", cg->total ? 100.0 * n->value / cg->total : 0);
	site_text(n->file, n->line, true, site, sizeof(site));
	json__string(j, "file", n->file);
	if (n->line > 0)
		json__int(j, "line", n->line);
	else
		json__null(j, "line");
	json__begin_array(j, dir == CG_CALLERS ? "callers" : "callees");
	nk = depth + 1 < MAX_DEPTH ? children(cg, node, &kids) : 0;
	for (int i = 0; i < nk; i++) {
		if (base > 0 && 100.0 * cg->nodes[kids[i]].value / base < v->threshold)
			break;
		json_node(cg, kids[i], dir, base, v, j, depth + 1, NULL);
	}
	free(kids);
	json__end_array(j);
	json__end_object(j);
}

void callgraph__json_tree(const struct callgraph *cg, int root, enum cg_dir dir,
			  const struct cg_view *v, struct json *j, const char *key)
{
	json_node(cg, root, dir, (double)cg->nodes[root].value, v, j, 0, key);
}

void callgraph__csv_children(const struct callgraph *cg, const int *order,
			     const struct cg_view *v, FILE *f)
{
	int n = v->limit > 0 && cg->n_funcs > v->limit ? v->limit : cg->n_funcs;

	fputs("function,total,self,total_pct,self_pct,file,line\n", f);
	for (int i = 0; i < n; i++) {
		const struct cg_func *fn = &cg->funcs[order[i]];

		format__csv_field(f, fn->name);
		fprintf(f, ",%lld,%lld,%.4f,%.4f,", (long long)fn->total, (long long)fn->self,
			cg->total ? 100.0 * fn->total / cg->total : 0,
			cg->total ? 100.0 * fn->self / cg->total : 0);
		format__csv_field(f, fn->file ? fn->file : "");
		fprintf(f, ",%d\n", fn->line);
	}
}

void callgraph__json_children(const struct callgraph *cg, const int *order,
			      const struct cg_view *v, struct json *j)
{
	int n = v->limit > 0 && cg->n_funcs > v->limit ? v->limit : cg->n_funcs;

	for (int i = 0; i < n; i++) {
		const struct cg_func *fn = &cg->funcs[order[i]];

		json__begin_object(j, NULL);
		json__string(j, "function", fn->name);
		json__int(j, "total", fn->total);
		json__int(j, "self", fn->self);
		json__double(j, "total_pct", cg->total ? 100.0 * fn->total / cg->total : 0);
		json__double(j, "self_pct", cg->total ? 100.0 * fn->self / cg->total : 0);
		json__string(j, "file", fn->file);
		json__int(j, "line", fn->line);
		json__end_object(j);
	}
}
