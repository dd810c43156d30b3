/*
 * rsprof flamegraph: a profile's call stacks as an interactive flame graph,
 * one self-contained SVG (util/output/flamegraph.h): the CPU stacks of a
 * `record -g` profile, or the heap's stacks (in use, allocated, or
 * allocations), in a time window; with two profiles, a differential flame
 * graph of the second against the first.
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/db/read/query.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/output/flamegraph.h"
#include "util/output/format.h"
#include "util/window.h"

static struct flamegraph_opts {
	const char *output;
	int cpu, heap;
	const char *value;
	const char *title;
	const char *filter;
} opts;

static const char flamegraph_usage[] = "[OPTION...] [FILE | BASE.db FILE]";

static struct poptOption flamegraph_options[] = {
	{ "output", 'o', POPT_ARG_STRING, &opts.output, 0,
	  "write the SVG to FILE (default flamegraph.svg; - for stdout)", "FILE" },
	{ "cpu", 0, POPT_ARG_NONE, &opts.cpu, 0,
	  "the CPU call stacks (the default when the profile has them)", NULL },
	{ "heap", 0, POPT_ARG_NONE, &opts.heap, 0, "the heap's call stacks", NULL },
	{ "heap-value", 0, POPT_ARG_STRING, &opts.value, 0,
	  "what a heap frame's width is: inuse (live bytes at the window's end, the "
	  "default), allocated (bytes allocated in the window) or allocs", "WHAT" },
	{ "title", 0, POPT_ARG_STRING, &opts.title, 0, "the picture's title", "TEXT" },
	{ "filter", 0, POPT_ARG_STRING, &opts.filter, 0,
	  "only stacks with a frame whose path or function contains PAT (any case)", "PAT" },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_window, 0, "Time window:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

enum heap_value { HV_INUSE, HV_ALLOCATED, HV_ALLOCS };

struct fg_run {
	struct flamegraph *fg;
	bool heap, base;
	enum heap_value hv;
	uint64_t stacks;
};

static int stack_cb(const struct prof_stack *s, void *ctx)
{
	struct fg_run *r = ctx;
	int64_t v = !r->heap ? s->value : r->hv == HV_INUSE ? s->value :
		    r->hv == HV_ALLOCATED ? s->alloc_value : s->alloc_count;

	r->stacks++;
	return r->base ? flamegraph__add_base(r->fg, s, v) : flamegraph__add(r->fg, s, v);
}

/*
 * The stacks of one profile into r (the base with r->base). *heap: asked
 * for, or chosen (CPU when the profile has CPU stacks, else heap); the
 * profile's name and duration for the subtitle.
 */
static int read_profile(const char *path, struct fg_run *r, char *what, size_t len)
{
	struct prof_summary sum;
	struct query_filter f;
	struct db *db = NULL;
	char *stacks = NULL, *name = NULL;
	bool at_peak = false;
	int err;

	query_filter__init(&f);
	f.pattern = opts.filter && *opts.filter ? opts.filter : NULL;
	err = profile__open(path, &db);
	if (!err)
		err = db__snapshot_begin(db);
	if (!err)
		err = db_query_summary(db, &sum);
	if (!err)
		err = window__apply(&window_args, sum.duration_ms, sum.peak_ms, &f, &at_peak);
	if (!err)
		err = db__meta_get(db, "call_graph", &stacks);
	if (!err)
		err = db__meta_get(db, "process_name", &name);
	if (err)
		goto out;
	if (!r->base && !opts.cpu && !opts.heap)
		r->heap = !(stacks && !strcmp(stacks, "on")) && sum.has_heap;
	if (r->heap ? !sum.has_heap : !(stacks && !strcmp(stacks, "on"))) {
		pr_err("'%s' has no %s call stacks", db__path(db), r->heap ? "heap" : "CPU");
		pr_hint(r->heap ? "record with heap tracking (without --no-heap)" :
				  "record with -g to keep CPU call stacks");
		err = -ENOENT;
		goto out;
	}
	if (!r->fg) {
		r->fg = flamegraph__new(!r->heap ? FG_CPU : r->hv == HV_ALLOCS ? FG_COUNT : FG_HEAP);
		if (!r->fg) {
			err = -ENOMEM;
			goto out;
		}
	}
	r->stacks = 0;
	err = db_query_stacks(db, &f, r->heap, stack_cb, r);
	if (!err) {
		char d[32];

		snprintf(what, len, "%s, %s", name ? name : "?",
			 duration__format(sum.duration_ms, d, sizeof(d)));
	}
out:
	free(stacks);
	free(name);
	db__close(db);
	return err;
}

