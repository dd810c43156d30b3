/*
 * The views of a timeline (util/output/timeline.h): the chart in the
 * terminal, CSV, JSON, the SVG picture and the growth summary line.
 */
#include "util/output/timeline.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/analysis/timeline.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/output/chart.h"
#include "util/output/escape.h"
#include "util/output/format.h"
#include "util/output/resident.h"
#include "util/output/svg.h"

#define CHART_HEIGHT	12
#define LABEL_W		24

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

void timeline_view__growth(FILE *f, const struct timeline *tl)
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

int timeline_view__chart(FILE *f, const char *file, const struct timeline *tl,
			 const char *rank)
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
	/* the memory the tracked heap is part of: the process's resident memory */
	if (!err && tl->has_rss) {
		int tw = st.width - 27 < LABEL_W ? (st.width - 27 > 8 ? st.width - 27 : 8) : LABEL_W;
		double *rss = rss_filled(tl);
		char a[128];

		if (!rss)
			return -ENOMEM;
		err = chart__sparkline(f, &st, "resident memory", tw, rss, tl->n, CHART_LEVEL,
				       CHART_BYTES);
		free(rss);
		if (!err && tl->has_heap && tl->n) {
			int64_t live = (int64_t)tl->live[tl->n - 1], res = (int64_t)rss_last(tl);
			const char *why = resident__why(live, res);

			fprintf(f, "%s at the end%s\n", resident__describe(live, res, a, sizeof(a)),
				why ? ":" : "");
			if (why)
				fprintf(f, "  %s\n", why);
		}
	}
	if (!err && tl->n_sites) {
		bool sf;
		int lw = label_width(tl->sites, tl->n_sites, st.width, &sf);

		fprintf(f, "\nlive bytes of the top %zu site%s (by %s):\n", tl->n_sites,
			tl->n_sites > 1 ? "s" : "", rank);
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
	timeline_view__growth(f, tl);
	return ferror(f) ? -EIO : 0;
}

static void csv_label(FILE *f, const char *prefix, const struct timeline_site *s)
{
	char lab[768], col[800];

	snprintf(col, sizeof(col), "%s%s", prefix, site_label(s, lab, sizeof(lab)));
	fputc(',', f);
	format__csv_field(f, col);
}

int timeline_view__csv(FILE *f, const struct timeline *tl)
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

int timeline_view__json(FILE *f, const char *file, const struct timeline *tl)
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
	if (tl->n_sites)
		json__string(&j, "rank", tl->rank == RANK_PEAK ? "peak" :
			  tl->rank == RANK_GROWTH ? "growth" : "final");
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

int timeline_view__svg(const char *path, const char *file, const struct timeline *tl)
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
	int err = 0;

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
	f = outfile__fdopen(&of);
	if (!f) {
		err = -errno;
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
