#include "util/push/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define DEFAULT_TIMEOUT_MS	30000
#define CONNECT_TIMEOUT_MS	5000

struct http_client {
	CURL *curl;
	char *user, *password, *token, *tenant_hdr, *ca_file;
	long timeout_ms;
	char errbuf[CURL_ERROR_SIZE];
	struct http_response *rs;	/* of the request under way */
	size_t got;
};

int http__global_init(void)
{
	static int done, err;

	if (!done) {
		err = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -ENOMEM;
		done = 1;
	}
	return err;
}

bool http__retryable(long status)
{
	return status == 0 || status == 408 || status == 425 || status == 429 || status >= 500;
}

static char *dup_opt(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

int http_client__new(const struct push_auth *a, struct http_client **out)
{
	struct http_client *c = calloc(1, sizeof(*c));
	bool oom = false;

	*out = NULL;
	if (!c || http__global_init()) {
		free(c);
		return -ENOMEM;
	}
	c->curl = curl_easy_init();
	c->user = dup_opt(a->user, &oom);
	c->password = dup_opt(a->password, &oom);
	c->token = dup_opt(a->token, &oom);
	c->ca_file = dup_opt(a->ca_file, &oom);
	if (a->tenant && asprintf(&c->tenant_hdr, "X-Scope-OrgID: %s", a->tenant) < 0) {
		c->tenant_hdr = NULL;
		oom = true;
	}
	c->timeout_ms = a->timeout_ms > 0 ? a->timeout_ms : DEFAULT_TIMEOUT_MS;
	if (!c->curl || oom) {
		http_client__delete(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void http_client__delete(struct http_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->user);
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c->tenant_hdr);
	free(c->ca_file);
	free(c);
}

/* The start of the response body, printable, for the error message. */
static size_t on_body(char *ptr, size_t size, size_t n, void *ctx)
{
	struct http_client *c = ctx;
	size_t len = size * n;

	for (size_t i = 0; i < len && c->got + 1 < sizeof(c->rs->msg); i++) {
		unsigned char ch = (unsigned char)ptr[i];

		c->rs->msg[c->got++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
	}
	c->rs->msg[c->got] = '\0';
	return len;
}

int http_client__post(struct http_client *c, const struct http_request *rq,
		      struct http_response *rs)
{
	struct curl_slist *hdrs = NULL, *h;
	curl_mime *mime = NULL;
	char ua[64], ct[256];
	CURLcode done;
	int rc = 0, err = 0;

	memset(rs, 0, sizeof(*rs));
	c->rs = rs;
	c->got = 0;
	c->errbuf[0] = '\0';
	curl_easy_reset(c->curl);
	snprintf(ua, sizeof(ua), "User-Agent: rsprof/%s", RSPROF_VERSION);
#define ADD_HDR(s) do { h = curl_slist_append(hdrs, (s)); if (!h) { err = -ENOMEM; goto out; } \
			hdrs = h; } while (0)
	ADD_HDR(ua);
	/* no "Expect: 100-continue" round trip before a large body */
	ADD_HDR("Expect:");
	if (c->tenant_hdr)
		ADD_HDR(c->tenant_hdr);
	for (size_t i = 0; rq->headers && rq->headers[i]; i++)
		ADD_HDR(rq->headers[i]);
	if (rq->content_type) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", rq->content_type);
		ADD_HDR(ct);
	}
#undef ADD_HDR
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_URL, rq->url);
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf);
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
	rc |= (int)curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	/* the environment's proxy settings (http_proxy, no_proxy) apply, as for curl(1) */
	if (c->ca_file)
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->ca_file);
	if (c->user) {
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_USERNAME, c->user);
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_PASSWORD, c->password ? c->password : "");
	} else if (c->token) {
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_XOAUTH2_BEARER, c->token);
	}
	if (rq->content_type) {
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
	} else {
		mime = curl_mime_init(c->curl);
		if (!mime) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < rq->n_parts; i++) {
			const struct http_part *p = &rq->parts[i];
			curl_mimepart *mp = curl_mime_addpart(mime);

			if (!mp || curl_mime_name(mp, p->name) != CURLE_OK ||
			    (p->filename && curl_mime_filename(mp, p->filename) != CURLE_OK) ||
			    (p->type && curl_mime_type(mp, p->type) != CURLE_OK) ||
			    curl_mime_data(mp, p->data, p->len) != CURLE_OK) {
				err = -ENOMEM;
				goto out;
			}
		}
		rc |= (int)curl_easy_setopt(c->curl, CURLOPT_MIMEPOST, mime);
	}
	if (rc) {
		snprintf(rs->msg, sizeof(rs->msg), "cannot set up the request (libcurl)");
		err = -EIO;
		goto out;
	}
	done = curl_easy_perform(c->curl);
	if (done != CURLE_OK) {
		snprintf(rs->msg, sizeof(rs->msg), "%s",
			 c->errbuf[0] ? c->errbuf : curl_easy_strerror(done));
		rs->status = 0;
		/* a certificate or an address that is wrong stays wrong */
		switch (done) {
		case CURLE_PEER_FAILED_VERIFICATION:
		case CURLE_SSL_CACERT_BADFILE:
		case CURLE_SSL_CERTPROBLEM:
		case CURLE_SSL_CIPHER:
		case CURLE_SSL_ISSUER_ERROR:
		case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
		case CURLE_SSL_CRL_BADFILE:
		case CURLE_UNSUPPORTED_PROTOCOL:
		case CURLE_URL_MALFORMAT:
		case CURLE_LOGIN_DENIED:
			rs->fatal = true;
			break;
		default:
			break;
		}
		err = -EIO;
		goto out;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &rs->status);
out:
	curl_mime_free(mime);
	curl_slist_free_all(hdrs);
	c->rs = NULL;
	return err;
}
