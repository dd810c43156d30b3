#ifndef RSPROF_UTIL_PUSH_PUSHER_H
#define RSPROF_UTIL_PUSH_PUSHER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Pushing a profile's intervals to a store (util/push/interval.h for what
 * is sent), with nothing lost and nothing sent twice as far as the store's
 * answers tell:
 *
 * - every request goes through the spool (util/push/spool.h) and leaves it
 *   only when the store has taken it (2xx) or refused it for good;
 * - a failure that may pass (no answer, 5xx, 408, 425, 429) is tried
 *   again, after a backoff that doubles from 0.5 s up to the push interval
 *   (at most 60 s), with jitter; meanwhile new intervals wait in the spool;
 * - a refusal that trying again cannot change (400, 401, 403, 404, 413...)
 *   stops the pushing with the store's answer and what to do;
 * - the profile's ledger (util/db/push-log.h) records each request pushed
 *   (or refused, or dropped from a full spool): `rsprof push` sends what it
 *   does not hold, and what the spool still holds from an earlier run;
 * - a request of another profile found in the spool (an earlier recording
 *   that could not finish pushing) is sent too, its own profile's ledger
 *   written.
 *
 * Live (record --push): a thread of its own builds each interval once the
 * recorder has written its last checkpoint, from a read connection of its
 * own, and sends; the ledger rows go back to the recorder, which writes
 * them through its connection (one writer). One-shot (rsprof push): the
 * same, in the calling thread, the ledger written through a connection
 * that holds the profile's writer lock.
 */
struct pusher;
struct db;

struct push_opts {
	const char *url;
	const char *format;		/* NULL: by the URL's path */
	uint64_t interval_ms;		/* 0: 15 s */
	bool interval_set;		/* given by the user */
	const char *const *labels;	/* "NAME=VALUE", NULL-terminated; NULL: none */
	const char *user;		/* Basic: USER[:PASSWORD] (else RSPROF_PUSH_PASSWORD) */
	const char *token;		/* Bearer (else RSPROF_PUSH_TOKEN) */
	const char *tenant;		/* X-Scope-OrgID */
	const char *ca_file;		/* NULL: the system's CA store */
	const char *spool_dir;		/* NULL: $XDG_STATE_HOME/rsprof/spool/<store> */
	uint64_t spool_max;		/* bytes; 0: 64 MiB */
	uint64_t timeout_ms;		/* how long to keep trying before giving up (0: default) */
};

struct push_stats {
	uint64_t pushed, pushed_bytes;	/* requests the store took */
	uint64_t queued;		/* waiting in the spool */
	uint64_t failed;		/* tries that failed and are tried again */
	uint64_t dropped;		/* dropped from a full spool (still in the profile) */
	uint64_t rejected;		/* refused by the store */
	bool stopped;			/* a refusal stopped the pushing */
	const char *spool;		/* its directory */
	const char *store;		/* the store's URL */
};

/* Check and resolve o (URL, labels, credentials). Errors printed; -RSPROF_EUSAGE, -ENOMEM. */
int pusher__new(const struct push_opts *o, struct pusher **out);
void pusher__delete(struct pusher *p);	/* NULL ok; stops the thread if running */

/* Live: start pushing the profile at path (being recorded) from a thread. Errors printed. */
int pusher__start(struct pusher *p, const char *path);
/* Live, after each checkpoint's commit: the file holds checkpoints up to ts_ms. */
void pusher__checkpoint(struct pusher *p, uint64_t ts_ms);
/* Live, on the recorder's thread: the ledger rows since the last call, through writer. */
int pusher__write_ledger(struct pusher *p, struct db *writer);
/*
 * Live, the recording ended with its checkpoint at last_ms: the last
 * intervals built and sent, trying for up to the timeout; the thread ends.
 * 0, or -EPROTO when the store refused a request, -EAGAIN when requests
 * are left in the spool.
 */
int pusher__finish(struct pusher *p, uint64_t last_ms);

/*
 * One-shot: push the profile at path (not being recorded): what the spool
 * holds of it, then every request the ledger does not list as pushed; or,
 * with a window (from_ms < to_ms; UINT64_MAX: none), that window as one
 * interval, again if it was pushed before. 0, -EPROTO (refused), -EAGAIN
 * (the store did not answer in time: requests left), or another error.
 */
int pusher__push_file(struct pusher *p, const char *path, uint64_t from_ms, uint64_t to_ms);

/* Thread-safe snapshot. */
void pusher__stats(struct pusher *p, struct push_stats *st);

#endif
