#ifndef RSPROF_UTIL_OUTPUT_SVG_H
#define RSPROF_UTIL_OUTPUT_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/output/chart.h"

/*
 * A standalone SVG line chart (no script, no external style, readable in
 * any browser): one or more panels stacked vertically, each with axes, tick
 * labels in seconds (x) and MiB or counts (y), one polyline per series and
 * a legend naming each series ("src/cache.rs:201 Cache::insert"). Labels
 * are XML-escaped. Series longer than the plot is wide are reduced with
 * chart__bucket() (highest value per bucket for levels, mean for rates).
 */
struct svg_series {
	const char *label;
	const double *values;	/* n values, one per checkpoint */
};

struct svg_panel {
	const char *title;
	enum chart_unit unit;	/* CHART_BYTES: axis in MiB; CHART_COUNT: plain */
	enum chart_kind kind;
	const struct svg_series *series;
	size_t n_series;
};

/*
 * Writes the document to f: t_ms[n] are the checkpoints' times. Returns 0,
 * -ENOMEM, or -EIO when writing failed.
 */
int svg__write(FILE *f, const char *title, const uint64_t *t_ms, size_t n,
	       const struct svg_panel *panels, size_t n_panels);

/* Writes s XML-escaped (&, <, >, ", '). */
void svg__escape(FILE *f, const char *s);

#endif
