/*
 * rsprof record: sample a process's CPU (perf events) and heap (BPF
 * uprobes) into one profile file, checkpoint by checkpoint, until the
 * duration ends, a signal arrives or the target exits. The target is a
 * running process (-p PID, -P NAME) or a command that rsprof launches
 * (-- CMD ARGS...), profiled from its first instruction.
 */
#include "builtin.h"

#include <limits.h>
#include <popt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/options.h"
#include "util/push/options.h"
#include "util/record/options.h"
#include "util/record/recorder.h"
#include "util/record/status.h"

static const char record_usage[] =
	"[OPTION...] (-p PID | -P NAME | -a | -- COMMAND [ARG...])";

static const char *push_url;

static struct poptOption record_push_options[] = {
	{ "push", 0, POPT_ARG_STRING, &push_url, 0,
	  "send each interval to the profile store at URL while recording (Pyroscope, "
	  "Parca, OTLP: rsprof-push(1))", "URL" },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_push, 0, NULL, NULL },
	POPT_TABLEEND
};

static struct poptOption record_all_options[] = {
	{ "all-cpus", 'a', POPT_ARG_NONE, &record_args.all_cpus, 0,
	  "record every process of the host, on every CPU (CPU only)", NULL },
	{ "comm", 0, POPT_ARG_STRING, &record_args.comm, 0,
	  "with -a: only the processes named NAME (their comm, exact)", "NAME" },
	{ "cgroup", 0, POPT_ARG_STRING, &record_args.cgroup, 0,
	  "with -a: only the processes in the cgroup PATH or below it", "PATH" },
	POPT_TABLEEND
};

static struct poptOption record_options[] = {
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_target, 0, "Target:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, record_all_options, 0, NULL, NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_record, 0, "Recording:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, record_push_options, 0, "Push:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static struct recorder *current;
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	stop_requested = 1;
	recorder__stop(current);
}

/* SIGQUIT: leave at once, the file as the last checkpoint left it. */
static void on_quit(int sig)
{
	_exit(EXIT_ERROR);
}

static int install_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_stop;	/* no SA_RESTART: the loop's sleep ends early */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -1;
	sa.sa_handler = on_quit;
	if (sigaction(SIGQUIT, &sa, NULL))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void status_tick(struct recorder *r, void *ctx)
{
	struct recorder_stats st;

	recorder__stats(r, &st);
	status__line(stderr, &st);
}

/* --push URL and its options into o->push (po). -RSPROF_EUSAGE, printed. */
static int record_push(struct record_opts *o, struct push_opts *po)
{
	o->push = NULL;
	if (!push_url) {
		if (!push_args__given())
			return 0;
		pr_err("the push options need --push URL");
		return -RSPROF_EUSAGE;
	}
	if (o->append) {
		pr_err("--push with --append: the intervals pushed before would overlap the new ones");
		pr_hint("record --push into a new file; push an appended file with rsprof push");
		return -RSPROF_EUSAGE;
	}
	if (push_opts__from_args(po, push_url))
		return -RSPROF_EUSAGE;
	o->push = po;
	return 0;
}

/* "rsprof record ARGS..." (argv[0] is "rsprof record"), for the file's meta. */
static char *command_line(int argc, const char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int record_run(struct record_opts *o)
{
	bool live = !record_args.quiet && status__is_live(stderr);
	struct recorder_stats st;
	struct recorder *r;
	const char *reason;
	char path[PATH_MAX];
	int err, err2;

	if (live) {
		o->tick = status_tick;
		o->tick_ctx = NULL;
	}
	/* before the target starts: a ^C during the set-up still ends it cleanly */
	if (install_signals()) {
		pr_err("cannot install signal handlers");
		return EXIT_ERROR;
	}
	err = recorder__new(o, &r);
	if (err)
		return exit_from_err(err);
	current = r;
	if (stop_requested)
		recorder__stop(r);
	err = recorder__run(r);
	if (live)
		status__clear(stderr);
	recorder__stats(r, &st);
	snprintf(path, sizeof(path), "%s", recorder__path(r));
	reason = recorder__stop_reason(r);
	current = NULL;
	/* closed first: an error closing the file is an error of the recording */
	err2 = recorder__delete(r);
	/* exit 5 at the end: the file is not kept (nothing in it can be named) */
	if (!record_args.quiet && err != -RSPROF_ENODEBUG)
		status__summary(stderr, &st, path, reason, !err && !err2);
	/* the recording is whole, but what was asked of the push was not done */
	if (!err && !err2 && st.push_rejected)
		return EXIT_ERROR;
	return exit_from_err(err ? err : err2);
}

int cmd_record(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof record", argc, argv, record_options,
					POPT_CONTEXT_POSIXMEHARDER);
	int ret = options_parse(pc, record_usage, NULL, NULL);

	if (ret == 0) {
		struct record_opts o;
		int n;
		const char **cmd = options_args(pc, &n);

		char *line = command_line(argc, argv);

		struct push_opts po;

		ret = record_opts__from_args(&o, cmd);
		o.rsprof_cmdline = line;
		if (!ret)
			ret = record_push(&o, &po);
		ret = ret ? EXIT_USAGE : record_run(&o);
		free(line);
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	record_args__free();
	push_args__free();
	return ret;
}
