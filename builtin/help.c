/*
 * rsprof help: the list of commands, or the manual page of one
 * (`rsprof help record` is `man rsprof-record`, with a copy of the text
 * built into the binary for machines where the page is not installed).
 */
#include "builtin.h"

#include <popt.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "util/help.h"
#include "util/options.h"
#include "util/suggest.h"

static struct poptOption help_options[] = {
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static void list_commands(void)
{
	printf("usage: rsprof [--version] [-h|--help] <command> [<args>]\n\nCommands:\n");
	for (int i = 0; i < n_commands; i++)
		printf("   %-10s %s\n", commands[i].name, commands[i].summary);
	printf("\nSee 'rsprof help <command>' for the manual of a command,\n"
	       "'rsprof help rsprof' for the overview and 'rsprof help files' for the file format.\n");
}

static int help_run(const char *topic)
{
	const char *names[64];
	char page[128];
	const char *best;

	if (!topic) {
		list_commands();
		return EXIT_OK;
	}
	if (!strcmp(topic, "rsprof"))
		snprintf(page, sizeof(page), "rsprof");
	else
		snprintf(page, sizeof(page), "rsprof-%s", topic);
	if (!help__show_page(page))
		return EXIT_OK;

	pr_err("no manual page for '%s'", topic);
	for (int i = 0; i < n_commands; i++)
		names[i] = commands[i].name;
	best = suggest_nearest(topic, names, n_commands);
	if (best)
		pr_hint("did you mean 'rsprof help %s'?", best);
	else
		pr_hint("'rsprof help' lists the commands");
	return EXIT_USAGE;
}

int cmd_help(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof help", argc, argv, help_options, 0);
	int ret = options_parse(pc, "[OPTION...] [COMMAND]", NULL, NULL);

	if (ret == 0) {
		int n;
		const char **args = options_args(pc, &n);

		if (n > 1) {
			pr_err("too many arguments");
			ret = EXIT_USAGE;
		} else {
			ret = help_run(args[0]);
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	return ret;
}
