#include "util/db.h"

#include <errno.h>

#include "util/error.h"

/* STUB: owned by the storage work; replace. */
int db__create(const char *path, bool append, struct db **out) { return -ENOSYS; }
int db__open(const char *path, struct db **out) { return -RSPROF_EDB; }
int db__close(struct db *db) { return 0; }
const char *db__path(const struct db *db) { return ""; }
struct sqlite3 *db__sqlite(struct db *db) { return NULL; }
int db__meta_set(struct db *db, const char *key, const char *value) { return -ENOSYS; }
int db__meta_set_int(struct db *db, const char *key, long long value) { return -ENOSYS; }
int db__meta_get(struct db *db, const char *key, char **value) { *value = NULL; return -ENOSYS; }
int db__write_checkpoint(struct db *db, const struct checkpoint *cp, int64_t *id) { return -ENOSYS; }
int db__write_maps(struct db *db, const struct maps *m) { return -ENOSYS; }
int db__check(struct db *db) { return -ENOSYS; }
