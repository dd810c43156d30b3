#ifndef RSPROF_UTIL_DURATION_H
#define RSPROF_UTIL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/*
 * Durations as users type them: "30s", "5m", "2h", "1h30m", "250ms", and a
 * bare number meaning seconds ("1.5" is 1500 ms). Returns 0 and stores
 * milliseconds in *ms, or -EINVAL for anything else (empty, negative,
 * unknown unit, overflow).
 */
int duration__parse(const char *s, uint64_t *ms);

/*
 * "A..B" as used by --window: either side may be empty ("..30s", "10s..").
 * A missing side is stored as UINT64_MAX. Returns 0 or -EINVAL (also when
 * A > B).
 */
int duration__parse_range(const char *s, uint64_t *from_ms, uint64_t *to_ms);

/* Human form for headers: "850ms", "12.3s", "4m05s", "1h02m". Returns buf. */
char *duration__format(uint64_t ms, char *buf, size_t len);

#endif
