/*
 * Source files of an annotated function: where they are now, and their
 * lines.
 */
#include "util/annotate/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/array.h"
#include "util/infile.h"

#define SOURCE_MAX (64u << 20)

int source__check_map(const char *map)
{
	const char *eq = strchr(map, '=');

	return eq && eq != map ? 0 : -EINVAL;
}

static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int found_path(const char *p, char **found)
{
	*found = strdup(p);
	return *found ? 0 : -ENOMEM;
}

int source__find(const char *recorded, const struct source_paths *sp, char **found)
{
	char buf[8192];

	*found = NULL;
	if (!recorded || !*recorded)
		return -ENOENT;
	for (int i = 0; sp && i < sp->n_maps; i++) {
		const char *eq = strchr(sp->maps[i], '=');
		size_t n = eq ? (size_t)(eq - sp->maps[i]) : 0;

		if (!n || strncmp(recorded, sp->maps[i], n))
			continue;
		snprintf(buf, sizeof(buf), "%s%s", eq + 1, recorded + n);
		if (is_file(buf))
			return found_path(buf, found);
		break;
	}
	if (is_file(recorded))
		return found_path(recorded, found);
	for (int i = 0; sp && i < sp->n_dirs; i++) {
		for (const char *tail = recorded; tail; tail = strchr(tail + 1, '/')) {
			const char *t = tail;

			while (*t == '/')
				t++;
			if (!*t)
				break;
			snprintf(buf, sizeof(buf), "%s/%s", sp->dirs[i], t);
			if (is_file(buf))
				return found_path(buf, found);
		}
	}
	return -ENOENT;
}

void source__delete(struct source *s)
{
	if (!s)
		return;
	free(s->text);
	free(s->lines);
	free(s);
}

/* Split s->text (len bytes, NUL-terminated) into lines in place. */
static int source_split(struct source *s, size_t len)
{
	int cap = 0;
	char *p = s->text;

	while (p < s->text + len) {
		char *nl = memchr(p, '\n', s->text + len - p);

		if (ALLOC_GROW(s->lines, s->n + 1, cap, 256))
			return -ENOMEM;
		s->lines[s->n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	return 0;
}

int source__read(const char *path, struct source **out)
{
	struct source *s;
	struct stat st;
	size_t len = 0;
	int fd, err = 0;

	*out = NULL;
	fd = infile__open(path, 0, &st);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > SOURCE_MAX)
		err = -EFBIG;
	s = err ? NULL : calloc(1, sizeof(*s));
	if (!err && (!s || !(s->text = malloc(st.st_size + 1))))
		err = -ENOMEM;
	while (!err && len < (size_t)st.st_size) {
		ssize_t n = read(fd, s->text + len, st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (!err) {
		s->text[len] = '\0';
		err = source_split(s, len);
	}
	if (err) {
		source__delete(s);
		return err;
	}
	*out = s;
	return 0;
}
