/*
 * rsprof diff: what changed between two profiles, typically two builds of
 * one program. Sites are matched by source location (file, line, function;
 * --by function or file when lines moved); CPU compares each site's share
 * of its run's samples (%A, %B and the difference in percentage points),
 * heap compares live bytes at the end and allocation counts. Both tables
 * are sorted by the size of the change; sites of one run only are marked
 * new or gone. The header shows both runs' duration, samples, live and
 * peak heap. Either side may be a window of a run, FILE@A..B ("what changed
 * between the first minute and the last?"), and both may be windows of one
 * file.
 */
#include "builtin.h"

#include <errno.h>
#include <math.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/output/chart.h"
#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/analysis/diff.h"
#include "util/symbols/demangle.h"
#include "util/duration.h"
#include "util/window.h"
#include "util/error.h"
#include "util/output/escape.h"
#include "util/output/format.h"
#include "util/output/membuf.h"
#include "util/options.h"
#include "util/symbols/srcpath.h"

static struct diff_args {
	const char *by;
	const char *threshold;
	const char *filter;
	const char **alloc_fn;
	int cpu, heap, all;
} args;

enum { OPT_BY = OPT_VAL_BUILTIN, OPT_THRESHOLD };

#define DEFAULT_ROWS 20

static struct poptOption diff_options[] = {
	{ "by", 0, POPT_ARG_STRING, &args.by, OPT_BY,
	  "match sites by line (file, line, function; the default), function or file",
	  "line|function|file" },
	{ "cpu", 0, POPT_ARG_NONE, &args.cpu, 0, "show only the CPU comparison", NULL },
	{ "heap", 0, POPT_ARG_NONE, &args.heap, 0, "show only the heap comparison", NULL },
	{ "all", 'a', POPT_ARG_NONE, &args.all, 0,
	  "also the rows that show nothing (CPU: 0.0 % in both runs; heap: nothing live in "
	  "either and as many allocations), which are left out and counted", NULL },
	{ "threshold", 't', POPT_ARG_STRING, &args.threshold, OPT_THRESHOLD,
	  "leave out changes smaller than PCT (CPU: percentage points; heap: percent of "
	  "the larger live heap)", "PCT" },
	{ "filter", 0, POPT_ARG_STRING, &args.filter, 0,
	  "only sites whose path or function contains PAT (any case)", "PAT" },
	{ "alloc-fn", 0, POPT_ARG_ARGV, &args.alloc_fn, 0,
	  "heap: NAME is an allocation wrapper, count its callers (a glob; repeatable)", "NAME" },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_output, 0,
	  "Output options (-n N: rows per table, default 20):", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static int parse_by(const char *s, enum site_by *by)
{
	if (!strcmp(s, "line"))
		*by = SITE_BY_LINE;
	else if (!strcmp(s, "function"))
		*by = SITE_BY_FUNCTION;
	else if (!strcmp(s, "file"))
		*by = SITE_BY_FILE;
	else
		return -EINVAL;
	return 0;
}

static int parse_pct(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%")) || !isfinite(*v) || *v < 0)
		return -EINVAL;
	return 0;
}

static int option_cb(int val, const char *arg, void *ctx)
{
	enum site_by by;
	double t;

	if (val == OPT_BY && parse_by(arg, &by)) {
		pr_err("--by wants line, function or file, not '%s'", arg);
		return -EINVAL;
	}
	if (val == OPT_THRESHOLD && parse_pct(arg, &t)) {
		pr_err("--threshold wants a percentage >= 0 like 0.5, not '%s'", arg);
		return -EINVAL;
	}
	return 0;
}

static const char *status_name(enum diff_status s)
{
	switch (s) {
	case DIFF_NEW:
		return "new";
	case DIFF_GONE:
		return "gone";
	case DIFF_CHANGED:
		return "changed";
	case DIFF_MOVED:
		return "moved";
	default:
		return "same";
	}
}

/* The mark in the tables: new, gone, and where a moved line was in A. */
static const char *marker(const struct diff_row *r, char *buf, size_t len)
{
	if (r->status == DIFF_MOVED) {
		snprintf(buf, len, "moved from %d", r->line_a);
		return buf;
	}
	return r->status == DIFF_NEW || r->status == DIFF_GONE ? status_name(r->status) : "";
}

static char *location(const struct diff_row *r, char *buf, size_t len)
{
	if (!r->file) {
		srcpath__display(NULL, r->module, buf, len);
	} else if (r->line > 0) {
		snprintf(buf, len, "%s:%d", r->file, r->line);
	} else {
		snprintf(buf, len, "%s", r->file);
	}
	return buf;
}

/* One side: FILE, or FILE@A..B for a window of it. */
struct side_arg {
	char *path;
	struct time_window win;	/* TIME_WINDOW_ALL: the whole run */
	bool windowed;		/* given as FILE@A..B */
	const char *arg;	/* as given */
};

/*
 * "run.db@10s..20s": a file that exists is a file (a name may hold '@');
 * otherwise what follows the last '@' must be a window A..B (either end
 * may be left out, as --window in report).
 */
static int parse_side(const char *arg, struct side_arg *sa)
{
	const char *at = strrchr(arg, '@');

	sa->arg = arg;
	sa->win = TIME_WINDOW_ALL;
	sa->windowed = false;
	if (!at || !access(arg, F_OK)) {
		sa->path = strdup(arg);
		return sa->path ? 0 : -ENOMEM;
	}
	if (time_window__parse(at + 1, &sa->win)) {
		pr_err("'%s': no such file, and '%s' is not a window A..B", arg, at + 1);
		pr_hint("a window of a profile is FILE@A..B: run.db@0..30s, run.db@1m..");
		return -RSPROF_EUSAGE;
	}
	sa->path = strndup(arg, at - arg);
	sa->windowed = true;
	return sa->path ? 0 : -ENOMEM;
}

static void print_side(FILE *f, const char *tag, const char *file, const struct prof_summary *s,
		       bool any_heap, bool heap, const struct side_arg *sa, uint64_t w_samples,
		       int64_t w_live)
{
	char d[32], n[32], l[32], p[32], a[32], b[32];

	if (sa->windowed) {
		const struct time_window *w = &sa->win;
		uint64_t from = w->from_ms == TIME_NONE ? 0 : time_window__after(w);
		uint64_t to = w->to_ms == TIME_NONE || w->to_ms > s->duration_ms ?
			      s->duration_ms : w->to_ms;

		/* the window's numbers; the run's length for scale */
		fprintf(f, "%s: ", tag);
		escape__fputs(file, f);	/* util/output/escape.h */
		fprintf(f, "@%s..%s  window %s of %s  %s samples",
			duration__format(from, a, sizeof(a)), duration__format(to, b, sizeof(b)),
			duration__format(to > from ? to - from : 0, d, sizeof(d)),
			duration__format(s->duration_ms, p, sizeof(p)),
			format__count(w_samples, n, sizeof(n)));
		if (heap)
			fprintf(f, "  live %s at %s", format__bytes(w_live, l, sizeof(l)), b);
		else if (any_heap)
			fputs("  no heap data", f);
		fputc('\n', f);
		return;
	}
	fprintf(f, "%s: ", tag);
	escape__fputs(file, f);
	fprintf(f, "  %s  %s samples",
		duration__format(s->duration_ms, d, sizeof(d)),
		format__count(s->samples, n, sizeof(n)));
	if (heap)
		fprintf(f, "  live %s  peak %s", format__bytes(s->live_bytes, l, sizeof(l)),
			format__bytes(s->peak_bytes, p, sizeof(p)));
	else if (any_heap)
		fputs("  no heap data", f);
	fputc('\n', f);
}

/* The rows a table left out, in one line under it. */
static void print_hidden(FILE *f, size_t n)
{
	if (n)
		fprintf(f, "# %zu %s not shown (-a shows them)\n", n,
			n == 1 ? "row that shows nothing" : "rows that show nothing");
}

static int print_cpu_table(FILE *f, const struct diff *d, const char *delta)
{
	const struct table_col cols[] = {
		{ "%A", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "%B", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ delta, TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "", TABLE_LEFT, TABLE_TRUNC_NONE, 0 },
		{ "Location", TABLE_LEFT, TABLE_TRUNC_LEFT, 16 },
		{ "Function", TABLE_LEFT, TABLE_TRUNC_NAME, 12 },
	};
	struct table *t = table__new(cols, 6);
	int err = 0;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_cpu && !err; i++) {
		const struct diff_row *r = &d->cpu[i];
		char a[16], b[16], dl[16], loc[1100], fn[512], mk[32];
		const char *cells[6];

		format__pct(r->pct_a, a, sizeof(a));
		format__pct(r->pct_b, b, sizeof(b));
		if (fabs(r->delta_pct) < 0.05)
			snprintf(dl, sizeof(dl), "%.1f", 0.0);
		else
			snprintf(dl, sizeof(dl), "%+.1f", r->delta_pct);
		cells[0] = r->status == DIFF_NEW ? "-" : a;
		cells[1] = r->status == DIFF_GONE ? "-" : b;
		cells[2] = dl;
		cells[3] = marker(r, mk, sizeof(mk));
		cells[4] = location(r, loc, sizeof(loc));
		cells[5] = demangle__short(r->function, 80, fn, sizeof(fn));
		err = table__add_row(t, cells);
	}
	fprintf(f, "\nCPU: share of each run's samples, %s in percentage points\n", delta);
	if (!err && d->n_cpu)
		err = table__print(t, f, 0);
	else if (!err && !d->n_cpu_noise)
		fputs("  (no CPU samples to compare)\n", f);
	if (!err)
		print_hidden(f, d->n_cpu_noise);
	table__delete(t);
	return err;
}

