/*
 * Call graphs: the stacks of a window as sequences of function indices,
 * per-function self and total, trees of callers or callees.
 */
#include "util/analysis/callgraph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/read/query.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/strtab.h"
#include "util/symbols/funcname.h"
#include "util/symbols/symbol.h"

struct cg_stack {
	int *fn;		/* function per position, innermost first */
	int *file;		/* file string index per position, -1 unknown */
	int *line;
	int depth;
	int64_t value;
};

struct cg_priv {
	struct strtab names, files;
	int *fn_of_name;	/* names index -> funcs index */
	struct cg_stack *v;
	int n, cap;
	int *stamp;		/* per function: the last stack that counted it */
	int funcs_cap;
	int nodes_cap;
};

static int func_of(struct callgraph *cg, const char *name, int *fn)
{
	struct cg_priv *p = cg->priv;
	int idx, err = strtab__intern(&p->names, name, &idx);

	if (err)
		return err;
	if (idx < cg->n_funcs) {
		*fn = idx;
		return 0;
	}
	/* a new name: names and funcs grow together, same index */
	if (ALLOC_GROW2(cg->funcs, p->stamp, cg->n_funcs + 1, p->funcs_cap, 64))
		return -ENOMEM;
	memset(&cg->funcs[cg->n_funcs], 0, sizeof(cg->funcs[0]));
	cg->funcs[cg->n_funcs].name = p->names.v[idx];
	cg->funcs[cg->n_funcs].line = 0;
	p->stamp[cg->n_funcs] = -1;
	*fn = cg->n_funcs++;
	return 0;
}

static int stack_cb(const struct prof_stack *s, void *ctx)
{
	struct callgraph *cg = ctx;
	struct cg_priv *p = cg->priv;
	struct cg_stack *st;
	int n = 0, err = 0, id;
	char buf[512];

	for (int i = 0; i < s->depth; i++)
		n += s->frames[i].n_lines;
	if (ALLOC_GROW(p->v, p->n + 1, p->cap, 256))
		return -ENOMEM;
	id = p->n;
	st = &p->v[p->n++];
	memset(st, 0, sizeof(*st));
	st->value = s->value;
	st->fn = malloc(n * sizeof(int));
	st->file = malloc(n * sizeof(int));
	st->line = malloc(n * sizeof(int));
	if (!st->fn || !st->file || !st->line)
		return -ENOMEM;
	for (int i = 0; i < s->depth && !err; i++) {
		const struct prof_frame *f = &s->frames[i];

		for (int k = 0; k < f->n_lines && !err; k++) {
			const struct frame *l = &f->lines[k];
			int j = st->depth;

			err = func_of(cg, prof_frame__name(f, k, buf, sizeof(buf)), &st->fn[j]);
			/*
			 * frames of one unnamed module in a row ("[rsprof heap
			 * tracking]" three deep) are one node, as its time is
			 */
			if (!err && j && !l->function && st->fn[j] == st->fn[j - 1] && !l->file)
				continue;
			st->file[j] = -1;
			if (!err && l->file)
				err = strtab__intern(&p->files, l->file, &st->file[j]);
			st->line[j] = l->line;
			st->depth++;
		}
	}
	if (err)
		return err;
	if (s->depth > 1)
		cg->has_stacks = true;
	cg->total += s->value;
	if (st->depth)
		cg->funcs[st->fn[0]].self += s->value;
	for (int j = 0; j < st->depth; j++) {
		struct cg_func *fn = &cg->funcs[st->fn[j]];

		if (p->stamp[st->fn[j]] == id)
			continue;	/* recursion: once per stack */
		p->stamp[st->fn[j]] = id;
		fn->total += s->value;
	}
	return 0;
}

/* File strings are final once loaded (the table no longer grows): set the pointers. */
static void funcs_locate(struct callgraph *cg)
{
	struct cg_priv *p = cg->priv;

	for (int i = 0; i < p->n; i++) {
		const struct cg_stack *st = &p->v[i];

		for (int j = 0; j < st->depth; j++) {
			struct cg_func *fn = &cg->funcs[st->fn[j]];

			if (!fn->file && st->file[j] >= 0) {
				fn->file = p->files.v[st->file[j]];
				fn->line = st->line[j];
			}
		}
	}
}

int callgraph__load(struct db *db, const struct query_filter *f, bool heap,
		    struct callgraph **out)
{
	struct callgraph *cg = calloc(1, sizeof(*cg));
	struct query_filter all = *f;
	int err;

	*out = NULL;
	if (!cg)
		return -ENOMEM;
	cg->priv = calloc(1, sizeof(struct cg_priv));
	if (!cg->priv) {
		free(cg);
		return -ENOMEM;
	}
	cg->heap = heap;
	all.pattern = NULL;
	err = db_query_stacks(db, &all, heap, stack_cb, cg);
	if (err) {
		callgraph__delete(cg);
		return err;
	}
	funcs_locate(cg);
	*out = cg;
	return 0;
}

