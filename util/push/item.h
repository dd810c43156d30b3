#ifndef RSPROF_UTIL_PUSH_ITEM_H
#define RSPROF_UTIL_PUSH_ITEM_H

#include <stddef.h>
#include <stdint.h>

/*
 * One request to a store, ready to send: which profile, store and interval
 * it belongs to, and what is POSTed (a body with its type, or the parts of
 * a multipart/form-data upload). Items wait in the spool (util/push/spool.h)
 * in the encoding below until the store has taken them.
 *
 * Encoding: the line "rsprof push item 1\n", then fields: a tag byte, a
 * 32-bit little-endian length, the bytes. Tags: 1 profile, 2 store,
 * 3 from_ms, 4 to_ms (8 bytes, little-endian), 5 part, 6 query,
 * 7 content type, 12 interval_ms (8 bytes), then per part 8 name, 9 filename,
 * 10 type, 11 data.
 */
struct push_blob {
	char *name, *filename, *type;	/* multipart: the part's; NULL: none */
	void *data;
	size_t len;
};

struct push_item {
	char *profile;		/* the profile's absolute path */
	char *dest;		/* the store (push_dest.key) */
	uint64_t from_ms, to_ms;	/* the interval, ms from the recording's start */
	uint64_t interval_ms;	/* the push interval it is one of; 0: a window pushed whole */
	char *part;		/* which request of the interval: "cpu/PID", "heap/PID" */
	char *query;		/* appended to the store's URL ("?name=..."); NULL: none */
	char *content_type;	/* of parts[0], the body; NULL: multipart of the parts */
	struct push_blob *parts;
	size_t n_parts;
};

/* Adds a part; data (malloc'd) is taken in any case, the strings copied. 0 or -ENOMEM. */
int push_item__add(struct push_item *it, const char *name, const char *filename,
		   const char *type, void *data, size_t len);
/* The bytes of it, malloc'd in *buf. 0 or -ENOMEM. */
int push_item__encode(const struct push_item *it, void **buf, size_t *len);
/* Fills it (zeroed first) from buf; -EINVAL for bytes that are not an item, -ENOMEM. */
int push_item__decode(const void *buf, size_t len, struct push_item *it);
/* Frees what it holds and zeroes it. */
void push_item__free(struct push_item *it);

#endif
