/*
 * The annotation of a function or a file: which lines (and instructions)
 * the profile's addresses fall on, the source text around them.
 */
#include "util/annotate/annotate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/annotate/disasm.h"
#include "util/annotate/source.h"
#include "util/annotate/through.h"
#include "util/array.h"
#include "util/db/db.h"
#include "util/error.h"
#include "util/record/maps.h"
#include "util/saturate.h"
#include "util/str.h"
#include "util/symbols/demangle.h"
#include "util/symbols/funcname.h"
#include "util/symbols/resolver.h"
#include "util/symbols/symbol.h"

/* A copy of one addr_row. */
struct arow {
	int64_t addr;
	char *file, *function;
	int line;
	struct ann_counts c;
};

struct rows {
	struct arow *v;
	size_t n, cap;
};

/* A file's line range being collected. */
struct span {
	const char *file;
	int first, last;
};

struct spans {
	struct span v[16];
	int n;
};

static int rows_add(const struct addr_row *r, void *ctx)
{
	struct rows *rs = ctx;
	struct arow *w;
	int err = 0;

	if (ALLOC_GROW(rs->v, rs->n + 1, rs->cap, 256))
		return -ENOMEM;
	w = &rs->v[rs->n];
	memset(w, 0, sizeof(*w));
	w->addr = r->addr;
	w->line = r->line;
	w->c.samples = r->samples;
	w->c.live_bytes = r->live_bytes;
	w->c.alloc_bytes = r->alloc_bytes;
	w->c.alloc_count = r->alloc_count;
	w->file = str__dup(r->file, &err);
	w->function = str__dup(r->function, &err);
	rs->n++;
	return err;
}

static void rows_free(struct rows *rs)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		free(rs->v[i].file);
		free(rs->v[i].function);
	}
	if (rs)
		free(rs->v);
	free(rs);
}

static void counts_add(struct ann_counts *to, const struct ann_counts *c)
{
	to->samples = sat__addu(to->samples, c->samples);
	to->live_bytes = sat__add(to->live_bytes, c->live_bytes);
	to->alloc_bytes = sat__add(to->alloc_bytes, c->alloc_bytes);
	to->alloc_count = sat__add(to->alloc_count, c->alloc_count);
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* path ends with want at a directory boundary: "src/x.rs" in "/p/src/x.rs" */
static bool path_suffix(const char *path, const char *want)
{
	size_t lp, lw;

	while (want[0] == '.' && want[1] == '/')
		want += 2;
	lp = path ? strlen(path) : 0;
	lw = strlen(want);
	if (!lw || lw > lp || strcmp(path + lp - lw, want))
		return false;
	return lw == lp || path[lp - lw - 1] == '/' || want[0] == '/';
}

/* ---- which function or file ------------------------------------------------ */

/* Distinct strings, for matches and the "several match" message. */
struct names {
	const char *v[8];
	int n;
	bool more;
};

static void names_add(struct names *ns, const char *s)
{
	for (int i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return;
	if (ns->n < 8)
		ns->v[ns->n++] = s;
	else
		ns->more = true;
}

static int ambiguous(const char *what, const char *target, const struct names *ns)
{
	pr_err("'%s' matches several %s:", target, what);
	for (int i = 0; i < ns->n; i++)
		fprintf(stderr, "\t%s\n", ns->v[i]);
	if (ns->more)
		fprintf(stderr, "\t...\n");
	pr_hint("give the full name, as in the list");
	return -RSPROF_EUSAGE;
}

static int match_file(const struct rows *rs, const char *want, const char **file)
{
	struct names ns = { .n = 0 };

	*file = NULL;
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].file && path_suffix(rs->v[i].file, want))
			names_add(&ns, rs->v[i].file);
	if (ns.n > 1)
		return ambiguous("source files", want, &ns);
	*file = ns.n ? ns.v[0] : NULL;
	return 0;
}

