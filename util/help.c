#include "util/help.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/error.h"
#include "man-embed.h"

const char *help__embedded(const char *page)
{
	for (size_t i = 0; i < sizeof(embedded_docs) / sizeof(embedded_docs[0]); i++)
		if (!strcmp(embedded_docs[i].name, page))
			return embedded_docs[i].text;
	return NULL;
}

/* Run man with the given arguments; its exit status, or -1 when it could not run. */
static int run_man(const char *a1, const char *a2, int quiet)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (quiet) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0) {
				dup2(null, STDOUT_FILENO);
				dup2(null, STDERR_FILENO);
			}
		}
		execlp("man", "man", a1, a2, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int help__show_page(const char *page)
{
	char self[PATH_MAX], built[PATH_MAX + 64];
	const char *text = help__embedded(page);
	ssize_t n;
	int section = strcmp(page, "rsprof-files") ? 1 : 5;

	if (!text)
		return -ENOENT;

	/* 1. installed: man -w finds it */
	if (!access("/usr/bin/man", X_OK) && isatty(STDOUT_FILENO)) {
		char sect[4];

		snprintf(sect, sizeof(sect), "%d", section);
		if (run_man("-w", page, 1) == 0 && run_man(sect, page, 0) == 0)
			return 0;
		/* 2. built next to the binary: out/rsprof and out/man/PAGE.N */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n > 0) {
			char *slash;

			self[n] = '\0';
			slash = strrchr(self, '/');
			if (slash)
				*slash = '\0';
			snprintf(built, sizeof(built), "%s/man/%s.%d", self, page, section);
			if (!access(built, R_OK) && run_man("-l", built, 0) == 0)
				return 0;
		}
	}
	/* 3. the text embedded at build time */
	fputs(text, stdout);
	return 0;
}
