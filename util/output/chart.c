#include "util/output/chart.h"

#include <errno.h>
#include <langinfo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/duration.h"
#include "util/output/format.h"

/* U+2581 LOWER ONE EIGHTH BLOCK .. U+2588 FULL BLOCK, index = eighths */
static const char *const blocks[9] = {
	" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588",
};
static const char ascii_spark[] = " .:-=+*#@";

#define Y_LABEL_W 10	/* "123.4 MiB " */

int chart__term_width(void)
{
	const char *cols = getenv("COLUMNS");
	struct winsize ws;
	int w = 0;

	if (cols && *cols)
		w = atoi(cols);
	if (w <= 0 && isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws))
		w = ws.ws_col;
	if (w <= 0)
		w = 100;
	return w < 40 ? 40 : w;
}

bool chart__locale_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
}

char *chart__fmt_value(double v, enum chart_unit unit, char *buf, size_t len)
{
	double a = fabs(v);

	if (unit == CHART_COUNT) {
		if (a < 10000)
			snprintf(buf, len, "%.0f", v);
		else if (a < 1e6)
			snprintf(buf, len, "%.1fk", v / 1e3);
		else
			snprintf(buf, len, "%.1fM", v / 1e6);
		return buf;
	}
	return format__bytes((int64_t)llround(v), buf, len);
}

size_t chart__bucket(const double *values, size_t n, double *out, size_t cols,
		     enum chart_kind kind)
{
	if (!n)
		return 0;
	if (n <= cols) {
		/* fewer points than columns: each point gets an equal run of columns */
		for (size_t c = 0; c < cols; c++)
			out[c] = values[c * n / cols];
		return cols;
	}
	for (size_t c = 0; c < cols; c++) {
		size_t lo = c * n / cols, hi = (c + 1) * n / cols;
		double acc = kind == CHART_LEVEL ? values[lo] : 0;

		for (size_t i = lo; i < hi; i++) {
			if (kind == CHART_LEVEL)
				acc = values[i] > acc ? values[i] : acc;
			else
				acc += values[i];
		}
		out[c] = kind == CHART_LEVEL ? acc : acc / (double)(hi - lo);
	}
	return cols;
}