/* A function by name (util/symbols/funcname.h): one with rows, or any a stack names. */
static int match_function(const struct rows *rs, const struct through *t, const char *want,
			  const char **fn)
{
	*fn = NULL;
	for (int level = 0; level < FUNCNAME_LEVELS; level++) {
		struct names ns = { .n = 0 };

		for (size_t i = 0; i < rs->n; i++)
			if (funcname__match(rs->v[i].function, want, level))
				names_add(&ns, rs->v[i].function);
		for (int i = 0; t && i < t->names.n; i++)
			if (funcname__match(t->names.v[i], want, level))
				names_add(&ns, t->names.v[i]);
		if (ns.n > 1)
			return ambiguous("functions", want, &ns);
		if (ns.n) {
			*fn = ns.v[0];
			return 0;
		}
	}
	return 0;
}

/* ---- machine code ------------------------------------------------------------ */

static bool in_funcs(const struct annotation *a, uint64_t addr)
{
	for (int i = 0; i < a->n_funcs; i++)
		if (addr >= a->funcs[i].start && addr < a->funcs[i].end)
			return true;
	return false;
}

/* The first row at or above addr (rows are in address order). */
static size_t rows_lower(const struct rows *rs, uint64_t addr)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uint64_t)rs->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A call (or a jump out of the function: a tail call) names its target as
 * objdump and perf annotate do: "callq 0x401136 <my_alloc>", with
 * "+0x10" when it lands inside a function, from the module's ELF symbols
 * (PLT stubs as "malloc@plt").
 */
static void name_target(struct annotation *a, const struct ann_func *fn, struct ann_insn *in)
{
	uint64_t to = disasm__direct_target(in->text);
	struct code_range cr;
	size_t len = strlen(in->text);
	char *dm, name[160];

	if (!to || (in->text[0] == 'j' && to >= fn->start && to < fn->end))
		return;
	if (resolver__code(a->res, to, &cr) || !cr.name)
		return;
	dm = demangle(cr.name);
	demangle__short(dm ? dm : cr.name, 0, name, sizeof(name));
	free(dm);
	if (to == cr.start)
		snprintf(in->text + len, sizeof(in->text) - len, " <%s>", name);
	else
		snprintf(in->text + len, sizeof(in->text) - len, " <%s+%#llx>", name,
			 (unsigned long long)(to - cr.start));
}

static int func_decode(struct annotation *a, struct disasm *d, struct ann_func *fn,
		       const unsigned char *bytes, const struct rows *rs)
{
	size_t cap = 0;

	for (uint64_t at = fn->start; at < fn->end;) {
		struct ann_insn *in;
		const struct symbol *sym;

		if (ALLOC_GROW(fn->insns, fn->n + 1, cap, 128))
			return -ENOMEM;
		in = &fn->insns[fn->n++];
		memset(in, 0, sizeof(*in));
		in->addr = at;
		disasm__one(d, bytes + (at - fn->start), fn->end - at, at, &in->size, in->text,
			    sizeof(in->text));
		name_target(a, fn, in);
		sym = resolver__resolve(a->res, at);
		if (!sym)
			return -ENOMEM;
		if (sym->n_frames > 0) {
			in->file = symbol__frame(sym)->file;
			in->line = symbol__frame(sym)->line;
		}
		for (size_t k = rows_lower(rs, at);
		     k < rs->n && (uint64_t)rs->v[k].addr < at + in->size; k++)
			counts_add(&in->c, &rs->v[k].c);
		counts_add(&fn->c, &in->c);
		at += in->size;
	}
	return 0;
}

