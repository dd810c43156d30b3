#ifndef RSPROF_UTIL_OUTPUT_RESIDENT_H
#define RSPROF_UTIL_OUTPUT_RESIDENT_H

#include <stddef.h>
#include <stdint.h>

/*
 * The tracked heap beside the process's resident memory, in the words
 * report, info and timeline share. The heap counts a block's bytes when it
 * is allocated; the kernel counts a page as resident once it is written
 * (and while it is not swapped out), so a heap larger than the resident
 * memory is a program that allocated more than it wrote.
 */

/* "tracked heap 1.00 MiB of 61.0 MiB resident", or, when the heap is the
 * larger, "tracked heap 64.0 MiB, more than the 10.3 MiB resident". */
char *resident__describe(int64_t live, int64_t rss, char *buf, size_t len);

/* Why the heap is larger than the resident memory; NULL when it is not. */
const char *resident__why(int64_t live, int64_t rss);

#endif
