#ifndef RSPROF_BUILTIN_H
#define RSPROF_BUILTIN_H

/*
 * The builtin API.
 *
 * Each command is one file builtin/<cmd>.c with one entry point
 * `int cmd_<cmd>(int argc, const char **argv)`, called by rsprof.c with
 * argv[0] the command name. It parses its options with popt (shared groups
 * from util/options.h), calls util/, prints, and returns an enum rsprof_exit
 * value (util/error.h) — never a negative number, never exit().
 *
 * To add a command:
 *  1. write builtin/<cmd>.c (comment, includes, opts struct, usage, popt
 *     table, static helpers, <cmd>_run(), cmd_<cmd>() last);
 *  2. add its prototype below;
 *  3. add a row to commands[] in rsprof.c (the summary is what `rsprof help`
 *     prints; CMD_READ_ONLY when it never does more than read files);
 *  4. the Makefile picks up every builtin/ file by itself;
 *  5. write Documentation/rsprof-<cmd>.txt (every long option of the popt
 *     table, checked by tests/t0002-doc-options.sh);
 *  6. add tests/tNNNN-<cmd>.sh.
 */

int cmd_record(int argc, const char **argv);
int cmd_top(int argc, const char **argv);
int cmd_report(int argc, const char **argv);
int cmd_annotate(int argc, const char **argv);
int cmd_history(int argc, const char **argv);
int cmd_diff(int argc, const char **argv);
int cmd_timeline(int argc, const char **argv);
int cmd_flamegraph(int argc, const char **argv);
int cmd_info(int argc, const char **argv);
int cmd_query(int argc, const char **argv);
int cmd_push(int argc, const char **argv);
int cmd_help(int argc, const char **argv);

/*
 * The command only reads (a profile, a manual): rsprof.c drops every
 * capability and a setuid or setgid identity before it runs, before any
 * file is opened (caps__drop_all(); a failure is exit 4). `top` reads only
 * when it follows a file: it drops them itself.
 */
#define CMD_READ_ONLY	(1u << 0)

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, const char **argv);
	unsigned int flags;	/* CMD_*: setup identical for every command carrying it */
	const char *summary;
};

/* The command table, in rsprof.c; n_commands rows. */
extern const struct cmd_struct commands[];
extern const int n_commands;

#endif
