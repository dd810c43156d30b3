/*
 * /proc/PID/maps, parsed into a sorted array (seed 003's `map` table holds
 * one row per entry). The resolver reports each file-backed executable
 * mapping to libdwfl with its own load bias.
 */
#include "util/record/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <libelf.h>

#include "util/array.h"
#include "util/db/read/addrs.h"
#include "util/db/rows.h"
#include "util/symbols/symfile.h"

static int map__cmp(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * One line: "start-end perms offset dev inode   path". The path is
 * everything after the inode and its padding (it may hold spaces, and ends
 * in " (deleted)" for a replaced file, which we keep as the kernel says it).
 */
static int map__parse(char *line, struct map *m)
{
	unsigned long long start, end, pgoff, inode;
	char perms[8];
	int pos = 0;
	char *path;
	size_t n;

	if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &start, &end, perms, &pgoff,
		   &inode, &pos) < 5 || !pos)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->inode = inode;
	snprintf(m->perms, sizeof(m->perms), "%.4s", perms);
	path = line + pos;
	n = strlen(path);
	while (n && (path[n - 1] == '\n' || path[n - 1] == ' '))
		path[--n] = '\0';
	if (n) {
		m->path = strdup(path);
		if (!m->path)
			return -ENOMEM;
	}
	return 0;
}

int maps__load(pid_t pid, struct maps **out)
{
	char fn[64], *line = NULL;
	size_t cap = 0, alloc = 0;
	struct maps *m;
	int err = 0;
	FILE *f;

	*out = NULL;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	m = calloc(1, sizeof(*m));
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	m->pid = pid;
	errno = 0;
	while (getline(&line, &cap, f) > 0) {
		if (ALLOC_GROW(m->v, m->n + 1, alloc, 64)) {
			err = -ENOMEM;
			break;
		}
		err = map__parse(line, &m->v[m->n]);
		if (err == -EINVAL) {
			err = 0;	/* a line we do not understand: skip it */
			continue;
		}
		if (err)
			break;
		m->n++;
	}
	/* A process that exits while we read gives ESRCH from read(). */
	if (!err && ferror(f))
		err = errno == ESRCH || errno == ENOENT ? -ESRCH : -(errno ? errno : EIO);
	free(line);
	fclose(f);
	/* An exited process (zombie) has an empty maps file. */
	if (!err && m->n == 0)
		err = -ESRCH;
	if (err) {
		maps__delete(m);
		return err;
	}
	qsort(m->v, m->n, sizeof(*m->v), map__cmp);
	*out = m;
	return 0;
}

void maps__read_build_ids(struct maps *m)
{
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < m->n; i++) {
		struct map *e = &m->v[i];
		const struct map *prev = i ? &m->v[i - 1] : NULL;
		struct stat st;
		char fn[96];
		int fd, n;

		if (!e->path || e->path[0] != '/' || e->build_id_len || !strchr(e->perms, 'x'))
			continue;
		/* the code segment after the file's first one: the same file */
		if (prev && prev->build_id_len && prev->inode == e->inode && prev->path &&
		    !strcmp(prev->path, e->path)) {
			memcpy(e->build_id, prev->build_id, prev->build_id_len);
			e->build_id_len = prev->build_id_len;
			continue;
		}
		snprintf(fn, sizeof(fn), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)m->pid,
			 e->start, e->end);
		/* a device the process mapped is not opened for good: regular files only */
		fd = open(fn, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
			n = symfile__build_id(fd, e->build_id, sizeof(e->build_id));
			e->build_id_len = (unsigned char)(n > 0 ? n : 0);
		}
		close(fd);
	}
}

