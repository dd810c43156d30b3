#ifndef RSPROF_UTIL_OPTIONS_H
#define RSPROF_UTIL_OPTIONS_H

#include <popt.h>
#include <stdbool.h>

/*
 * Option groups shared by several commands, pulled into a builtin's popt
 * table with POPT_ARG_INCLUDE_TABLE (as rpm shares rpmcliAllPoptTable).
 *
 *   options_common  -h/--help, --usage, -v/--verbose       every command
 *   options_target  -p/--pid PID[,PID...], -P/--process NAME, --no-inherit   record, top
 *   options_output  --json, --csv, -n/--top N              report, diff, timeline, query
 */

struct target_args {
	const char **pid_args;	/* every -p as given (popt's argv, NULL-terminated); NULL: none */
	const char *process;	/* NULL: not given */
	int no_inherit;		/* --no-inherit: the target processes only, not their children */
};

struct output_args {
	int json;
	int csv;
	int top_n;		/* -n; 0 means the command's default */
	int no_pager;		/* --no-pager */
	const char *color;	/* --color=WHEN; NULL: auto */
};

extern struct target_args target_args;
extern struct output_args output_args;

extern struct poptOption options_common[];
extern struct poptOption options_target[];
extern struct poptOption options_output[];

/* Values with a `val` that builtins may use for their own options start here. */
#define OPT_VAL_BUILTIN 0x1000

/*
 * Run popt over the context: handles -h/--help (help on stdout), --usage,
 * bad options (message, usage line, on stderr). Options of the builtin that
 * carry a val >= OPT_VAL_BUILTIN are passed to cb (which returns 0, or a
 * negative value after printing why the value is bad).
 * Returns 0 to run, 1 when help or usage was shown, -RSPROF_EUSAGE on a
 * bad option (already reported).
 */
int options_parse(poptContext pc, const char *usage,
		  int (*cb)(int val, const char *arg, void *ctx), void *ctx);

/*
 * After the output options are parsed: checks them (not both --json and
 * --csv, a valid --color) and sets the colours. Reports a bad option and
 * returns -RSPROF_EUSAGE.
 */
int options_output_check(void);

/*
 * Once the command knows it prints text (its options checked): on a
 * terminal, the pager unless --no-pager (util/output/term.h). A pager that
 * cannot start is a warning, not an error.
 */
void options_output_pager(void);

/*
 * A command that reads one profile (its FILE; none: the newest) got n
 * arguments: 0, or -RSPROF_EUSAGE with more than one printed.
 */
int options_one_profile(int n);

/*
 * Leftover arguments of the context (poptGetArgs) as a NULL-terminated
 * array owned by pc; *n receives their count. Never NULL.
 */
const char **options_args(poptContext pc, int *n);

#endif
