/*
 * rsprof push: send a profile's intervals to a profile store (Grafana
 * Pyroscope, Parca, an OpenTelemetry collector), one pprof (or OTLP
 * profile) per process, profile type and push interval, with what the
 * store does not have yet according to the profile's ledger; or one window
 * again. What a `record --push` left in the spool goes first.
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/duration.h"
#include "util/error.h"
#include "util/output/escape.h"
#include "util/output/format.h"
#include "util/options.h"
#include "util/push/options.h"
#include "util/push/pusher.h"
#include "util/record/caps.h"

static struct push_cmd_opts {
	const char *window;
	int quiet;
} opts;

static const char push_usage[] = "[OPTION...] FILE URL";

static struct poptOption push_options[] = {
	{ "window", 0, POPT_ARG_STRING, &opts.window, 0,
	  "push the time A..B of the recording as one interval, again if it was pushed before",
	  "A..B" },
	{ "quiet", 'q', POPT_ARG_NONE, &opts.quiet, 0, "no summary", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_push, 0, "Push:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static void summary(const struct push_stats *st, int err)
{
	char b[32];

	fprintf(stderr, "[ %s: %llu profile%s pushed to ", rsprof_cmd_name,
		(unsigned long long)st->pushed, st->pushed == 1 ? "" : "s");
	escape__fputs(st->store, stderr);
	fprintf(stderr, " (%s)", format__bytes((int64_t)st->pushed_bytes, b, sizeof(b)));
	if (st->failed)
		fprintf(stderr, ", %llu tr%s failed", (unsigned long long)st->failed,
			st->failed == 1 ? "y" : "ies");
	if (st->rejected)
		fprintf(stderr, ", %llu refused", (unsigned long long)st->rejected);
	if (st->queued) {
		fprintf(stderr, ", %llu left in ", (unsigned long long)st->queued);
		escape__fputs(st->spool, stderr);
	}
	fputs(" ]\n", stderr);
	if (err == -EAGAIN)
		pr_hint("the store did not answer in time: run the same rsprof push again to send "
			"the rest");
}

static int push_run(const char *file, const char *url)
{
	uint64_t from = UINT64_MAX, to = UINT64_MAX;
	struct push_opts po;
	struct push_stats st;
	struct pusher *p = NULL;
	int err;

	if (opts.window) {
		if (duration__parse_range(opts.window, &from, &to)) {
			pr_err("--window: '%s' is not A..B", opts.window);
			pr_hint("e.g. --window 10s..40s, ..1m, 30s..");
			return EXIT_USAGE;
		}
		if (from == UINT64_MAX)
			from = 0;
		if (to != UINT64_MAX && to <= from) {
			pr_err("--window: '%s' is empty", opts.window);
			return EXIT_USAGE;
		}
	}
	err = push_opts__from_args(&po, url);
	if (!err)
		err = pusher__new(&po, &p);
	if (!err)
		err = pusher__push_file(p, file, from, to);
	if (p) {
		pusher__stats(p, &st);
		if (!opts.quiet && err != -RSPROF_EUSAGE && err != -RSPROF_EDB)
			summary(&st, err);
	}
	pusher__delete(p);
	if (err == -EPROTO || err == -EAGAIN)
		return EXIT_ERROR;
	return exit_from_err(err);
}

int cmd_push(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof push", argc, argv, push_options, 0);
	int ret = options_parse(pc, push_usage, NULL, NULL);
	const char **args;
	int n;

	/* a network client writing the user's own file: no privilege wanted */
	if (caps__drop_all()) {
		poptFreeContext(pc);
		push_args__free();
		return EXIT_PERM;
	}
	if (ret == 0) {
		args = options_args(pc, &n);
		if (n != 2) {
			pr_err(n < 2 ? "a profile and the store's URL are needed" :
			       "one profile and one URL, not %d arguments", n);
			pr_hint("rsprof push rsprof.app.db http://localhost:4040");
			ret = EXIT_USAGE;
		} else {
			ret = push_run(args[0], args[1]);
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	push_args__free();
	return ret;
}
