#ifndef RSPROF_UTIL_OUTPUT_META_JSON_H
#define RSPROF_UTIL_OUTPUT_META_JSON_H

struct json;

/*
 * A meta value in a reader's JSON: a number for an integer key
 * (util/db/meta-keys.h) whose value is one, else a string; NULL: null.
 * A damaged file's "pid": "x" stays a string, as it is.
 */
void json__meta(struct json *j, const char *key, const char *value);

#endif