static int print_heap_table(FILE *f, const struct diff *d, const char *delta)
{
	const struct table_col cols[] = {
		{ "Live A", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Live B", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ delta, TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Allocs A", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Allocs B", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "", TABLE_LEFT, TABLE_TRUNC_NONE, 0 },
		{ "Location", TABLE_LEFT, TABLE_TRUNC_LEFT, 16 },
		{ "Function", TABLE_LEFT, TABLE_TRUNC_NAME, 12 },
	};
	struct table *t = table__new(cols, 8);
	int err = 0;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_heap && !err; i++) {
		const struct diff_row *r = &d->heap[i];
		char a[32], b[32], dl[32], ca[32], cb[32], loc[1100], fn[512], mk[32];
		const char *cells[8];

		cells[0] = r->status == DIFF_NEW ? "-" : format__bytes(r->live_a, a, sizeof(a));
		cells[1] = r->status == DIFF_GONE ? "-" : format__bytes(r->live_b, b, sizeof(b));
		cells[2] = format__bytes_delta(r->delta_bytes, dl, sizeof(dl));
		cells[3] = format__count((uint64_t)r->allocs_a, ca, sizeof(ca));
		cells[4] = format__count((uint64_t)r->allocs_b, cb, sizeof(cb));
		cells[5] = marker(r, mk, sizeof(mk));
		cells[6] = location(r, loc, sizeof(loc));
		cells[7] = demangle__short(r->function, 80, fn, sizeof(fn));
		err = table__add_row(t, cells);
	}
	fprintf(f, "\nHeap: live bytes at the end of each run, and allocations\n");
	if (!err && d->n_heap)
		err = table__print(t, f, 0);
	else if (!err && !d->n_heap_noise)
		fputs("  (no heap data to compare)\n", f);
	if (!err)
		print_hidden(f, d->n_heap_noise);
	table__delete(t);
	return err;
}

