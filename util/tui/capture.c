#include "util/tui/capture.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

struct capture {
	int mask;
	int saved[3];		/* the real fds 0..2, -1 when not redirected */
	FILE *tmp;
};

struct capture *capture__start(int mask)
{
	struct capture *c = calloc(1, sizeof(*c));
	int null = -1;

	if (!c)
		return NULL;
	c->mask = mask;
	c->saved[0] = c->saved[1] = c->saved[2] = -1;
	c->tmp = tmpfile();
	if (!c->tmp)
		goto fail;
	if (mask & CAPTURE_STDIN) {
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0)
			goto fail;
	}
	fflush(stdout);
	fflush(stderr);
	for (int fd = 0; fd < 3; fd++) {
		if (!(mask & (1 << fd)))
			continue;
		c->saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (c->saved[fd] < 0 || dup2(fd ? fileno(c->tmp) : null, fd) < 0)
			goto fail;
	}
	if (null >= 0)
		close(null);
	return c;
fail:
	if (null >= 0)
		close(null);
	capture__replay(c, NULL);
	return NULL;
}

void capture__end(struct capture *c)
{
	if (!c)
		return;
	fflush(stdout);
	fflush(stderr);
	for (int fd = 0; fd < 3; fd++) {
		if (c->saved[fd] < 0)
			continue;
		dup2(c->saved[fd], fd);
		close(c->saved[fd]);
		c->saved[fd] = -1;
	}
}

void capture__replay(struct capture *c, FILE *f)
{
	char buf[4096];
	size_t n;

	if (!c)
		return;
	capture__end(c);
	if (c->tmp && f) {
		rewind(c->tmp);
		while ((n = fread(buf, 1, sizeof(buf), c->tmp)) > 0)
			if (fwrite(buf, 1, n, f) != n)
				break;
		fflush(f);
	}
	if (c->tmp)
		fclose(c->tmp);
	free(c);
}
