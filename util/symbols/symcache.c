/*
 * The symbols of (file, offset), shared by the run's resolvers
 * (util/symbols/symcache.h). One map behind one mutex: resolvers name
 * addresses from the recorder's threads.
 */
#include "util/symbols/symcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/symbols/symbol.h"

struct entry {
	unsigned char *build_id;
	int build_id_len;
	char *module;
	uint64_t offset;
	bool dwarf;
	struct symbol *sym;	/* at address 0 */
};

/*
 * What the copies may take: past it no copy is added (a long `record -a`
 * or `top` meets ever more code; a build of 121 processes keeps ~1 MiB,
 * a recording of rustc ~12 MiB).
 */
#define CACHE_BYTES_MAX	(64u << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct hashmap map;	/* hash of the key -> struct entry * */
static uint64_t n_entries, n_hits;
static size_t n_bytes;		/* the copies' size, roughly */

uint64_t symcache__file_hash(const struct symcache_key *k)
{
	uint64_t h = k->module ? hashmap__hash_str(k->module) : 0;

	for (int i = 0; i < k->build_id_len; i += 8) {
		uint64_t w = 0;

		memcpy(&w, k->build_id + i, k->build_id_len - i < 8 ? (size_t)(k->build_id_len - i) : 8);
		h = hashmap__hash_u64(h ^ w);
	}
	return h;
}

static uint64_t key_hash(const struct symcache_key *k)
{
	uint64_t h = hashmap__hash_u64(k->file_hash ^ (k->offset * 2 + k->dwarf));

	return h ? h : 1;
}

static bool entry_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct entry *e = (const struct entry *)(uintptr_t)val;
	const struct symcache_key *k = key;

	(void)ctx;
	return e->offset == k->offset && e->dwarf == k->dwarf &&
	       e->build_id_len == k->build_id_len &&
	       !memcmp(e->build_id, k->build_id, (size_t)k->build_id_len) &&
	       !strcmp(e->module, k->module);
}

static bool usable(const struct symcache_key *k)
{
	return k->build_id_len > 0 && k->build_id && k->module;
}

struct symbol *symcache__get(const struct symcache_key *k, uint64_t addr)
{
	struct symbol *s = NULL;
	uint64_t v;

	if (!usable(k))
		return NULL;
	pthread_mutex_lock(&lock);
	if (hashmap__lookup(&map, key_hash(k), entry_eq, k, NULL, &v)) {
		s = symbol__copy(((const struct entry *)(uintptr_t)v)->sym, addr);
		n_hits += s != NULL;
	}
	pthread_mutex_unlock(&lock);
	return s;
}

static size_t str_bytes(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* e's memory, roughly (the allocator's own overhead left out) */
static size_t entry_bytes(const struct entry *e)
{
	const struct symbol *s = e->sym;
	size_t n = sizeof(*e) + (size_t)e->build_id_len + str_bytes(e->module) + sizeof(*s) +
		   str_bytes(s->module) + str_bytes(s->mangled);

	for (int i = 0; i < s->n_frames; i++)
		n += sizeof(s->frames[i]) + str_bytes(s->frames[i].file) +
		     str_bytes(s->frames[i].function);
	return n;
}

static void entry_free(struct entry *e)
{
	if (!e)
		return;
	symbol__delete(e->sym);
	free(e->build_id);
	free(e->module);
	free(e);
}

void symcache__put(const struct symcache_key *k, const struct symbol *s)
{
	struct entry *e;
	uint64_t v;
	bool fresh = false;

	if (!usable(k) || __atomic_load_n(&n_bytes, __ATOMIC_RELAXED) >= CACHE_BYTES_MAX)
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->build_id = malloc((size_t)k->build_id_len);
	e->module = strdup(k->module);
	e->sym = symbol__copy(s, 0);
	if (!e->build_id || !e->module || !e->sym) {
		entry_free(e);
		return;		/* not shared: the next resolver names it itself */
	}
	memcpy(e->build_id, k->build_id, (size_t)k->build_id_len);
	e->build_id_len = k->build_id_len;
	e->offset = k->offset;
	e->dwarf = k->dwarf;
	v = (uint64_t)(uintptr_t)e;
	pthread_mutex_lock(&lock);
	if (n_bytes >= CACHE_BYTES_MAX ||
	    hashmap__intern(&map, key_hash(k), entry_eq, k, NULL, &v, &fresh))
		fresh = false;
	if (fresh) {
		n_entries++;
		__atomic_store_n(&n_bytes, n_bytes + entry_bytes(e), __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
	if (!fresh)
		entry_free(e);	/* another resolver's came first, or no memory */
}

void symcache__stats(uint64_t *entries, uint64_t *bytes, uint64_t *hits)
{
	pthread_mutex_lock(&lock);
	*entries = n_entries;
	*bytes = n_bytes;
	*hits = n_hits;
	pthread_mutex_unlock(&lock);
}