static int print_text(FILE *f, const struct side_arg *sa, const struct side_arg *sb,
		      const struct diff *d, const struct diff_opts *o, bool cpu, bool heap)
{
	const char *delta = chart__locale_utf8() ? "\u0394" : "Delta";
	bool any_heap = d->heap_a || d->heap_b;
	int err = 0;

	print_side(f, "A", sa->path, &d->a, any_heap, d->heap_a, sa, d->win_samples[0],
		   d->win_live[0]);
	print_side(f, "B", sb->path, &d->b, any_heap, d->heap_b, sb, d->win_samples[1],
		   d->win_live[1]);
	if (d->identical)
		fputs("no change: both profiles hold the same numbers for every site\n", f);
	if (cpu)
		err = print_cpu_table(f, d, delta);
	if (!err && heap) {
		if (d->heap_a && d->heap_b)
			err = print_heap_table(f, d, delta);
		else if (any_heap)
			fprintf(f, "\nHeap: only %s has heap data, nothing to compare\n",
				d->heap_a ? "A" : "B");
		else if (!cpu)
			fputs("\nHeap: neither profile has heap data\n", f);
	}
	return err ? err : ferror(f) ? -EIO : 0;
}

static void csv_row(FILE *f, const char *kind, const struct diff_row *r, bool cpu)
{
	char loc[1100];

	fprintf(f, "%s,%s,", kind, status_name(r->status));
	format__csv_field(f, location(r, loc, sizeof(loc)));
	fputc(',', f);
	format__csv_field(f, r->file ? r->file : "");
	fprintf(f, ",%d,", r->line);
	format__csv_field(f, r->function ? r->function : "");
	if (cpu)
		fprintf(f, ",%.4f,%.4f,%.4f,%llu,%llu\n", r->pct_a, r->pct_b, r->delta_pct,
			(unsigned long long)r->samples_a, (unsigned long long)r->samples_b);
	else
		fprintf(f, ",%lld,%lld,%lld,%lld,%lld\n", (long long)r->live_a,
			(long long)r->live_b, (long long)r->delta_bytes, (long long)r->allocs_a,
			(long long)r->allocs_b);
}

