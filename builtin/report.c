/*
 * rsprof report: the ranked tables of a profile. CPU% by source line (or
 * function, file, module) and, when the profile has heap data, live heap
 * bytes by allocation site with their peak and allocation counts. Windows
 * in time (--since, --until, --window), heap as of a moment (--at), a
 * pattern, a threshold; text fitting the terminal, CSV or one JSON document.
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/db/read/addrs.h"
#include "util/analysis/callgraph.h"
#include "util/db/db.h"
#include "util/db/read/processes.h"
#include "util/db/read/profile.h"
#include "util/db/read/query.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/window.h"
#include "util/output/callgraph.h"
#include "util/output/chart.h"
#include "util/output/escape.h"
#include "util/output/export.h"
#include "util/output/format.h"
#include "util/output/membuf.h"
#include "util/output/meta-json.h"
#include "util/options.h"
#include "util/output/folded.h"
#include "util/output/pprof.h"
#include "util/output/report-table.h"
#include "util/output/resident.h"
#include "util/symbols/srcpath.h"
#include "util/output/styled.h"
#include "util/output/term.h"
#include "util/record/maps.h"
#include "util/saturate.h"
#include "util/symbols/symbol.h"

static struct report_opts {
	int cpu, heap, all;
	double threshold;
	const char *filter;
	const char *sort;
	int pid;
	int full_paths;
	const char *format;
	const char **alloc_fn;
	const char *output;
	const char *file;
	int graph;
	const char *callers, *callees;
	const char *sort_by;
} opts;

enum report_format { FMT_TEXT, FMT_FOLDED, FMT_PPROF };

static const char report_usage[] = "[OPTION...] [FILE]";

static struct poptOption report_options[] = {
	{ "cpu", 0, POPT_ARG_NONE, &opts.cpu, 0, "show the CPU table only", NULL },
	{ "all", 'a', POPT_ARG_NONE, &opts.all, 0,
	  "also the rows that show nothing (0.0 % of the CPU; heap sites with nothing "
	  "live when others hold some, else with neither live bytes nor a peak), which "
	  "are left out and counted", NULL },
	{ "heap", 0, POPT_ARG_NONE, &opts.heap, 0, "show the heap table only", NULL },
	{ "threshold", 't', POPT_ARG_DOUBLE, &opts.threshold, 0,
	  "leave out rows below PCT percent of the total", "PCT" },
	{ "filter", 0, POPT_ARG_STRING, &opts.filter, 0,
	  "only locations whose path or function contains PAT (any case)", "PAT" },
	{ "sort", 's', POPT_ARG_STRING, &opts.sort, 0,
	  "aggregate by line, function, file, module, symbol or process (default: line)", "KEY" },
	{ "pid", 0, POPT_ARG_INT, &opts.pid, 0,
	  "only the samples and allocations of process PID, one of the recorded tree's", "PID" },
	{ "full-paths", 0, POPT_ARG_NONE, &opts.full_paths, 0,
	  "show source paths as recorded, not shortened", NULL },
	{ "alloc-fn", 0, POPT_ARG_ARGV, &opts.alloc_fn, 0,
	  "heap: NAME is an allocation wrapper, count its callers (a glob; repeatable)", "NAME" },
	{ "format", 0, POPT_ARG_STRING, &opts.format, 0,
	  "text (default), folded (flame graph stacks) or pprof (gzipped protobuf)", "FMT" },
	{ "call-graph", 'g', POPT_ARG_NONE, &opts.graph, 0,
	  "functions by children (total) and self, each with its callees (needs stacks)", NULL },
	{ "callers", 0, POPT_ARG_STRING, &opts.callers, 0,
	  "the callers of function FUNC, as a tree, with their shares", "FUNC" },
	{ "callees", 0, POPT_ARG_STRING, &opts.callees, 0,
	  "what function FUNC calls, as a tree, with shares", "FUNC" },
	{ "sort-by", 0, POPT_ARG_STRING, &opts.sort_by, 0,
	  "heap (not with --cpu): rank sites by live (default), peak, allocated (bytes), "
	  "allocs (count) or "
	  "temporary (count freed before the thread's next allocation or free; glibc malloc's "
	  "blocks only)",
	  "KEY" },
	{ "output", 'o', POPT_ARG_STRING, &opts.output, 0,
	  "write the folded or pprof export to FILE instead of stdout", "FILE" },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_window, 0, "Time window:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_output, 0, "Output options:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

struct report {
	struct db *db;
	struct prof_summary sum;
	struct query_filter f;
	bool show_cpu, show_heap;
	uint64_t cpu_total;
	int64_t heap_total;
	struct report_table cpu, heap;
	struct prof_resolution res, res_at;	/* record --retain: folded time read */
	struct heap_hint hint;
	struct callgraph *hint_cg;	/* heap stacks, when the hint's site has callers to show */
	char *meta_pid, *meta_comm, *meta_exe, *cpu_scope;
	char *meta_temp, *meta_backend;	/* heap_temporary, heap_backend */
	char *meta_hist, *meta_hist_dropped;	/* alloc_history_events, _dropped */
	char *meta_unwound, *meta_truncated;	/* cpu_stacks_unwound, _truncated */
	int n_processes;
	enum report_format format;
	bool at_peak;		/* --at peak */
};

