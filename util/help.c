#include "util/help.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
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

/* The directory of the running binary into dir; false when unknown. */
static bool self_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	char *slash;

	if (n <= 0)
		return false;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

/*
 * The embedded asciidoc as plain text, for a machine without man: headings
 * without their underlines, no [verse] markers, no quoting marks.
 */
static void print_plain(const char *text, FILE *f)
{
	while (*text) {
		const char *eol = strchr(text, '\n');
		size_t n = eol ? (size_t)(eol - text) : strlen(text);
		bool rule = n >= 3 && strspn(text, "=") >= n;

		rule = rule || (n >= 3 && strspn(text, "-") >= n);
		if (!rule && !(n == 7 && !strncmp(text, "[verse]", 7))) {
			for (size_t i = 0; i < n; i++) {
				if (text[i] == '`' || (text[i] == '\'' && (i == 0 || text[i - 1] == ' ' ||
							  text[i + 1] == ' ')))
					continue;
				if (text[i] == '\\' && i + 2 < n && text[i + 1] == '-' && text[i + 2] == '-')
					continue;	/* "\--": asciidoctor's escape of "--" */
				fputc(text[i], f);
			}
			fputc('\n', f);
		}
		text += n + (eol ? 1 : 0);
	}
}

int help__show_page(const char *page)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], sect[4];
	const char *text = help__embedded(page);
	int section = strcmp(page, "rsprof-files") ? 1 : 5;

	if (!text)
		return -ENOENT;
	snprintf(sect, sizeof(sect), "%d", section);
	/*
	 * man formats the page for a terminal, and as plain text into a pipe.
	 * The page that came with this binary first: installed beside it
	 * (<prefix>/bin/rsprof, <prefix>/share/man/man1/, whatever the prefix),
	 * then built beside it (out/rsprof, out/man/); then any in man's path.
	 */
	if (self_dir(dir, sizeof(dir))) {
		snprintf(path, sizeof(path), "%s/../share/man/man%d/%s.%d", dir, section, page,
			 section);
		if (!access(path, R_OK) && run_man("-l", path, 0) == 0)
			return 0;
		snprintf(path, sizeof(path), "%s/man/%s.%d", dir, page, section);
		if (!access(path, R_OK) && run_man("-l", path, 0) == 0)
			return 0;
	}
	if (run_man("-w", page, 1) == 0 && run_man(sect, page, 0) == 0)
		return 0;
	/* no man, or no page: the text embedded at build time */
	print_plain(text, stdout);
	return 0;
}