static int print_csv(FILE *f, const struct diff *d, bool cpu, bool heap)
{
	/* one table: for cpu rows a, b, delta are percentages and counts are samples;
	 * for heap rows they are live bytes and counts are allocations */
	fputs("kind,status,location,file,line,function,a,b,delta,count_a,count_b\n", f);
	for (size_t i = 0; cpu && i < d->n_cpu; i++)
		csv_row(f, "cpu", &d->cpu[i], true);
	for (size_t i = 0; heap && d->heap_a && d->heap_b && i < d->n_heap; i++)
		csv_row(f, "heap", &d->heap[i], false);
	return ferror(f) ? -EIO : 0;
}

static void json_side(struct json *j, const char *key, const char *file,
		      const struct prof_summary *s, bool heap, const struct side_arg *sa,
		      uint64_t w_samples, int64_t w_live)
{
	json__begin_object(j, key);
	json__string(j, "file", file);
	if (sa->windowed) {
		const struct time_window *w = &sa->win;

		json__begin_object(j, "window");
		if (w->from_ms != TIME_NONE)
			json__uint(j, "from_ms", time_window__after(w));
		else
			json__null(j, "from_ms");
		if (w->to_ms != TIME_NONE)
			json__uint(j, "to_ms", w->to_ms);
		else
			json__null(j, "to_ms");
		json__uint(j, "samples", w_samples);
		json__int(j, "live_bytes", w_live);
		json__end_object(j);
	} else {
		json__null(j, "window");
	}
	json__uint(j, "duration_ms", s->duration_ms);
	json__uint(j, "checkpoints", s->checkpoints);
	json__uint(j, "samples", s->samples);
	json__bool(j, "has_heap", heap);
	json__int(j, "live_bytes", s->live_bytes);
	json__int(j, "peak_bytes", s->peak_bytes);
	json__end_object(j);
}

static void json_row(struct json *j, const struct diff_row *r, bool cpu)
{
	char loc[1100];

	json__begin_object(j, NULL);
	json__string(j, "status", status_name(r->status));
	json__string(j, "location", location(r, loc, sizeof(loc)));
	json__string(j, "file", r->file);
	json__int(j, "line", r->line);
	if (r->status == DIFF_MOVED)
		json__int(j, "line_a", r->line_a);
	json__string(j, "function", r->function);
	if (cpu) {
		json__double(j, "pct_a", r->pct_a);
		json__double(j, "pct_b", r->pct_b);
		json__double(j, "delta_pct", r->delta_pct);
		json__uint(j, "samples_a", r->samples_a);
		json__uint(j, "samples_b", r->samples_b);
	} else {
		json__int(j, "live_a", r->live_a);
		json__int(j, "live_b", r->live_b);
		json__int(j, "delta_bytes", r->delta_bytes);
		json__int(j, "allocs_a", r->allocs_a);
		json__int(j, "allocs_b", r->allocs_b);
	}
	json__end_object(j);
}

static int print_json(FILE *f, const struct side_arg *sa, const struct side_arg *sb,
		      const struct diff *d, const struct diff_opts *o, const char *by, bool cpu,
		      bool heap)
{
	struct json j;

	json__init(&j, f);
	json__begin_object(&j, NULL);
	json_side(&j, "a", sa->path, &d->a, d->heap_a, sa, d->win_samples[0], d->win_live[0]);
	json_side(&j, "b", sb->path, &d->b, d->heap_b, sb, d->win_samples[1], d->win_live[1]);
	json__string(&j, "by", by);
	json__bool(&j, "identical", d->identical);
	if (cpu) {
		json__begin_array(&j, "cpu");
		for (size_t i = 0; i < d->n_cpu; i++)
			json_row(&j, &d->cpu[i], true);
		json__end_array(&j);
	}
	if (heap && d->heap_a && d->heap_b) {
		json__begin_array(&j, "heap");
		for (size_t i = 0; i < d->n_heap; i++)
			json_row(&j, &d->heap[i], false);
		json__end_array(&j);
	}
	json__end_object(&j);
	return json__finish(&j);
}