static const char *const group_names[] = { "line", "function", "file", "module", "process",
						   "symbol" };
#define N_GROUPS (int)(sizeof(group_names) / sizeof(group_names[0]))
static const char *const heap_sort_names[] = { "live", "peak", "allocated", "allocs",
						"temporary" };
#define N_HEAP_SORTS (int)(sizeof(heap_sort_names) / sizeof(heap_sort_names[0]))

/* --since/--until/--window/--at into the filter; needs the duration. */
static int parse_window(struct report *rp)
{
	return window__apply(&window_args, rp->sum.duration_ms, rp->sum.peak_ms, &rp->f, &rp->at_peak);
}

static int parse_opts(struct report *rp)
{
	int err = options_output_check();

	if (err)
		return err;
	if (opts.threshold < 0 || opts.threshold > 100) {
		pr_err("-t/--threshold wants a percentage from 0 to 100, not %g", opts.threshold);
		return -RSPROF_EUSAGE;
	}
	rp->f.group = GROUP_LINE;
	if (opts.sort) {
		int i;

		for (i = 0; i < N_GROUPS; i++)
			if (!strcmp(opts.sort, group_names[i]))
				break;
		if (i == N_GROUPS) {
			pr_err("-s/--sort: unknown key '%s'", opts.sort);
			pr_hint("use line, function, file, module, symbol or process");
			return -RSPROF_EUSAGE;
		}
		rp->f.group = (enum group_by)i;
	}
	rp->format = FMT_TEXT;
	if (opts.format && !strcmp(opts.format, "folded")) {
		rp->format = FMT_FOLDED;
	} else if (opts.format && !strcmp(opts.format, "pprof")) {
		rp->format = FMT_PPROF;
	} else if (opts.format && strcmp(opts.format, "text")) {
		pr_err("--format: unknown format '%s'", opts.format);
		pr_hint("use text, folded or pprof");
		return -RSPROF_EUSAGE;
	}
	if (rp->format != FMT_TEXT && (output_args.json || output_args.csv)) {
		pr_err("--format %s cannot be combined with --json or --csv", opts.format);
		return -RSPROF_EUSAGE;
	}
	if (opts.output && rp->format == FMT_TEXT) {
		pr_err("-o/--output is for --format folded or pprof");
		pr_hint("text tables go to stdout: redirect them");
		return -RSPROF_EUSAGE;
	}
	if (rp->format == FMT_PPROF && !opts.output && isatty(STDOUT_FILENO)) {
		pr_err("--format pprof writes a binary file, not for a terminal");
		pr_hint("name a file: rsprof report --format pprof -o cpu.pb.gz");
		return -RSPROF_EUSAGE;
	}
	for (size_t i = 0; opts.alloc_fn && opts.alloc_fn[i]; i++) {
		if (!*opts.alloc_fn[i] || strchr(opts.alloc_fn[i], '\n')) {
			pr_err("--alloc-fn: '%s' is not a function name or pattern", opts.alloc_fn[i]);
			return -RSPROF_EUSAGE;
		}
	}
	rp->f.alloc_fn = opts.alloc_fn;
	if (opts.sort_by) {
		int i;

		for (i = 0; i < N_HEAP_SORTS; i++)
			if (!strcmp(opts.sort_by, heap_sort_names[i]))
				break;
		if (i == N_HEAP_SORTS) {
			pr_err("--sort-by: unknown key '%s'", opts.sort_by);
			pr_hint("use live, peak, allocated, allocs or temporary");
			return -RSPROF_EUSAGE;
		}
		rp->f.heap_sort = (enum heap_sort)i;
		/* every key ranks the heap table: with --cpu there is none to rank */
		if (opts.cpu && !opts.heap) {
			pr_err("--sort-by %s ranks the heap table, and --cpu shows none",
			       opts.sort_by);
			pr_hint("the CPU table ranks by CPU%%: leave out --sort-by, or use --heap");
			return -RSPROF_EUSAGE;
		}
	}
	if (opts.graph + (opts.callers != NULL) + (opts.callees != NULL) > 1) {
		pr_err("-g/--call-graph, --callers and --callees: one at a time");
		return -RSPROF_EUSAGE;
	}
	if ((opts.graph || opts.callers || opts.callees) && rp->format != FMT_TEXT) {
		pr_err("--format %s cannot be combined with a call graph view", opts.format);
		return -RSPROF_EUSAGE;
	}
	if ((opts.graph || opts.callers || opts.callees) && opts.cpu && opts.heap) {
		pr_err("a call graph is of CPU or of heap stacks: --cpu or --heap, not both");
		return -RSPROF_EUSAGE;
	}
	if (opts.pid < 0) {
		pr_err("--pid: '%d' is not a process ID", opts.pid);
		return -RSPROF_EUSAGE;
	}
	rp->f.pid = opts.pid;
	rp->f.pattern = opts.filter && *opts.filter ? opts.filter : NULL;
	rp->f.limit = output_args.top_n ? output_args.top_n : 20;
	rp->f.threshold_pct = opts.threshold;
	/* folded stacks and pprof are for a file or a pipe, never paged */
	if (rp->format == FMT_TEXT)
		options_output_pager();
	return 0;
}

