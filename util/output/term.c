/*
 * Standard output as the user sees it: the pager and colours.
 */
#include "util/output/term.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/output/format.h"

static enum term_color color_mode;
static pid_t pager_pid = -1;

int term__parse_color(const char *s, enum term_color *c)
{
	if (!strcmp(s, "auto"))
		*c = TERM_COLOR_AUTO;
	else if (!strcmp(s, "always"))
		*c = TERM_COLOR_ALWAYS;
	else if (!strcmp(s, "never"))
		*c = TERM_COLOR_NEVER;
	else
		return -EINVAL;
	return 0;
}

void term__set_color(enum term_color c)
{
	color_mode = c;
}

bool term__color(void)
{
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");

	if (color_mode != TERM_COLOR_AUTO)
		return color_mode == TERM_COLOR_ALWAYS;
	return (pager_pid > 0 || isatty(STDOUT_FILENO)) && !(nc && *nc) && term &&
	       strcmp(term, "dumb");
}

/* At exit: the end of the text to the pager, then wait until it is done. */
static void pager_wait(void)
{
	int st;

	fflush(stdout);
	fflush(stderr);
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	while (waitpid(pager_pid, &st, 0) < 0 && errno == EINTR)
		;
}

int term__start_pager(void)
{
	const char *pager = getenv("RSPROF_PAGER");
	int fds[2], err;
	pid_t pid;

	if (!pager)
		pager = getenv("PAGER");
	if (!pager)
		pager = "less";
	if (pager_pid > 0 || !*pager || !strcmp(pager, "cat") || !isatty(STDOUT_FILENO))
		return 0;
	/* the width of the terminal, before standard output becomes a pipe */
	if (!getenv("COLUMNS")) {
		char w[16];

		snprintf(w, sizeof(w), "%d", format__term_width());
		if (setenv("COLUMNS", w, 0))
			return -errno;
	}
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (!pid) {
		if (dup2(fds[0], STDIN_FILENO) < 0)
			_exit(127);
		if (!getenv("LESS"))
			setenv("LESS", "FRX", 0);
		if (!getenv("LV"))
			setenv("LV", "-c", 0);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		fprintf(stderr, "rsprof: cannot run the pager '%s': %s\n", pager, strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	if (dup2(fds[1], STDOUT_FILENO) < 0 ||
	    (isatty(STDERR_FILENO) && dup2(fds[1], STDERR_FILENO) < 0)) {
		err = -errno;
		close(fds[1]);
		return err;
	}
	close(fds[1]);
	pager_pid = pid;
	if (atexit(pager_wait))
		return -ENOMEM;
	return 0;
}