static int diff_run(const char *arg_a, const char *arg_b)
{
	/* --json and --csv keep every row, as report's */
	struct diff_opts o = { .by = SITE_BY_LINE, .pattern = args.filter,
			       .limit = output_args.top_n ? output_args.top_n : DEFAULT_ROWS,
			       .all = args.all || output_args.json || output_args.csv };
	bool cpu = args.cpu || !args.heap, heap = args.heap || !args.cpu;
	struct side_arg sa = { 0 }, sb = { 0 };
	const char *fa, *fb;
	struct db *a = NULL, *b = NULL;
	struct diff *d = NULL;
	struct membuf out;
	int err;

	err = parse_side(arg_a, &sa);
	if (!err)
		err = parse_side(arg_b, &sb);
	if (err)
		goto out;
	fa = sa.path;
	fb = sb.path;
	o.win[0] = sa.win;
	o.win[1] = sb.win;
	if (args.by)
		parse_by(args.by, &o.by);
	if (args.threshold)
		parse_pct(args.threshold, &o.threshold);
	for (size_t i = 0; args.alloc_fn && args.alloc_fn[i]; i++) {
		if (!*args.alloc_fn[i] || strchr(args.alloc_fn[i], '\n')) {
			pr_err("--alloc-fn: '%s' is not a function name or pattern", args.alloc_fn[i]);
			err = -RSPROF_EUSAGE;
			goto out;
		}
	}
	o.alloc_fn = args.alloc_fn;

	err = profile__open(fa, &a);
	if (!err)
		err = profile__open(fb, &b);
	/* one snapshot each: header and tables agree while a recorder writes */
	if (!err)
		err = db__snapshot_begin(a);
	if (!err)
		err = db__snapshot_begin(b);
	if (!err)
		err = diff__compute(a, b, &o, &d);
	/* FILE@A..B within the recording, as report's --window */
	if (!err)
		err = window__check(&sa.win, d->a.duration_ms, arg_a);
	if (!err)
		err = window__check(&sb.win, d->b.duration_ms, arg_b);
	if (a)
		db__snapshot_end(a);
	if (b)
		db__snapshot_end(b);
	if (err)
		goto out;

	/* stdout gets the whole document or nothing */
	err = membuf__open(&out);
	if (!err && output_args.csv)
		err = print_csv(out.f, d, cpu, heap);
	else if (!err && output_args.json)
		err = print_json(out.f, &sa, &sb, d, &o, args.by ? args.by : "line", cpu, heap);
	else if (!err)
		err = print_text(out.f, &sa, &sb, d, &o, cpu, heap);
	err = membuf__flush(&out, err, stdout);
	if (err == -ENOMEM)
		pr_err("out of memory");
out:
	diff__delete(d);
	if (db__close(b) && !err)
		err = -RSPROF_EDB;
	if (db__close(a) && !err)
		err = -RSPROF_EDB;
	free(sa.path);
	free(sb.path);
	return exit_from_err(err);
}

int cmd_diff(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof diff", argc, argv, diff_options, 0);
	int ret = options_parse(pc, "[OPTION...] A.db[@A..B] B.db[@A..B]", option_cb, NULL);

	if (ret == 0) {
		int n;
		const char **a = options_args(pc, &n);

		if (options_output_check()) {
			ret = EXIT_USAGE;
		} else if (n != 2) {
			pr_err(n < 2 ? "two profiles are needed" : "too many arguments");
			pr_hint("rsprof diff BEFORE.db AFTER.db, or two windows: run.db@0..1m run.db@1m..");
			ret = EXIT_USAGE;
		} else {
			options_output_pager();
			ret = diff_run(a[0], a[1]);
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	for (size_t i = 0; args.alloc_fn && args.alloc_fn[i]; i++)
		free((char *)args.alloc_fn[i]);
	free(args.alloc_fn);
	args.alloc_fn = NULL;
	poptFreeContext(pc);
	return ret;
}
