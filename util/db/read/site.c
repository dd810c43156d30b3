#include "util/db/read/site.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/str.h"

struct site {
	char *key;
	char *file, *function, *module;
	int line;
};

struct sitemap {
	struct site *sites;
	size_t n_sites, cap_sites;
	struct hashmap by_key;		/* hash of key -> site index */
	/* loaded addresses in load order */
	int64_t *addrs;
	long *addr_site;
	size_t n_addrs, cap_addrs;
	struct hashmap by_addr;		/* addr -> site */
};

struct sitemap *sitemap__new(void)
{
	return calloc(1, sizeof(struct sitemap));
}

void sitemap__delete(struct sitemap *sm)
{
	if (!sm)
		return;
	for (size_t i = 0; i < sm->n_sites; i++) {
		free(sm->sites[i].key);
		free(sm->sites[i].file);
		free(sm->sites[i].function);
		free(sm->sites[i].module);
	}
	free(sm->sites);
	hashmap__free(&sm->by_key);
	free(sm->addrs);
	free(sm->addr_site);
	hashmap__free(&sm->by_addr);
	free(sm);
}

static bool key_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct sitemap *sm = ctx;

	return !strcmp(sm->sites[val].key, key);
}

static char *make_key(enum site_by by, const char *file, int line, const char *function,
		      const char *module)
{
	char *key = NULL;
	int n;

	/* \x1f (unit separator) cannot appear in a path or a symbol name */
	if (!file)
		n = asprintf(&key, "M\x1f%s\x1f%s", module ? module : "",
			     by == SITE_BY_FILE ? "" : function ? function : "");
	else if (by == SITE_BY_LINE)
		n = asprintf(&key, "L\x1f%s\x1f%d\x1f%s", file, line, function ? function : "");
	else if (by == SITE_BY_FUNCTION)
		n = asprintf(&key, "F\x1f%s\x1f%s", file, function ? function : "");
	else
		n = asprintf(&key, "P\x1f%s", file);
	return n < 0 ? NULL : key;
}

long sitemap__intern(struct sitemap *sm, enum site_by by, const char *file, int line,
		     const char *function, const char *module)
{
	char *key = make_key(by, file, line, function, module);
	struct site *s;
	uint64_t hash, idx;
	bool fresh;
	int err = 0;

	if (!key)
		return -ENOMEM;
	hash = hashmap__hash_str(key);
	if (hashmap__lookup(&sm->by_key, hash, key_eq, key, sm, &idx)) {
		free(key);
		return (long)idx;
	}
	if (ALLOC_GROW(sm->sites, sm->n_sites + 1, sm->cap_sites, 256)) {
		free(key);
		return -ENOMEM;
	}
	s = &sm->sites[sm->n_sites];
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->file = str__dup(file, &err);
	s->line = by == SITE_BY_LINE ? line : 0;
	s->function = by == SITE_BY_FILE && file ? NULL : str__dup(function, &err);
	s->module = str__dup(module, &err);
	if (err) {
		free(s->key);
		free(s->file);
		free(s->function);
		free(s->module);
		return -ENOMEM;
	}
	idx = sm->n_sites;
	if (hashmap__intern(&sm->by_key, hash, key_eq, key, sm, &idx, &fresh)) {
		free(s->key);
		free(s->file);
		free(s->function);
		free(s->module);
		return -ENOMEM;
	}
	return (long)sm->n_sites++;
}

static int add_addr(struct sitemap *sm, int64_t addr, long site)
{
	if (hashmap__get(&sm->by_addr, (uint64_t)addr, NULL))
		return 0;	/* symbols.addr is a primary key: cannot happen */
	if (ALLOC_GROW2(sm->addrs, sm->addr_site, sm->n_addrs + 1, sm->cap_addrs, 1024))
		return -ENOMEM;
	if (hashmap__set(&sm->by_addr, (uint64_t)addr, (uint64_t)site))
		return -ENOMEM;
	sm->addrs[sm->n_addrs] = addr;
	sm->addr_site[sm->n_addrs] = site;
	sm->n_addrs++;
	return 0;
}

int sitemap__load(struct sitemap *sm, struct db *db, enum site_by by)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	/* module came with schema v2; a version-1 file has none */
	err = db__prepare(db, "cannot read the symbols", db__has(db, DB_V2) ?
			  "SELECT addr, file, line, function, module FROM symbols" :
			  "SELECT addr, file, line, function, NULL FROM symbols", &st);
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long s;

		if (sm->n_addrs >= DB_MAX_ROWS) {
			err = db__too_many_rows(db, "symbols");
			break;
		}
		s = sitemap__intern(sm, by, (const char *)sqlite3_column_text(st, 1),
					 sqlite3_column_int(st, 2),
					 (const char *)sqlite3_column_text(st, 3),
					 (const char *)sqlite3_column_text(st, 4));

		if (s < 0 || add_addr(sm, sqlite3_column_int64(st, 0), s)) {
			err = -ENOMEM;
			break;
		}
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "cannot read the symbols");
	sqlite3_finalize(st);
	return err;
}

long sitemap__find_addr(const struct sitemap *sm, int64_t addr)
{
	uint64_t site;

	return hashmap__get(&sm->by_addr, (uint64_t)addr, &site) ? (long)site : -1;
}

size_t sitemap__count(const struct sitemap *sm)
{
	return sm ? sm->n_sites : 0;
}

size_t sitemap__n_addrs(const struct sitemap *sm)
{
	return sm ? sm->n_addrs : 0;
}

long sitemap__addr_at(const struct sitemap *sm, size_t i, int64_t *addr)
{
	*addr = sm->addrs[i];
	return sm->addr_site[i];
}

void sitemap__site(const struct sitemap *sm, long s, const char **file, int *line,
		   const char **function, const char **module)
{
	const struct site *st = &sm->sites[s];

	*file = st->file;
	*line = st->line;
	*function = st->function;
	*module = st->module;
}