static int flamegraph_run(const char *base, const char *file)
{
	struct fg_run r = { .heap = opts.heap };
	char a[512] = "", b[512] = "", title[256], sub[1200];
	const char *out = opts.output ? opts.output : "flamegraph.svg";
	struct outfile of = { .fd = -1 };
	uint64_t drawn, hidden;
	FILE *f = stdout;
	int err;

	if (opts.value && !opts.heap && opts.cpu) {
		pr_err("--heap-value is for --heap");
		return -RSPROF_EUSAGE;
	}
	if (opts.value) {
		r.heap = true;
		if (!strcmp(opts.value, "inuse"))
			r.hv = HV_INUSE;
		else if (!strcmp(opts.value, "allocated"))
			r.hv = HV_ALLOCATED;
		else if (!strcmp(opts.value, "allocs"))
			r.hv = HV_ALLOCS;
		else {
			pr_err("--heap-value: '%s' is not inuse, allocated or allocs", opts.value);
			return -RSPROF_EUSAGE;
		}
	}
	if (opts.cpu && opts.heap) {
		pr_err("a flame graph is of CPU or of heap stacks: --cpu or --heap, not both");
		return -RSPROF_EUSAGE;
	}
	/* B decides the kind; the base is read the same way */
	err = read_profile(file, &r, b, sizeof(b));
	if (!err && base) {
		r.base = true;
		err = read_profile(base, &r, a, sizeof(a));
	}
	if (err)
		goto out;
	snprintf(title, sizeof(title), "%s%s", opts.title ? opts.title :
		 r.heap ? (r.hv == HV_INUSE ? "Heap in use" : r.hv == HV_ALLOCATED ?
			   "Heap allocated" : "Allocations") : "CPU", base && !opts.title ?
		 ": differential" : "");
	if (base)
		snprintf(sub, sizeof(sub), "%s against %s (red: a larger share, blue: smaller)",
			 b, a);
	else
		snprintf(sub, sizeof(sub), "%s", b);
	if (strcmp(out, "-")) {
		err = outfile__create(&of, out, OUTFILE_REPLACE);
		f = err ? NULL : outfile__fdopen(&of);
		if (!f) {
			err = err ? err : -errno;
			goto out;
		}
	}
	err = flamegraph__write(r.fg, f, title, sub);
	if (f != stdout) {
		if (fclose(f) && !err)
			err = -EIO;
		if (err) {
			pr_err("cannot write '%s': %s", out, strerror(-err));
			outfile__abort(&of);
			goto out;
		}
		err = outfile__commit(&of);
		if (err)
			goto out;
		flamegraph__counts(r.fg, &drawn, &hidden);
		fprintf(stderr, "rsprof flamegraph: wrote %s (%llu frames; %llu too narrow to "
			"draw)\n", out, (unsigned long long)drawn, (unsigned long long)hidden);
	}
out:
	flamegraph__delete(r.fg);
	return err;
}

int cmd_flamegraph(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof flamegraph", argc, argv, flamegraph_options, 0);
	int ret = options_parse(pc, flamegraph_usage, NULL, NULL);

	if (ret == 0) {
		const char *x = poptGetArg(pc), *y = poptGetArg(pc);

		if (poptPeekArg(pc)) {
			pr_err("at most two profiles: BASE.db FILE");
			ret = EXIT_USAGE;
		} else {
			ret = exit_from_err(y ? flamegraph_run(x, y) : flamegraph_run(NULL, x));
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	return ret;
}
