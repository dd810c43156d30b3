#include "util/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/output/term.h"

struct target_args target_args;
struct output_args output_args;

enum { OPT_HELP = 'h', OPT_USAGE = OPT_VAL_BUILTIN - 1 };

struct poptOption options_common[] = {
	{ "help", 'h', POPT_ARG_NONE, NULL, OPT_HELP, "show this help", NULL },
	{ "usage", 0, POPT_ARG_NONE, NULL, OPT_USAGE, "show a short usage message", NULL },
	{ "verbose", 'v', POPT_ARG_NONE, NULL, 'v',
	  "print debug messages (repeat for more)", NULL },
	POPT_TABLEEND
};

struct poptOption options_target[] = {
	{ "pid", 'p', POPT_ARG_ARGV, &target_args.pid_args, 0,
	  "attach to process PID (a comma-separated list, or -p again, for several)",
	  "PID[,PID...]" },
	{ "process", 'P', POPT_ARG_STRING, &target_args.process, 0,
	  "attach to the process named NAME (exactly, else the one whose name contains it)",
	  "NAME" },
	{ "no-inherit", 0, POPT_ARG_NONE, &target_args.no_inherit, 0,
	  "do not follow the child processes the target starts (threads are still "
	  "followed)", NULL },
	POPT_TABLEEND
};

struct poptOption options_output[] = {
	{ "json", 0, POPT_ARG_NONE, &output_args.json, 0, "print JSON", NULL },
	{ "csv", 0, POPT_ARG_NONE, &output_args.csv, 0, "print CSV", NULL },
	{ "top", 'n', POPT_ARG_INT, &output_args.top_n, 0, "show at most N rows", "N" },
	{ "no-pager", 0, POPT_ARG_NONE, &output_args.no_pager, 0,
	  "do not send the output through the pager on a terminal ($RSPROF_PAGER, $PAGER, less)",
	  NULL },
	{ "color", 0, POPT_ARG_STRING, &output_args.color, 0,
	  "colours: auto (on a terminal; the default), always or never", "WHEN" },
	POPT_TABLEEND
};

int options_parse(poptContext pc, const char *usage,
		  int (*cb)(int val, const char *arg, void *ctx), void *ctx)
{
	int rc;

	poptSetOtherOptionHelp(pc, usage);
	while ((rc = poptGetNextOpt(pc)) > 0) {
		switch (rc) {
		case OPT_HELP:
			poptPrintHelp(pc, stdout, 0);
			return 1;
		case OPT_USAGE:
			poptPrintUsage(pc, stdout, 0);
			return 1;
		case 'v':
			verbose++;
			break;
		default:
			if (rc >= OPT_VAL_BUILTIN && cb) {
				char *arg = poptGetOptArg(pc);	/* ours to free (popt >= 1.14) */
				int err = cb(rc, arg, ctx);

				free(arg);
				if (err < 0)
					return -RSPROF_EUSAGE;
				break;
			}
			pr_err("unhandled option value %d", rc);
			return -RSPROF_EUSAGE;
		}
	}
	if (rc < -1) {
		pr_err("%s: %s", poptBadOption(pc, POPT_BADOPTION_NOALIAS), poptStrerror(rc));
		poptPrintUsage(pc, stderr, 0);
		return -RSPROF_EUSAGE;
	}
	return 0;
}

int options_output_check(void)
{
	enum term_color c = TERM_COLOR_AUTO;

	if (output_args.json && output_args.csv) {
		pr_err("--json and --csv cannot be used together");
		return -RSPROF_EUSAGE;
	}
	if (output_args.top_n < 0) {
		pr_err("-n/--top wants a number >= 0, not %d", output_args.top_n);
		return -RSPROF_EUSAGE;
	}
	if (output_args.color && term__parse_color(output_args.color, &c)) {
		pr_err("--color wants auto, always or never, not '%s'", output_args.color);
		return -RSPROF_EUSAGE;
	}
	term__set_color(c);
	return 0;
}

void options_output_pager(void)
{
	int err = output_args.no_pager ? 0 : term__start_pager();

	if (err)
		pr_warn("cannot start the pager: %s", strerror(-err));
}

const char **options_args(poptContext pc, int *n)
{
	static const char *none[] = { NULL };
	const char **args = poptGetArgs(pc);
	int i = 0;

	if (!args)
		args = none;
	while (args[i])
		i++;
	*n = i;
	return args;
}

int options_one_profile(int n)
{
	if (n <= 1)
		return 0;
	pr_err("one profile at a time, not %d", n);
	pr_hint("to compare two profiles, use 'rsprof diff A.db B.db'");
	return -RSPROF_EUSAGE;
}