/* ---- output ------------------------------------------------------------- */

/*
 * Most of the heap at its peak in anonymous mappings ([mmap] rows): an
 * allocator's arenas (CPython's pymalloc without its hook, a Rust
 * #[global_allocator] that maps its own memory and is inlined into its
 * callers), whose blocks the tracker does not see one by one. Say so,
 * and what makes them visible.
 */
static void mmap_hint(struct db *db, FILE *o)
{
	int64_t m = 0, l = 0;
	char a[32];

	if (db_query_heap_mmap_peak(db, &m, &l))
		return;		/* a hint: nothing to say */
	if (l >= (1 << 20) && m * 2 > l)
		fprintf(o, "# heap:     %.0f%% of the heap at its peak (%s) is anonymous mappings"
		       " ([mmap] rows):\n"
		       "#           an allocator's arenas, whose blocks rsprof does not see. To see"
		       " them: CPython, PYTHONMALLOC=malloc;\n"
		       "#           a Rust #[global_allocator] over its own mmap, allocate through"
		       " System, mimalloc or jemalloc;\n"
		       "#           another, --alloc-fn NAME of its allocation function (its arenas"
		       " then count at its callers)\n", 100.0 * (double)m / (double)l,
		       format__bytes(l, a, sizeof(a)));
}

