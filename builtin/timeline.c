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
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/analysis/timeline.h"
#include "util/duration.h"
#include "util/window.h"
#include "util/error.h"
#include "util/output/escape.h"
#include "util/output/membuf.h"
#include "util/options.h"
#include "util/output/timeline.h"

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

static struct poptOption timeline_options[] = {
	{ "rank", 0, POPT_ARG_STRING, &args.rank, OPT_RANK,
	  "rank the sites of -n by final, peak or growth live bytes (default: final; peak when nothing is live at the end)",
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
	  "only from A to B after the start (either may be left out), within the recording",
	  "A..B" },
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
	if ((val == OPT_SINCE || val == OPT_UNTIL) && duration__parse(arg, &a)) {
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

/* The window option as typed, for the errors of timeline__load(). */
static char win_what[128];

/* --since, --until, --window into the options (checked by option_cb). */
static int set_window(struct timeline_opts *o)
{
	if (args.window && (args.since || args.until)) {
		pr_err("--window cannot be combined with --since or --until");
		return -RSPROF_EUSAGE;
	}
	o->win = TIME_WINDOW_ALL;
	if (args.since && (duration__parse(args.since, &o->since_ms) ||
			   window__since_check(args.since, o->since_ms)))
		return -RSPROF_EUSAGE;
	if (args.until)
		duration__parse(args.until, &o->win.to_ms);
	if (args.window)
		time_window__parse(args.window, &o->win);
	snprintf(win_what, sizeof(win_what), "%s %s", args.window ? "--window" :
		 args.since ? "--since" : "--until", args.window ? args.window : args.since ?
		 args.since : args.until ? args.until : "");
	o->win_what = win_what;
	return 0;
}

static int timeline_run(const char *file)
{
	struct timeline_opts o = { .rank = RANK_AUTO, .pattern = args.filter,
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
	if (args.svg && (err = timeline_view__svg(args.svg, file, tl)))
		goto out;

	/* stdout gets the whole document or nothing */
	err = membuf__open(&out);
	if (!err && output_args.csv) {
		err = timeline_view__csv(out.f, tl);
	} else if (!err && output_args.json) {
		err = timeline_view__json(out.f, file, tl);
	} else if (!err && args.svg) {
		timeline_view__growth(out.f, tl);
		fputs("wrote ", out.f);
		escape__fputs(args.svg, out.f);
		fputc('\n', out.f);
	} else if (!err) {
		err = timeline_view__chart(out.f, file, tl, args.rank ? args.rank :
					   tl->rank == RANK_PEAK ? "peak: nothing is live at the end" :
					   "final");
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

	if (ret == 0) {
		int n;
		const char **a = options_args(pc, &n);

		if (options_output_check()) {
			ret = EXIT_USAGE;
		} else if (options_one_profile(n)) {
			ret = EXIT_USAGE;
		} else {
			options_output_pager();
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
