#include "util/push/pusher.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/db/write/push-log.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/output/format.h"
#include "util/push/dest.h"
#include "util/push/http.h"
#include "util/push/interval.h"
#include "util/push/item.h"
#include "util/push/spool.h"

#define DEFAULT_INTERVAL_MS	15000
#define DEFAULT_SPOOL_MAX	(64ULL << 20)
#define LIVE_TIMEOUT_MS		10000	/* the end of a recording waits this long for the store */
#define FILE_TIMEOUT_MS		60000	/* rsprof push keeps trying this long without progress */
#define REQUEST_TIMEOUT_MS	10000
#define BACKOFF_FIRST_MS	500
#define BACKOFF_MAX_MS		60000

/* A set of strings (the requests a ledger lists as pushed). */
struct strset {
	char **v;
	size_t n, cap;
	struct hashmap index;
};

static bool strset_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct strset *s = ctx;

	return !strcmp(s->v[val], key);
}

static bool strset_has(const struct strset *s, const char *k)
{
	uint64_t idx;

	return hashmap__lookup(&s->index, hashmap__hash_str(k), strset_eq, k, s, &idx);
}

static int strset_add(struct strset *s, const char *k)
{
	uint64_t h = hashmap__hash_str(k), idx;
	bool fresh;

	if (hashmap__lookup(&s->index, h, strset_eq, k, s, &idx))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = strdup(k);
	if (!s->v[s->n])
		return -ENOMEM;
	idx = s->n;
	if (hashmap__intern(&s->index, h, strset_eq, k, s, &idx, &fresh)) {
		free(s->v[s->n]);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

static void strset_free(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	hashmap__free(&s->index);
	memset(s, 0, sizeof(*s));
}

static void request_key(char *buf, size_t len, uint64_t from_ms, uint64_t to_ms, const char *part)
{
	snprintf(buf, len, "%" PRIu64 "/%" PRIu64 "/%s", from_ms, to_ms, part);
}

/* A profile's ledger: its connection, and what it lists as pushed to the store. */
struct ledger {
	char *path;
	struct push_log *log;
	struct strset pushed;
	uint64_t interval_ms;	/* the intervals of its rows for this store; 0: none */
};

static void ledger_close(struct ledger *l)
{
	push_log__close(l->log);
	strset_free(&l->pushed);
	free(l->path);
	memset(l, 0, sizeof(*l));
}

static int ledger_row(void *ctx, const struct push_log_row *r)
{
	struct ledger *l = ctx;
	char key[128];

	/* the length of the intervals the profile was cut into for this store */
	if (r->interval_ms)
		l->interval_ms = r->interval_ms;
	if (strcmp(r->state, "pushed"))
		return 0;
	request_key(key, sizeof(key), r->from_ms, r->to_ms, r->part);
	return strset_add(&l->pushed, key);
}

/* Open path's ledger and read what it lists as pushed to store. Errors printed. */
static int ledger_open(struct ledger *l, const char *path, const char *store)
{
	int err;

	memset(l, 0, sizeof(*l));
	l->path = strdup(path);
	if (!l->path)
		return -ENOMEM;
	err = push_log__open(path, &l->log);
	if (!err)
		err = push_log__read(l->log, store, ledger_row, l);
	if (err)
		ledger_close(l);
	return err;
}

/* A ledger row waiting for the recorder, with its strings. */
struct note {
	struct push_log_row row;
	char *store, *part, *state, *message;
};

struct pusher {
	struct push_spec spec;
	struct push_auth auth;
	char *user, *password, *token, *tenant, *ca_file;
	char *spool_dir;
	uint64_t spool_max;
	uint64_t timeout_ms;
	bool timeout_set;
	bool interval_default;		/* --push-interval not given */
	struct spool *spool;
	uint64_t first_id;		/* the spool's items from here on were built by this run */
	struct http_client *http;
	char *path;			/* the profile being pushed */
	struct push_source *src;
	struct ledger cur;		/* one-shot: the profile's ledger */
	struct ledger other;		/* a request of another profile: that one's */
	bool live;

	/* backoff */
	unsigned int attempt;
	uint64_t retry_at_ns;
	bool warned_down, warned_full;
	char last_error[512];	/* the last failure */

	/* live: shared with the recorder's thread */
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t committed_ms;		/* the file holds checkpoints up to this */
	bool ended;
	uint64_t end_ms;
	uint64_t deadline_ns;		/* ended: give up then */
	uint64_t next_from;		/* the next interval to build starts here */
	struct note *notes;		/* for the recorder to write */
	size_t n_notes, cap_notes;
	struct push_stats st;
	int result;			/* the thread's: 0, -EPROTO, -EAGAIN */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- set-up -------------------------------------------------------------- */

static bool label_name_ok(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	/* names starting with __ are the stores' own (__name__, __delta__) */
	return !(n >= 2 && s[0] == '_' && s[1] == '_');
}

static int parse_labels(struct pusher *p, const char *const *labels)
{
	size_t n = 0;

	while (labels && labels[n])
		n++;
	p->spec.labels = calloc(n ? n : 1, sizeof(*p->spec.labels));
	if (!p->spec.labels)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(labels[i], '=');
		struct push_label *l = &p->spec.labels[p->spec.n_labels];

		if (!eq || !label_name_ok(labels[i], (size_t)(eq - labels[i])) || !eq[1]) {
			pr_err("--label '%s' is not NAME=VALUE with a label name of letters, digits "
			       "and _ (not starting with a digit or __)", labels[i]);
			pr_hint("e.g. --label env=prod --label service_name=checkout");
			return -RSPROF_EUSAGE;
		}
		l->name = strndup(labels[i], (size_t)(eq - labels[i]));
		l->value = strdup(eq + 1);
		if (!l->name || !l->value)
			return -ENOMEM;
		/* a name given twice: the last one */
		for (size_t k = 0; k < p->spec.n_labels; k++) {
			if (!strcmp(p->spec.labels[k].name, l->name)) {
				free(p->spec.labels[k].value);
				p->spec.labels[k].value = l->value;
				free(l->name);
				l->name = l->value = NULL;
				break;
			}
		}
		if (l->name)
			p->spec.n_labels++;
	}
	return 0;
}

static char *dup_env(const char *name, bool *oom)
{
	const char *v = getenv(name);
	char *d = v && *v ? strdup(v) : NULL;

	if (v && *v && !d)
		*oom = true;
	return d;
}

/* The default spool: one directory per store under the user's state directory. */
static int default_spool(struct pusher *p)
{
	char base[PATH_MAX], name[96];
	size_t n = 0;

	if (spool__default_dir(base, sizeof(base))) {
		pr_err("no directory for the push spool: HOME is not set");
		pr_hint("name one with --push-spool DIR");
		return -RSPROF_EUSAGE;
	}
	/* host_port and a hash of the whole URL: readable, and one per store */
	for (const char *s = strstr(p->spec.dest.key, "://") + 3; *s && *s != '/' &&
	     n < 48; s++)
		name[n++] = isalnum((unsigned char)*s) || *s == '.' || *s == '-' ? *s : '_';
	snprintf(name + n, sizeof(name) - n, "-%08" PRIx64,
		 (uint64_t)(hashmap__hash_str(p->spec.dest.key) & 0xffffffffU));
	if (asprintf(&p->spool_dir, "%s/%s", base, name) < 0) {
		p->spool_dir = NULL;
		return -ENOMEM;
	}
	return 0;
}

int pusher__new(const struct push_opts *o, struct pusher **out)
{
	struct pusher *p = calloc(1, sizeof(*p));
	bool oom = false;
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	err = push_dest__parse(o->url, o->format, &p->spec.dest);
	if (err) {
		free(p->spec.labels);
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		free(p);
		return err == -EINVAL ? -RSPROF_EUSAGE : err;
	}
	p->spec.interval_ms = o->interval_ms ? o->interval_ms : DEFAULT_INTERVAL_MS;
	p->interval_default = !o->interval_set;
	p->spool_max = o->spool_max ? o->spool_max : DEFAULT_SPOOL_MAX;
	p->timeout_ms = o->timeout_ms;
	p->timeout_set = o->timeout_ms > 0;
	err = parse_labels(p, o->labels);
	if (err)
		goto fail;
	/* credentials: the options, the environment, the URL */
	if (o->user) {
		const char *colon = strchr(o->user, ':');

		p->user = colon ? strndup(o->user, (size_t)(colon - o->user)) : strdup(o->user);
		p->password = colon ? strdup(colon + 1) : dup_env("RSPROF_PUSH_PASSWORD", &oom);
		oom |= !p->user || (colon && !p->password);
	} else if (p->spec.dest.user) {
		p->user = strdup(p->spec.dest.user);
		p->password = p->spec.dest.password ? strdup(p->spec.dest.password) : NULL;
		oom |= !p->user || (p->spec.dest.password && !p->password);
	}
	p->token = o->token ? strdup(o->token) : dup_env("RSPROF_PUSH_TOKEN", &oom);
	oom |= o->token && !p->token;
	p->tenant = o->tenant ? strdup(o->tenant) : NULL;
	p->ca_file = o->ca_file ? strdup(o->ca_file) : NULL;
	oom |= (o->tenant && !p->tenant) || (o->ca_file && !p->ca_file);
	if (oom) {
		err = -ENOMEM;
		goto fail;
	}
	if (p->user && p->token) {
		pr_err("both Basic (--push-user) and Bearer (--push-token) authentication given");
		pr_hint("a store takes one of them");
		err = -RSPROF_EUSAGE;
		goto fail;
	}
	if (p->ca_file && access(p->ca_file, R_OK)) {
		pr_err("--push-ca '%s': %s", p->ca_file, strerror(errno));
		err = -RSPROF_EUSAGE;
		goto fail;
	}
	p->auth = (struct push_auth){
		.user = p->user, .password = p->password, .token = p->token,
		.tenant = p->tenant, .ca_file = p->ca_file, .timeout_ms = REQUEST_TIMEOUT_MS,
	};
	if (o->spool_dir) {
		p->spool_dir = strdup(o->spool_dir);
		err = p->spool_dir ? 0 : -ENOMEM;
	} else {
		err = default_spool(p);
	}
	if (!err)
		err = http_client__new(&p->auth, &p->http);
	if (err)
		goto fail;
	p->st.spool = p->spool_dir;
	p->st.store = p->spec.dest.key;
	*out = p;
	return 0;
fail:
	pusher__delete(p);
	return err;
}

static void notes_free(struct pusher *p)
{
	for (size_t i = 0; i < p->n_notes; i++) {
		free(p->notes[i].store);
		free(p->notes[i].part);
		free(p->notes[i].state);
		free(p->notes[i].message);
	}
	p->n_notes = 0;
}

static void thread_stop(struct pusher *p);

void pusher__delete(struct pusher *p)
{
	if (!p)
		return;
	thread_stop(p);
	push_source__close(p->src);
	ledger_close(&p->cur);
	ledger_close(&p->other);
	spool__close(p->spool);
	http_client__delete(p->http);
	for (size_t i = 0; i < p->spec.n_labels; i++) {
		free(p->spec.labels[i].name);
		free(p->spec.labels[i].value);
	}
	free(p->spec.labels);
	push_dest__free(&p->spec.dest);
	free(p->user);
	if (p->password)
		explicit_bzero(p->password, strlen(p->password));
	free(p->password);
	if (p->token)
		explicit_bzero(p->token, strlen(p->token));
	free(p->token);
	free(p->tenant);
	free(p->ca_file);
	free(p->spool_dir);
	free(p->path);
	notes_free(p);
	free(p->notes);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

void pusher__stats(struct pusher *p, struct push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}

/* The spool's count into the stats (the spool itself is the pushing thread's). */
static void count_queued(struct pusher *p)
{
	size_t n = spool__count(p->spool, p->spec.dest.key);

	pthread_mutex_lock(&p->lock);
	p->st.queued = n;
	pthread_mutex_unlock(&p->lock);
}

/* ---- the ledger ------------------------------------------------------------ */

/* What became of a request of profile: into its ledger (live: the current one's via the recorder). */
static void note(struct pusher *p, const char *profile, uint64_t from_ms, uint64_t to_ms,
		 uint64_t interval_ms, const char *part, const char *state, long status,
		 uint64_t bytes, const char *message)
{
	struct push_log_row r = {
		.store = p->spec.dest.key, .from_ms = from_ms, .to_ms = to_ms, .part = part,
		.state = state, .http_status = status, .bytes = bytes, .time_ms = unix_ms(),
		.message = message && *message ? message : NULL, .interval_ms = interval_ms,
	};
	struct ledger *l;

	if (p->path && !strcmp(profile, p->path)) {
		if (p->live) {
			struct note *n;

			pthread_mutex_lock(&p->lock);
			if (p->n_notes == p->cap_notes) {
				size_t cap = p->cap_notes ? 2 * p->cap_notes : 64;

				n = realloc(p->notes, cap * sizeof(*n));
				if (!n) {
					pthread_mutex_unlock(&p->lock);
					return;	/* the ledger lacks it: a later push sends it again */
				}
				p->notes = n;
				p->cap_notes = cap;
			}
			n = &p->notes[p->n_notes];
			memset(n, 0, sizeof(*n));
			n->store = strdup(r.store);
			n->part = strdup(part);
			n->state = strdup(state);
			n->message = r.message ? strdup(r.message) : NULL;
			n->row = r;
			n->row.store = n->store;
			n->row.part = n->part;
			n->row.state = n->state;
			n->row.message = n->message;
			if (n->store && n->part && n->state && (!r.message || n->message))
				p->n_notes++;
			else {
				free(n->store);
				free(n->part);
				free(n->state);
				free(n->message);
			}
			pthread_mutex_unlock(&p->lock);
			return;
		}
		l = &p->cur;
	} else {
		/* another profile's request (an earlier recording's, from the spool) */
		if (!p->other.path || strcmp(p->other.path, profile)) {
			ledger_close(&p->other);
			if (ledger_open(&p->other, profile, p->spec.dest.key)) {
				pr_debug(1, "push: no ledger of '%s' written", profile);
				return;
			}
		}
		l = &p->other;
	}
	if (l->log)
		push_log__write(l->log, &r, 1);
	if (interval_ms)
		l->interval_ms = interval_ms;
	if (!strcmp(state, "pushed")) {
		char key[128];

		request_key(key, sizeof(key), from_ms, to_ms, part);
		strset_add(&l->pushed, key);
	}
}

int pusher__write_ledger(struct pusher *p, struct db *writer)
{
	struct push_log_row *rows;
	size_t n;
	int err;

	pthread_mutex_lock(&p->lock);
	n = p->n_notes;
	rows = n ? malloc(n * sizeof(*rows)) : NULL;
	for (size_t i = 0; rows && i < n; i++)
		rows[i] = p->notes[i].row;
	pthread_mutex_unlock(&p->lock);
	if (!n)
		return 0;
	if (!rows)
		return -ENOMEM;
	/* the strings stay: the thread only appends to the notes */
	err = push_log__write_db(writer, rows, n);
	free(rows);
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < n; i++) {
		free(p->notes[i].store);
		free(p->notes[i].part);
		free(p->notes[i].state);
		free(p->notes[i].message);
	}
	memmove(p->notes, p->notes + n, (p->n_notes - n) * sizeof(*p->notes));
	p->n_notes -= n;
	pthread_mutex_unlock(&p->lock);
	return err;
}

/*
 * A request an earlier run left in the spool: is it listed as pushed in its
 * profile's ledger (sent, then the spool not told)? What this run built it
 * checked before (a --window is sent again on purpose).
 */
static bool pushed_before(struct pusher *p, const struct spool_entry *e)
{
	struct ledger *l = NULL;
	char key[128];

	if (e->id >= p->first_id)
		return false;
	if (p->path && !strcmp(e->profile, p->path))
		l = p->live ? NULL : &p->cur;
	else if (p->other.path && !strcmp(p->other.path, e->profile))
		l = &p->other;
	else if (!ledger_open(&p->other, e->profile, p->spec.dest.key))
		l = &p->other;
	if (!l)
		return false;
	request_key(key, sizeof(key), e->from_ms, e->to_ms, e->part);
	return strset_has(&l->pushed, key);
}

/* ---- sending --------------------------------------------------------------- */

static uint64_t backoff_ms(struct pusher *p)
{
	uint64_t cap = p->spec.interval_ms < 1000 ? 1000 : p->spec.interval_ms;
	uint64_t d = BACKOFF_FIRST_MS;
	unsigned int r = 0;

	if (cap > BACKOFF_MAX_MS)
		cap = BACKOFF_MAX_MS;
	for (unsigned int i = 0; i < p->attempt && d < cap; i++)
		d *= 2;
	if (d > cap)
		d = cap;
	/* jitter: half the delay, and a random part of the other half */
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)now_ns();
	return d / 2 + (d / 2 ? r % (d / 2 + 1) : 0);
}

static const char *refusal_hint(long status)
{
	switch (status) {
	case 0:
		return "check the store's certificate (--push-ca FILE for a CA of your own) and "
		       "the URL";
	case 401:
	case 403:
		return "check the credentials: --push-user USER[:PASSWORD], --push-token, "
		       "--push-tenant (RSPROF_PUSH_PASSWORD, RSPROF_PUSH_TOKEN)";
	case 404:
	case 405:
		return "check the URL and --push-format (pyroscope, pyroscope-connect, parca, otlp)";
	case 413:
		return "push shorter intervals (--push-interval) or raise the store's limit on the "
		       "size of a profile";
	case 400:
	case 422:
		return "check the labels (--label) and that the store takes this format";
	default:
		return "see the store's log for why";
	}
}

/*
 * Send the spool's oldest request of the store (of profile, when not NULL).
 * 0 sent (or nothing to send: *none), -EAGAIN to be tried again, -EPROTO
 * refused for good, another error.
 */
static int send_oldest(struct pusher *p, const char *profile, bool *none)
{
	const struct spool_entry *e = spool__oldest(p->spool, p->spec.dest.key, profile);
	struct push_item it = { 0 };
	struct http_part parts[8];
	struct http_request rq = { 0 };
	struct http_response rs;
	const char *hdrs[2] = { NULL, NULL };
	char *url = NULL;
	uint64_t id, bytes = 0;
	bool keep;
	int err;

	*none = !e;
	if (!e)
		return 0;
	id = e->id;
	if (pushed_before(p, e)) {
		pr_debug(1, "push: %s %s in the ledger already: not sent again", e->profile, e->part);
		spool__remove(p->spool, id);
		count_queued(p);
		return 0;
	}
	err = spool__read(p->spool, id, &it);
	if (err == -ENOENT || err == -EINVAL) {
		count_queued(p);
		return 0;
	}
	if (err)
		return err;
	if (asprintf(&url, "%s%s", p->spec.dest.url, it.query ? it.query : "") < 0) {
		push_item__free(&it);
		return -ENOMEM;
	}
	rq.url = url;
	if (it.content_type) {
		rq.content_type = it.content_type;
		rq.body = it.parts[0].data;
		rq.len = it.parts[0].len;
		bytes = rq.len;
	} else {
		size_t n = it.n_parts < 8 ? it.n_parts : 8;

		for (size_t i = 0; i < n; i++) {
			parts[i] = (struct http_part){ it.parts[i].name, it.parts[i].filename,
						       it.parts[i].type, it.parts[i].data,
						       it.parts[i].len };
			bytes += it.parts[i].len;
		}
		rq.parts = parts;
		rq.n_parts = n;
	}
	if (p->spec.dest.format == PUSH_PYROSCOPE_CONNECT)
		hdrs[0] = "Connect-Protocol-Version: 1";
	rq.headers = hdrs;
	err = http_client__post(p->http, &rq, &rs);
	if (err && err != -EIO)
		goto out;
	if (!err && rs.status >= 200 && rs.status < 300) {
		note(p, it.profile, it.from_ms, it.to_ms, it.interval_ms, it.part, "pushed", rs.status,
		     bytes, NULL);
		spool__remove(p->spool, id);
		pthread_mutex_lock(&p->lock);
		p->st.pushed++;
		p->st.pushed_bytes += bytes;
		pthread_mutex_unlock(&p->lock);
		count_queued(p);
		if (p->warned_down) {
			pr_warn("the store %s answers again: sending what waited", p->spec.dest.key);
			p->warned_down = false;
		}
		p->attempt = 0;
		err = 0;
		goto out;
	}
	if ((err == -EIO && !rs.fatal) || (!err && http__retryable(rs.status))) {
		if (rs.status)
			snprintf(p->last_error, sizeof(p->last_error), "HTTP %ld: %.400s",
				 rs.status, rs.msg);
		else
			snprintf(p->last_error, sizeof(p->last_error), "%s", rs.msg);
		if (!p->warned_down) {
			pr_warn("cannot push to %s: %s; trying again, the intervals wait in %s",
				p->spec.dest.key, p->last_error, p->spool_dir);
			p->warned_down = true;
		}
		pthread_mutex_lock(&p->lock);
		p->st.failed++;
		pthread_mutex_unlock(&p->lock);
		p->retry_at_ns = now_ns() + backoff_ms(p) * 1000000ULL;
		p->attempt++;
		err = -EAGAIN;
		goto out;
	}
	/*
	 * A refusal that trying again would not change. When it is the store's
	 * set-up that is wrong (a certificate, credentials, the URL), the
	 * request stays in the spool for a run with the right options; when it
	 * is the request (too large, not taken), it leaves it, noted "rejected".
	 */
	keep = rs.status == 0 || rs.status == 401 || rs.status == 403 || rs.status == 404 ||
	       rs.status == 405;
	if (rs.status)
		pr_err("%s refused the %s profile of %s (interval %" PRIu64 "..%" PRIu64 " ms, "
		       "%" PRIu64 " bytes): HTTP %ld%s%s", p->spec.dest.key, it.part, it.profile,
		       it.from_ms, it.to_ms, bytes, rs.status, rs.msg[0] ? ": " : "", rs.msg);
	else
		pr_err("cannot push to %s: %s", p->spec.dest.key, rs.msg);
	pr_hint("%s; pushing stopped, the profile keeps everything (rsprof push FILE URL "
		"sends it later)", refusal_hint(rs.status));
	if (!keep) {
		note(p, it.profile, it.from_ms, it.to_ms, it.interval_ms, it.part, "rejected",
		     rs.status, bytes, rs.msg);
		spool__remove(p->spool, id);
	}
	pthread_mutex_lock(&p->lock);
	p->st.rejected++;
	p->st.stopped = true;
	pthread_mutex_unlock(&p->lock);
	count_queued(p);
	err = -EPROTO;
out:
	free(url);
	push_item__free(&it);
	return err;
}

/* Into the spool; a full spool drops its oldest (noted in their ledgers). */
static void on_dropped(void *ctx, const struct spool_entry *e)
{
	struct pusher *p = ctx;

	if (!p->warned_full) {
		char b[32];

		pr_warn("the push spool %s is full (%s): dropping the oldest requests; their "
			"profiles keep them (rsprof push FILE URL sends them)", p->spool_dir,
			format__bytes((int64_t)p->spool_max, b, sizeof(b)));
		p->warned_full = true;
	}
	pthread_mutex_lock(&p->lock);
	p->st.dropped++;
	pthread_mutex_unlock(&p->lock);
	note(p, e->profile, e->from_ms, e->to_ms, e->interval_ms, e->part, "dropped", 0, e->size,
	     NULL);
}

static int emit_item(void *ctx, struct push_item *it)
{
	struct pusher *p = ctx;
	int err = spool__add(p->spool, it, on_dropped, p);

	push_item__free(it);
	count_queued(p);
	return err;
}

/* Building (from_ms, to_ms] into the spool, leaving out what is pushed or queued. */
struct build_ctx {
	struct pusher *p;
	uint64_t from_ms, to_ms;
};

static bool skip_part(void *ctx, const char *part)
{
	struct build_ctx *b = ctx;
	struct pusher *p = b->p;
	char key[128];

	request_key(key, sizeof(key), b->from_ms, b->to_ms, part);
	if (!p->live && strset_has(&p->cur.pushed, key))
		return true;
	return spool__has(p->spool, p->spec.dest.key, p->path, b->from_ms, b->to_ms, part);
}

static int build_emit(void *ctx, struct push_item *it)
{
	struct build_ctx *b = ctx;

	return emit_item(b->p, it);
}

/* (from_ms, to_ms] into the spool; window: pushed as one, whatever was pushed before */
static int build(struct pusher *p, uint64_t from_ms, uint64_t to_ms, bool window)
{
	struct build_ctx b = { p, from_ms, to_ms };

	pr_debug(1, "push: building %" PRIu64 "..%" PRIu64 " ms", from_ms, to_ms);
	return push_source__build(p->src, &p->spec, from_ms, to_ms,
				  window ? 0 : p->spec.interval_ms, window ? NULL : skip_part,
				  build_emit, &b);
}

/* ---- live ------------------------------------------------------------------- */

/* The next interval is complete in the file (or the recording has ended). */
static bool ready(struct pusher *p)
{
	uint64_t to = p->next_from + p->spec.interval_ms;

	return p->committed_ms >= to || (p->ended && p->next_from < p->end_ms);
}

static void *thread_main(void *arg)
{
	struct pusher *p = arg;
	bool stopped = false;
	int result = 0;

	for (;;) {
		bool do_build, do_send, ended, items;
		uint64_t from = 0, now;

		pthread_mutex_lock(&p->lock);
		for (;;) {
			now = now_ns();
			items = p->st.queued > 0;
			do_build = !stopped && ready(p);
			do_send = !stopped && items && now >= p->retry_at_ns;
			ended = p->ended;
			if (do_build || do_send)
				break;
			/* ended: everything built, and sent, refused or out of time */
			if (ended && (!items || stopped || now >= p->deadline_ns))
				break;
			{
				uint64_t until = p->retry_at_ns > now ? p->retry_at_ns :
								       now + 1000000000ULL;
				struct timespec ts;

				if (ended && p->deadline_ns < until)
					until = p->deadline_ns;
				clock_gettime(CLOCK_MONOTONIC, &ts);
				until = until - now + (uint64_t)ts.tv_sec * 1000000000ULL +
					(uint64_t)ts.tv_nsec;
				ts.tv_sec = (time_t)(until / 1000000000ULL);
				ts.tv_nsec = (long)(until % 1000000000ULL);
				pthread_cond_timedwait(&p->cond, &p->lock, &ts);
			}
		}
		if (do_build) {
			from = p->next_from;
			p->next_from += p->spec.interval_ms;
		}
		pthread_mutex_unlock(&p->lock);
		if (!do_build && !do_send) {
			result = stopped ? -EPROTO : items ? -EAGAIN : 0;
			break;
		}
		if (do_build) {
			int err = p->src ? 0 : push_source__open(p->path, &p->src);

			if (!err)
				err = build(p, from, from + p->spec.interval_ms, false);
			if (err) {
				pr_err("cannot build the push of %" PRIu64 "..%" PRIu64 " ms: %s", from,
				       from + p->spec.interval_ms, rsprof_strerror(err));
				stopped = true;
				result = err;
			}
		}
		/* send what waits, the oldest first, until a failure */
		while (!stopped && now_ns() >= p->retry_at_ns) {
			bool none;
			int err = send_oldest(p, NULL, &none);

			if (err == -EPROTO || (err && err != -EAGAIN)) {
				stopped = true;
				result = err == -EPROTO ? -EPROTO : err;
			}
			if (err || none)
				break;
			pthread_mutex_lock(&p->lock);
			do_build = ready(p);
			pthread_mutex_unlock(&p->lock);
			if (do_build)
				break;	/* a new interval first */
		}
	}
	pthread_mutex_lock(&p->lock);
	p->result = result;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pusher__start(struct pusher *p, const char *path)
{
	char abs[PATH_MAX];
	int err;

	if (!realpath(path, abs)) {
		pr_err("cannot push '%s': %s", path, strerror(errno));
		return -errno;
	}
	p->path = strdup(abs);
	if (!p->path)
		return -ENOMEM;
	p->live = true;
	if (!p->timeout_set)
		p->timeout_ms = LIVE_TIMEOUT_MS;
	err = spool__open(p->spool_dir, p->spool_max, &p->spool);
	if (err)
		return err;
	p->first_id = spool__next_id(p->spool);
	count_queued(p);
	err = pthread_create(&p->thread, NULL, thread_main, p);
	if (err) {
		pr_err("cannot start the push thread: %s", strerror(err));
		return -err;
	}
	p->thread_started = true;
	return 0;
}

void pusher__checkpoint(struct pusher *p, uint64_t ts_ms)
{
	pthread_mutex_lock(&p->lock);
	if (ts_ms > p->committed_ms)
		p->committed_ms = ts_ms;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static void thread_stop(struct pusher *p)
{
	if (!p->thread_started)
		return;
	pthread_mutex_lock(&p->lock);
	if (!p->ended) {
		p->ended = true;
		p->end_ms = p->next_from;	/* nothing more to build */
	}
	p->deadline_ns = 0;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->thread_started = false;
}

int pusher__finish(struct pusher *p, uint64_t last_ms)
{
	int result;

	if (!p->thread_started)
		return p->result;
	pthread_mutex_lock(&p->lock);
	p->ended = true;
	p->end_ms = last_ms;
	if (last_ms > p->committed_ms)
		p->committed_ms = last_ms;
	p->deadline_ns = now_ns() + p->timeout_ms * 1000000ULL;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->thread_started = false;
	pthread_mutex_lock(&p->lock);
	result = p->result;
	pthread_mutex_unlock(&p->lock);
	return result;
}

/* ---- one-shot ------------------------------------------------------------------ */

/* Send what the spool holds of the profile, trying again until it goes or time is out. */
static int send_all(struct pusher *p, uint64_t *progress_ns)
{
	for (;;) {
		bool none;
		int err = send_oldest(p, p->path, &none);

		if (!err && none)
			return 0;
		if (!err) {
			*progress_ns = now_ns();
			continue;
		}
		if (err != -EAGAIN)
			return err;
		if (now_ns() >= *progress_ns + p->timeout_ms * 1000000ULL)
			return -EAGAIN;
		while (now_ns() < p->retry_at_ns) {
			uint64_t ms = (p->retry_at_ns - now_ns()) / 1000000;
			struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
					       .tv_nsec = (long)(ms % 1000) * 1000000 };

			nanosleep(&ts, NULL);
		}
	}
}

int pusher__push_file(struct pusher *p, const char *path, uint64_t from_ms, uint64_t to_ms)
{
	char abs[PATH_MAX], buf[32];
	uint64_t last_ms, progress = now_ns();
	bool finished;
	int err;

	if (!realpath(path, abs)) {
		pr_err("cannot open '%s': %s", path, strerror(errno));
		return -errno;
	}
	p->path = strdup(abs);
	if (!p->path)
		return -ENOMEM;
	if (!p->timeout_set)
		p->timeout_ms = FILE_TIMEOUT_MS;
	err = ledger_open(&p->cur, abs, p->spec.dest.key);
	if (!err)
		err = spool__open(p->spool_dir, p->spool_max, &p->spool);
	if (!err)
		err = push_source__open(abs, &p->src);
	if (err)
		return err;
	p->first_id = spool__next_id(p->spool);
	count_queued(p);
	/* what an earlier run left in the spool first (its intervals noted in the ledger) */
	err = send_all(p, &progress);
	if (err)
		return err;
	err = push_source__refresh(p->src, &last_ms, &finished);
	if (err)
		return err;
	if (from_ms != UINT64_MAX) {
		err = build(p, from_ms, to_ms == UINT64_MAX ? last_ms : to_ms, true);
		return err ? err : send_all(p, &progress);
	}
	/* cut as before: intervals of another length would overlap those pushed */
	if (p->cur.interval_ms && p->cur.interval_ms != p->spec.interval_ms) {
		if (!p->interval_default) {
			pr_err("'%s' was pushed to %s by intervals of %s: intervals of another "
			       "length would send some of its data twice", path, p->spec.dest.key,
			       duration__format(p->cur.interval_ms, buf, sizeof(buf)));
			pr_hint("push with --push-interval %s, or a window again with --window A..B",
				buf);
			return -RSPROF_EUSAGE;
		}
		p->spec.interval_ms = p->cur.interval_ms;
	}
	for (uint64_t f = 0; f < last_ms && !err; f += p->spec.interval_ms) {
		err = build(p, f, f + p->spec.interval_ms, false);
		if (!err)
			err = send_all(p, &progress);
	}
	return err;
}
