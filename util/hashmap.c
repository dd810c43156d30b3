#include "util/hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t hashmap__hash_u64(uint64_t x)
{
	/* murmur3's finaliser: every input bit reaches every output bit */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

uint64_t hashmap__hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a, then mixed */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	h = hashmap__hash_u64(h);
	return h ? h : 1;
}

static inline size_t slot_of(const struct hashmap *m, uint64_t key)
{
	return (size_t)hashmap__hash_u64(key) & (m->cap - 1);
}

static int grow(struct hashmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 256;
	uint64_t *nk = calloc(ncap, sizeof(*nk)), *nv = malloc(ncap * sizeof(*nv));
	struct hashmap n = { .keys = nk, .vals = nv, .cap = ncap };

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	hashmap__for_each(m, i) {
		size_t j;

		for (j = slot_of(&n, m->keys[i]); nk[j]; j = (j + 1) & (ncap - 1))
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

/* The slot of key, or the empty slot where it would go (the map has room). */
static size_t find(const struct hashmap *m, uint64_t key)
{
	size_t i;

	for (i = slot_of(m, key); m->keys[i] && m->keys[i] != key; i = (i + 1) & (m->cap - 1))
		;
	return i;
}

int hashmap__add(struct hashmap *m, uint64_t key, uint64_t delta, bool *fresh)
{
	bool f = false;
	size_t i;

	if (!key) {
		f = !m->has_zero;
		if (f)
			m->zero = 0;
		m->has_zero = true;
		m->zero += delta;
	} else {
		if ((m->n + 1) * 2 > m->cap && grow(m))
			return -ENOMEM;
		i = find(m, key);
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->vals[i] = 0;
			m->n++;
			f = true;
		}
		m->vals[i] += delta;
	}
	if (fresh)
		*fresh = f;
	return 0;
}

int hashmap__set(struct hashmap *m, uint64_t key, uint64_t val)
{
	size_t i;

	if (!key) {
		m->has_zero = true;
		m->zero = val;
		return 0;
	}
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	i = find(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = val;
	return 0;
}

bool hashmap__get(const struct hashmap *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!key) {
		if (m->has_zero && val)
			*val = m->zero;
		return m->has_zero;
	}
	if (!m->cap)
		return false;
	i = find(m, key);
	if (!m->keys[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

uint64_t hashmap__value(const struct hashmap *m, uint64_t key)
{
	uint64_t v = 0;

	return hashmap__get(m, key, &v) ? v : 0;
}

bool hashmap__remove(struct hashmap *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;

	if (!key) {
		bool had = m->has_zero;

		m->has_zero = false;
		m->zero = 0;
		return had;
	}
	if (!m->cap)
		return false;
	i = find(m, key);
	if (!m->keys[i])
		return false;
	/* backward shift: move up every later entry of the run that may sit in i */
	for (j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		size_t home = slot_of(m, m->keys[j]);

		/* entry j may move to i when its home is not in (i, j] (cyclically) */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->n--;
	return true;
}

size_t hashmap__size(const struct hashmap *m)
{
	return m->n + (m->has_zero ? 1 : 0);
}

bool hashmap__lookup(const struct hashmap *m, uint64_t hash, hashmap_eq_fn eq,
		     const void *key, const void *ctx, uint64_t *val)
{
	if (!hash)
		hash = 1;
	if (!m->cap)
		return false;
	for (size_t i = slot_of(m, hash); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == hash && eq(m->vals[i], key, ctx)) {
			if (val)
				*val = m->vals[i];
			return true;
		}
	}
	return false;
}

int hashmap__intern(struct hashmap *m, uint64_t hash, hashmap_eq_fn eq, const void *key,
		    const void *ctx, uint64_t *val, bool *fresh)
{
	size_t i;

	*fresh = false;
	if (!hash)
		hash = 1;
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (i = slot_of(m, hash); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == hash && eq(m->vals[i], key, ctx)) {
			*val = m->vals[i];
			return 0;
		}
	}
	m->keys[i] = hash;
	m->vals[i] = *val;
	m->n++;
	*fresh = true;
	return 0;
}

void hashmap__clear(struct hashmap *m)
{
	if (m->n)
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
	m->n = 0;
	m->has_zero = false;
	m->zero = 0;
}

void hashmap__free(struct hashmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
