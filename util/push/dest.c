#include "util/push/dest.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static const struct {
	const char *name;
	const char *path;	/* the endpoint, appended to a base URL */
} formats[] = {
	[PUSH_PYROSCOPE] = { "pyroscope", "/ingest" },
	[PUSH_PYROSCOPE_CONNECT] = { "pyroscope-connect", "/push.v1.PusherService/Push" },
	[PUSH_PARCA] = { "parca", "/api/profiles/writeraw" },
	[PUSH_OTLP] = { "otlp", "/v1development/profiles" },
};
#define N_FORMATS ((int)(sizeof(formats) / sizeof(formats[0])))

const char *push_format__name(enum push_format f)
{
	return formats[f].name;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* The format whose endpoint ends path, or -1. Parca's gateway also answers without /api. */
static int format_of_path(const char *path)
{
	for (int f = 0; f < N_FORMATS; f++)
		if (ends_with(path, formats[f].path))
			return f;
	if (ends_with(path, "/profiles/writeraw"))
		return PUSH_PARCA;
	return -1;
}

void push_dest__free(struct push_dest *d)
{
	free(d->url);
	free(d->key);
	free(d->user);
	free(d->password);
	memset(d, 0, sizeof(*d));
}

static int bad_url(const char *url, const char *why)
{
	pr_err("cannot push to '%s': %s", url, why);
	pr_hint("give the store's URL, e.g. http://localhost:4040 (Pyroscope) or "
		"http://localhost:7070/api/profiles/writeraw (Parca)");
	return -EINVAL;
}

int push_dest__parse(const char *url, const char *format, struct push_dest *d)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *path = NULL, *s = NULL, *query = NULL;
	int f = -1, pf, err = 0;

	memset(d, 0, sizeof(*d));
	if (!u)
		return -ENOMEM;
	if (format) {
		for (int i = 0; i < N_FORMATS; i++)
			if (!strcmp(format, formats[i].name))
				f = i;
		if (f < 0) {
			pr_err("unknown push format '%s'", format);
			pr_hint("use pyroscope, pyroscope-connect, parca or otlp");
			err = -EINVAL;
			goto out;
		}
	}
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		err = bad_url(url, "not a URL");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		err = bad_url(url, "only http and https are supported");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK && query && *query) {
		err = bad_url(url, "a query string is not part of a store's address");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
		err = -ENOMEM;
		goto out;
	}
	pf = format_of_path(path);
	if (pf >= 0 && f >= 0 && pf != f) {
		pr_err("cannot push to '%s' as %s: its path is the %s endpoint", url,
		       formats[f].name, formats[pf].name);
		pr_hint("give the store's base URL with --push-format, or its endpoint alone");
		err = -EINVAL;
		goto out;
	}
	if (f < 0)
		f = pf;
	if (pf < 0) {
		/* a base URL: the endpoint appended (a bare host is Pyroscope) */
		size_t n = strlen(path);
		char *p;

		if (f < 0)
			f = PUSH_PYROSCOPE;
		while (n && path[n - 1] == '/')
			n--;
		if (asprintf(&p, "%.*s%s", (int)n, path, formats[f].path) < 0) {
			err = -ENOMEM;
			goto out;
		}
		if (curl_url_set(u, CURLUPART_PATH, p, 0) != CURLUE_OK) {
			free(p);
			err = -ENOMEM;
			goto out;
		}
		free(p);
	}
	d->format = (enum push_format)f;
	if (curl_url_get(u, CURLUPART_USER, &s, CURLU_URLDECODE) == CURLUE_OK) {
		d->user = strdup(s);
		curl_free(s);
		s = NULL;
		if (!d->user) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (curl_url_get(u, CURLUPART_PASSWORD, &s, CURLU_URLDECODE) == CURLUE_OK) {
		d->password = strdup(s);
		curl_free(s);
		s = NULL;
		if (!d->password) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* the address without credentials, query or fragment */
	if (curl_url_set(u, CURLUPART_USER, NULL, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK) {
		err = -ENOMEM;
		goto out;
	}
	d->url = strdup(s);
	d->key = strdup(s);
	if (!d->url || !d->key)
		err = -ENOMEM;
out:
	curl_free(s);
	curl_free(scheme);
	curl_free(path);
	curl_free(query);
	curl_url_cleanup(u);
	if (err)
		push_dest__free(d);
	return err;
}
