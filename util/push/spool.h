#ifndef RSPROF_UTIL_PUSH_SPOOL_H
#define RSPROF_UTIL_PUSH_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The requests not yet taken by their store, on disk: one file per item
 * (util/push/item.h), named by a sequence number so that the oldest goes
 * first, written to a temporary name and renamed once complete (a crash
 * leaves whole items or none). The directory (mode 0700) is held with an
 * flock() for as long as it is open: one rsprof at a time.
 *
 * Bounded: past max_bytes the oldest items are dropped, and counted; their
 * intervals stay unpushed in their profile, whose ledger says what the
 * store has (rsprof push sends them later).
 */
struct spool;
struct push_item;

/* What is known of an item without reading it. */
struct spool_entry {
	uint64_t id;
	size_t size;
	char *profile, *dest, *part;
	uint64_t from_ms, to_ms, interval_ms;
};

/*
 * Open (create) dir. Errors printed: -EBUSY when another rsprof holds it,
 * -errno. Unreadable items are removed (with a warning).
 */
int spool__open(const char *dir, uint64_t max_bytes, struct spool **out);
void spool__close(struct spool *s);	/* NULL ok */

/*
 * Write it as the newest item; older ones dropped past the bound (their
 * entries passed to dropped(), when not NULL, before they go). 0 or -errno
 * (printed).
 */
int spool__add(struct spool *s, const struct push_item *it,
	       void (*dropped)(void *ctx, const struct spool_entry *e), void *ctx);

/* The oldest entry for dest (and profile, when not NULL), or NULL. Valid until the next change. */
const struct spool_entry *spool__oldest(const struct spool *s, const char *dest,
					const char *profile);
/* How many requests for dest are queued. */
size_t spool__count(const struct spool *s, const char *dest);
/* Is that request queued? */
bool spool__has(const struct spool *s, const char *dest, const char *profile,
		uint64_t from_ms, uint64_t to_ms, const char *part);

/* Read the item of id. -ENOENT (gone), -EINVAL (damaged: removed), -errno. */
int spool__read(struct spool *s, uint64_t id, struct push_item *it);
/* Remove the item of id. 0 or -errno. */
int spool__remove(struct spool *s, uint64_t id);

struct spool_stats {
	uint64_t items, bytes;		/* queued now */
	uint64_t dropped, dropped_bytes;	/* dropped past the bound since open */
};
void spool__stats(const struct spool *s, struct spool_stats *st);

const char *spool__dir(const struct spool *s);
/* The id the next item added gets: items of this session have this one or later. */
uint64_t spool__next_id(const struct spool *s);

/* The default directory: $XDG_STATE_HOME/rsprof/spool or ~/.local/state/rsprof/spool. */
int spool__default_dir(char *buf, size_t len);

#endif
