#include "util/suggest.h"

#include <stdlib.h>
#include <string.h>

int suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int *d = calloc((la + 1) * (lb + 1), sizeof(*d));
	int r;

	if (!d)
		return 1 << 20;
#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = (int)i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = (int)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = D(i - 1, j) + 1;

			if (D(i, j - 1) + 1 < v)
				v = D(i, j - 1) + 1;
			if (D(i - 1, j - 1) + cost < v)
				v = D(i - 1, j - 1) + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    D(i - 2, j - 2) + 1 < v)
				v = D(i - 2, j - 2) + 1;
			D(i, j) = v;
		}
	}
	r = D(la, lb);
#undef D
	free(d);
	return r;
}

const char *suggest_nearest(const char *word, const char *const *candidates, int n)
{
	const char *best = NULL;
	int best_d = 1 << 20;
	size_t wl = strlen(word);

	for (int i = 0; i < n; i++) {
		size_t cl = strlen(candidates[i]);
		size_t longer = wl > cl ? wl : cl;
		int d = suggest_distance(word, candidates[i]);
		int limit = (int)(longer / 3) > 1 ? (int)(longer / 3) : 1;

		if (wl && !strncmp(candidates[i], word, wl))
			d = 0;
		if (d <= limit && d < best_d) {
			best = candidates[i];
			best_d = d;
		}
	}
	return best;
}
