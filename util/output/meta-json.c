/*
 * Meta values in JSON, typed (see meta-json.h).
 */
#include "util/output/meta-json.h"

#include <errno.h>
#include <stdlib.h>

#include "util/db/meta-keys.h"
#include "util/output/format.h"

void json__meta(struct json *j, const char *key, const char *value)
{
	if (value && *value && meta_key__integer(key)) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(value, &end, 10);
		if (!*end && !errno) {
			json__int(j, key, v);
			return;
		}
	}
	json__string(j, key, value);
}