static void header_lines(const struct report *rp, FILE *o)
{
	const struct prof_summary *s = &rp->sum;
	char d[32], a[32], b[32], c[32], e1[1024], e2[64], e3[8192];

	/* strings from the file, escaped for the terminal (util/output/escape.h) */
	fprintf(o, "# file:     %s\n", escape__str(db__path(rp->db), e1, sizeof(e1)));
	fprintf(o, "# target:   %s (pid %s)%s%s\n",
	       escape__str(rp->meta_comm ? rp->meta_comm : "?", e1, sizeof(e1)),
	       escape__str(rp->meta_pid ? rp->meta_pid : "?", e2, sizeof(e2)),
	       rp->meta_exe ? "  " : "", escape__str(rp->meta_exe, e3, sizeof(e3)));
	fprintf(o, "# duration: %s  checkpoints: %llu  samples: %s  lost: %s (%.1f%%)%s\n",
	       duration__format(s->duration_ms, d, sizeof(d)), (unsigned long long)s->checkpoints,
	       format__count(s->samples, a, sizeof(a)), format__count(s->lost_samples, b, sizeof(b)),
	       s->samples + s->lost_samples ?
	       100.0 * s->lost_samples / (s->samples + s->lost_samples) : 0.0,
	       s->finished ? "" : "  (still recording or not finalised)");
	if (s->has_heap) {
		fprintf(o, "# heap:     live %s  peak %s  allocations %s",
		       format__bytes(s->live_bytes, a, sizeof(a)),
		       format__bytes(s->peak_bytes, b, sizeof(b)),
		       format__count(s->alloc_count, c, sizeof(c)));
		if (s->heap_sample > 1)
			fprintf(o, "  (sampled: 1 in %u, scaled)", s->heap_sample);
		if (s->heap_sample_bytes)
			fprintf(o, "  (estimates: sampled every %s allocated, scaled)",
			       format__bytes((int64_t)s->heap_sample_bytes, b, sizeof(b)));
		fputc('\n', o);
		/* never silent: what the tracker could not count */
		if (s->heap_dropped)
			fprintf(o, "# heap:     %s event%s dropped (tracker's map full)\n",
			       format__count(s->heap_dropped, a, sizeof(a)),
			       s->heap_dropped == 1 ? "" : "s");
		/* record --alloc-history: kept for rsprof history, and what was not */
		if (rp->meta_hist)
			fprintf(o, "# history:  %s allocation and free events kept (rsprof history),"
			       " %s dropped\n",
			       format__count(strtoull(rp->meta_hist, NULL, 10), a, sizeof(a)),
			       format__count(rp->meta_hist_dropped ?
					     strtoull(rp->meta_hist_dropped, NULL, 10) : 0, b,
					     sizeof(b)));
		if (s->unknown_frees) {
			fprintf(o, "# heap:     %s free%s of memory allocated before the recording",
			       format__count(s->unknown_frees, b, sizeof(b)),
			       s->unknown_frees == 1 ? "" : "s");
			/* 'live' counts what was allocated since: say what the process gave back */
			if (s->unknown_free_bytes > 0)
				fprintf(o, " (%s, not in live)",
				       format__bytes(s->unknown_free_bytes, c, sizeof(c)));
			fputc('\n', o);
		}
		/*
		 * Live at the end of a launched program is after its teardown: an
		 * interpreter frees everything at exit. Say so, and where the peak is.
		 */
		if (rp->f.at_ms == TIME_NONE && s->peak_cp_bytes >= 1 << 20 &&
		    s->live_bytes < s->peak_cp_bytes / 4)
			fprintf(o, "# heap:     live at the end is far below the peak, %s at %s:"
			       " 'report --at peak' shows what held it\n",
			       format__bytes(s->peak_cp_bytes, a, sizeof(a)),
			       duration__format(s->peak_ms, b, sizeof(b)));
	}
	if (s->has_heap)
		mmap_hint(rp->db, o);
	/* what the tracked heap is of the process's memory */
	if (s->has_rss && s->has_heap) {
		const char *why = resident__why(s->live_bytes, s->rss_bytes);

		fprintf(o, "# memory:   %s%s\n", resident__describe(s->live_bytes, s->rss_bytes, e1,
							      sizeof(e1)), why ? ":" : "");
		if (why)
			fprintf(o, "#           %s\n", why);
		fprintf(o, "#           anonymous %s, peak %s",
		       format__bytes(s->rss_anon_bytes, c, sizeof(c)),
		       format__bytes(s->rss_peak_bytes, d, sizeof(d)));
		/* what the in-process tracker's block headers add to it */
		if (s->header_bytes > 0)
			fprintf(o, "; the tracker's headers ~%s",
			       format__bytes(s->header_bytes, a, sizeof(a)));
		fputc('\n', o);
	} else if (s->has_rss)
		fprintf(o, "# memory:   %s resident (anonymous %s, peak %s)\n",
		       format__bytes(s->rss_bytes, b, sizeof(b)),
		       format__bytes(s->rss_anon_bytes, c, sizeof(c)),
		       format__bytes(s->rss_peak_bytes, d, sizeof(d)));
	/* what CPU% is a share of: perf's meaning unless --user-only */
	if (rp->show_cpu) {
		const char *scope = rp->cpu_scope;

		fprintf(o, "# CPU%%:     %s", !scope ? "share of user time only (a profile recorded "
		       "before kernel time was counted)" : !strcmp(scope, "user") ?
		       "share of user time only (--user-only, or kernel samples not allowed)" :
		       "share of all CPU time, user and kernel, as perf");
		if (rp->n_processes > 1)
			fprintf(o, "; %d processes (-s process splits them)", rp->n_processes);
		fputc('\n', o);
	}
	if (rp->f.pid)
		fprintf(o, "# process:  %d only\n", rp->f.pid);
	if (rp->f.win.from_ms != TIME_NONE || rp->f.win.to_ms != TIME_NONE) {
		uint64_t from = rp->f.win.from_ms == TIME_NONE ? 0 : time_window__after(&rp->f.win);
		uint64_t to = rp->f.win.to_ms == TIME_NONE || rp->f.win.to_ms > s->duration_ms ?
			      s->duration_ms : rp->f.win.to_ms;

		fprintf(o, "# window:   %s..%s", duration__format(from, a, sizeof(a)),
		       duration__format(to, b, sizeof(b)));
		/* folded checkpoints count whole: say what the window really holds */
		if (rp->res.inside)
			fprintf(o, "  (folded by --retain into the checkpoint of %s..%s, which counts"
			       " only in a window holding its end)",
			       duration__format(rp->res.first_ms, a, sizeof(a)),
			       duration__format(rp->res.last_ms, b, sizeof(b)));
		else if (rp->res.folded)
			fprintf(o, "  (folded by --retain to checkpoints of up to %s: reads %s..%s)",
			       duration__format(rp->res.coarsest_ms, c, sizeof(c)),
			       duration__format(rp->res.first_ms, a, sizeof(a)),
			       duration__format(rp->res.last_ms, b, sizeof(b)));
		fputc('\n', o);
	} else if (s->folded_checkpoints) {
		fprintf(o, "# folded:   up to %s into checkpoints of %s%s%s (record --retain %s)\n",
		       duration__format(s->folded_until_ms, a, sizeof(a)),
		       duration__format(s->folded_min_ms, b, sizeof(b)),
		       s->folded_max_ms > s->folded_min_ms ? " to " : "",
		       s->folded_max_ms > s->folded_min_ms ?
		       duration__format(s->folded_max_ms, c, sizeof(c)) : "",
		       duration__format(s->retain_ms, d, sizeof(d)));
	}
	if (rp->f.at_ms != TIME_NONE && rp->show_heap) {
		if (rp->at_peak)
			fprintf(o, "# heap at:  %s, the peak (the checkpoint with the most live heap,"
			       " %s)\n", duration__format(rp->f.at_ms, a, sizeof(a)),
			       format__bytes(s->peak_cp_bytes, b, sizeof(b)));
		else if (rp->f.at_ms > s->duration_ms && s->finished)
			fprintf(o, "# heap at:  the end, %s (--at %s is after the end of the"
			       " recording)\n", duration__format(s->duration_ms, a, sizeof(a)),
			       duration__format(rp->f.at_ms, b, sizeof(b)));
		else if (rp->res_at.folded && rp->res_at.last_ms != rp->f.at_ms)
			fprintf(o, "# heap at:  %s  (folded by --retain: as of %s)\n",
			       duration__format(rp->f.at_ms, a, sizeof(a)),
			       duration__format(rp->res_at.last_ms, b, sizeof(b)));
		else
			fprintf(o, "# heap at:  %s\n", duration__format(rp->f.at_ms, a, sizeof(a)));
	}
	if (rp->f.pattern)
		fprintf(o, "# filter:   %s\n", escape__str(rp->f.pattern, e3, sizeof(e3)));
	/* what Temp counts, and where it could not be counted */
	if (rp->show_heap && rp->f.heap_sort == HEAP_SORT_TEMPORARY) {
		if (rp->meta_backend && !strcmp(rp->meta_backend, "uprobe"))
			fprintf(o, "# temp:     not counted: the uprobe backend does not follow each"
			       " thread's allocations and frees in order ('-')\n");
		else
			fprintf(o, "# temp:     allocations freed by their thread before its next"
			       " allocation or\n"
			       "#           free (heaptrack's \"temporary\", per thread)%s%s%s\n"
			       "#           counted for glibc malloc's blocks only: 0 under jemalloc,"
			       " mimalloc,\n"
			       "#           tcmalloc or a runtime's own allocator\n",
			       rp->meta_temp ? "; " : "",
			       rp->meta_temp ? format__count(strtoull(rp->meta_temp, NULL, 10), a,
							     sizeof(a)) : "",
			       rp->meta_temp ? " in the recording" : "");
	}
}

