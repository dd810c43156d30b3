#include "util/count-map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static inline size_t hash64(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & mask;
}

static int count_map__grow(struct count_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 1024;
	uint64_t *nk = calloc(ncap, sizeof(*nk)), *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = hash64(m->keys[i], ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int count_map__add(struct count_map *m, uint64_t key, uint64_t v, bool *fresh)
{
	size_t i;

	*fresh = false;
	if (!key) {
		*fresh = !m->has_zero;
		m->has_zero = true;
		m->zero += v;
		return 0;
	}
	if ((m->n + 1) * 2 > m->cap && count_map__grow(m))
		return -ENOMEM;
	for (i = hash64(key, m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] += v;
			return 0;
		}
	}
	m->keys[i] = key;
	m->vals[i] = v;
	m->n++;
	*fresh = true;
	return 0;
}

bool count_map__has(const struct count_map *m, uint64_t key)
{
	if (!key)
		return m->has_zero;
	if (!m->cap)
		return false;
	for (size_t i = hash64(key, m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return true;
	return false;
}

uint64_t count_map__get(const struct count_map *m, uint64_t key)
{
	if (!key)
		return m->has_zero ? m->zero : 0;
	if (!m->cap)
		return 0;
	for (size_t i = hash64(key, m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return 0;
}

void count_map__clear(struct count_map *m)
{
	if (m->n) {
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
		m->n = 0;
	}
	m->has_zero = false;
	m->zero = 0;
}

void count_map__free(struct count_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
