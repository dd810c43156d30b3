#include "util/db/naming.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/error.h"

char *naming__sanitize_comm(const char *comm, pid_t pid, char *buf, size_t len)
{
	size_t n = 0;

	if (!comm || !*comm) {
		snprintf(buf, len, "%d", (int)pid);
		return buf;
	}
	for (const char *p = comm; *p && n < 32 && n + 1 < len; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '_';

		if (c == '\n')
			break;
		buf[n++] = ok ? c : '-';
	}
	buf[n] = '\0';
	return buf;
}

char *naming__default(const char *dir, const char *comm, pid_t pid, time_t when,
		      char *buf, size_t len)
{
	char name[40], stamp[16];
	struct tm tm;

	naming__sanitize_comm(comm, pid, name, sizeof(name));
	localtime_r(&when, &tm);
	strftime(stamp, sizeof(stamp), "%y%m%d%H%M%S", &tm);
	if (dir && *dir)
		snprintf(buf, len, "%s/rsprof.%s.%s.db", dir, name, stamp);
	else
		snprintf(buf, len, "rsprof.%s.%s.db", name, stamp);
	return buf;
}

/* The YYMMDDhhmmss part of rsprof.NAME.STAMP.db, or NULL. */
static const char *stamp_of(const char *name)
{
	size_t n = strlen(name);

	if (n < 3 + 1 + 12 + 7 || strncmp(name, "rsprof.", 7) || strcmp(name + n - 3, ".db"))
		return NULL;
	if (name[n - 3 - 12 - 1] != '.')
		return NULL;
	for (size_t i = n - 3 - 12; i < n - 3; i++)
		if (name[i] < '0' || name[i] > '9')
			return NULL;
	return name + n - 3 - 12;
}

int naming__newest(const char *dir, char **path)
{
	DIR *d = opendir(dir ? dir : ".");
	struct dirent *e;
	char best[256] = "", best_stamp[13] = "";
	time_t best_mtime = 0;

	if (!d) {
		pr_err("cannot read directory '%s': %s", dir ? dir : ".", strerror(errno));
		return -errno;
	}
	while ((e = readdir(d))) {
		const char *stamp = stamp_of(e->d_name);
		struct stat st;
		int cmp;

		if (!stamp || strlen(e->d_name) >= sizeof(best))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISREG(st.st_mode))
			continue;
		cmp = strncmp(stamp, best_stamp, 12);
		if (!*best || cmp > 0 || (cmp == 0 && st.st_mtime > best_mtime)) {
			snprintf(best, sizeof(best), "%s", e->d_name);
			memcpy(best_stamp, stamp, 12);
			best_mtime = st.st_mtime;
		}
	}
	closedir(d);
	if (!*best) {
		pr_err("no profile given and no rsprof.*.db in %s",
		       dir && strcmp(dir, ".") ? dir : "the current directory");
		pr_hint("record one with 'rsprof record -p PID' or name the file");
		return -RSPROF_EDB;	/* like a missing file: exit 6 */
	}
	if (dir && strcmp(dir, ".")) {
		if (asprintf(path, "%s/%s", dir, best) < 0)
			return -ENOMEM;
	} else {
		*path = strdup(best);
		if (!*path)
			return -ENOMEM;
	}
	return 0;
}
