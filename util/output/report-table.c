/*
 * The ranked tables of a profile, shared by `rsprof report` and
 * `rsprof top --stdio` so that both print the same columns, byte for byte.
 */
#include "util/output/report-table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/symbols/demangle.h"
#include "util/output/format.h"
#include "util/output/styled.h"
#include "util/output/term.h"
#include "util/symbols/srcpath.h"
#include "util/str.h"

void report_table__init(struct report_table *t, enum group_by group, bool full_paths)
{
	memset(t, 0, sizeof(*t));
	t->group = group;
	t->full_paths = full_paths;
}

void report_table__exit(struct report_table *t)
{
	for (int i = 0; i < t->n; i++) {
		free((char *)t->v[i].r.file);
		free((char *)t->v[i].r.function);
		free((char *)t->v[i].r.module);
		free((char *)t->v[i].r.cgroup);
		free(t->v[i].location);
		free(t->v[i].function_short);
	}
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

int report_table__add(const struct prof_row *r, void *ctx)
{
	struct report_table *t = ctx;
	char loc[4096], fn[1024];
	struct report_row *w;
	int err = 0;

	if (ALLOC_GROW(t->v, t->n + 1, t->cap, 32))
		return -ENOMEM;
	if (t->group == GROUP_PROCESS) {
		/* "cpu_split [4242]", the executable in the function column */
		snprintf(loc, sizeof(loc), "%s [%d]", r->function ? r->function : "?", r->pid);
	} else if (t->group == GROUP_MODULE || !r->file) {
		srcpath__display(NULL, r->module, loc, sizeof(loc));
		if (t->group != GROUP_MODULE && t->full_paths && r->module)
			snprintf(loc, sizeof(loc), "%s", r->module);
	} else if (t->full_paths) {
		snprintf(loc, sizeof(loc), "%s", r->file);
	} else {
		srcpath__display(r->file, r->module, loc, sizeof(loc));
	}
	if (t->group == GROUP_LINE && r->file && r->line > 0) {
		size_t l = strlen(loc);

		snprintf(loc + l, sizeof(loc) - l, ":%d", r->line);
	}
	if (t->group <= GROUP_FUNCTION || t->group == GROUP_SYMBOL)
		demangle__short(r->function, 200, fn, sizeof(fn));
	else if (t->group == GROUP_PROCESS && r->module)
		snprintf(fn, sizeof(fn), "%s", t->full_paths || !strrchr(r->module, '/') ?
			 r->module : strrchr(r->module, '/') + 1);
	else
		fn[0] = '\0';

	w = &t->v[t->n];
	memset(w, 0, sizeof(*w));
	w->r = *r;
	w->r.file = str__dup(r->file, &err);
	w->r.function = str__dup(r->function, &err);
	w->r.module = str__dup(r->module, &err);
	w->r.cgroup = str__dup(r->cgroup, &err);
	w->location = str__dup(loc, &err);
	w->function_short = str__dup(fn, &err);
	t->n++;		/* freed with the table even on error */
	return err;
}

/* perf's colours: a row with >= 5 % of the total is hot, >= 0.5 % warm. */
static int row_style(double pct)
{
	return pct >= 5.0 ? TS_HOT : pct >= 0.5 ? TS_WARM : TS_NORMAL;
}

/* A table for f: in colour on standard output when it gets colours. */
static struct table *table_for(const struct table_col *cols, int n, FILE *f)
{
	struct table *t = table__new(cols, n);

	if (t)
		table__set_color(t, f == stdout && term__color());
	return t;
}

/*
 * The Cgroup column of processes: shown when a process is in a cgroup
 * other than the root (a host's services, containers), its end kept (a
 * container's ID); "-" for a process whose cgroup is not known.
 */
static const struct table_col cgroup_col = { "Cgroup", TABLE_LEFT, TABLE_TRUNC_LEFT, 12 };

static bool cgroup_shown(const struct report_table *rt)
{
	if (rt->group != GROUP_PROCESS)
		return false;
	for (int i = 0; i < rt->n; i++)
		if (rt->v[i].r.cgroup && strcmp(rt->v[i].r.cgroup, "/"))
			return true;
	return false;
}

static const char *cgroup_cell(const struct report_row *w)
{
	return w->r.cgroup ? w->r.cgroup : "-";
}

int report_table__print_cpu(const struct report_table *rt, FILE *f, int width, int *hidden)
{
	const struct table_col cols[] = {
		{ "CPU%", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Location", TABLE_LEFT, TABLE_TRUNC_LEFT, 16 },
		{ "Function", TABLE_LEFT, TABLE_TRUNC_NAME, 12 },
		cgroup_col,
	};
	struct table *t = table_for(cols, cgroup_shown(rt) ? 4 : 3, f);
	int err = t ? 0 : -ENOMEM;

	if (hidden)
		*hidden = 0;
	for (int i = 0; i < rt->n && !err; i++) {
		const struct report_row *w = &rt->v[i];
		char pct[16];
		const char *cells[4] = { format__pct(w->r.pct, pct, sizeof(pct)), w->location,
					 w->function_short, cgroup_cell(w) };

		if (!rt->all && w->r.pct < 0.05) {
			if (hidden)
				(*hidden)++;
			continue;
		}
		err = table__add_row_style(t, cells, row_style(w->r.pct));
	}
	if (!err)
		err = table__print(t, f, width);
	table__delete(t);
	return err;
}

/*
 * What a heap row's memory is: "heap" (the malloc family),
 * "mmap" (anonymous mappings), "heap+mmap"; NULL for a CPU row or a row
 * that only freed.
 */
static const char *kinds_name(unsigned int k)
{
	if (k == HEAP_KINDS_MALLOC)
		return "heap";
	if (k == HEAP_KINDS_MMAP)
		return "mmap";
	return k ? "heap+mmap" : NULL;
}

bool report_table__live_hides(const struct report_table *rt)
{
	if (!rt->by_live || rt->all)
		return false;
	for (int i = 0; i < rt->n; i++)
		if (rt->v[i].r.live_bytes)
			return true;
	return false;
}

/*
 * Does a heap row show anything in the table as sorted? live_hides: ranked
 * by live bytes with some live: a row with none is runtime noise (a
 * one-off buffer freed long ago); with none live anywhere, the peaks show.
 */
static bool heap_row_shows(const struct report_table *rt, const struct report_row *w,
			   bool live_hides)
{
	if (live_hides)
		return w->r.live_bytes != 0;
	if (rt->allocated)
		return w->r.alloc_bytes || w->r.live_bytes;
	if (rt->temporary)	/* temporaries not counted ("-"): ranked by allocations */
		return (w->r.temp_count < 0 ? w->r.alloc_count > 0 : w->r.temp_count > 0) ||
		       w->r.live_bytes;
	return w->r.live_bytes || w->r.peak_bytes;
}

int report_table__print_heap(const struct report_table *rt, FILE *f, int width, int *hidden)
{
	static const struct table_col all[] = {
		{ "Heap", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Peak@cp", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Allocated", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Allocs", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Temp", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Location", TABLE_LEFT, TABLE_TRUNC_LEFT, 16 },
		{ "Function", TABLE_LEFT, TABLE_TRUNC_NAME, 12 },
	};
	/* the columns shown: Allocated and Temp when asked for, Cgroup for processes */
	bool shown[8] = { true, true, rt->allocated, true, rt->temporary, true, true,
			  cgroup_shown(rt) };
	struct table_col cols[8];
	struct table *t;
	bool live_hides = report_table__live_hides(rt);
	int nc = 0, err;

	for (int c = 0; c < 8; c++)
		if (shown[c])
			cols[nc++] = c < 7 ? all[c] : cgroup_col;
	t = table_for(cols, nc, f);
	err = t ? 0 : -ENOMEM;
	if (hidden)
		*hidden = 0;
	for (int i = 0; i < rt->n && !err; i++) {
		const struct report_row *w = &rt->v[i];
		char live[32], peak[32], al[32], n[32], tc[32], fn[1100];

		if (!rt->all && !heap_row_shows(rt, w, live_hides)) {
			if (hidden)
				(*hidden)++;
			continue;
		}
		const char *v[8] = {
			format__bytes(w->r.live_bytes, live, sizeof(live)),
			format__bytes(w->r.peak_bytes, peak, sizeof(peak)),
			format__bytes(w->r.alloc_bytes, al, sizeof(al)),
			format__count(w->r.alloc_count, n, sizeof(n)),
			w->r.temp_count < 0 ? "-" : format__count(w->r.temp_count, tc, sizeof(tc)),
			w->location, w->function_short, cgroup_cell(w),
		};
		const char *cells[8];
		int k;

		/* anonymous mappings, not malloc: tagged after the function */
		if (w->r.kinds & HEAP_KINDS_MMAP) {
			snprintf(fn, sizeof(fn), "%s%s[%s]", w->function_short,
				 *w->function_short ? " " : "", kinds_name(w->r.kinds));
			v[6] = fn;
		}
		k = 0;
		for (int c = 0; c < 8; c++)
			if (shown[c])
				cells[k++] = v[c];
		err = table__add_row_style(t, cells, row_style(w->r.pct));
	}
	if (!err)
		err = table__print(t, f, width);
	table__delete(t);
	return err;
}

void report_table__csv_header(FILE *f)
{
	fputs("table,pct,samples,live_bytes,peak_bytes,alloc_bytes,free_bytes,alloc_count,"
	      "free_count,location,file,line,function,module,pid,temp_count,kind\n", f);
}

static void csv_row(const char *table, const struct report_row *w, FILE *f)
{
	char num[64];

	fprintf(f, "%s,%.4f,%llu,%lld,%lld,%lld,%lld,%lld,%lld,", table, w->r.pct,
		(unsigned long long)w->r.samples, (long long)w->r.live_bytes,
		(long long)w->r.peak_bytes, (long long)w->r.alloc_bytes,
		(long long)w->r.free_bytes, (long long)w->r.alloc_count,
		(long long)w->r.free_count);
	format__csv_field(f, w->location);
	fputc(',', f);
	format__csv_field(f, w->r.file);
	fputc(',', f);
	if (w->r.line > 0) {
		snprintf(num, sizeof(num), "%d", w->r.line);
		fputs(num, f);
	}
	fputc(',', f);
	format__csv_field(f, w->r.function);
	fputc(',', f);
	format__csv_field(f, w->r.module);
	fputc(',', f);
	if (w->r.pid > 0)
		fprintf(f, "%d", w->r.pid);
	fputc(',', f);
	if (!strcmp(table, "heap") && w->r.temp_count >= 0)
		fprintf(f, "%lld", (long long)w->r.temp_count);
	fputc(',', f);
	if (kinds_name(w->r.kinds))
		fputs(kinds_name(w->r.kinds), f);
	fputc('\n', f);
}

void report_table__csv_rows(const struct report_table *t, const char *table, FILE *f)
{
	for (int i = 0; i < t->n; i++)
		csv_row(table, &t->v[i], f);
}

static void json_row(struct json *j, const struct report_row *w, bool heap, bool process)
{
	json__begin_object(j, NULL);
	json__string(j, "location", w->location);
	json__string(j, "file", w->r.file);
	if (w->r.line > 0)
		json__int(j, "line", w->r.line);
	else
		json__null(j, "line");
	json__string(j, "function", w->r.function);
	json__string(j, "module", w->r.module);
	if (w->r.pid > 0)
		json__int(j, "pid", w->r.pid);
	if (process)
		json__string(j, "cgroup", w->r.cgroup);
	json__double(j, "pct", w->r.pct);
	if (!heap) {
		json__uint(j, "samples", w->r.samples);
	} else {
		json__int(j, "live_bytes", w->r.live_bytes);
		json__int(j, "peak_bytes", w->r.peak_bytes);
		json__int(j, "alloc_bytes", w->r.alloc_bytes);
		json__int(j, "free_bytes", w->r.free_bytes);
		json__int(j, "alloc_count", w->r.alloc_count);
		json__int(j, "free_count", w->r.free_count);
		if (w->r.temp_count >= 0)
			json__int(j, "temp_count", w->r.temp_count);
		else
			json__null(j, "temp_count");
		json__string(j, "kind", kinds_name(w->r.kinds));
	}
	json__end_object(j);
}

void report_table__json_rows(const struct report_table *t, struct json *j, bool heap)
{
	for (int i = 0; i < t->n; i++)
		json_row(j, &t->v[i], heap, t->group == GROUP_PROCESS);
}
