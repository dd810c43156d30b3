/*
 * Unit tests for the pure parts of timeline and diff: bucketing and drawing
 * of util/chart, the SVG writer's escaping and shape, the site map, and
 * timeline__load() / diff__compute() on the fixture profile of
 * tests/unit/fixture.h (known numbers, no kernel).
 */
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/output/chart.h"
#include "util/db/db.h"
#include "util/analysis/diff.h"
#include "util/db/read/site.h"
#include "util/analysis/timeline.h"
#include "util/output/svg.h"

#include "fixture.h"

static char *render(int (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, arg);
	fclose(f);
	return buf;
}

static int draw_area(FILE *f, void *arg)
{
	static const double v[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct chart_style st = { .width = 50, .height = 4, .utf8 = false };

	(void)arg;
	return chart__area(f, &st, "live heap", v, 10, 10000, CHART_BYTES);
}

static int draw_spark(FILE *f, void *arg)
{
	static const double v[] = { 0, 10, 20, 30, 40, 50, 60, 70, 80 };
	struct chart_style st = { .width = 60, .height = 4, .utf8 = *(bool *)arg };

	/* 60 columns: narrow (< 80), the note is the last value only */

	return chart__sparkline(f, &st, "a/very/long/label/that/is/cut.c:12 fn", 20, v, 9,
				CHART_LEVEL, CHART_COUNT);
}

static int draw_svg(FILE *f, void *arg)
{
	static const uint64_t t[] = { 1000, 2000, 3000 };
	static const double a[] = { 1048576, 2097152, 3145728 }, b[] = { 5, 5, 5 };
	const struct svg_series s[] = { { "total", a }, { "src/x.c:1 f<T>&g", b } };
	const struct svg_panel p = { "live heap", CHART_BYTES, CHART_LEVEL, s, 2 };

	(void)arg;
	return svg__write(f, "a \"title\"", t, 3, &p, 1);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_bucket(void)
{
	const double v[] = { 1, 5, 2, 8, 3, 3 };
	double out[8];

	is_int(chart__bucket(v, 6, out, 3, CHART_LEVEL), 3, "6 points into 3 columns");
	ok(out[0] == 5 && out[1] == 8 && out[2] == 3, "a level column is the bucket's max");
	chart__bucket(v, 6, out, 3, CHART_RATE);
	ok(out[0] == 3 && out[1] == 5 && out[2] == 3, "a rate column is the bucket's mean");
	is_int(chart__bucket(v, 2, out, 4, CHART_LEVEL), 4, "2 points stretched to 4 columns");
	ok(out[0] == 1 && out[1] == 1 && out[2] == 5 && out[3] == 5, "each point an equal run");
	is_int(chart__bucket(v, 0, out, 4, CHART_LEVEL), 0, "no points, no columns");
}

static void test_draw(void)
{
	char *s = render(draw_area, NULL), buf[32];
	bool utf8 = true;
	char *line, *save = NULL;
	int rows = 0, too_wide = 0;

	ok(s && !strncmp(s, "live heap (max 9 B)\n", 20), "area chart title with the max");
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		rows++;
		if (strlen(line) > 50)
			too_wide++;
	}
	is_int(rows, 1 + 4 + 1 + 1, "title, 4 rows, axis, time labels");
	is_int(too_wide, 0, "ASCII area chart fits 50 columns");
	free(s);

	s = render(draw_spark, &utf8);
	ok(s && strstr(s, "\u2581") && strstr(s, "\u2588"), "UTF-8 sparkline uses blocks");
	ok(s && !strncmp(s, "a/very/long/label/.. ", 21), "a long label keeps its head, cut marked");
	ok(s && strstr(s, "last 80") && !strstr(s, "max 80"), "narrow sparkline note: last only");
	free(s);
	utf8 = false;
	s = render(draw_spark, &utf8);
	ok(s && !strstr(s, "\xe2") && strchr(s, '@'), "ASCII sparkline without UTF-8");
	ok(s && strlen(s) <= 61, "ASCII sparkline fits 60 columns");
	free(s);

	is_str(chart__fmt_value(1536, CHART_BYTES, buf, sizeof(buf)), "1.50 KiB", "bytes");
	is_str(chart__fmt_value(12345, CHART_COUNT, buf, sizeof(buf)), "12.3k", "counts");
}

static void test_svg(void)
{
	char *s = render(draw_svg, NULL);

	ok(s && !strncmp(s, "<?xml", 5) && strstr(s, "</svg>\n"), "an SVG document");
	is_int(s ? count(s, "<polyline") : -1, 2, "one polyline per series");
	ok(s && strstr(s, "src/x.c:1 f&lt;T&gt;&amp;g"), "labels are XML-escaped");
	ok(s && strstr(s, "a &quot;title&quot;"), "the title is escaped");
	ok(s && strstr(s, ">MiB<") && strstr(s, "time (seconds)"), "axes name their units");
	free(s);
}

static void test_sitemap(void)
{
	struct sitemap *sm = sitemap__new();
	const char *file, *fn, *mod;
	int line;
	long a, b, c, d;

	a = sitemap__intern(sm, SITE_BY_LINE, "/s/a.c", 10, "f", "/bin/x");
	b = sitemap__intern(sm, SITE_BY_LINE, "/s/a.c", 11, "f", "/bin/x");
	c = sitemap__intern(sm, SITE_BY_LINE, "/s/a.c", 10, "f", "/bin/x");
	ok(a == 0 && b == 1 && c == 0, "by line: lines are sites, a key is found again");
	d = sitemap__intern(sm, SITE_BY_FUNCTION, "/s/a.c", 99, "f", "/bin/x");
	sitemap__site(sm, d, &file, &line, &fn, &mod);
	ok(d == 2 && line == 0 && !strcmp(fn, "f"), "by function: the line is dropped");
	a = sitemap__intern(sm, SITE_BY_LINE, NULL, 0, "memcpy", "/lib/libc.so.6");
	b = sitemap__intern(sm, SITE_BY_LINE, NULL, 0, "memcpy", "/lib/libm.so.6");
	ok(a >= 0 && b >= 0 && a != b, "no file: the module keeps sites apart");
	is_int(sitemap__find_addr(sm, 0x1234), -1, "an address not loaded");
	sitemap__delete(sm);
}

static void test_fixture(void)
{
	char path[] = "/tmp/rsprof-test-chart.XXXXXX";
	int fd = mkstemp(path);
	struct timeline_opts o = { .top = 2, .rank = RANK_FINAL, .need_growth = true,
				   .win = TIME_WINDOW_ALL };
	struct diff_opts dopt = { .win = { TIME_WINDOW_ALL, TIME_WINDOW_ALL }, .by = SITE_BY_LINE,
				  .limit = 0 };
	struct timeline *tl = NULL;
	struct diff *d = NULL;
	struct db *db = NULL;
	int err;

	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	err = fixture__write(path, FIXTURE_SMALL);
	is_int(err, 0, "fixture written");
	is_int(db__open(path, &db), 0, "fixture opened");
	if (!db)
		return;
	err = timeline__load(db, &o, &tl);
	is_int(err, 0, "timeline__load");
	if (tl) {
		is_int(tl->n, 10, "10 checkpoints");
		ok(tl->live[4] == 15.0 * FIX_MB && tl->live[9] == 10.0 * FIX_MB, "live heap series");
		ok(tl->cpu[0] == 100 && tl->alloc[0] == 4.0 * FIX_MB, "cpu and alloc per interval");
		is_int(tl->n_sites, 2, "two heap sites");
		is_int(tl->sites[0].line, 42, "the cache site ranks first by final bytes");
		ok(tl->sites[1].values[4] == 10.0 * FIX_MB && tl->sites[1].peak == 10 * FIX_MB,
		   "the parse site peaks at 10 MB");
		ok(tl->grew_most && tl->grew_most->line == 42 &&
		   tl->grew_most->growth == 9 * FIX_MB, "grew most: cache, +9 MB");
	}
	timeline__delete(tl);

	o.top = 0;
	o.cpu_top = 1;
	o.pattern = "WARM";
	tl = NULL;
	is_int(timeline__load(db, &o, &tl), 0, "timeline__load, CPU sites, filtered");
	if (tl) {
		is_int(tl->n_cpu_sites, 1, "one CPU site matches 'WARM'");
		ok(tl->n_cpu_sites && tl->cpu_sites[0].values[9] == 35, "its samples per interval");
	}
	timeline__delete(tl);

	is_int(diff__compute(db, db, &dopt, &d), 0, "diff__compute of the fixture with itself");
	if (d) {
		ok(d->identical, "identical");
		is_int(d->n_cpu, 4, "four CPU sites");
		is_int(d->n_heap, 1, "one heap site listed: parse holds nothing at the end");
		is_int(d->n_heap_noise, 1, "... and is counted as showing nothing");
		ok(d->n_cpu && d->cpu[0].pct_a == 60 && d->cpu[0].delta_pct == 0,
		   "hot_loop 60 %% in both, no change");
	}
	diff__delete(d);
	d = NULL;
	dopt.all = true;
	is_int(diff__compute(db, db, &dopt, &d), 0, "diff__compute, every row");
	if (d) {
		is_int(d->n_heap, 2, "two heap sites");
		is_int(d->n_heap_noise, 0, "none left out");
	}
	diff__delete(d);
	db__close(db);
	unlink(path);
}

int main(void)
{
	test_bucket();
	test_draw();
	test_svg();
	test_sitemap();
	test_fixture();
	return done_testing();
}
