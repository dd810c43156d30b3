/*
 * rsprof annotate: the source of a function (or a file, or the function
 * around FILE:LINE) with each line's CPU share and live and allocated heap,
 * and what went through it (callees included) when the profile has stacks,
 * the hottest lines highlighted; with --asm its machine code, each
 * instruction with its samples. On a terminal it opens a pager (Tab jumps
 * to the next hot line), else or with --stdio it prints the text once.
 * Sources are read from the recorded paths, or found with --source-dir and
 * --path-map when the tree has moved.
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/annotate/annotate.h"
#include "util/annotate/render.h"
#include "util/annotate/source.h"
#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/db/read/query.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/options.h"
#include "util/output/styled.h"
#include "util/tui/pager.h"
#include "util/output/term.h"
#include "util/tui/tui.h"
#include "util/window.h"

#define MAX_PATHS 16

static struct annotate_opts {
	int cpu, heap, insns, stdio, full_paths, context;
	const char *dirs[MAX_PATHS], *maps[MAX_PATHS];
	int n_dirs, n_maps;
} opts = { .context = 10 };

enum { OPT_SOURCE_DIR = OPT_VAL_BUILTIN, OPT_PATH_MAP };

static const char annotate_usage[] = "[OPTION...] [FILE] FUNCTION|SOURCE[:LINE]";

static struct poptOption annotate_options[] = {
	{ "cpu", 0, POPT_ARG_NONE, &opts.cpu, 0, "show CPU shares only", NULL },
	{ "heap", 0, POPT_ARG_NONE, &opts.heap, 0, "show live and allocated heap only", NULL },
	{ "asm", 0, POPT_ARG_NONE, &opts.insns, 0,
	  "show the machine code, each instruction with its samples, calls named", NULL },
	{ "stdio", 0, POPT_ARG_NONE, &opts.stdio, 0,
	  "print the text instead of opening the pager on a terminal", NULL },
	{ "source-dir", 0, POPT_ARG_STRING, NULL, OPT_SOURCE_DIR,
	  "look for source files under DIR too (repeatable)", "DIR" },
	{ "path-map", 0, POPT_ARG_STRING, NULL, OPT_PATH_MAP,
	  "read recorded paths starting with OLD under NEW (repeatable)", "OLD=NEW" },
	{ "context", 0, POPT_ARG_INT, &opts.context, 0,
	  "lines around SOURCE:LINE when no function holds it (default 10)", "N" },
	{ "full-paths", 0, POPT_ARG_NONE, &opts.full_paths, 0,
	  "show source paths as recorded, not shortened", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_window, 0, "Time window:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static int option_cb(int val, const char *arg, void *ctx)
{
	const char **v = val == OPT_SOURCE_DIR ? opts.dirs : opts.maps;
	int *n = val == OPT_SOURCE_DIR ? &opts.n_dirs : &opts.n_maps;

	if (val == OPT_PATH_MAP && source__check_map(arg)) {
		pr_err("--path-map wants OLD=NEW, not '%s'", arg);
		return -EINVAL;
	}
	if (*n == MAX_PATHS) {
		pr_err("at most %d --%s options", MAX_PATHS,
		       val == OPT_SOURCE_DIR ? "source-dir" : "path-map");
		return -EINVAL;
	}
	v[*n] = strdup(arg);
	if (!v[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int show(const struct styled_text *t, const char *title, int hot)
{
	struct tui *tui;
	int err;

	if (opts.stdio || !tui__usable())
		return styled__print(t, stdout, term__color());
	err = tui__start(&tui);
	if (err)
		return err;
	pager__run(tui, title, t, hot);
	tui__stop(tui);
	return 0;
}

/* The header's window line: "2.0s..5.0s", with "heap at 3.0s" (or "at the peak"). */
static void window_text(const struct query_filter *f, const struct prof_summary *s, bool at_peak,
			char *buf, size_t len)
{
	uint64_t from = f->win.from_ms == TIME_NONE ? 0 : time_window__after(&f->win);
	uint64_t to = f->win.to_ms == TIME_NONE || f->win.to_ms > s->duration_ms ? s->duration_ms :
		      f->win.to_ms;
	char a[32], b[32], c[32];

	if (f->at_ms == TIME_NONE)
		snprintf(buf, len, "%s..%s", duration__format(from, a, sizeof(a)),
			 duration__format(to, b, sizeof(b)));
	else
		snprintf(buf, len, "%s..%s, heap at %s%s", duration__format(from, a, sizeof(a)),
			 duration__format(to, b, sizeof(b)), duration__format(f->at_ms, c, sizeof(c)),
			 at_peak ? " (the peak)" : "");
}

