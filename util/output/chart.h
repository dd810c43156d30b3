#ifndef RSPROF_UTIL_OUTPUT_CHART_H
#define RSPROF_UTIL_OUTPUT_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Charts for the terminal: one area chart with a y axis (the total live
 * heap over time) and one-line sparklines under it (per-interval series and
 * the top sites). Unicode block characters (U+2581..U+2588) when the locale
 * is UTF-8, ASCII otherwise; everything fits `width` columns.
 *
 * A series has n points; when there are more points than columns, each
 * column stands for a bucket of points: a level (live bytes) shows the
 * bucket's highest value, a rate (bytes or samples per interval) its mean.
 */
enum chart_kind {
	CHART_LEVEL,
	CHART_RATE,
};

enum chart_unit {
	CHART_BYTES,
	CHART_COUNT,
};

struct chart_style {
	int width;		/* total columns to use (>= 40 is sensible) */
	int height;		/* rows of the area chart */
	bool utf8;		/* block characters and box drawing; else ASCII */
};

/* Width from $COLUMNS or the terminal of stdout, else 100; at least 40. */
int chart__term_width(void);
/* True when the current LC_CTYPE locale's codeset is UTF-8 (call setlocale first). */
bool chart__locale_utf8(void);

/*
 * The area chart: title line, `height` rows with y labels, an x axis with
 * time labels from 0 to t_end_ms. values may be negative (clamped to 0).
 * Returns 0, or -ENOMEM / -EIO.
 */
int chart__area(FILE *f, const struct chart_style *st, const char *title,
		const double *values, size_t n, uint64_t t_end_ms, enum chart_unit unit);

/*
 * A line to print under chart__area(): a mark (U+25B2, or '^') under the
 * column showing point idx of the n points, and text beside it (to its
 * right, or to its left when it does not fit). Returns 0 or -EIO.
 */
int chart__area_mark(FILE *f, const struct chart_style *st, size_t n, size_t idx,
		     const char *text);

/*
 * One sparkline row: `label` padded to label_width columns (or cut, ending
 * in format__ellipsis()), the line,
 * then a short note (the series' last and highest value). Returns 0, or
 * -ENOMEM / -EIO.
 */
int chart__sparkline(FILE *f, const struct chart_style *st, const char *label,
		     int label_width, const double *values, size_t n,
		     enum chart_kind kind, enum chart_unit unit);

/*
 * Fit n points into cols columns: when n > cols, each column is a bucket of
 * points (max for CHART_LEVEL, mean for CHART_RATE); when n <= cols, each
 * point fills an equal run of columns. out has room for cols values;
 * returns cols (0 when n is 0).
 */
size_t chart__bucket(const double *values, size_t n, double *out, size_t cols,
		     enum chart_kind kind);

/* "12.3 MiB", "512 B", "1.2 GiB"; "1.2k" counts. Returns buf. */
char *chart__fmt_value(double v, enum chart_unit unit, char *buf, size_t len);

#endif
