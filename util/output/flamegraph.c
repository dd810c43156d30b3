/*
 * Flame graphs (util/output/flamegraph.h): the stacks merged into a tree,
 * laid out here, made interactive by a small script in the document.
 */
#include "util/output/flamegraph.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/read/query.h"
#include "util/hashmap.h"
#include "util/output/format.h"
#include "util/output/svg.h"
#include "util/symbols/srcpath.h"
#include "util/symbols/symbol.h"

#define WIDTH		1200	/* px */
#define FRAME_H		16
#define PAD_TOP		46
#define PAD_BOTTOM	34
#define PAD_SIDE	10
#define MIN_PX		0.1	/* narrower frames are not drawn */

struct fg_node {
	uint32_t name;		/* index in strs */
	uint32_t parent;	/* UINT32_MAX: the root */
	uint32_t first_child, next_sibling;	/* UINT32_MAX: none */
	uint32_t loc;		/* strs index of its heaviest location (0: none) */
	int64_t loc_value;
	int64_t value, base;	/* B (what is drawn), A (differential) */
};

struct flamegraph {
	enum flamegraph_kind kind;
	bool diff;
	struct fg_node *nodes;
	size_t n, cap;
	struct hashmap children;	/* (parent, name) -> node index */
	char **strs;			/* names and locations, interned; strs[0] = "" */
	size_t n_strs, cap_strs;
	struct hashmap str_index;	/* hash of a string -> index in strs */
	int64_t total, total_base;
	uint64_t drawn, hidden;
};

static bool str_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct flamegraph *fg = ctx;

	return !strcmp(fg->strs[val], key);
}

/* The index of s in strs, added when new; UINT32_MAX on -ENOMEM. */
static uint32_t intern(struct flamegraph *fg, const char *s)
{
	uint64_t idx = fg->n_strs;
	bool fresh;

	if (hashmap__intern(&fg->str_index, hashmap__hash_str(s), str_eq, s, fg, &idx, &fresh))
		return UINT32_MAX;
	if (!fresh)
		return (uint32_t)idx;
	if (fg->n_strs == fg->cap_strs) {
		size_t cap = fg->cap_strs ? 2 * fg->cap_strs : 256;
		char **v = realloc(fg->strs, cap * sizeof(*v));

		if (!v)
			goto fail;
		fg->strs = v;
		fg->cap_strs = cap;
	}
	fg->strs[fg->n_strs] = strdup(s);
	if (!fg->strs[fg->n_strs])
		goto fail;
	return (uint32_t)fg->n_strs++;
fail:
	/* the map holds idx for s already: take it out again by clearing the map */
	hashmap__free(&fg->str_index);
	for (size_t i = 0; i < fg->n_strs; i++) {
		bool f;
		uint64_t v = i;

		hashmap__intern(&fg->str_index, hashmap__hash_str(fg->strs[i]), str_eq,
				fg->strs[i], fg, &v, &f);
	}
	return UINT32_MAX;
}

static uint32_t node_new(struct flamegraph *fg, uint32_t parent, uint32_t name)
{
	struct fg_node *n;

	if (fg->n == fg->cap) {
		size_t cap = fg->cap ? 2 * fg->cap : 1024;
		struct fg_node *v = realloc(fg->nodes, cap * sizeof(*v));

		if (!v)
			return UINT32_MAX;
		fg->nodes = v;
		fg->cap = cap;
	}
	n = &fg->nodes[fg->n];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->parent = parent;
	n->first_child = n->next_sibling = UINT32_MAX;
	if (parent != UINT32_MAX) {
		n->next_sibling = fg->nodes[parent].first_child;
		fg->nodes[parent].first_child = (uint32_t)fg->n;
	}
	return (uint32_t)fg->n++;
}

struct fg_key {
	uint32_t parent, name;
};

static bool child_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct flamegraph *fg = ctx;
	const struct fg_key *k = key;

	return fg->nodes[val].parent == k->parent && fg->nodes[val].name == k->name;
}