static int annotate_run(const char *path, const char *target)
{
	struct source_paths sp = { opts.dirs, opts.n_dirs, opts.maps, opts.n_maps };
	struct ann_opts ao = { .target = target, .insns = opts.insns, .paths = &sp,
			       .context = opts.context };
	struct ann_view v = { .insns = opts.insns, .full_paths = opts.full_paths };
	struct styled_text text = { 0 };
	struct annotation *a = NULL;
	struct query_filter f;
	struct db *db = NULL;
	char *exe = NULL, title[512], wtext[128];
	int hot, err;

	if (opts.context < 0) {
		pr_err("--context wants a number of lines >= 0, not %d", opts.context);
		return EXIT_USAGE;
	}
	query_filter__init(&f);
	err = profile__open(path, &db);
	if (!err) {
		path = db__path(db);
		err = db__snapshot_begin(db);
	}
	if (!err && window__given(&window_args)) {
		struct prof_summary sum;
		bool at_peak;

		err = db_query_summary(db, &sum);
		if (!err)
			err = window__apply(&window_args, sum.duration_ms, sum.peak_ms, &f, &at_peak);
		if (!err)
			window_text(&f, &sum, at_peak, wtext, sizeof(wtext));
		v.window = wtext;
	}
	if (!err)
		err = db__meta_get(db, "exe_path", &exe);
	ao.exe = exe;
	if (!err)
		err = annotation__new(db, &f, &ao, &a);
	if (!err)
		err = db__snapshot_end(db);
	if (err)
		goto out;
	if (opts.heap && !a->totals.has_heap) {
		pr_err("'%s' has no heap data", path);
		pr_hint("record with heap tracking (without --no-heap) to see live heap");
		err = -RSPROF_EDB;
		goto out;
	}
	v.cpu = opts.cpu || !opts.heap;
	/* heap columns by default when the function has heap numbers to show */
	v.heap = opts.heap || (!opts.cpu && a->totals.has_heap &&
			       (a->c.live_bytes || a->c.alloc_bytes ||
				(a->incl_heap && (a->incl.live_bytes || a->incl.alloc_bytes))));
	v.profile = path;
	err = annotation__render(a, &v, &text, &hot);
	snprintf(title, sizeof(title), "rsprof annotate %s%s", target, opts.insns ? " --asm" : "");
	if (!err)
		err = show(&text, title, hot);
out:
	styled__free(&text);
	annotation__delete(a);
	db__close(db);
	free(exe);
	if (err == -ENOMEM)
		pr_err("out of memory");
	return exit_from_err(err);
}

int cmd_annotate(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof annotate", argc, argv, annotate_options, 0);
	int ret = options_parse(pc, annotate_usage, option_cb, NULL);

	if (ret == 0) {
		int n;
		const char **args = options_args(pc, &n);

		size_t l = n == 1 ? strlen(args[0]) : 0;

		/* `annotate run.db`: a profile alone says nothing about what to show */
		if (n == 1 && l > 3 && !strcmp(args[0] + l - 3, ".db") && !access(args[0], F_OK))
			n = 0;
		if (n < 1 || n > 2) {
			pr_err(n < 1 ? "what to annotate: a function or a source file is needed" :
				       "too many arguments");
			pr_hint("rsprof annotate [PROFILE.db] FUNCTION|SOURCE[:LINE]");
			ret = EXIT_USAGE;
		} else {
			ret = annotate_run(n == 2 ? args[0] : NULL, args[n - 1]);
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	for (int i = 0; i < opts.n_dirs; i++)
		free((char *)opts.dirs[i]);
	for (int i = 0; i < opts.n_maps; i++)
		free((char *)opts.maps[i]);
	poptFreeContext(pc);
	return ret;
}