static double series_max(const double *v, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

static double series_mean(const double *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : 0;
}

/* Print s in exactly w columns (cut or padded); s is UTF-8. */
static void put_cols(FILE *f, const char *s, int w, bool right)
{
	int cols = 0, ew;
	const char *p = s, *end, *ell = format__ellipsis(&ew);

	for (end = s; *end && cols < w; end++) {
		if (((unsigned char)*end & 0xc0) != 0x80)
			cols++;
	}
	/* end is past the last counted start byte; include its continuation bytes */
	while (*end && ((unsigned char)*end & 0xc0) == 0x80)
		end++;
	if (cols == w && *end && w > ew) {
		/* too long: keep the head (the location comes first), mark the cut */
		const char *q = s;
		int c = 0;

		for (; *q; q++) {
			if (((unsigned char)*q & 0xc0) != 0x80 && ++c == w - ew + 1)
				break;
		}
		fwrite(s, 1, (size_t)(q - s), f);
		fputs(ell, f);
		return;
	}
	if (right)
		fprintf(f, "%*s", w - cols, "");
	fwrite(p, 1, (size_t)(end - p), f);
	if (!right)
		fprintf(f, "%*s", w - cols, "");
}

int chart__area(FILE *f, const struct chart_style *st, const char *title,
		const double *values, size_t n, uint64_t t_end_ms, enum chart_unit unit)
{
	int plot_w = st->width - Y_LABEL_W - 2;
	int h = st->height < 2 ? 2 : st->height;
	double *col, max;
	size_t ncol;
	char buf[32], t0[32], tm[32], te[32];

	if (plot_w < 10)
		plot_w = 10;
	col = calloc((size_t)plot_w, sizeof(*col));
	if (!col)
		return -ENOMEM;
	ncol = chart__bucket(values, n, col, (size_t)plot_w, CHART_LEVEL);
	max = series_max(col, ncol);

	fprintf(f, "%s (max %s)\n", title, chart__fmt_value(series_max(values, n), unit,
							   buf, sizeof(buf)));
	for (int r = 0; r < h; r++) {
		int base = (h - 1 - r) * 8;

		if (r == 0 || r == h / 2)
			put_cols(f, chart__fmt_value(max * (h - r) / h, unit, buf, sizeof(buf)),
				 Y_LABEL_W - 1, true);
		else
			fprintf(f, "%*s", Y_LABEL_W - 1, "");
		fputs(st->utf8 ? " \u2502" : " |", f);
		for (size_t c = 0; c < ncol; c++) {
			int e = max > 0 && col[c] > 0 ? (int)lround(col[c] / max * h * 8) : 0;
			int fill = e - base;

			if (max > 0 && col[c] > 0 && r == h - 1 && fill < 1)
				fill = 1;	/* anything above zero shows */
			fill = fill < 0 ? 0 : fill > 8 ? 8 : fill;
			if (st->utf8)
				fputs(blocks[fill], f);
			else
				fputc(fill == 8 ? '#' : fill >= 4 ? ':' : fill ? '.' : ' ', f);
		}
		fputc('\n', f);
	}
	put_cols(f, "0", Y_LABEL_W - 1, true);
	fputs(st->utf8 ? " \u2514" : " +", f);
	for (size_t c = 0; c < ncol; c++)
		fputs(st->utf8 ? "\u2500" : "-", f);
	fputc('\n', f);

	/* time labels: start, middle, end */
	snprintf(t0, sizeof(t0), "0s");
	duration__format(t_end_ms / 2, tm, sizeof(tm));
	duration__format(t_end_ms, te, sizeof(te));
	{
		int w = (int)ncol, mid = w / 2 - (int)strlen(tm) / 2;
		int l0 = (int)strlen(t0), le = (int)strlen(te);

		fprintf(f, "%*s", Y_LABEL_W + 1, "");
		fputs(t0, f);
		if (mid > l0 + 1 && mid + (int)strlen(tm) < w - le - 1) {
			fprintf(f, "%*s%s", mid - l0, "", tm);
			fprintf(f, "%*s\n", w - mid - (int)strlen(tm), te);
		} else {
			fprintf(f, "%*s\n", w - l0 > le ? w - l0 : le, te);
		}
	}
	free(col);
	return ferror(f) ? -EIO : 0;
}

int chart__area_mark(FILE *f, const struct chart_style *st, size_t n, size_t idx,
		     const char *text)
{
	int plot_w = st->width - Y_LABEL_W - 2, len = (int)strlen(text);
	size_t c;

	if (plot_w < 10)
		plot_w = 10;
	if (!n || idx >= n)
		return 0;
	/* the first column chart__bucket() gives point idx (or its bucket) */
	for (c = 0; c + 1 < (size_t)plot_w; c++) {
		size_t lo = c * n / (size_t)plot_w, hi = (c + 1) * n / (size_t)plot_w;

		if (n <= (size_t)plot_w ? lo == idx : (lo <= idx && idx < hi))
			break;
	}
	if ((int)c + 2 + len <= plot_w)
		fprintf(f, "%*s%s %s\n", Y_LABEL_W + 1 + (int)c, "", st->utf8 ? "\u25b2" : "^",
			text);
	else
		fprintf(f, "%*s%s %s\n", Y_LABEL_W + 1 + ((int)c > len + 1 ? (int)c - len - 1 : 0),
			"", text, st->utf8 ? "\u25b2" : "^");
	return ferror(f) ? -EIO : 0;
}

int chart__sparkline(FILE *f, const struct chart_style *st, const char *label,
		     int label_width, const double *values, size_t n,
		     enum chart_kind kind, enum chart_unit unit)
{
	/* note: "  last 123.4 MiB  max 123.4 MiB", or only "  last 123.4 MiB" when narrow */
	const bool narrow = st->width < 80;
	const int note_w = narrow ? 16 : 30;
	int w = st->width - label_width - 1 - note_w;
	double *col, max;
	size_t ncol;
	char last[32], hi[32];

	if (w < 10)
		w = 10;
	col = calloc((size_t)w, sizeof(*col));
	if (!col)
		return -ENOMEM;
	ncol = chart__bucket(values, n, col, (size_t)w, kind);
	max = series_max(col, ncol);

	put_cols(f, label, label_width, false);
	fputc(' ', f);
	for (size_t c = 0; c < ncol; c++) {
		int e = max > 0 && col[c] > 0 ? (int)lround(col[c] / max * 8) : 0;

		if (max > 0 && col[c] > 0 && e < 1)
			e = 1;
		if (st->utf8)
			fputs(blocks[e], f);
		else
			fputc(ascii_spark[e], f);
	}
	fprintf(f, "%*s", (int)((size_t)w - ncol), "");
	if (narrow)
		fprintf(f, "  %s %s\n", kind == CHART_LEVEL ? "last" : "mean",
			chart__fmt_value(kind == CHART_LEVEL ? (n ? values[n - 1] : 0)
					 : series_mean(values, n), unit, last, sizeof(last)));
	else if (kind == CHART_LEVEL)
		fprintf(f, "  last %-9s max %s\n",
			chart__fmt_value(n ? values[n - 1] : 0, unit, last, sizeof(last)),
			chart__fmt_value(series_max(values, n), unit, hi, sizeof(hi)));
	else
		fprintf(f, "  mean %-9s max %s\n",
			chart__fmt_value(series_mean(values, n), unit, last, sizeof(last)),
			chart__fmt_value(series_max(values, n), unit, hi, sizeof(hi)));
	free(col);
	return ferror(f) ? -EIO : 0;
}