/* The header, each line within the width (util/output/format.h). */
static void print_header(const struct report *rp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);

	if (!o) {
		header_lines(rp, stdout);
		return;
	}
	header_lines(rp, o);
	if (fclose(o))
		header_lines(rp, stdout);
	else
		format__wrap_comment(buf, format__term_width(), stdout);
	free(buf);
}

/* The rows a table left out, in one line under it. */
static void print_hidden(int n, const char *what)
{
	if (n)
		printf("# %d %s not shown (-a shows them)\n", n, what);
}

static int print_text(const struct report *rp)
{
	int width = format__term_width();
	int err = 0, hidden = 0;

	print_header(rp);
	if (rp->show_cpu) {
		putchar('\n');
		if (!rp->cpu_total)
			printf("# no CPU samples%s\n", rp->f.win.from_ms != TIME_NONE ||
			       rp->f.win.to_ms != TIME_NONE ? " in the window" : "");
		else if (!rp->cpu.n)
			printf("# no CPU location passes the filter and threshold\n");
		else
			err = report_table__print_cpu(&rp->cpu, stdout, width, &hidden);
		if (!err)
			print_hidden(hidden, hidden == 1 ? "row below 0.05 %" : "rows below 0.05 %");
	}
	if (!err && rp->show_heap) {
		putchar('\n');
		if (!rp->heap.n)
			printf("# no live heap%s\n", rp->f.pattern || rp->f.threshold_pct > 0 ?
			       " passing the filter and threshold" : "");
		else
			err = report_table__print_heap(&rp->heap, stdout, width, &hidden);
		if (!err)
			print_hidden(hidden, rp->heap.allocated || rp->heap.temporary ?
				     (hidden == 1 ? "site that shows nothing" : "sites that show nothing") :
				     report_table__live_hides(&rp->heap) ?
				     (hidden == 1 ? "site with nothing live" : "sites with nothing live") :
				     (hidden == 1 ? "site with neither live bytes nor a peak" :
				      "sites with neither live bytes nor a peak"));
	}
	return err;
}

/* One CSV document: a `table` column says which ranking a row belongs to. */
static int print_csv(const struct report *rp)
{
	report_table__csv_header(stdout);
	if (rp->show_cpu)
		report_table__csv_rows(&rp->cpu, "cpu", stdout);
	if (rp->show_heap)
		report_table__csv_rows(&rp->heap, "heap", stdout);
	return ferror(stdout) ? -EIO : 0;
}