/* The child of parent named name, made when new; UINT32_MAX on -ENOMEM. */
static uint32_t child_of(struct flamegraph *fg, uint32_t parent, uint32_t name)
{
	struct fg_key k = { parent, name };
	uint64_t idx = fg->n;
	bool fresh;

	if (hashmap__intern(&fg->children, hashmap__hash_u64((uint64_t)parent << 32 | name),
			    child_eq, &k, fg, &idx, &fresh))
		return UINT32_MAX;
	if (fresh && node_new(fg, parent, name) == UINT32_MAX) {
		hashmap__clear(&fg->children);	/* rebuilt below: idx points nowhere */
		for (size_t i = 1; i < fg->n; i++) {
			struct fg_key ki = { fg->nodes[i].parent, fg->nodes[i].name };
			uint64_t v = i;
			bool f;

			hashmap__intern(&fg->children,
					hashmap__hash_u64((uint64_t)ki.parent << 32 | ki.name),
					child_eq, &ki, fg, &v, &f);
		}
		return UINT32_MAX;
	}
	return (uint32_t)idx;
}

struct flamegraph *flamegraph__new(enum flamegraph_kind kind)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));

	if (!fg)
		return NULL;
	fg->kind = kind;
	if (intern(fg, "") != 0 || intern(fg, "all") == UINT32_MAX ||
	    node_new(fg, UINT32_MAX, 1) != 0) {
		flamegraph__delete(fg);
		return NULL;
	}
	return fg;
}

void flamegraph__delete(struct flamegraph *fg)
{
	if (!fg)
		return;
	for (size_t i = 0; i < fg->n_strs; i++)
		free(fg->strs[i]);
	free(fg->strs);
	free(fg->nodes);
	hashmap__free(&fg->children);
	hashmap__free(&fg->str_index);
	free(fg);
}

static int add(struct flamegraph *fg, const struct prof_stack *s, int64_t value, bool base)
{
	uint32_t at = 0;

	if (value <= 0)
		return 0;
	if (base) {
		fg->diff = true;
		fg->total_base += value;
		fg->nodes[0].base += value;
	} else {
		fg->total += value;
		fg->nodes[0].value += value;
	}
	for (int i = s->depth - 1; i >= 0; i--) {
		const struct prof_frame *f = &s->frames[i];

		for (int k = f->n_lines - 1; k >= 0; k--) {
			char buf[256], loc[1024], disp[1024];
			uint32_t name = intern(fg, prof_frame__name(f, k, buf, sizeof(buf)));
			struct fg_node *n;

			if (name == UINT32_MAX || (at = child_of(fg, at, name)) == UINT32_MAX)
				return -ENOMEM;
			n = &fg->nodes[at];
			if (base) {
				n->base += value;
				continue;
			}
			n->value += value;
			/* its location: the call site (or the sampled line) most of it
			 * came through */
			if (f->lines[k].file && value > n->loc_value) {
				uint32_t l;

				snprintf(loc, sizeof(loc), "%s:%d",
					 srcpath__display(f->lines[k].file, f->module, disp,
							  sizeof(disp)), f->lines[k].line);
				l = intern(fg, loc);
				if (l == UINT32_MAX)
					return -ENOMEM;
				n->loc = l;
				n->loc_value = value;
			}
		}
	}
	return 0;
}

int flamegraph__add(struct flamegraph *fg, const struct prof_stack *s, int64_t value)
{
	return add(fg, s, value, false);
}

int flamegraph__add_base(struct flamegraph *fg, const struct prof_stack *s, int64_t value)
{
	return add(fg, s, value, true);
}

void flamegraph__counts(const struct flamegraph *fg, uint64_t *drawn, uint64_t *hidden)
{
	*drawn = fg->drawn;
	*hidden = fg->hidden;
}

