#ifndef RSPROF_UTIL_PUSH_HTTP_H
#define RSPROF_UTIL_PUSH_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The HTTP client of the pusher: libcurl, one easy handle reused for every
 * request (its connection kept alive), HTTPS verified against the system's
 * CA store or the file given, Basic or Bearer authentication, the tenant
 * header Pyroscope, Mimir-style gateways and Parca's proxies read
 * (X-Scope-OrgID). One client per thread.
 */
struct push_auth {
	const char *user, *password;	/* Basic; NULL: none */
	const char *token;		/* Bearer; NULL: none */
	const char *tenant;		/* X-Scope-OrgID; NULL: none */
	const char *ca_file;		/* PEM bundle; NULL: the system's */
	long timeout_ms;		/* a whole request; 0: 30 s */
};

/* A multipart/form-data part (a file upload: name, filename, type). */
struct http_part {
	const char *name, *filename, *type;
	const void *data;
	size_t len;
};

struct http_request {
	const char *url;		/* with its query */
	const char *content_type;	/* body; NULL: multipart of parts */
	const void *body;
	size_t len;
	const struct http_part *parts;
	size_t n_parts;
	const char *const *headers;	/* more "Name: value" lines; NULL-terminated, NULL: none */
};

struct http_response {
	long status;		/* 0: no response (msg says why) */
	bool fatal;		/* no response, and trying again cannot help (TLS, the URL) */
	char msg[512];		/* the transfer's error, or the start of the response body */
};

struct http_client;

/* Once, before threads start (curl_global_init()). 0 or -ENOMEM. */
int http__global_init(void);

/* 0 or -ENOMEM. a's strings are copied. */
int http_client__new(const struct push_auth *a, struct http_client **out);
/*
 * POST rq. 0 when the store answered (any status, in rs->status), -EIO when
 * no answer came (rs->msg: why), -ENOMEM.
 */
int http_client__post(struct http_client *c, const struct http_request *rq,
		      struct http_response *rs);
void http_client__delete(struct http_client *c);	/* NULL ok */

/* Is status a failure that a later try may not have (5xx, 408, 425, 429)? */
bool http__retryable(long status);

#endif