static int print_json(const struct report *rp)
{
	const struct prof_summary *s = &rp->sum;
	struct json j;

	json__init(&j, stdout);
	json__begin_object(&j, NULL);
	json__string(&j, "file", db__path(rp->db));
	json__string(&j, "process_name", rp->meta_comm);
	json__meta(&j, "pid", rp->meta_pid);
	json__string(&j, "exe_path", rp->meta_exe);
	json__string(&j, "cpu_scope", rp->cpu_scope ? rp->cpu_scope : "user");
	json__int(&j, "processes", rp->n_processes);
	json__begin_object(&j, "summary");
	json__uint(&j, "duration_ms", s->duration_ms);
	json__uint(&j, "checkpoints", s->checkpoints);
	json__uint(&j, "samples", s->samples);
	json__uint(&j, "lost_samples", s->lost_samples);
	json__bool(&j, "has_heap", s->has_heap);
	json__int(&j, "live_bytes", s->live_bytes);
	json__int(&j, "peak_bytes", s->peak_bytes);
	json__int(&j, "alloc_count", s->alloc_count);
	json__int(&j, "free_count", s->free_count);
	json__uint(&j, "heap_dropped", s->heap_dropped);
	json__uint(&j, "unknown_frees", s->unknown_frees);
	json__uint(&j, "heap_sample", s->heap_sample > 1 ? s->heap_sample : 1);
	json__uint(&j, "heap_sample_bytes", s->heap_sample_bytes);
	if (s->has_rss) {
		json__int(&j, "rss_bytes", s->rss_bytes);
		json__int(&j, "rss_anon_bytes", s->rss_anon_bytes);
		json__int(&j, "rss_peak_bytes", s->rss_peak_bytes);
	} else {
		json__null(&j, "rss_bytes");
		json__null(&j, "rss_anon_bytes");
		json__null(&j, "rss_peak_bytes");
	}
	json__bool(&j, "finished", s->finished);
	json__end_object(&j);
	json__begin_object(&j, "query");
	json__string(&j, "sort", group_names[rp->f.group]);
	json__string(&j, "sort_by", heap_sort_names[rp->f.heap_sort]);
	if (rp->f.win.from_ms != TIME_NONE)
		json__uint(&j, "from_ms", time_window__after(&rp->f.win));
	else
		json__null(&j, "from_ms");
	if (rp->f.win.to_ms != TIME_NONE)
		json__uint(&j, "to_ms", rp->f.win.to_ms);
	else
		json__null(&j, "to_ms");
	if (rp->f.at_ms != TIME_NONE)
		json__uint(&j, "at_ms", rp->f.at_ms);
	else
		json__null(&j, "at_ms");
	json__string(&j, "filter", rp->f.pattern);
	if (rp->f.pid)
		json__int(&j, "pid", rp->f.pid);
	else
		json__null(&j, "pid");
	json__double(&j, "threshold_pct", rp->f.threshold_pct);
	json__int(&j, "top", rp->f.limit);
	/* record --retain: the time the folded checkpoints in the window hold */
	if (rp->res.folded)
		json__uint(&j, "resolution_ms", rp->res.coarsest_ms);
	else
		json__null(&j, "resolution_ms");
	json__end_object(&j);
	if (rp->show_cpu) {
		json__begin_object(&j, "cpu");
		json__uint(&j, "total_samples", rp->cpu_total);
		json__begin_array(&j, "rows");
		report_table__json_rows(&rp->cpu, &j, false);
		json__end_array(&j);
		json__end_object(&j);
	}
	if (rp->show_heap) {
		json__begin_object(&j, "heap");
		json__int(&j, "total_live_bytes", rp->heap_total);
		json__begin_array(&j, "rows");
		report_table__json_rows(&rp->heap, &j, true);
		json__end_array(&j);
		json__end_object(&j);
	}
	json__end_object(&j);
	return json__finish(&j);
}

/*
 * One site holds most of the heap and many lines reach it: likely an
 * allocation wrapper nobody named. On stderr, after the table.
 */
static void print_hint(const struct heap_hint *h)
{
	char buf[512];
	const char *fn = h->function;

	if (!h->suspect)
		return;
	fflush(stdout);		/* after the table, on a terminal too */
	srcpath__display(h->file, NULL, buf, sizeof(buf));
	pr_warn("%.0f%% of the live heap is at %s:%d%s%s, reached from %d different lines",
		h->pct, buf, h->line, fn ? " in " : "", fn ? fn : "", h->callers);
	if (fn)
		pr_hint("if %s only wraps the allocator, count its callers instead: "
			"rsprof report --alloc-fn '%s' (or record --alloc-fn)", fn, fn);
	else
		pr_hint("if that line is in an allocation wrapper, name the function with "
			"--alloc-fn NAME to count its callers instead");
}

/*
 * The hint's site, seen as heaptrack shows it: its callers two levels out
 * ("my_alloc <- leak_list <- main"), so that a wrapper with several
 * callers does not hide them. After the tables, on stdout.
 */
static int print_hint_callers(struct report *rp)
{
	struct cg_view v = { .threshold = 1.0, .full_paths = opts.full_paths, .max_depth = 2 };
	struct styled_text t = { 0 };
	int fn, root, err;

	if (!rp->hint_cg || !rp->hint_cg->has_stacks ||
	    callgraph__find(rp->hint_cg, rp->hint.function, &fn))
		return 0;
	v.utf8 = chart__locale_utf8();
	err = callgraph__tree(rp->hint_cg, fn, CG_CALLERS, &root);
	if (!err)
		err = callgraph__render_tree(rp->hint_cg, root, CG_CALLERS, &v, &t);
	if (!err) {
		putchar('\n');
		err = styled__print(&t, stdout, term__color());
	}
	styled__free(&t);
	return err;
}

/* ---- call graphs: -g, --callers, --callees ----------------------------------- */