/* A stable colour per name: hue from a hash, in the kind's range. */
static void colour(const struct flamegraph *fg, const struct fg_node *n, char *buf, size_t len)
{
	uint64_t h = hashmap__hash_str(fg->strs[n->name]);
	double r = (double)(h & 0xffff) / 65535.0, r2 = (double)((h >> 16) & 0xffff) / 65535.0;

	if (fg->diff) {
		double a = fg->total_base ? (double)n->base / (double)fg->total_base : 0;
		double b = fg->total ? (double)n->value / (double)fg->total : 0;
		double d = b - a, m = fabs(d) * 4;
		int c = (int)(255 - 170 * (m > 1 ? 1 : m));

		if (d > 0)
			snprintf(buf, len, "rgb(255,%d,%d)", c, c);
		else if (d < 0)
			snprintf(buf, len, "rgb(%d,%d,255)", c, c);
		else
			snprintf(buf, len, "rgb(240,240,240)");
		return;
	}
	if (fg->kind == FG_CPU)		/* warm: red to yellow */
		snprintf(buf, len, "rgb(%d,%d,%d)", 205 + (int)(50 * r), (int)(230 * r2),
			 (int)(55 * r));
	else				/* memory: greens */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(50 * r), 160 + (int)(60 * r2),
			 (int)(60 * r));
}

static const char *unit_of(const struct flamegraph *fg)
{
	return fg->kind == FG_CPU ? "samples" : fg->kind == FG_HEAP ? "bytes" : "allocations";
}

/* A value as the tooltip shows it. */
static void value_text(const struct flamegraph *fg, int64_t v, char *buf, size_t len)
{
	char n[32];

	if (fg->kind == FG_HEAP)
		format__bytes(v, n, sizeof(n));
	else
		format__count((uint64_t)v, n, sizeof(n));
	snprintf(buf, len, "%s%s%s", n, fg->kind == FG_HEAP ? "" : " ",
		 fg->kind == FG_HEAP ? "" : unit_of(fg));
}

/*
 * Write node i and its children, laid out from x (px) at depth d; the
 * frames too narrow to draw are counted. Children in name order, so that
 * the same profile always gives the same picture.
 */
struct fg_ctx {
	FILE *f;
	struct flamegraph *fg;
	double scale;	/* px per unit */
	int max_depth;
};

static int cmp_kids(const void *a, const void *b, void *arg)
{
	const struct flamegraph *fg = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return strcmp(fg->strs[fg->nodes[x].name], fg->strs[fg->nodes[y].name]);
}

static void write_node(struct fg_ctx *c, uint32_t i, double x, int d, int64_t left)
{
	struct flamegraph *fg = c->fg;
	const struct fg_node *n = &fg->nodes[i];
	double w = (double)n->value * c->scale;
	char col[48], val[64], pct[32];
	size_t nk = 0;
	int64_t off = left;

	if (w < MIN_PX) {
		fg->hidden++;
		return;
	}
	fg->drawn++;
	if (d > c->max_depth)
		c->max_depth = d;
	colour(fg, n, col, sizeof(col));
	value_text(fg, n->value, val, sizeof(val));
	snprintf(pct, sizeof(pct), "%.2f%%", fg->total ? 100.0 * (double)n->value /
		 (double)fg->total : 0.0);
	fprintf(c->f, "<g class=\"f\" data-l=\"%lld\" data-v=\"%lld\" data-d=\"%d\"",
		(long long)left, (long long)n->value, d);
	if (fg->diff)
		fprintf(c->f, " data-a=\"%lld\"", (long long)n->base);
	fputs(" data-name=\"", c->f);
	svg__escape(c->f, i ? fg->strs[n->name] : "all");
	fputs("\"><title>", c->f);
	svg__escape(c->f, i ? fg->strs[n->name] : "all");
	if (n->loc) {
		fputs(" (", c->f);
		svg__escape(c->f, fg->strs[n->loc]);
		fputc(')', c->f);
	}
	fprintf(c->f, " \xe2\x80\x94 %s, %s", val, pct);
	if (fg->diff) {
		double a = fg->total_base ? 100.0 * (double)n->base / (double)fg->total_base : 0;

		fprintf(c->f, " (%s%.2f points from the base, %.2f%%)",
			100.0 * (double)n->value / (double)(fg->total ? fg->total : 1) - a >= 0 ?
			"+" : "", 100.0 * (double)n->value / (double)(fg->total ? fg->total : 1) - a,
			a);
	}
	fprintf(c->f, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" y=\"%d\"></text></g>\n",
		PAD_SIDE + x, -(d + 1) * FRAME_H, w, FRAME_H - 1, col, PAD_SIDE + x + 3,
		-(d + 1) * FRAME_H + 11);
	/* the children, left to right by name */
	for (uint32_t k = n->first_child; k != UINT32_MAX; k = fg->nodes[k].next_sibling)
		nk++;
	if (!nk)
		return;
	{
		uint32_t *kids = malloc(nk * sizeof(*kids));
		size_t j = 0;

		if (!kids)
			return;	/* not drawn: counted as nothing, the document stays valid */
		for (uint32_t k = n->first_child; k != UINT32_MAX; k = fg->nodes[k].next_sibling)
			kids[j++] = k;
		qsort_r(kids, nk, sizeof(*kids), cmp_kids, fg);
		for (j = 0; j < nk; j++) {
			write_node(c, kids[j], x + (double)(off - left) * c->scale, d + 1, off);
			off += fg->nodes[kids[j]].value;
		}
		free(kids);
	}
}