void callgraph__delete(struct callgraph *cg)
{
	struct cg_priv *p;

	if (!cg)
		return;
	p = cg->priv;
	if (p) {
		for (int i = 0; i < p->n; i++) {
			free(p->v[i].fn);
			free(p->v[i].file);
			free(p->v[i].line);
		}
		free(p->v);
		free(p->stamp);
		strtab__free(&p->names);
		strtab__free(&p->files);
		free(p);
	}
	free(cg->funcs);
	free(cg->nodes);
	free(cg);
}

int callgraph__find(const struct callgraph *cg, const char *want, int *func)
{
	for (int level = 0; level < FUNCNAME_LEVELS; level++) {
		int n = 0, first = -1;

		for (int i = 0; i < cg->n_funcs; i++) {
			if (!funcname__match(cg->funcs[i].name, want, level))
				continue;
			if (n++ == 0)
				first = i;
		}
		if (n == 1) {
			*func = first;
			return 0;
		}
		if (n > 1) {
			int shown = 0;

			pr_err("'%s' matches several functions:", want);
			for (int i = 0; i < cg->n_funcs && shown < 8; i++)
				if (funcname__match(cg->funcs[i].name, want, level)) {
					fprintf(stderr, "\t%s\n", cg->funcs[i].name);
					shown++;
				}
			if (n > shown)
				fprintf(stderr, "\t...\n");
			pr_hint("give the full name, as in the list");
			return -RSPROF_EUSAGE;
		}
	}
	pr_err("no function '%s' in the %s stacks of the profile", want,
	       cg->heap ? "heap" : "CPU");
	pr_hint("'rsprof report -s function%s' lists the functions", cg->heap ? " --heap" : "");
	return -ENOENT;
}

static int node_new(struct callgraph *cg, int func, const char *file, int line)
{
	struct cg_priv *p = cg->priv;
	struct cg_node *n;

	if (ALLOC_GROW(cg->nodes, cg->n_nodes + 1, p->nodes_cap, 256))
		return -ENOMEM;
	n = &cg->nodes[cg->n_nodes];
	memset(n, 0, sizeof(*n));
	n->func = func;
	n->file = file;
	n->line = line;
	n->child = n->next = -1;
	return cg->n_nodes++;
}

/* The child of parent for func (made when new): its index, or -ENOMEM. */
static int node_child(struct callgraph *cg, int parent, int func, const char *file, int line)
{
	int c, k;

	for (c = cg->nodes[parent].child; c >= 0; c = cg->nodes[c].next)
		if (cg->nodes[c].func == func)
			return c;
	k = node_new(cg, func, file, line);
	if (k < 0)
		return k;
	cg->nodes[k].next = cg->nodes[parent].child;
	cg->nodes[parent].child = k;
	return k;
}

int callgraph__tree(struct callgraph *cg, int func, enum cg_dir dir, int *root)
{
	struct cg_priv *p = cg->priv;
	int r = node_new(cg, func, cg->funcs[func].file, cg->funcs[func].line);

	if (r < 0)
		return r;
	cg->nodes[r].value = cg->funcs[func].total;
	for (int i = 0; i < p->n; i++) {
		const struct cg_stack *st = &p->v[i];
		int at = -1, node = r, j;

		/* callees from the outermost occurrence, callers from the innermost */
		for (j = 0; j < st->depth; j++) {
			if (st->fn[j] != func)
				continue;
			at = j;
			if (dir == CG_CALLERS)
				break;
		}
		if (at < 0)
			continue;
		if ((dir == CG_CALLEES && at == 0) || (dir == CG_CALLERS && at == st->depth - 1)) {
			node = node_child(cg, node, -1, NULL, 0);
			if (node < 0)
				return node;
			cg->nodes[node].value += st->value;
			continue;
		}
		for (j = dir == CG_CALLEES ? at - 1 : at + 1; j >= 0 && j < st->depth;
		     j += dir == CG_CALLEES ? -1 : 1) {
			/* the call site: in the caller, the position outside the callee */
			int site = dir == CG_CALLEES ? j + 1 : j;
			const char *file = st->file[site] >= 0 ? p->files.v[st->file[site]] : NULL;

			node = node_child(cg, node, st->fn[j], file, st->line[site]);
			if (node < 0)
				return node;
			cg->nodes[node].value += st->value;
		}
	}
	*root = r;
	return 0;
}

static int total_cmp(const void *x, const void *y, void *ctx)
{
	const struct callgraph *cg = ctx;
	const struct cg_func *a = &cg->funcs[*(const int *)x];
	const struct cg_func *b = &cg->funcs[*(const int *)y];

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	return strcmp(a->name, b->name);
}

int *callgraph__by_total(const struct callgraph *cg)
{
	int *v = malloc((cg->n_funcs + 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (int i = 0; i < cg->n_funcs; i++)
		v[i] = i;
	qsort_r(v, cg->n_funcs, sizeof(*v), total_cmp, (void *)cg);
	return v;
}
