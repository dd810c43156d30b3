#include "util/push/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/duration.h"
#include "util/error.h"

struct push_args push_args;

struct poptOption options_push[] = {
	{ "push-format", 0, POPT_ARG_STRING, &push_args.format, 0,
	  "the store's protocol: pyroscope, pyroscope-connect, parca or otlp (default: "
	  "by the URL's path; a bare http://host:port is pyroscope)", "FMT" },
	{ "push-interval", 0, POPT_ARG_STRING, &push_args.interval, 0,
	  "one profile per process and type for each DUR of the recording (default 15s)",
	  "DUR" },
	{ "label", 0, POPT_ARG_ARGV, &push_args.labels, 0,
	  "add NAME=VALUE to the labels of every profile pushed; service_name, hostname "
	  "and pid replace rsprof's own (repeatable)", "NAME=VALUE" },
	{ "push-user", 0, POPT_ARG_STRING, &push_args.user, 0,
	  "HTTP Basic authentication (the password, when not here, from "
	  "RSPROF_PUSH_PASSWORD)", "USER[:PASSWORD]" },
	{ "push-token", 0, POPT_ARG_STRING, &push_args.token, 0,
	  "HTTP Bearer authentication (default: RSPROF_PUSH_TOKEN)", "TOKEN" },
	{ "push-tenant", 0, POPT_ARG_STRING, &push_args.tenant, 0,
	  "the tenant, sent as X-Scope-OrgID", "ID" },
	{ "push-ca", 0, POPT_ARG_STRING, &push_args.ca, 0,
	  "verify the store's certificate with the CA certificates in FILE (PEM) instead of "
	  "the system's", "FILE" },
	{ "push-spool", 0, POPT_ARG_STRING, &push_args.spool, 0,
	  "where requests wait while the store is down (default "
	  "$XDG_STATE_HOME/rsprof/spool/STORE, else ~/.local/state/rsprof/spool/STORE)",
	  "DIR" },
	{ "push-spool-size", 0, POPT_ARG_STRING, &push_args.spool_size, 0,
	  "at most SIZE bytes in the spool (K, M, G suffixes; default 64M); past it the "
	  "oldest requests are dropped and counted", "SIZE" },
	{ "push-timeout", 0, POPT_ARG_STRING, &push_args.timeout, 0,
	  "give up on a store that does not answer after DUR: at the end of record --push "
	  "(default 10s; what is left stays in the spool) and for rsprof push (default 1m)",
	  "DUR" },
	POPT_TABLEEND
};

int push_args__given(void)
{
	return push_args.format || push_args.interval || push_args.labels || push_args.user ||
	       push_args.token || push_args.tenant || push_args.ca || push_args.spool ||
	       push_args.spool_size || push_args.timeout;
}

/* "64M", "512K", "1G", "1048576": bytes. -EINVAL. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		switch (*end) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end)
			return -EINVAL;
	}
	if (!v || v > UINT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

static int get_duration(const char *what, const char *s, uint64_t *ms)
{
	if (duration__parse(s, ms)) {
		pr_err("%s: '%s' is not a duration", what, s);
		pr_hint("use e.g. 15s, 1m, 250ms or a number of seconds");
		return -RSPROF_EUSAGE;
	}
	return 0;
}

int push_opts__from_args(struct push_opts *o, const char *url)
{
	memset(o, 0, sizeof(*o));
	o->url = url;
	o->format = push_args.format;
	o->labels = push_args.labels;
	o->user = push_args.user;
	o->token = push_args.token;
	o->tenant = push_args.tenant;
	o->ca_file = push_args.ca;
	o->spool_dir = push_args.spool;
	if (push_args.interval) {
		if (get_duration("--push-interval", push_args.interval, &o->interval_ms))
			return -RSPROF_EUSAGE;
		if (o->interval_ms < 100) {
			pr_err("--push-interval: '%s' is shorter than 100ms", push_args.interval);
			return -RSPROF_EUSAGE;
		}
		o->interval_set = true;
	}
	if (push_args.timeout) {
		if (get_duration("--push-timeout", push_args.timeout, &o->timeout_ms))
			return -RSPROF_EUSAGE;
		if (!o->timeout_ms)
			o->timeout_ms = 1;	/* give up at once */
	}
	if (push_args.spool_size && parse_size(push_args.spool_size, &o->spool_max)) {
		pr_err("--push-spool-size: '%s' is not a size", push_args.spool_size);
		pr_hint("use e.g. 64M, 512K, 1G or a number of bytes");
		return -RSPROF_EUSAGE;
	}
	if (push_args.spool && !*push_args.spool) {
		pr_err("--push-spool: an empty directory name");
		return -RSPROF_EUSAGE;
	}
	return 0;
}

void push_args__free(void)
{
	for (size_t i = 0; push_args.labels && push_args.labels[i]; i++)
		free((char *)push_args.labels[i]);
	free(push_args.labels);
	push_args.labels = NULL;
}
