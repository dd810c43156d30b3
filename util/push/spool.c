#include "util/push/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/push/item.h"

struct spool {
	char *dir;
	int dfd;		/* the directory, flock()ed */
	uint64_t max_bytes;
	uint64_t next_id;
	struct spool_entry *v;	/* by id */
	size_t n, cap;
	uint64_t bytes;
	uint64_t dropped, dropped_bytes;
};

static void entry_free(struct spool_entry *e)
{
	free(e->profile);
	free(e->dest);
	free(e->part);
}

void spool__close(struct spool *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		entry_free(&s->v[i]);
	free(s->v);
	if (s->dfd >= 0)
		close(s->dfd);	/* the flock goes with it */
	free(s->dir);
	free(s);
}

const char *spool__dir(const struct spool *s)
{
	return s->dir;
}

uint64_t spool__next_id(const struct spool *s)
{
	return s->next_id;
}

int spool__default_dir(char *buf, size_t len)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;

	if (state && state[0] == '/')
		n = snprintf(buf, len, "%s/rsprof/spool", state);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.local/state/rsprof/spool", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p, the directories made 0700. */
static int make_dirs(const char *dir)
{
	char *p = strdup(dir);
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; !err; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			err = -errno;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return err;
}

static char *item_name(uint64_t id, const char *sfx, char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIx64 "%s", id, sfx);
	return buf;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int read_file(int dfd, const char *name, void **buf, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	unsigned char *b;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	b = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);

		if (r <= 0) {
			int err = r < 0 ? -errno : -EINVAL;

			free(b);
			close(fd);
			return err;
		}
		got += (size_t)r;
	}
	close(fd);
	*buf = b;
	*len = got;
	return 0;
}

static int add_entry(struct spool *s, uint64_t id, size_t size, const struct push_item *it)
{
	struct spool_entry *e;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;

		e = realloc(s->v, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->v = e;
		s->cap = cap;
	}
	e = &s->v[s->n];
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->size = size;
	e->from_ms = it->from_ms;
	e->to_ms = it->to_ms;
	e->interval_ms = it->interval_ms;
	e->profile = strdup(it->profile);
	e->dest = strdup(it->dest);
	e->part = strdup(it->part);
	if (!e->profile || !e->dest || !e->part) {
		entry_free(e);
		return -ENOMEM;
	}
	s->n++;
	s->bytes += size;
	return 0;
}

/* The items there: read, indexed; leftovers of an interrupted write removed. */
static int scan(struct spool *s)
{
	int fd = openat(s->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int err = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		const char *dot = strchr(de->d_name, '.');
		char *end;
		uint64_t id;
		struct push_item it = { 0 };
		void *buf;
		size_t len;

		if (!dot || dot - de->d_name != 16)
			continue;
		id = strtoull(de->d_name, &end, 16);
		if (end != dot)
			continue;
		if (!strcmp(dot, ".tmp")) {
			unlinkat(s->dfd, de->d_name, 0);
			continue;
		}
		if (strcmp(dot, ".item"))
			continue;
		err = read_file(s->dfd, de->d_name, &buf, &len);
		if (!err) {
			err = push_item__decode(buf, len, &it);
			free(buf);
		}
		if (err == -EINVAL) {
			pr_warn("%s/%s is not a push request of this rsprof: removed", s->dir,
				de->d_name);
			unlinkat(s->dfd, de->d_name, 0);
			err = 0;
			continue;
		}
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (!err)
			err = add_entry(s, id, len, &it);
		push_item__free(&it);
		if (id >= s->next_id)
			s->next_id = id + 1;
	}
	closedir(d);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), entry_cmp);
	return err;
}

int spool__open(const char *dir, uint64_t max_bytes, struct spool **out)
{
	struct spool *s = calloc(1, sizeof(*s));
	struct stat st;
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->dfd = -1;
	s->max_bytes = max_bytes;
	s->next_id = 1;
	s->dir = strdup(dir);
	if (!s->dir) {
		spool__close(s);
		return -ENOMEM;
	}
	err = make_dirs(dir);
	if (!err) {
		s->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s->dfd < 0)
			err = -errno;
	}
	if (err) {
		pr_err("cannot use the push spool '%s': %s", dir, strerror(-err));
		pr_hint("choose another directory with --push-spool DIR");
		spool__close(s);
		return err;
	}
	/* the requests may carry what the profile holds: this user's alone */
	if (fstat(s->dfd, &st))
		st.st_uid = (uid_t)-1;
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		pr_err("the push spool '%s' is %s", dir, st.st_uid != geteuid() ?
		       "not a directory of this user's" : "open to other users");
		pr_hint("use a directory of your own, mode 0700 (--push-spool DIR)");
		spool__close(s);
		return -EPERM;
	}
	if (flock(s->dfd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		pr_err("the push spool '%s' is in use by another rsprof", dir);
		pr_hint("give each rsprof that pushes its own spool with --push-spool DIR");
		spool__close(s);
		return err;
	}
	err = scan(s);
	if (err) {
		pr_err("cannot read the push spool '%s': %s", dir, strerror(-err));
		spool__close(s);
		return err;
	}
	*out = s;
	return 0;
}

