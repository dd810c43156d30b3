#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/output/escape.h"

const char *rsprof_cmd_name = "rsprof";
int verbose;

/*
 * The message escaped (util/output/escape.h): it may quote a file name, a
 * meta value or a symbol read from an untrusted profile.
 */
static void vmessage(const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("(out of memory)", stderr);
		return;
	}
	escape__fputs(msg, stderr);
	free(msg);
}

static void vreport(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", rsprof_cmd_name, level);
	vmessage(fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void pr_hint(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("hint: ", stderr);
	vmessage(fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void pr_debug(int level, const char *fmt, ...)
{
	va_list ap;

	if (verbose < level)
		return;
	va_start(ap, fmt);
	vreport("debug: ", fmt, ap);
	va_end(ap);
}

enum rsprof_exit exit_from_err(int err)
{
	if (err >= 0)
		return EXIT_OK;
	switch (-err) {
	case ESRCH:
		return EXIT_NOPROC;
	case EPERM:
	case EACCES:
		return EXIT_PERM;
	case RSPROF_ENODEBUG:
		return EXIT_NODEBUG;
	case RSPROF_EDB:
		return EXIT_DB;
	case RSPROF_EUSAGE:
		return EXIT_USAGE;
	default:
		return EXIT_ERROR;
	}
}

const char *rsprof_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case RSPROF_ENODEBUG:
		return "no debug information";
	case RSPROF_EDB:
		return "profile database error";
	case RSPROF_EUSAGE:
		return "bad arguments";
	default:
		return strerror(err);
	}
}
