#include "util/output/svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/output/escape.h"

#define SVG_W		960
#define PLOT_L		90	/* room for y labels */
#define PLOT_R		30
#define PLOT_T		50	/* panel title */
#define PLOT_H		300
#define AXIS_B		50	/* x labels and axis title */
#define LEGEND_LINE	20
#define MAX_POINTS	1800

static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
};
#define N_COLORS (sizeof(palette) / sizeof(palette[0]))

void svg__escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		const unsigned char c = (unsigned char)*s;
		int n;

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if (c < 0x80) {
				/* control characters are not allowed in XML 1.0 */
				fputc((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ? '?' : c, f);
				break;
			}
			/* not UTF-8 would make the document ill-formed: U+FFFD instead */
			n = escape__utf8_len(s);
			if (!n) {
				fputs("\xef\xbf\xbd", f);
			} else {
				fwrite(s, 1, n, f);
				s += n - 1;
			}
		}
	}
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about `ticks` ticks over max. */
static double nice_step(double max, int ticks)
{
	double raw = max / ticks, mag, r;

	if (raw <= 0)
		return 1;
	mag = pow(10, floor(log10(raw)));
	r = raw / mag;
	if (r <= 1)
		return mag;
	if (r <= 2)
		return 2 * mag;
	if (r <= 5)
		return 5 * mag;
	return 10 * mag;
}

static void fmt_tick(char *buf, size_t len, double v, double step)
{
	if (step >= 1 || v == 0)
		snprintf(buf, len, "%.0f", v);
	else if (step >= 0.1)
		snprintf(buf, len, "%.1f", v);
	else if (step >= 0.01)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%g", v);
}

static int panel_write(FILE *f, int y0, const struct svg_panel *p, const uint64_t *t_ms,
		       size_t n)
{
	const double scale = p->unit == CHART_BYTES ? 1024.0 * 1024.0 : 1.0;
	const int plot_w = SVG_W - PLOT_L - PLOT_R;
	const int top = y0 + PLOT_T, bottom = top + PLOT_H;
	double t_end = n ? (double)t_ms[n - 1] / 1000.0 : 0;
	double ymax = 0, ystep, xstep;
	size_t npts = n > MAX_POINTS ? MAX_POINTS : n;
	double *buf = NULL, *tb = NULL, *tsrc = NULL;
	char lab[64];

	for (size_t s = 0; s < p->n_series; s++)
		for (size_t i = 0; i < n; i++)
			if (p->series[s].values[i] / scale > ymax)
				ymax = p->series[s].values[i] / scale;
	if (ymax <= 0)
		ymax = 1;
	ystep = nice_step(ymax, 5);
	ymax = ceil(ymax / ystep - 1e-9) * ystep;
	if (t_end <= 0)
		t_end = 1;
	xstep = nice_step(t_end, 8);

	fprintf(f, "<g class=\"panel\">\n<text x=\"%d\" y=\"%d\" font-size=\"16\" "
		"font-weight=\"bold\">", PLOT_L, y0 + 30);
	svg__escape(f, p->title);
	fputs("</text>\n", f);

	/* grid and y ticks */
	for (double v = 0; v <= ymax + ystep / 2; v += ystep) {
		double y = bottom - v / ymax * PLOT_H;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			"stroke=\"#e0e0e0\"/>\n", PLOT_L, y, PLOT_L + plot_w, y);
		fmt_tick(lab, sizeof(lab), v, ystep);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
			"text-anchor=\"end\">%s</text>\n", PLOT_L - 6, y + 4, lab);
	}
	/* x ticks */
	for (double t = 0; t <= t_end + xstep / 1000; t += xstep) {
		double x = PLOT_L + t / t_end * plot_w;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n",
			x, bottom, x, bottom + 5);
		fmt_tick(lab, sizeof(lab), t, xstep);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" "
			"text-anchor=\"middle\">%s</text>\n", x, bottom + 20, lab);
	}
	/* axes and their titles */
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
		PLOT_L, top, PLOT_L, bottom);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
		PLOT_L, bottom, PLOT_L + plot_w, bottom);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">"
		"time (seconds)</text>\n", PLOT_L + plot_w / 2, bottom + 40);
	fprintf(f, "<text x=\"20\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 20 %d)\">%s</text>\n", top + PLOT_H / 2, top + PLOT_H / 2,
		p->unit == CHART_BYTES ? "MiB" : "samples");

	if (n) {
		buf = malloc(npts * sizeof(*buf));
		tb = malloc(npts * sizeof(*tb));
		tsrc = malloc(n * sizeof(*tsrc));
		if (!buf || !tb || !tsrc) {
			free(buf);
			free(tb);
			free(tsrc);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			tsrc[i] = (double)t_ms[i] / 1000.0;
		/* the bucket's time is its mean time */
		chart__bucket(tsrc, n, tb, npts, CHART_RATE);
	}
	for (size_t s = 0; s < p->n_series; s++) {
		const char *color = palette[s % N_COLORS];
		int ly = bottom + AXIS_B + (int)s * LEGEND_LINE;

		if (n) {
			chart__bucket(p->series[s].values, n, buf, npts, p->kind);
			fprintf(f, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
				"stroke-width=\"%s\" points=\"", color, s ? "1.5" : "2");
			for (size_t i = 0; i < npts; i++) {
				double v = buf[i] / scale;

				fprintf(f, "%s%.1f,%.1f", i ? " " : "",
					PLOT_L + tb[i] / t_end * plot_w,
					bottom - (v < 0 ? 0 : v) / ymax * PLOT_H);
			}
			fputs("\"><title>", f);
			svg__escape(f, p->series[s].label);
			fputs("</title></polyline>\n", f);
		}
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>\n",
			PLOT_L, ly - 6, color);
		fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%d\" font-size=\"12\">",
			PLOT_L + 20, ly);
		svg__escape(f, p->series[s].label);
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
	free(buf);
	free(tb);
	free(tsrc);
	return 0;
}

static int panel_height(const struct svg_panel *p)
{
	return PLOT_T + PLOT_H + AXIS_B + (int)p->n_series * LEGEND_LINE + 10;
}

int svg__write(FILE *f, const char *title, const uint64_t *t_ms, size_t n,
	       const struct svg_panel *panels, size_t n_panels)
{
	int height = 40, y = 40, err;

	for (size_t i = 0; i < n_panels; i++)
		height += panel_height(&panels[i]);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
		SVG_W, height, SVG_W, height);
	fputs("<title>", f);
	svg__escape(f, title);
	fputs("</title>\n", f);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
		"<text x=\"%d\" y=\"26\" font-size=\"18\">", PLOT_L);
	svg__escape(f, title);
	fputs("</text>\n", f);
	for (size_t i = 0; i < n_panels; i++) {
		err = panel_write(f, y, &panels[i], t_ms, n);
		if (err)
			return err;
		y += panel_height(&panels[i]);
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
