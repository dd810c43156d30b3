/*
 * rsprof: which source lines burn CPU and which hold heap memory.
 *
 * The dispatcher: global options, the command table, dispatch, and the
 * check that everything written to stdout really got out.
 */
#include "builtin.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/record/caps.h"
#include "util/suggest.h"

const struct cmd_struct commands[] = {
	{ "record", cmd_record, 0, "record CPU and heap samples of a process into a profile" },
	{ "top", cmd_top, 0, "live view of the hottest lines while recording" },
	{ "report", cmd_report, CMD_READ_ONLY, "rank source lines by CPU and live heap" },
	{ "annotate", cmd_annotate, CMD_READ_ONLY,
	  "source (or machine code) of a function, line by line" },
	{ "history", cmd_history, CMD_READ_ONLY,
	  "who owned an address, and when (allocation history)" },
	{ "diff", cmd_diff, CMD_READ_ONLY, "compare two profiles" },
	{ "timeline", cmd_timeline, CMD_READ_ONLY,
	  "heap and CPU over the checkpoints of a profile" },
	{ "flamegraph", cmd_flamegraph, CMD_READ_ONLY,
	  "a profile's call stacks as an interactive flame graph (SVG)" },
	{ "info", cmd_info, CMD_READ_ONLY, "show what a profile holds" },
	{ "query", cmd_query, CMD_READ_ONLY, "run SQL on a profile, read-only" },
	/* writes the profile's ledger of what was pushed */
	{ "push", cmd_push, 0, "send a profile to Pyroscope, Parca or an OpenTelemetry collector" },
	{ "help", cmd_help, CMD_READ_ONLY, "show help for rsprof or a command" },
};
const int n_commands = sizeof(commands) / sizeof(commands[0]);

static const char rsprof_usage[] =
	"usage: rsprof [--version] [-h|--help] <command> [<args>]";

static void print_commands(FILE *f)
{
	fprintf(f, "%s\n\nCommands:\n", rsprof_usage);
	for (int i = 0; i < n_commands; i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nSee 'rsprof help <command>' for the manual of a command.\n", f);
}

static const struct cmd_struct *find_cmd(const char *name)
{
	for (int i = 0; i < n_commands; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* Flush stdout and tell a failed write apart: `report > /dev/full` is an error. */
static int finish_stdout(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "rsprof: write failure on standard output: %s\n",
				strerror(errno));
		return status ? status : EXIT_ERROR;
	}
	return status;
}

static int unknown_cmd(const char *name)
{
	const char *names[64];
	const char *best;

	for (int i = 0; i < n_commands; i++)
		names[i] = commands[i].name;
	fprintf(stderr, "rsprof: '%s' is not an rsprof command. See 'rsprof --help'.\n", name);
	best = suggest_nearest(name, names, n_commands);
	if (best)
		fprintf(stderr, "\nThe most similar command is\n\t%s\n", best);
	return EXIT_USAGE;
}

int main(int argc, const char **argv)
{
	const struct cmd_struct *cmd;
	static char name[64];

	/* the terminal's charset (UTF-8: "…" and box lines); numbers stay C's */
	setlocale(LC_CTYPE, "");
	/* Global options, before the command. */
	while (argc > 1 && argv[1][0] == '-') {
		const char *opt = argv[1];

		if (!strcmp(opt, "--version")) {
			printf("rsprof version %s\n", RSPROF_VERSION);
			return finish_stdout(EXIT_OK);
		} else if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			print_commands(stdout);
			return finish_stdout(EXIT_OK);
		} else if (!strcmp(opt, "--list-cmds")) {
			for (int i = 0; i < n_commands; i++)
				puts(commands[i].name);
			return finish_stdout(EXIT_OK);
		} else {
			fprintf(stderr, "rsprof: unknown option: %s\n%s\n", opt, rsprof_usage);
			return EXIT_USAGE;
		}
	}
	if (argc < 2) {
		print_commands(stdout);
		return finish_stdout(EXIT_OK);
	}

	cmd = find_cmd(argv[1]);
	if (!cmd)
		return unknown_cmd(argv[1]);
	snprintf(name, sizeof(name), "rsprof %s", cmd->name);
	rsprof_cmd_name = name;
	argv[1] = name;		/* popt prints argv[0] in "Usage: rsprof record ..." */
	if ((cmd->flags & CMD_READ_ONLY) && caps__drop_all())
		return EXIT_PERM;
	return finish_stdout(cmd->fn(argc - 1, argv + 1));
}