/* The script: zoom, search, details. Frames carry data-l (left, in units),
 * data-v (value), data-d (depth); the layout is redone from those. */
static const char script[] =
"var W = %d, PAD = %d, FH = %d, TOTAL = %lld, UNIT = '%s';\n"
"var frames = [], zoomed = null, matched = {};\n"
"function fit(g, w) {\n"
"  var t = g.querySelector('text'), name = g.getAttribute('data-name');\n"
"  var n = Math.floor((w - 6) / 7);\n"
"  if (n < 3) { t.textContent = ''; return; }\n"
"  if (name.length <= n) { t.textContent = name; return; }\n"
"  var parts = name.split('::');\n"
"  if (parts.length > 2) {\n"
"    var head = parts[0] + '::\\u2026::', tail = '';\n"
"    for (var i = parts.length - 1; i > 0; i--) {\n"
"      var s = parts[i] + (tail ? '::' + tail : '');\n"
"      if (head.length + s.length > n) break;\n"
"      tail = s;\n"
"    }\n"
"    if (tail) { t.textContent = head + tail; return; }\n"
"  }\n"
"  t.textContent = name.substring(0, n - 1) + '\\u2026';\n"
"}\n"
"function layout(l0, v0, d0) {\n"
"  var sc = W / v0;\n"
"  frames.forEach(function (g) {\n"
"    var l = +g.getAttribute('data-l'), v = +g.getAttribute('data-v'), d = +g.getAttribute('data-d');\n"
"    var r = g.querySelector('rect'), t = g.querySelector('text'), x, w;\n"
"    if (d >= d0 && l >= l0 && l + v <= l0 + v0) { x = (l - l0) * sc; w = v * sc; g.style.opacity = ''; }\n"
"    else if (d < d0 && l <= l0 && l + v >= l0 + v0) { x = 0; w = W; g.style.opacity = '0.5'; }\n"
"    else { g.style.display = 'none'; return; }\n"
"    if (w < 0.1) { g.style.display = 'none'; return; }\n"
"    g.style.display = '';\n"
"    r.setAttribute('x', (PAD + x).toFixed(1)); r.setAttribute('width', w.toFixed(1));\n"
"    t.setAttribute('x', (PAD + x + 3).toFixed(1));\n"
"    fit(g, w);\n"
"  });\n"
"}\n"
"function zoom(g) {\n"
"  zoomed = g;\n"
"  layout(+g.getAttribute('data-l'), +g.getAttribute('data-v'), +g.getAttribute('data-d'));\n"
"  document.getElementById('unzoom').style.display = '';\n"
"}\n"
"function unzoom() {\n"
"  zoomed = null; layout(0, TOTAL, 0);\n"
"  document.getElementById('unzoom').style.display = 'none';\n"
"}\n"
"function details(s) { document.getElementById('details').textContent = s; }\n"
"function search(re) {\n"
"  var rx, sum = 0, seen = [];\n"
"  try { rx = new RegExp(re); } catch (e) { return; }\n"
"  frames.forEach(function (g) {\n"
"    var r = g.querySelector('rect'), hit = re && rx.test(g.getAttribute('data-name'));\n"
"    if (!r.getAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
"    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
"    if (!hit) return;\n"
"    var l = +g.getAttribute('data-l'), v = +g.getAttribute('data-v');\n"
"    for (var i = 0; i < seen.length; i++) if (l >= seen[i][0] && l + v <= seen[i][0] + seen[i][1]) return;\n"
"    seen.push([l, v]); sum += v;\n"
"  });\n"
"  document.getElementById('matched').textContent = re ? 'Matched: ' + (100 * sum / TOTAL).toFixed(1) + '%%' : '';\n"
"  document.getElementById('search').textContent = re ? 'Reset search' : 'Search';\n"
"  return sum;\n"
"}\n"
"window.addEventListener('load', function () {\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  frames.forEach(function (g) {\n"
"    var title = g.querySelector('title').textContent;\n"
"    g.addEventListener('click', function () { zoom(g); });\n"
"    g.addEventListener('mouseover', function () { details(title); });\n"
"    g.addEventListener('mouseout', function () { details(' '); });\n"
"  });\n"
"  document.getElementById('unzoom').addEventListener('click', unzoom);\n"
"  document.getElementById('search').addEventListener('click', function () {\n"
"    if (document.getElementById('search').textContent != 'Search') { search(''); return; }\n"
"    var re = prompt('Search for (a regular expression):', '');\n"
"    if (re) search(re);\n"
"  });\n"
"  unzoom();\n"
"});\n";