static int graph_json(struct report *rp, struct callgraph *cg, int root, enum cg_dir dir,
		      const struct cg_view *v)
{
	struct json j;
	int *order = NULL;

	json__init(&j, stdout);
	json__begin_object(&j, NULL);
	json__string(&j, "file", db__path(rp->db));
	json__string(&j, "kind", cg->heap ? "heap" : "cpu");
	json__string(&j, "unit", cg->heap ? "live_bytes" : "samples");
	json__int(&j, "total", cg->total);
	if (root >= 0) {
		json__string(&j, "view", dir == CG_CALLERS ? "callers" : "callees");
		callgraph__json_tree(cg, root, dir, v, &j, "tree");
	} else {
		order = callgraph__by_total(cg);
		if (!order)
			return -ENOMEM;
		json__string(&j, "view", "children");
		json__begin_array(&j, "functions");
		callgraph__json_children(cg, order, v, &j);
		json__end_array(&j);
		free(order);
	}
	json__end_object(&j);
	return json__finish(&j);
}

/* -g: the CPU stacks that could not be unwound to their first frame. */
static void print_truncated(const struct report *rp)
{
	uint64_t n = rp->meta_unwound ? strtoull(rp->meta_unwound, NULL, 10) : 0;
	uint64_t t = rp->meta_truncated ? strtoull(rp->meta_truncated, NULL, 10) : 0;
	char a[32], b[32], line[256];

	if (!n)
		return;
	snprintf(line, sizeof(line), "# stacks:   %s of %s unwound (%.1f%%) stop short of the first"
		 " frame: they end with [truncated]\n", format__count(t, a, sizeof(a)),
		 format__count(n, b, sizeof(b)), 100.0 * (double)t / (double)n);
	format__wrap_comment(line, format__term_width(), stdout);
}

static int report_graph(struct report *rp)
{
	bool heap = opts.heap || (rp->show_heap && !rp->show_cpu);
	const char *name = opts.callers ? opts.callers : opts.callees;
	enum cg_dir dir = opts.callers ? CG_CALLERS : CG_CALLEES;
	struct cg_view v = { .threshold = rp->f.threshold_pct > 0 ? rp->f.threshold_pct : 0.5,
			     .limit = rp->f.limit, .full_paths = opts.full_paths };
	struct styled_text t = { 0 };
	struct callgraph *cg = NULL;
	int fn, root = -1, err;

	v.utf8 = chart__locale_utf8();
	err = callgraph__load(rp->db, &rp->f, heap, &cg);
	if (!err)
		err = db__snapshot_end(rp->db);
	if (!err && !cg->has_stacks) {
		pr_err("'%s' has no %s call stacks", db__path(rp->db), heap ? "heap" : "CPU");
		pr_hint(heap ? "heap stacks need a version-2 profile with heap tracking" :
			       "record with -g (--call-graph) to keep CPU call stacks");
		err = -ENOENT;
	}
	if (!err && name)
		err = callgraph__find(cg, name, &fn);
	if (!err && name)
		err = callgraph__tree(cg, fn, dir, &root);
	if (err)
		goto out;
	if (output_args.json) {
		err = graph_json(rp, cg, root, dir, &v);
	} else if (output_args.csv) {
		int *order = root < 0 ? callgraph__by_total(cg) : NULL;

		if (root >= 0)
			err = callgraph__csv_tree(cg, root, dir, &v, stdout);
		else if (order)
			callgraph__csv_children(cg, order, &v, stdout);
		else
			err = -ENOMEM;
		free(order);
	} else {
		err = root >= 0 ? callgraph__render_tree(cg, root, dir, &v, &t) :
				  callgraph__render_children(cg, &v, &t);
		if (!err) {
			print_header(rp);
			if (!heap)
				print_truncated(rp);
			putchar('\n');
			err = styled__print(&t, stdout, term__color());
		}
	}
out:
	styled__free(&t);
	callgraph__delete(cg);
	return err;
}