const struct map *maps__find(const struct maps *m, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct map *e = &m->v[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

const struct map *maps__find_file(const struct maps *m, uint64_t addr)
{
	const struct map *e = maps__find(m, addr);

	return e && e->path && e->path[0] == '/' ? e : NULL;
}

struct maps *maps__new(pid_t pid)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (m)
		m->pid = pid;
	return m;
}

/* Room for n more entries (the array is realloc'd to exactly what is needed). */
static int maps__reserve(struct maps *m, size_t n)
{
	struct map *v = realloc(m->v, (m->n + n) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	m->v = v;
	return 0;
}

int maps__insert(struct maps *m, const struct map *e)
{
	uint64_t s = e->start, t = e->end;
	struct map copy = *e;
	size_t i, keep = 0;

	if (s >= t)
		return 0;
	copy.path = NULL;
	if (e->path && !(copy.path = strdup(e->path)))
		return -ENOMEM;
	/* one entry may be split in two: room for that and the new one */
	if (maps__reserve(m, 2)) {
		free(copy.path);
		return -ENOMEM;
	}
	for (i = 0; i < m->n; i++) {
		struct map *x = &m->v[i];

		if (x->end <= s || x->start >= t) {
			m->v[keep++] = *x;
			continue;
		}
		if (x->start < s && x->end > t) {	/* the new one is inside: split */
			struct map tail = *x;

			tail.start = t;
			tail.pgoff += t - x->start;
			tail.path = x->path ? strdup(x->path) : NULL;
			if (x->path && !tail.path) {
				free(copy.path);
				return -ENOMEM;
			}
			x->end = s;
			m->v[keep++] = *x;
			m->v[m->n] = tail;	/* the loop keeps it; sorted below */
			m->n++;
			continue;
		}
		if (x->start < s) {		/* its end is covered */
			x->end = s;
			m->v[keep++] = *x;
		} else if (x->end > t) {	/* its start is covered */
			x->pgoff += t - x->start;
			x->start = t;
			m->v[keep++] = *x;
		} else {			/* all of it */
			free(x->path);
		}
	}
	m->n = keep;
	m->v[m->n++] = copy;
	qsort(m->v, m->n, sizeof(*m->v), map__cmp);
	return 0;
}

struct maps *maps__dup(const struct maps *m)
{
	struct maps *d = maps__new(m->pid);

	if (!d)
		return NULL;
	if (m->n && !(d->v = malloc(m->n * sizeof(*d->v)))) {
		free(d);
		return NULL;
	}
	for (size_t i = 0; i < m->n; i++) {
		d->v[i] = m->v[i];
		d->v[i].path = NULL;
		if (m->v[i].path && !(d->v[i].path = strdup(m->v[i].path))) {
			d->n = i;
			maps__delete(d);
			return NULL;
		}
		d->n = i + 1;
	}
	return d;
}

void maps__delete(struct maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	free(m);
}

struct profile_maps {
	struct maps *m;
	size_t cap;
};

/* One row of the profile's `map` table, appended (the table has them sorted). */
static int profile_map(void *ctx, int pid, const struct map_row *r)
{
	struct profile_maps *pm = ctx;
	struct maps *m = pm->m;
	struct map *e;

	if (ALLOC_GROW(m->v, m->n + 1, pm->cap, 32))
		return -ENOMEM;
	m->pid = pid;
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->start = r->start;
	e->end = r->end;
	snprintf(e->perms, sizeof(e->perms), "%.4s", r->perms ? r->perms : "----");
	e->pgoff = r->pgoff;
	if (r->path && !(e->path = strdup(r->path)))
		return -ENOMEM;
	m->n++;
	return 0;
}

int maps__from_profile(struct db *db, struct maps **out)
{
	return maps__from_profile_pid(db, 0, out);
}

int maps__from_profile_pid(struct db *db, int pid, struct maps **out)
{
	struct profile_maps pm = { calloc(1, sizeof(struct maps)), 0 };
	int err;

	*out = NULL;
	if (!pm.m)
		return -ENOMEM;
	err = db_query_maps(db, pid, profile_map, &pm);
	if (err || !pm.m->n) {
		maps__delete(pm.m);
		return err;
	}
	*out = pm.m;
	return 0;
}