static struct spool_entry *find(struct spool *s, uint64_t id)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->v[mid].id == id)
			return &s->v[mid];
		if (s->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int spool__remove(struct spool *s, uint64_t id)
{
	struct spool_entry *e = find(s, id);
	char name[32];
	int err = 0;

	if (unlinkat(s->dfd, item_name(id, ".item", name, sizeof(name)), 0) && errno != ENOENT)
		err = -errno;
	if (e) {
		size_t i = (size_t)(e - s->v);

		s->bytes -= e->size;
		entry_free(e);
		memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
		s->n--;
	}
	return err;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int spool__add(struct spool *s, const struct push_item *it,
	       void (*dropped)(void *ctx, const struct spool_entry *e), void *ctx)
{
	char tmp[32], name[32];
	uint64_t id = s->next_id;
	void *buf;
	size_t len;
	int fd, err;

	err = push_item__encode(it, &buf, &len);
	if (err)
		return err;
	/* the oldest make room */
	while (s->n && s->bytes + len > s->max_bytes) {
		s->dropped++;
		s->dropped_bytes += s->v[0].size;
		if (dropped)
			dropped(ctx, &s->v[0]);
		spool__remove(s, s->v[0].id);
	}
	item_name(id, ".tmp", tmp, sizeof(tmp));
	item_name(id, ".item", name, sizeof(name));
	fd = openat(s->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
	} else {
		err = write_all(fd, buf, len);
		/* on disk before it has a name: a crash leaves the whole item or a .tmp */
		if (!err && fdatasync(fd))
			err = -errno;
		if (close(fd) && !err)
			err = -errno;
		if (!err && renameat(s->dfd, tmp, s->dfd, name))
			err = -errno;
		if (err)
			unlinkat(s->dfd, tmp, 0);
	}
	free(buf);
	if (err) {
		pr_err("cannot write to the push spool '%s': %s", s->dir, strerror(-err));
		return err;
	}
	s->next_id++;
	err = add_entry(s, id, len, it);
	if (err)	/* the file stays: the next open finds it */
		return err;
	return 0;
}

static bool matches(const struct spool_entry *e, const char *dest, const char *profile)
{
	return !strcmp(e->dest, dest) && (!profile || !strcmp(e->profile, profile));
}

const struct spool_entry *spool__oldest(const struct spool *s, const char *dest,
					const char *profile)
{
	for (size_t i = 0; i < s->n; i++)
		if (matches(&s->v[i], dest, profile))
			return &s->v[i];
	return NULL;
}

size_t spool__count(const struct spool *s, const char *dest)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += !strcmp(s->v[i].dest, dest);
	return n;
}

bool spool__has(const struct spool *s, const char *dest, const char *profile,
		uint64_t from_ms, uint64_t to_ms, const char *part)
{
	for (size_t i = 0; i < s->n; i++)
		if (matches(&s->v[i], dest, profile) && s->v[i].from_ms == from_ms &&
		    s->v[i].to_ms == to_ms && !strcmp(s->v[i].part, part))
			return true;
	return false;
}

int spool__read(struct spool *s, uint64_t id, struct push_item *it)
{
	char name[32];
	void *buf;
	size_t len;
	int err;

	err = read_file(s->dfd, item_name(id, ".item", name, sizeof(name)), &buf, &len);
	if (!err) {
		err = push_item__decode(buf, len, it);
		free(buf);
	}
	if (err == -EINVAL) {
		pr_warn("%s/%s is damaged: removed", s->dir, name);
		spool__remove(s, id);
	} else if (err == -ENOENT) {
		spool__remove(s, id);
	}
	return err;
}

void spool__stats(const struct spool *s, struct spool_stats *st)
{
	st->items = s->n;
	st->bytes = s->bytes;
	st->dropped = s->dropped;
	st->dropped_bytes = s->dropped_bytes;
}
