#ifndef RSPROF_UTIL_STR_H
#define RSPROF_UTIL_STR_H

/*
 * strdup() for optional strings, with the failure collected in *err so that
 * several fields can be copied and checked once: NULL gives NULL (not an
 * error); when the copy fails, *err is set to -ENOMEM and NULL returned.
 * The result is malloc'd (caller frees).
 */
char *str__dup(const char *s, int *err);

#endif
