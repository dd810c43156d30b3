/*
 * rsprof timeline: a profile as series over its checkpoints — live heap,
 * bytes allocated and freed per interval, CPU samples per interval, and
 * with -n the live bytes of the top allocation sites (or with --cpu the
 * samples of the top CPU sites). A chart in the terminal by default, CSV,
 * JSON, or a standalone SVG picture; then a growth summary line: how much
 * the heap grew from the first to the last checkpoint, per minute, and
 * which site grew most.
 */
#include "builtin.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <locale.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/output/chart.h"
#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/analysis/timeline.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/output/escape.h"
#include "util/output/format.h"
#include "util/output/membuf.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/output/svg.h"

static struct timeline_args {
	const char *rank;
	const char *filter;
	const char *svg;
	const char *since, *until, *window;
	const char **alloc_fn;
	int cpu;
} args;

enum { OPT_RANK = OPT_VAL_BUILTIN, OPT_SINCE, OPT_UNTIL, OPT_WINDOW };

#define DEFAULT_SITES	5
#define CHART_HEIGHT	12
#define LABEL_W		24

static struct poptOption timeline_options[] = {
	{ "rank", 0, POPT_ARG_STRING, &args.rank, OPT_RANK,
	  "rank the sites of -n by final, peak or growth live bytes (default: final)",
	  "final|peak|growth" },
	{ "filter", 0, POPT_ARG_STRING, &args.filter, 0,
	  "only sites whose path or function contains PAT (any case); 5 of them unless -n",
	  "PAT" },
	{ "cpu", 0, POPT_ARG_NONE, &args.cpu, 0,
	  "series of the top CPU sites (samples per interval) instead of heap sites", NULL },
	{ "since", 0, POPT_ARG_STRING, &args.since, OPT_SINCE,
	  "only the last DUR of the recording", "DUR" },
	{ "until", 0, POPT_ARG_STRING, &args.until, OPT_UNTIL,
	  "only the first DUR of the recording", "DUR" },
	{ "window", 0, POPT_ARG_STRING, &args.window, OPT_WINDOW,
	  "only from A to B after the start (either may be left out)", "A..B" },
	{ "alloc-fn", 0, POPT_ARG_ARGV, &args.alloc_fn, 0,
	  "NAME is an allocation wrapper: its callers are the heap sites (a glob; repeatable)",
	  "NAME" },
	{ "svg", 0, POPT_ARG_STRING, &args.svg, 0,
	  "write a standalone SVG line chart to FILE instead of the terminal chart", "FILE" },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_output, 0,
	  "Output options (-n N: series of the top N sites):", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static int parse_rank(const char *s, enum timeline_rank *r)
{
	if (!strcmp(s, "final"))
		*r = RANK_FINAL;
	else if (!strcmp(s, "peak"))
		*r = RANK_PEAK;
	else if (!strcmp(s, "growth"))
		*r = RANK_GROWTH;
	else
		return -EINVAL;
	return 0;
}

static int option_cb(int val, const char *arg, void *ctx)
{
	enum timeline_rank r;
	uint64_t a, b;

	if (val == OPT_RANK && parse_rank(arg, &r)) {
		pr_err("--rank wants final, peak or growth, not '%s'", arg);
		return -EINVAL;
	}
	if ((val == OPT_SINCE || val == OPT_UNTIL) && (duration__parse(arg, &a) || !a)) {
		pr_err("--%s: '%s' is not a duration", val == OPT_SINCE ? "since" : "until", arg);
		pr_hint("durations look like 30s, 5m, 1h30m, 250ms");
		return -EINVAL;
	}
	if (val == OPT_WINDOW && duration__parse_range(arg, &a, &b)) {
		pr_err("--window: '%s' is not a range A..B of durations", arg);
		pr_hint("for example --window 10s..1m, --window ..30s or --window 5m..");
		return -EINVAL;
	}
	return 0;
}

/* --since, --until, --window into the options (checked by option_cb). */
static int set_window(struct timeline_opts *o)
{
	if (args.window && (args.since || args.until)) {
		pr_err("--window cannot be combined with --since or --until");
		return -RSPROF_EUSAGE;
	}
	o->win = TIME_WINDOW_ALL;
	if (args.since)
		duration__parse(args.since, &o->since_ms);
	if (args.until)
		duration__parse(args.until, &o->win.to_ms);
	if (args.window)
		time_window__parse(args.window, &o->win);
	return 0;
}

/* A site's label for text, CSV and SVG: escaped for the terminal (util/output/escape.h). */
static char *site_label(const struct timeline_site *s, char *buf, size_t len)
{
	char raw[768];

	return escape__str(timeline__site_label(s, raw, sizeof(raw)), buf, len);
}

/*
 * The label of a chart row: "file:line function", or without the file's
 * directories ("cache.rs:42 app::cache::insert") when short, so that the
 * file, the line and the function stay readable in a narrow column.
 */
static char *chart_label(const struct timeline_site *s, bool short_form, char *buf, size_t len)
{
	char *space, *slash;

	site_label(s, buf, len);
	if (!short_form)
		return buf;
	space = strchr(buf, ' ');
	if (space)
		*space = '\0';
	slash = strrchr(buf, '/');
	if (space)
		*space = ' ';
	if (slash && (!space || slash < space))
		memmove(buf, slash + 1, strlen(slash + 1) + 1);
	return buf;
}

/* Growth from the first to the last checkpoint. */
static void growth(const struct timeline *tl, double *bytes, double *per_min, uint64_t *span)
{
	*bytes = tl->n ? tl->live[tl->n - 1] - tl->live[0] : 0;
	*span = tl->n > 1 ? tl->t_ms[tl->n - 1] - tl->t_ms[0] : 0;
	*per_min = *span ? *bytes * 60000.0 / (double)*span : 0;
}

static void print_growth(FILE *f, const struct timeline *tl)
{
	char b[32], r[32], d[32], g[32], lab[768];
	double bytes, per_min;
	uint64_t span;

	if (!tl->has_heap) {
		fputs("growth: no heap data in this profile\n", f);
		return;
	}
	growth(tl, &bytes, &per_min, &span);
	fprintf(f, "growth: %s in %s (%s/min)",
		format__bytes_delta((int64_t)bytes, b, sizeof(b)),
		duration__format(span, d, sizeof(d)),
		format__bytes_delta((int64_t)per_min, r, sizeof(r)));
	if (tl->grew_most)
		fprintf(f, "; grew most: %s (%s)", site_label(tl->grew_most, lab, sizeof(lab)),
			format__bytes_delta(tl->grew_most->growth, g, sizeof(g)));
	else
		fputs("; no site grew", f);
	fputc('\n', f);
}

/*
 * Room for the labels of n sites: the longest label, within 40 % of the
 * width (at least 24 columns) and what a narrow terminal leaves. When one
 * full label does not fit, all take the short form (*short_form).
 */
static int label_width(const struct timeline_site *s, size_t n, int width, bool *short_form)
{
	int w = LABEL_W, max = width * 2 / 5;
	char lab[768];

	if (max < LABEL_W)
		max = LABEL_W;
	/* leave a narrow sparkline row its 10 columns and its note */
	if (max > width - 27)
		max = width - 27 > 8 ? width - 27 : 8;
	*short_form = false;
	for (int pass = 0; pass < 2; pass++) {
		w = LABEL_W;
		for (size_t i = 0; i < n; i++) {
			int l = format__width(chart_label(&s[i], *short_form, lab, sizeof(lab)));

			if (l > w)
				w = l;
		}
		if (w <= max || *short_form)
			break;
		*short_form = true;
	}
	return w > max ? max : w;
}

/*
 * The resident memory for a chart: an unknown value (the process had gone
 * at that checkpoint) shows the one before. malloc'd; NULL on -ENOMEM.
 */
static double *rss_filled(const struct timeline *tl)
{
	double *v = malloc((tl->n ? tl->n : 1) * sizeof(*v)), last = 0;

	for (size_t i = 0; v && i < tl->n; i++) {
		if (!isnan(tl->rss[i]))
			last = tl->rss[i];
		v[i] = last;
	}
	return v;
}

/* The last known resident memory, or NAN. */
static double rss_last(const struct timeline *tl)
{
	for (size_t i = tl->n; i > 0; i--)
		if (!isnan(tl->rss[i - 1]))
			return tl->rss[i - 1];
	return NAN;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A per-interval series as drawn: each value scaled to the usual interval
 * (the median), so the last, shorter interval of a recording (stopped
 * 0.3 s into it) does not read as a drop. NULL on -ENOMEM; free it.
 */
static double *per_interval(const struct timeline *tl, const double *v)
{
	double *out = malloc((tl->n + 1) * sizeof(*out));
	uint64_t *dt = malloc((tl->n + 1) * sizeof(*dt)), med;

	if (!out || !dt) {
		free(out);
		free(dt);
		return NULL;
	}
	for (size_t i = 0; i < tl->n; i++)
		dt[i] = tl->t_ms[i] - (i ? tl->t_ms[i - 1] : 0);
	qsort(dt, tl->n, sizeof(*dt), cmp_u64);
	med = tl->n ? dt[tl->n / 2] : 0;
	for (size_t i = 0; i < tl->n; i++) {
		uint64_t d = tl->t_ms[i] - (i ? tl->t_ms[i - 1] : 0);

		out[i] = d && med ? v[i] * (double)med / (double)d : v[i];
	}
	free(dt);
	return out;
}

/* Under the live heap chart: where the peak is, and how to see it. */
static int mark_peak(FILE *f, const struct chart_style *st, const struct timeline *tl)
{
	size_t at = 0;
	char b[32], d[32], text[128];

	for (size_t i = 1; i < tl->n; i++)
		if (tl->live[i] > tl->live[at])
			at = i;
	if (!tl->n || tl->live[at] <= 0)
		return 0;
	snprintf(text, sizeof(text), "peak %s at %s (rsprof report --at peak)",
		 format__bytes((int64_t)tl->live[at], b, sizeof(b)),
		 duration__format(tl->t_ms[at], d, sizeof(d)));
	return chart__area_mark(f, st, tl->n, at, text);
}

static int sparkline_rate(FILE *f, const struct chart_style *st, const char *label, int lw,
			  const struct timeline *tl, const double *v, enum chart_unit unit)
{
	double *s = per_interval(tl, v);
	int err;

	if (!s)
		return -ENOMEM;
	err = chart__sparkline(f, st, label, lw, s, tl->n, CHART_RATE, unit);
	free(s);
	return err;
}

static int print_chart(FILE *f, const char *file, const struct timeline *tl)
{
	struct chart_style st = {
		.width = format__term_width(),
		.height = CHART_HEIGHT,
		.utf8 = chart__locale_utf8(),
	};
	uint64_t end = tl->n ? tl->t_ms[tl->n - 1] : 0;
	char d[32], lab[768];
	int err;

	escape__fputs(file, f);
	fprintf(f, ": %zu checkpoints over %s\n\n", tl->n,
		duration__format(end, d, sizeof(d)));
	if (tl->has_heap) {
		err = chart__area(f, &st, "live heap", tl->live, tl->n, end, CHART_BYTES);
		if (!err)
			err = mark_peak(f, &st, tl);
	} else {
		double *cpu = per_interval(tl, tl->cpu);

		err = cpu ? chart__area(f, &st, "CPU samples per interval", cpu, tl->n, end,
					CHART_COUNT) : -ENOMEM;
		free(cpu);
	}
	if (err)
		return err;
	fputc('\n', f);
	if (tl->has_heap) {
		/* the totals' labels: 24 columns, fewer on a narrow terminal */
		int tw = st.width - 27 < LABEL_W ? (st.width - 27 > 8 ? st.width - 27 : 8) : LABEL_W;

		err = sparkline_rate(f, &st, "allocated per interval", tw, tl, tl->alloc,
				     CHART_BYTES);
		if (!err)
			err = sparkline_rate(f, &st, "freed per interval", tw, tl, tl->freed,
					     CHART_BYTES);
		if (!err)
			err = sparkline_rate(f, &st, "CPU samples per interval", tw, tl, tl->cpu,
					     CHART_COUNT);
	}
	/* issue 9: the memory the tracked heap is part of */
	if (!err && tl->has_rss) {
		int tw = st.width - 27 < LABEL_W ? (st.width - 27 > 8 ? st.width - 27 : 8) : LABEL_W;
		double *rss = rss_filled(tl);
		char a[32], b[32];

		if (!rss)
			return -ENOMEM;
		err = chart__sparkline(f, &st, "resident memory", tw, rss, tl->n, CHART_LEVEL,
				       CHART_BYTES);
		free(rss);
		if (!err && tl->has_heap && tl->n)
			fprintf(f, "tracked heap %s%s%s resident at the end\n",
				format__bytes((int64_t)tl->live[tl->n - 1], a, sizeof(a)),
				tl->live[tl->n - 1] <= rss_last(tl) ? " of " : ", ",
				format__bytes((int64_t)rss_last(tl), b, sizeof(b)));
	}
	if (!err && tl->n_sites) {
		bool sf;
		int lw = label_width(tl->sites, tl->n_sites, st.width, &sf);

		fprintf(f, "\nlive bytes of the top %zu site%s (by %s):\n", tl->n_sites,
			tl->n_sites > 1 ? "s" : "", args.rank ? args.rank : "final");
		for (size_t i = 0; i < tl->n_sites && !err; i++)
			err = chart__sparkline(f, &st,
					       chart_label(&tl->sites[i], sf, lab, sizeof(lab)), lw,
					       tl->sites[i].values, tl->n, CHART_LEVEL, CHART_BYTES);
	}
	if (!err && tl->n_cpu_sites) {
		bool sf;
		int lw = label_width(tl->cpu_sites, tl->n_cpu_sites, st.width, &sf);

		fprintf(f, "\nCPU samples per interval of the top %zu site%s:\n", tl->n_cpu_sites,
			tl->n_cpu_sites > 1 ? "s" : "");
		for (size_t i = 0; i < tl->n_cpu_sites && !err; i++)
			err = sparkline_rate(f, &st,
					     chart_label(&tl->cpu_sites[i], sf, lab, sizeof(lab)),
					     lw, tl, tl->cpu_sites[i].values, CHART_COUNT);
	}
	if (err)
		return err;
	fputc('\n', f);
	print_growth(f, tl);
	return ferror(f) ? -EIO : 0;
}

static void csv_label(FILE *f, const char *prefix, const struct timeline_site *s)
{
	char lab[768], col[800];

	snprintf(col, sizeof(col), "%s%s", prefix, site_label(s, lab, sizeof(lab)));
	fputc(',', f);
	format__csv_field(f, col);
}

static int print_csv(FILE *f, const struct timeline *tl)
{
	/* rss_bytes when the file has it (schema v3): an older file's columns stay put */
	fputs("time_ms,live_bytes,alloc_bytes,freed_bytes,cpu_samples", f);
	if (tl->has_rss)
		fputs(",rss_bytes", f);
	for (size_t s = 0; s < tl->n_sites; s++)
		csv_label(f, "live ", &tl->sites[s]);
	for (size_t s = 0; s < tl->n_cpu_sites; s++)
		csv_label(f, "cpu ", &tl->cpu_sites[s]);
	fputc('\n', f);
	for (size_t i = 0; i < tl->n; i++) {
		fprintf(f, "%llu,%.0f,%.0f,%.0f,%.0f", (unsigned long long)tl->t_ms[i],
			tl->live[i], tl->alloc[i], tl->freed[i], tl->cpu[i]);
		if (tl->has_rss)
			fputc(',', f);
		if (tl->has_rss && !isnan(tl->rss[i]))	/* empty: unknown */
			fprintf(f, "%.0f", tl->rss[i]);
		for (size_t s = 0; s < tl->n_sites; s++)
			fprintf(f, ",%.0f", tl->sites[s].values[i]);
		for (size_t s = 0; s < tl->n_cpu_sites; s++)
			fprintf(f, ",%.0f", tl->cpu_sites[s].values[i]);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

static void json_site(struct json *j, const char *key, const struct timeline_site *s, size_t n,
		      bool heap)
{
	char lab[768];

	json__begin_object(j, key);
	json__string(j, "location", timeline__site_label(s, lab, sizeof(lab)));
	json__string(j, "file", s->file);
	json__int(j, "line", s->line);
	json__string(j, "function", s->function);
	json__string(j, "module", s->module);
	if (heap) {
		json__int(j, "final_bytes", s->final);
		json__int(j, "peak_bytes", s->peak);
		json__int(j, "growth_bytes", s->growth);
	} else {
		json__int(j, "samples", s->final);
	}
	if (n) {
		json__begin_array(j, heap ? "live_bytes" : "samples_per_interval");
		for (size_t i = 0; i < n; i++)
			json__int(j, NULL, (long long)s->values[i]);
		json__end_array(j);
	}
	json__end_object(j);
}

static int print_json(FILE *f, const char *file, const struct timeline *tl)
{
	double bytes, per_min;
	uint64_t span;
	struct json j;

	growth(tl, &bytes, &per_min, &span);
	json__init(&j, f);
	json__begin_object(&j, NULL);
	json__string(&j, "file", file);
	json__uint(&j, "checkpoints", tl->n);
	json__uint(&j, "duration_ms", tl->n ? tl->t_ms[tl->n - 1] : 0);
	json__bool(&j, "has_heap", tl->has_heap);
	json__begin_object(&j, "growth");
	json__int(&j, "bytes", (long long)bytes);
	json__uint(&j, "span_ms", span);
	json__double(&j, "bytes_per_minute", per_min);
	if (tl->grew_most) {
		json_site(&j, "grew_most", tl->grew_most, 0, true);
	}
	json__end_object(&j);
	json__begin_array(&j, "series");
	for (size_t i = 0; i < tl->n; i++) {
		json__begin_object(&j, NULL);
		json__uint(&j, "time_ms", tl->t_ms[i]);
		json__int(&j, "live_bytes", (long long)tl->live[i]);
		json__int(&j, "alloc_bytes", (long long)tl->alloc[i]);
		json__int(&j, "freed_bytes", (long long)tl->freed[i]);
		json__int(&j, "cpu_samples", (long long)tl->cpu[i]);
		if (!tl->has_rss)
			;	/* an older file: no key */
		else if (isnan(tl->rss[i]))
			json__null(&j, "rss_bytes");
		else
			json__int(&j, "rss_bytes", (long long)tl->rss[i]);
		json__end_object(&j);
	}
	json__end_array(&j);
	json__begin_array(&j, "sites");
	for (size_t s = 0; s < tl->n_sites; s++)
		json_site(&j, NULL, &tl->sites[s], tl->n, true);
	json__end_array(&j);
	json__begin_array(&j, "cpu_sites");
	for (size_t s = 0; s < tl->n_cpu_sites; s++)
		json_site(&j, NULL, &tl->cpu_sites[s], tl->n, false);
	json__end_array(&j);
	json__end_object(&j);
	return json__finish(&j);
}

static int write_svg(const char *path, const char *file, const struct timeline *tl)
{
	struct svg_series *heap = calloc(tl->n_sites + 3, sizeof(*heap));
	double *rss = tl->has_rss ? rss_filled(tl) : NULL;
	struct svg_series *cpu = calloc(tl->n_cpu_sites + 2, sizeof(*cpu));
	char (*labels)[768] = calloc(tl->n_sites + tl->n_cpu_sites + 1, sizeof(*labels));
	struct svg_panel panels[2];
	size_t np = 0, nl = 0;
	char title[1024];
	struct outfile of;
	FILE *f = NULL;
	int dupfd, err = 0;

	if (!heap || !cpu || !labels || (tl->has_rss && !rss)) {
		err = -ENOMEM;
		goto out;
	}
	if (tl->has_heap) {
		heap[0].label = "live heap (all sites)";
		heap[0].values = tl->live;
		for (size_t s = 0; s < tl->n_sites; s++) {
			heap[s + 1].label = site_label(&tl->sites[s], labels[nl++], 768);
			heap[s + 1].values = tl->sites[s].values;
		}
		if (rss) {
			heap[tl->n_sites + 1].label = "resident memory (the whole process)";
			heap[tl->n_sites + 1].values = rss;
		}
		panels[np++] = (struct svg_panel){ "live heap", CHART_BYTES, CHART_LEVEL, heap,
						   tl->n_sites + 1 + (rss != NULL) };
	}
	cpu[0].label = "CPU samples per interval (all sites)";
	cpu[0].values = tl->cpu;
	for (size_t s = 0; s < tl->n_cpu_sites; s++) {
		cpu[s + 1].label = site_label(&tl->cpu_sites[s], labels[nl++], 768);
		cpu[s + 1].values = tl->cpu_sites[s].values;
	}
	if (!tl->has_heap || tl->n_cpu_sites)
		panels[np++] = (struct svg_panel){ "CPU samples per interval", CHART_COUNT,
						   CHART_RATE, cpu, tl->n_cpu_sites + 1 };

	/* never through a link or into a device; the old picture or the whole new one */
	err = outfile__create(&of, path, OUTFILE_REPLACE);
	if (err) {
		pr_hint("give --svg the path of a new or regular file in a directory you can "
			"write to");
		goto out;
	}
	dupfd = dup(of.fd);
	f = dupfd >= 0 ? fdopen(dupfd, "w") : NULL;
	if (!f) {
		err = -errno;
		pr_err("cannot write '%s': %s", path, strerror(errno));
		if (dupfd >= 0)
			close(dupfd);
		outfile__abort(&of);
		goto out;
	}
	snprintf(title, sizeof(title), "rsprof timeline: %s", file);
	err = svg__write(f, title, tl->t_ms, tl->n, panels, np);
	if (fclose(f) && !err)
		err = -EIO;
	if (err == -EIO)
		pr_err("cannot write '%s': %s", path, strerror(errno));
	if (err)
		outfile__abort(&of);
	else
		err = outfile__commit(&of);
out:
	if (err == -ENOMEM)
		pr_err("out of memory");
	else if (err)
		err = -EIO;	/* rsprof-timeline(1): 1, the SVG file cannot be written */
	free(heap);
	free(rss);
	free(cpu);
	free(labels);
	return err;
}

static int timeline_run(const char *file)
{
	struct timeline_opts o = { .rank = RANK_FINAL, .pattern = args.filter,
				   .need_growth = !output_args.csv };
	int n = output_args.top_n ? output_args.top_n : args.filter || args.cpu ? DEFAULT_SITES : 0;
	struct timeline *tl = NULL;
	struct db *db = NULL;
	struct membuf out;
	int err;

	if (args.rank)
		parse_rank(args.rank, &o.rank);
	for (size_t i = 0; args.alloc_fn && args.alloc_fn[i]; i++) {
		if (!*args.alloc_fn[i] || strchr(args.alloc_fn[i], '\n')) {
			pr_err("--alloc-fn: '%s' is not a function name or pattern", args.alloc_fn[i]);
			return EXIT_USAGE;
		}
	}
	o.alloc_fn = args.alloc_fn;
	err = set_window(&o);
	if (err)
		return exit_from_err(err);
	if (args.cpu)
		o.cpu_top = n;
	else
		o.top = n;

	err = profile__open(file, &db);
	if (err)
		return exit_from_err(err);
	file = db__path(db);
	/* one snapshot: totals and sites agree while a recorder keeps writing */
	err = db__snapshot_begin(db);
	if (!err)
		err = timeline__load(db, &o, &tl);
	db__snapshot_end(db);
	if (!err && !tl->n) {
		pr_err("'%s' has no checkpoints yet", file);
		pr_hint("a recording writes one per interval (-i); wait for the first one");
		err = -RSPROF_EDB;
	}
	if (err)
		goto out;
	if (args.svg && (err = write_svg(args.svg, file, tl)))
		goto out;

	/* stdout gets the whole document or nothing */
	err = membuf__open(&out);
	if (!err && output_args.csv) {
		err = print_csv(out.f, tl);
	} else if (!err && output_args.json) {
		err = print_json(out.f, file, tl);
	} else if (!err && args.svg) {
		print_growth(out.f, tl);
		fputs("wrote ", out.f);
		escape__fputs(args.svg, out.f);
		fputc('\n', out.f);
	} else if (!err) {
		err = print_chart(out.f, file, tl);
	}
	err = membuf__flush(&out, err, stdout);
	if (err == -ENOMEM)
		pr_err("out of memory");
out:
	timeline__delete(tl);
	if (db__close(db) && !err)
		err = -RSPROF_EDB;
	return exit_from_err(err);
}

int cmd_timeline(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof timeline", argc, argv, timeline_options, 0);
	int ret = options_parse(pc, "[OPTION...] [FILE]", option_cb, NULL);

	setlocale(LC_CTYPE, "");
	if (ret == 0) {
		int n;
		const char **a = options_args(pc, &n);

		if (options_output_check()) {
			ret = EXIT_USAGE;
		} else if (options_one_profile(n)) {
			ret = EXIT_USAGE;
		} else {
			ret = timeline_run(a[0]);
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
