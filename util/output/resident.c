/*
 * The tracked heap beside the resident memory (see resident.h).
 */
#include "util/output/resident.h"

#include <stdio.h>

#include "util/output/format.h"

char *resident__describe(int64_t live, int64_t rss, char *buf, size_t len)
{
	char a[32], b[32];

	snprintf(buf, len, live <= rss ? "tracked heap %s of %s resident" :
		 "tracked heap %s, more than the %s resident", format__bytes(live, a, sizeof(a)),
		 format__bytes(rss, b, sizeof(b)));
	return buf;
}

const char *resident__why(int64_t live, int64_t rss)
{
	return live <= rss ? NULL :
	       "allocated bytes count at once, a page is resident once written";
}
