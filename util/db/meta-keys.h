#ifndef RSPROF_UTIL_DB_META_KEYS_H
#define RSPROF_UTIL_DB_META_KEYS_H

#include <stdbool.h>

/*
 * The meta keys whose values are integers (the recorder writes them with
 * db_writer__meta_set_int(), the schema version with the table): the
 * readers' JSON gives them as numbers, every other key as a string.
 */
bool meta_key__integer(const char *key);

#endif