/* Add the function of machine code holding addr, unless known. */
static int funcs_add(struct annotation *a, uint64_t addr)
{
	struct code_range cr;
	struct ann_func *fn, *v;
	char *dm;

	if (in_funcs(a, addr) || resolver__code(a->res, addr, &cr))
		return 0;
	v = realloc(a->funcs, (a->n_funcs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->funcs = v;
	fn = &a->funcs[a->n_funcs];
	memset(fn, 0, sizeof(*fn));
	dm = demangle(cr.name);
	fn->name = dm ? dm : strdup(cr.name);
	fn->module = strdup(cr.module);
	fn->start = cr.start;
	fn->end = cr.end;
	a->n_funcs++;
	return fn->name && fn->module ? 0 : -ENOMEM;
}

static int func_of_addr(void *ctx, uint64_t addr, const struct ann_counts *c)
{
	(void)c;
	return funcs_add(ctx, addr);
}

/* The instruction holding addr, or NULL. */
static struct ann_insn *insn_at(struct annotation *a, uint64_t addr)
{
	for (int i = 0; i < a->n_funcs; i++) {
		struct ann_func *f = &a->funcs[i];
		size_t lo = 0, hi = f->n;

		if (addr < f->start || addr >= f->end)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (f->insns[mid].addr + (uint64_t)f->insns[mid].size <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < f->n && f->insns[lo].addr <= addr ? &f->insns[lo] : NULL;
	}
	return NULL;
}

static int insn_through(void *ctx, uint64_t addr, const struct ann_counts *c)
{
	struct ann_insn *in = insn_at(ctx, addr);

	if (in)
		counts_add(&in->incl, c);
	return 0;
}

/*
 * The machine code of the functions holding the chosen rows, decoded, with
 * each instruction's counts and line. A file rebuilt since the recording
 * no longer matches its addresses: when the profile's own symbols disagree
 * with the file's DWARF for most sampled addresses, the code is dropped.
 */
static int code_load(struct annotation *a, const struct rows *rs, const char *fn,
		     const char *file)
{
	struct disasm *d = NULL;
	int agree = 0, disagree = 0, err = 0;

	for (size_t i = 0; i < rs->n && !err; i++) {
		const struct arow *r = &rs->v[i];

		if (fn ? !same(r->function, fn) : !same(r->file, file))
			continue;
		err = funcs_add(a, (uint64_t)r->addr);
	}
	/* a function with no rows of its own: the code its stacks pass through */
	if (!err && fn && a->through)
		err = through__addrs(a->through, fn, func_of_addr, a);
	if (err)
		return err;
	if (!a->n_funcs) {
		a->code_note = "no machine code: the module files of the recording cannot be read"
			       " here";
		return 0;
	}
	err = disasm__new(&d);
	for (int i = 0; i < a->n_funcs && !err; i++) {
		struct code_range cr;

		err = resolver__code(a->res, a->funcs[i].start, &cr);
		if (!err)
			err = func_decode(a, d, &a->funcs[i], cr.bytes, rs);
	}
	disasm__delete(d);
	if (err)
		return err;
	for (size_t i = 0; i < rs->n; i++) {
		const struct symbol *s;

		if (!in_funcs(a, (uint64_t)rs->v[i].addr) || !rs->v[i].function)
			continue;
		s = resolver__resolve(a->res, (uint64_t)rs->v[i].addr);
		if (!s)
			return -ENOMEM;
		if (same(symbol__frame(s)->function, rs->v[i].function))
			agree++;
		else
			disagree++;
	}
	if (disagree > agree) {
		for (int i = 0; i < a->n_funcs; i++) {
			free(a->funcs[i].name);
			free(a->funcs[i].module);
			free(a->funcs[i].insns);
		}
		free(a->funcs);
		a->funcs = NULL;
		a->n_funcs = 0;
		a->code_note = "no machine code: the module files on disk no longer match the"
			       " recording (rebuilt since?)";
	}
	return 0;
}

/* ---- lines ----------------------------------------------------------------- */

static void spans_add(struct spans *sp, const char *file, int line)
{
	if (!file || line <= 0)
		return;
	for (int i = 0; i < sp->n; i++) {
		if (strcmp(sp->v[i].file, file))
			continue;
		if (line < sp->v[i].first)
			sp->v[i].first = line;
		if (line > sp->v[i].last)
			sp->v[i].last = line;
		return;
	}
	if (sp->n < (int)(sizeof(sp->v) / sizeof(sp->v[0])))
		sp->v[sp->n++] = (struct span){ file, line, line };
}

static int block_add(struct annotation *a, const struct span *sp, const struct source_paths *paths)
{
	struct ann_block *b, *v = realloc(a->blocks, (a->n_blocks + 1) * sizeof(*v));
	struct source **src;

	if (!v)
		return -ENOMEM;
	a->blocks = v;
	src = realloc(a->src, (a->n_blocks + 1) * sizeof(*src));
	if (!src)
		return -ENOMEM;
	a->src = src;
	src[a->n_blocks] = NULL;
	b = &a->blocks[a->n_blocks++];
	memset(b, 0, sizeof(*b));
	b->file = strdup(sp->file);
	if (!b->file)
		return -ENOMEM;
	b->err = source__find(sp->file, paths, &b->found);
	if (!b->err)
		b->err = source__read(b->found, &src[a->n_blocks - 1]);
	if (b->err == -ENOMEM)
		return -ENOMEM;
	b->n = sp->last - sp->first + 1;
	b->lines = calloc(b->n, sizeof(*b->lines));
	if (!b->lines)
		return -ENOMEM;
	for (int i = 0; i < b->n; i++) {
		const struct source *s = src[a->n_blocks - 1];
		int line = sp->first + i;

		b->lines[i].line = line;
		b->lines[i].text = s && line <= s->n ? s->lines[line - 1] : NULL;
		b->lines[i].target = line == a->line;
	}
	return 0;
}

/* Which rows count on the lines shown: the function's, or those in its code. */
static bool row_counts(const struct annotation *a, const struct arow *r)
{
	if (a->function)
		return same(r->function, a->function) || in_funcs(a, (uint64_t)r->addr);
	return true;
}

static int block_through(void *ctx, const char *file, int line, const struct ann_counts *c)
{
	struct annotation *a = ctx;

	for (int k = 0; k < a->n_blocks; k++) {
		struct ann_block *b = &a->blocks[k];
		int at = line - b->lines[0].line;

		if (strcmp(b->file, file) || at < 0 || at >= b->n)
			continue;
		counts_add(&b->lines[at].incl, c);
		counts_add(&b->incl, c);
	}
	return 0;
}

static int span_through(void *ctx, const char *file, int line, const struct ann_counts *c)
{
	(void)c;
	spans_add(ctx, file, line);
	return 0;
}

/*
 * The function's declaration line (DWARF) where its code starts, so that
 * the text opens on "static int f(...)" as perf annotate and pprof -list
 * show it, not on the first line with code. Only a few lines above the
 * first one shown: a declaration far away is not the function's text.
 */
static int decl_lines(struct annotation *a, const char *fn, struct spans *sp)
{
	for (int i = 0; i < a->n_funcs; i++) {
		const struct symbol *s = resolver__resolve(a->res, a->funcs[i].start);
		const struct frame *outer;

		if (!s)
			return -ENOMEM;
		outer = &s->frames[s->n_frames - 1];
		if (!s->decl_line || !same(outer->function, fn) || !outer->file)
			continue;
		for (int k = 0; k < sp->n; k++)
			if (!strcmp(sp->v[k].file, outer->file) && s->decl_line < sp->v[k].first &&
			    sp->v[k].first - s->decl_line <= 8)
				sp->v[k].first = s->decl_line;
	}
	return 0;
}

static int blocks_count(struct annotation *a, const struct rows *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct arow *r = &rs->v[i];

		if (!r->file || !row_counts(a, r))
			continue;
		for (int k = 0; k < a->n_blocks; k++) {
			struct ann_block *b = &a->blocks[k];
			int at = r->line - b->lines[0].line;

			if (strcmp(b->file, r->file) || at < 0 || at >= b->n)
				continue;
			counts_add(&b->lines[at].c, &r->c);
			counts_add(&b->c, &r->c);
		}
	}
	if (a->function && a->through)
		return through__lines(a->through, a->function, block_through, a);
	return 0;
}

/* The resolver of the recording, from its `map` table; NULL (with a note) when none. */
static int resolver_load(struct annotation *a, struct db *db, const char *exe)
{
	struct maps *m;
	int err = maps__from_profile(db, &m);

	if (err)
		return err;
	if (!m) {
		a->code_note = "no machine code: the profile has no `map` table (version 1)";
		return 0;
	}
	err = resolver__new_offline(m, exe, &a->res);
	if (err == -ENOMEM)
		return err;
	if (err)
		a->code_note = "no machine code: the recorded modules cannot be read here";
	return 0;
}

static int annotate_function(struct annotation *a, const struct rows *rs, const char *fn,
			     const struct ann_opts *o)
{
	struct spans sp = { .n = 0 };
	int err = 0;

	a->function = strdup(fn);
	if (!a->function)
		return -ENOMEM;
	for (size_t i = 0; i < rs->n; i++)
		if (same(rs->v[i].function, fn))
			counts_add(&a->c, &rs->v[i].c);
	if (a->through) {
		through__func(a->through, fn, &a->incl);
		a->incl_cpu = a->through->cpu;
		a->incl_heap = a->through->heap;
	}
	if (a->res)
		err = code_load(a, rs, fn, NULL);
	if (!err && a->through && a->n_funcs)
		err = through__addrs(a->through, fn, insn_through, a);
	if (err)
		return err;
	/* the function's lines: every instruction of its code that is its own */
	for (int i = 0; i < a->n_funcs; i++)
		for (size_t k = 0; k < a->funcs[i].n; k++) {
			const struct ann_insn *in = &a->funcs[i].insns[k];
			const struct symbol *s = resolver__resolve(a->res, in->addr);

			if (s && same(symbol__frame(s)->function, fn))
				spans_add(&sp, in->file, in->line);
		}
	for (size_t i = 0; i < rs->n; i++)
		if (same(rs->v[i].function, fn))
			spans_add(&sp, rs->v[i].file, rs->v[i].line);
	if (a->through)
		err = through__lines(a->through, fn, span_through, &sp);
	if (a->line)
		spans_add(&sp, a->file, a->line);
	if (!err && a->res)
		err = decl_lines(a, fn, &sp);
	/* one block per source file, in the order the code meets them */
	for (int i = 0; i < sp.n && !err; i++)
		err = block_add(a, &sp.v[i], o->paths);
	return err;
}

static int annotate_file(struct annotation *a, const struct rows *rs, const char *file,
			 const struct ann_opts *o)
{
	struct span sp = { .file = file, .first = 0, .last = 0 };
	int err = 0;

	a->file = strdup(file);
	if (!a->file)
		return -ENOMEM;
	for (size_t i = 0; i < rs->n; i++) {
		if (!same(rs->v[i].file, file))
			continue;
		counts_add(&a->c, &rs->v[i].c);
		if (rs->v[i].line > sp.last)
			sp.last = rs->v[i].line;
	}
	if (a->line) {
		sp.first = a->line > o->context ? a->line - o->context : 1;
		sp.last = a->line + o->context;
	} else {
		sp.first = 1;
		if (sp.last < 1)
			sp.last = 1;
	}
	if (a->res && o->insns)
		err = code_load(a, rs, NULL, file);
	if (!err)
		err = block_add(a, &sp, o->paths);
	/* the whole file: up to its last line when it could be read */
	if (!err && !a->line && a->src[0] && a->src[0]->n > a->blocks[0].n) {
		struct ann_block *b = &a->blocks[0];
		struct ann_line *v = realloc(b->lines, a->src[0]->n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->lines = v;
		for (int i = b->n; i < a->src[0]->n; i++)
			b->lines[i] = (struct ann_line){ .line = i + 1,
							 .text = a->src[0]->lines[i] };
		b->n = a->src[0]->n;
	}
	return err;
}

/* "FILE:LINE": the line, and the name without it (in *name, malloc'd). */
static int split_line(const char *target, char **name, int *line)
{
	const char *colon = strrchr(target, ':');
	const char *p;

	*line = 0;
	*name = strdup(target);
	if (!*name)
		return -ENOMEM;
	if (!colon || colon == target || colon[-1] == ':' || !colon[1])
		return 0;
	for (p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	*line = atoi(colon + 1);
	(*name)[colon - target] = '\0';
	return 0;
}

int annotation__new(struct db *db, const struct query_filter *f, const struct ann_opts *o,
		    struct annotation **out)
{
	struct annotation *a = calloc(1, sizeof(*a));
	struct rows *rs = calloc(1, sizeof(*rs));
	const char *file = NULL, *fn = NULL;
	char *name = NULL;
	int line = 0, err;

	*out = NULL;
	if (!a || !rs) {
		free(a);
		free(rs);
		return -ENOMEM;
	}
	a->rows = rs;
	err = db_query_addrs(db, f, &a->totals, rows_add, rs);
	if (!err)
		err = split_line(o->target, &name, &line);
	if (!err)
		err = match_file(rs, name, &file);
	if (!err && !file && line) {
		/* "name:12" where name is no file: the whole text is the function's name */
		free(name);
		line = 0;
		name = strdup(o->target);
		err = name ? 0 : -ENOMEM;
	}
	if (!err && !file)
		err = through__load(db, f, &a->through);
	if (!err && !file)
		err = match_function(rs, a->through, name, &fn);
	if (!err && !file && !fn) {
		pr_err("no function or source file '%s' in the profile", o->target);
		pr_hint("'rsprof report -s function' lists the functions, "
			"'rsprof report -s file' the files");
		err = -ENOENT;
	}
	if (!err)
		err = resolver_load(a, db, o->exe);
	if (!err && file) {
		a->line = line;
		/* FILE:LINE inside a function: that function, the line marked */
		if (line) {
			uint64_t best = 0;

			for (size_t i = 0; i < rs->n; i++) {
				const struct arow *r = &rs->v[i];
				uint64_t w = r->c.samples + (uint64_t)r->c.alloc_count + 1;

				if (same(r->file, file) && r->line == line && r->function && w > best) {
					best = w;
					fn = r->function;
				}
			}
		}
		/* else a function the stacks pass through on that line (a call) */
		if (line && !fn)
			err = through__load(db, f, &a->through);
		if (!err && line && !fn)
			fn = through__func_at(a->through, file, line);
		if (!err && fn && !a->through)
			err = through__load(db, f, &a->through);
		if (!err && fn) {
			a->file = strdup(file);
			err = a->file ? annotate_function(a, rs, fn, o) : -ENOMEM;
		} else if (!err) {
			err = annotate_file(a, rs, file, o);
		}
	} else if (!err) {
		err = annotate_function(a, rs, fn, o);
	}
	if (!err)
		err = blocks_count(a, rs);
	free(name);
	if (err) {
		annotation__delete(a);
		return err;
	}
	*out = a;
	return 0;
}

void annotation__delete(struct annotation *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->n_blocks; i++) {
		free(a->blocks[i].file);
		free(a->blocks[i].found);
		free(a->blocks[i].lines);
		source__delete(a->src[i]);
	}
	free(a->blocks);
	free(a->src);
	for (int i = 0; i < a->n_funcs; i++) {
		free(a->funcs[i].name);
		free(a->funcs[i].module);
		free(a->funcs[i].insns);
	}
	free(a->funcs);
	free(a->function);
	free(a->file);
	resolver__delete(a->res);
	through__delete(a->through);
	rows_free(a->rows);
	free(a);
}
