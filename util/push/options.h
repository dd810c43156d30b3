#ifndef RSPROF_UTIL_PUSH_OPTIONS_H
#define RSPROF_UTIL_PUSH_OPTIONS_H

#include <popt.h>

#include "util/push/pusher.h"

/*
 * The push options shared by `record --push URL` and `rsprof push FILE URL`
 * (pulled into their popt tables with POPT_ARG_INCLUDE_TABLE), and their
 * conversion, with RSPROF_PUSH_PASSWORD and RSPROF_PUSH_TOKEN, into struct
 * push_opts.
 */
struct push_args {
	const char *format;
	const char *interval;
	const char **labels;		/* --label, repeatable (popt's, NULL-terminated) */
	const char *user;
	const char *token;
	const char *tenant;
	const char *ca;
	const char *spool;
	const char *spool_size;
	const char *timeout;
};

extern struct push_args push_args;
extern struct poptOption options_push[];

/* Were any of these options given (they need a URL)? */
int push_args__given(void);
/* o from push_args and url. Prints what is wrong, returns -RSPROF_EUSAGE; or 0. */
int push_opts__from_args(struct push_opts *o, const char *url);
/* Frees what popt allocated for push_args (the --label list). */
void push_args__free(void);

#endif
