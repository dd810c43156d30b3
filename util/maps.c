#include "util/maps.h"

#include <errno.h>
#include <stddef.h>

/* STUB: owned by the symbols work; replace. */
int maps__load(pid_t pid, struct maps **out) { *out = NULL; return -ENOSYS; }
const struct map *maps__find(const struct maps *m, uint64_t addr) { return NULL; }
void maps__delete(struct maps *m) { }
