#ifndef RSPROF_UTIL_PUSH_DEST_H
#define RSPROF_UTIL_PUSH_DEST_H

/*
 * Where profiles are pushed: a URL and the store's protocol, chosen by the
 * URL's path or named (--push-format):
 *
 *   pyroscope          POST <base>/ingest?name=...&from=...&until=...
 *                      (multipart/form-data: the pprof as part "profile")
 *   pyroscope-connect  POST <base>/push.v1.PusherService/Push (Connect,
 *                      application/proto: push.v1.PushRequest)
 *   parca              POST <base>/api/profiles/writeraw (the gRPC-gateway
 *                      of ProfileStoreService.WriteRaw, JSON)
 *   otlp               POST <base>/v1development/profiles (OTLP/HTTP,
 *                      application/x-protobuf: ExportProfilesServiceRequest)
 *
 * A URL whose path names none of these gets the format's path appended;
 * a bare http://host:port is Pyroscope (the most common store). The URL is
 * parsed by libcurl's URL API; user and password in it are taken out (they
 * become Basic authentication) and never kept in a name that is printed
 * or stored.
 */
enum push_format {
	PUSH_PYROSCOPE,
	PUSH_PYROSCOPE_CONNECT,
	PUSH_PARCA,
	PUSH_OTLP,
};

struct push_dest {
	enum push_format format;
	char *url;		/* what is POSTed to, without credentials or query */
	char *key;		/* the same: the store's name in the spool and the profile */
	char *user, *password;	/* from the URL; NULL when none */
};

/*
 * Parse url; format names the protocol (NULL: from the path). Errors are
 * printed (with a hint) and returned as -EINVAL; -ENOMEM.
 */
int push_dest__parse(const char *url, const char *format, struct push_dest *d);
void push_dest__free(struct push_dest *d);

/* "pyroscope", "pyroscope-connect", "parca", "otlp". */
const char *push_format__name(enum push_format f);

#endif