static int report_run(void)
{
	struct report rp = { 0 };
	char *cpu_mode = NULL;
	int err;

	query_filter__init(&rp.f);
	err = parse_opts(&rp);
	if (err)
		return exit_from_err(err);
	report_table__init(&rp.cpu, rp.f.group, opts.full_paths);
	report_table__init(&rp.heap, rp.f.group, opts.full_paths);
	rp.heap.allocated = rp.f.heap_sort == HEAP_SORT_ALLOCATED;
	rp.heap.temporary = rp.f.heap_sort == HEAP_SORT_TEMPORARY;
	rp.heap.by_live = rp.f.heap_sort == HEAP_SORT_LIVE;
	rp.cpu.all = rp.heap.all = opts.all;
	err = profile__open(opts.file, &rp.db);
	if (err)
		goto out;
	/* one snapshot: the header and the tables agree while a recorder writes */
	err = db__snapshot_begin(rp.db);
	if (!err)
		err = db_query_summary(rp.db, &rp.sum);
	if (!err)
		err = parse_window(&rp);
	if (!err)
		err = db_check_pid(rp.db, "--pid", rp.f.pid);
	if (!err && rp.sum.folded_checkpoints)
		err = db_query_resolution(rp.db, rp.f.win.from_ms, rp.f.win.to_ms, &rp.res);
	if (!err && rp.sum.folded_checkpoints && rp.f.at_ms != TIME_NONE)
		err = db_query_resolution(rp.db, TIME_NONE, rp.f.at_ms, &rp.res_at);
	if (err)
		goto out;
	err = db__meta_get(rp.db, "cpu", &cpu_mode);
	if (err)
		goto out;
	/* a --no-cpu recording shows its heap table alone by default */
	rp.show_cpu = opts.cpu || (!opts.heap && !(cpu_mode && !strcmp(cpu_mode, "off") &&
						   rp.sum.has_heap));
	rp.show_heap = opts.heap || (!opts.cpu && rp.sum.has_heap);
	if (opts.heap && !rp.sum.has_heap) {
		pr_err("'%s' has no heap data", db__path(rp.db));
		pr_hint("record with heap tracking (without --no-heap) to see live heap");
		err = -RSPROF_EDB;
		goto out;
	}
	err = db__meta_get(rp.db, "pid", &rp.meta_pid);
	if (!err)
		err = db__meta_get(rp.db, "cpu_scope", &rp.cpu_scope);
	if (!err)
		err = db_query_process_count(rp.db, &rp.n_processes);
	if (!err)
		err = db__meta_get(rp.db, "process_name", &rp.meta_comm);
	if (!err)
		err = db__meta_get(rp.db, "exe_path", &rp.meta_exe);
	if (!err)
		err = db__meta_get(rp.db, "heap_temporary", &rp.meta_temp);
	if (!err)
		err = db__meta_get(rp.db, "heap_backend", &rp.meta_backend);
	if (!err)
		err = db__meta_get(rp.db, "alloc_history_events", &rp.meta_hist);
	if (!err)
		err = db__meta_get(rp.db, "alloc_history_dropped", &rp.meta_hist_dropped);
	if (!err)
		err = db__meta_get(rp.db, "cpu_stacks_unwound", &rp.meta_unwound);
	if (!err)
		err = db__meta_get(rp.db, "cpu_stacks_truncated", &rp.meta_truncated);
	if (!err && rp.format != FMT_TEXT) {
		err = export__stacks(rp.db, &rp.f, rp.show_heap && !rp.show_cpu,
				     rp.format == FMT_FOLDED ? EXPORT_FOLDED : EXPORT_PPROF,
				     rp.sum.duration_ms, opts.output);
		goto out;
	}
	if (!err && (opts.graph || opts.callers || opts.callees)) {
		err = report_graph(&rp);
		goto out;
	}
	if (!err && rp.show_cpu)
		err = db_query_cpu(rp.db, &rp.f, &rp.cpu_total, report_table__add, &rp.cpu);
	if (!err && rp.show_heap)
		err = db_query_heap_hint(rp.db, &rp.f, &rp.heap_total, report_table__add, &rp.heap,
					 &rp.hint);
	if (!err && rp.hint.suspect && rp.hint.function && !output_args.json && !output_args.csv)
		err = callgraph__load(rp.db, &rp.f, true, &rp.hint_cg);
	if (!err)
		err = db__snapshot_end(rp.db);
	if (err)
		goto out;
	/* all queries done before the first byte: --json is a whole document or nothing */
	if (output_args.json)
		err = print_json(&rp);
	else if (output_args.csv)
		err = print_csv(&rp);
	else
		err = print_text(&rp);
	if (!err && rp.hint_cg)
		err = print_hint_callers(&rp);
	if (!err)
		print_hint(&rp.hint);
out:
	callgraph__delete(rp.hint_cg);
	heap_hint__free(&rp.hint);
	report_table__exit(&rp.cpu);
	report_table__exit(&rp.heap);
	free(rp.meta_pid);
	free(rp.meta_comm);
	free(rp.meta_exe);
	free(rp.meta_temp);
	free(rp.meta_backend);
	free(rp.meta_hist);
	free(rp.meta_unwound);
	free(rp.meta_truncated);
	free(rp.meta_hist_dropped);
	free(rp.cpu_scope);
	free(cpu_mode);
	db__close(rp.db);
	if (err == -ENOMEM)
		pr_err("out of memory");
	return exit_from_err(err);
}

int cmd_report(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof report", argc, argv, report_options, 0);
	int ret = options_parse(pc, report_usage, NULL, NULL);
	const char **args;
	int n;

	if (ret == 0) {
		args = options_args(pc, &n);
		if (options_one_profile(n)) {
			ret = EXIT_USAGE;
		} else {
			opts.file = args[0];
			ret = report_run();
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	for (size_t i = 0; opts.alloc_fn && opts.alloc_fn[i]; i++)
		free((char *)opts.alloc_fn[i]);
	free(opts.alloc_fn);
	opts.alloc_fn = NULL;
	return ret;
}
