#ifndef RSPROF_UTIL_SUGGEST_H
#define RSPROF_UTIL_SUGGEST_H

/*
 * Damerau-Levenshtein distance between a and b (insert, delete, substitute,
 * swap of neighbours cost 1 each).
 */
int suggest_distance(const char *a, const char *b);

/*
 * The candidate nearest to word, or NULL when none is near enough to be a
 * plausible typo (distance at most a third of the longer word, at least 1;
 * a candidate that starts with word always counts).
 */
const char *suggest_nearest(const char *word, const char *const *candidates, int n);

#endif
