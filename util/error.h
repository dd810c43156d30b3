#ifndef RSPROF_UTIL_ERROR_H
#define RSPROF_UTIL_ERROR_H

/*
 * Messages and exit codes.
 *
 * util/ returns 0 or a negative errno (-ENOMEM, -ESRCH, ...), like libbpf and
 * perf. Two failures have no errno of their own and get codes beyond errno's
 * range: -RSPROF_ENODEBUG (target without debug info) and -RSPROF_EDB (a
 * profile database that is missing, damaged, not ours or too new).
 * exit_from_err() is the one place where such a code becomes an exit status
 * (rsprof(1), EXIT STATUS); builtins return only enum rsprof_exit values.
 */

enum rsprof_exit {
	EXIT_OK = 0,
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
	EXIT_NOPROC = 3,
	EXIT_PERM = 4,
	EXIT_NODEBUG = 5,
	EXIT_DB = 6,
};

#define RSPROF_ENODEBUG 4096
#define RSPROF_EDB	4097
#define RSPROF_EUSAGE	4098

/* "rsprof record" etc.: the prefix of every message; set by the dispatcher. */
extern const char *rsprof_cmd_name;
/* -v count; pr_debug(level, ...) prints when verbose >= level. */
extern int verbose;

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "hint: ..." on stderr, after an error that the user can do something about. */
void pr_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Map 0 / negative errno / -RSPROF_E* to an exit status (enum rsprof_exit). */
enum rsprof_exit exit_from_err(int err);

/* strerror() that also knows the RSPROF_E* codes; err may be negative. */
const char *rsprof_strerror(int err);

#endif