int flamegraph__write(struct flamegraph *fg, FILE *f, const char *title, const char *subtitle)
{
	struct fg_ctx c = { .f = f, .fg = fg };
	int height, depth = 0;
	char *body = NULL;
	size_t body_len = 0;
	FILE *m = open_memstream(&body, &body_len);

	if (!m)
		return -ENOMEM;
	fg->drawn = fg->hidden = 0;
	c.f = m;
	c.scale = fg->total ? (double)(WIDTH - 2 * PAD_SIDE) / (double)fg->total : 0;
	if (fg->total)
		write_node(&c, 0, 0, 0, 0);
	if (fclose(m)) {
		free(body);
		return -ENOMEM;
	}
	depth = c.max_depth + 1;
	height = PAD_TOP + depth * FRAME_H + PAD_BOTTOM;
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", WIDTH, height, WIDTH, height);
	fprintf(f, "<style>text { font-family: monospace; font-size: 12px; fill: #000; } "
		"g.f text { pointer-events: none; } g.f:hover rect { stroke: #000; stroke-width: 0.5; } "
		".b { cursor: pointer; fill: #336; }</style>\n");
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fprintf(f, script, WIDTH - 2 * PAD_SIDE, PAD_SIDE, FRAME_H, (long long)fg->total,
		unit_of(fg));
	fputs("]]></script>\n", f);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf8\"/>\n"
		"<text x=\"%d\" y=\"20\" text-anchor=\"middle\" style=\"font-size: 16px\">",
		WIDTH / 2);
	svg__escape(f, title ? title : "");
	fprintf(f, "</text>\n<text x=\"%d\" y=\"36\" text-anchor=\"middle\" fill=\"#555\">", WIDTH / 2);
	svg__escape(f, subtitle ? subtitle : "");
	fprintf(f, "</text>\n"
		"<text id=\"unzoom\" class=\"b\" x=\"%d\" y=\"20\" style=\"display: none\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"b\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		PAD_SIDE, WIDTH - PAD_SIDE, WIDTH - PAD_SIDE, height - 10, PAD_SIDE, height - 10);
	if (!fg->total)
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no %s in this "
			"profile</text>\n", WIDTH / 2, height / 2, unit_of(fg));
	/* frames upwards from the bottom: y = -(depth + 1) * FRAME_H, moved here */
	fprintf(f, "<g transform=\"translate(0,%d)\">\n", height - PAD_BOTTOM);
	fwrite(body, 1, body_len, f);
	fputs("</g>\n</svg>\n", f);
	free(body);
	return ferror(f) ? -EIO : 0;
}
