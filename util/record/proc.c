#include "util/record/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/array.h"

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err == -ESRCH ? -ESRCH : err;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

int proc__exists(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) ? -ESRCH : 0;
}

int proc__comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	err = read_small(path, buf, len);
	if (err)
		return err;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int proc__cgroup(pid_t pid, bool any_hierarchy, char *buf, size_t len)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		bool v2 = !strncmp(line, "0::", 3);
		char *p = strchr(line, ':');

		p = p ? strchr(p + 1, ':') : NULL;
		if (!p || (!v2 && (found || !any_hierarchy)))
			continue;
		p[strcspn(p, "\n")] = '\0';
		snprintf(buf, len, "%s", p + 1);
		found = true;
		if (v2)
			break;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

int proc__exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return errno == ENOENT ? (proc__exists(pid) ? -ESRCH : -ENOENT) : -errno;
	buf[n] = '\0';
	return 0;
}

const char *proc__root_relative(pid_t pid, const char *path)
{
	char fn[64], root[PATH_MAX];
	ssize_t n;

	snprintf(fn, sizeof(fn), "/proc/%d/root", (int)pid);
	n = readlink(fn, root, sizeof(root) - 1);
	if (n <= 1)		/* "/" (nothing to take off), or unreadable */
		return path;
	root[n] = '\0';
	if (!strncmp(path, root, n) && path[n] == '/')
		return path + n;
	return path;
}

int proc__uid(pid_t pid, uid_t *uid)
{
	char path[64], buf[4096], *p;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	p = strstr(buf, "\nUid:");
	if (!p)
		return -EINVAL;
	*uid = (uid_t)strtoul(p + 5, NULL, 10);
	return 0;
}

/* "Uid:\t1000\t1000\t1000\t1000": the first three numbers after tag. */
static int three_ids(const char *buf, const char *tag, unsigned long v[3])
{
	const char *p = strstr(buf, tag);
	char *end;

	if (!p)
		return -EINVAL;
	p += strlen(tag);
	for (int i = 0; i < 3; i++) {
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		p = end;
	}
	return 0;
}

int proc__creds(pid_t pid, struct proc_creds *c)
{
	char path[64], buf[4096];
	unsigned long u[3], g[3];
	struct stat st;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	if (three_ids(buf, "\nUid:", u) || three_ids(buf, "\nGid:", g))
		return -EINVAL;
	/* the files in /proc/pid of a non-dumpable process are root's (task_dump_owner()) */
	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	for (int i = 0; i < 3; i++) {
		c->uid[i] = (uid_t)u[i];
		c->gid[i] = (gid_t)g[i];
	}
	c->owner_uid = st.st_uid;
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

bool proc__is_kthread(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)))
		return false;
	/* flags is field 9; the fields after comm (2) start after its last ')' */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 9; field++) {
		p = strchr(p + 1, ' ');
	}
	if (!p)
		return false;
	flags = strtoul(p + 1, NULL, 10);
	return flags & 0x00200000;	/* PF_KTHREAD */
}

static int pid_push(pid_t **v, size_t *n, size_t *cap, pid_t pid)
{
	if (ALLOC_GROW(*v, *n + 1, *cap, 8))
		return -ENOMEM;
	(*v)[(*n)++] = pid;
	return 0;
}

int proc__find_by_name(const char *name, pid_t **pids, size_t *n, bool *exact)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid(), *sub = NULL, *ex = NULL;
	size_t n_sub = 0, cap_sub = 0, n_ex = 0, cap_ex = 0;
	char want[16];
	int err = 0;

	/* comm holds 15 characters: a longer name matches its beginning */
	snprintf(want, sizeof(want), "%s", name);
	name = want;
	*pids = NULL;
	*n = 0;
	*exact = false;
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char comm[64];
		pid_t pid;

		if (!all_digits(de->d_name))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (pid == self || proc__comm(pid, comm, sizeof(comm)) || !strstr(comm, name) ||
		    proc__is_kthread(pid))
			continue;
		if (!strcmp(comm, name))
			err = pid_push(&ex, &n_ex, &cap_ex, pid);
		else
			err = pid_push(&sub, &n_sub, &cap_sub, pid);
	}
	closedir(d);
	if (err) {
		free(ex);
		free(sub);
		return err;
	}
	if (n_ex) {
		free(sub);
		*pids = ex;
		*n = n_ex;
		*exact = true;
	} else {
		free(ex);
		*pids = sub;
		*n = n_sub;
	}
	return 0;
}

int proc__threads(pid_t pid, pid_t **tids, size_t *n, size_t *cap)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		if (!all_digits(de->d_name))
			continue;
		if (ALLOC_GROW(*tids, *n + 1, *cap, 16)) {
			closedir(d);
			return -ENOMEM;
		}
		(*tids)[(*n)++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	return 0;
}

bool proc__gone(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)))
		return true;
	/* state follows the last ')' (comm may hold parentheses) */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return true;
	if (p[2] != 'Z' && p[2] != 'X')
		return false;
	/*
	 * A main thread that called pthread_exit() is a zombie while the other
	 * threads run on: gone only when num_threads (field 20) is down to it.
	 */
	p += 2;
	for (int field = 3; field < 20 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return !p || atoi(p) <= 1;
}

int proc__which(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK))
			return -ENOENT;
		if (!realpath(cmd, buf))
			snprintf(buf, len, "%s", cmd);
		return 0;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		char try[4096];

		end = strchrnul(p, ':');
		snprintf(try, sizeof(try), "%.*s/%s", (int)(end - p), end == p ? "." : p, cmd);
		if (!access(try, X_OK)) {
			if (!realpath(try, buf) || strlen(buf) >= len)
				snprintf(buf, len, "%s", try);
			return 0;
		}
	}
	return -ENOENT;
}

int proc__cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

int proc__rss_peak(pid_t pid, int64_t *hwm)
{
	char path[64], buf[4096];
	const char *p;
	unsigned long long kb;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	p = strstr(buf, "\nVmHWM:");
	if (!p || sscanf(p + 7, " %llu", &kb) != 1)
		return -ESRCH;
	*hwm = (int64_t)(kb * 1024);
	return 0;
}

int proc__rss(pid_t pid, int64_t *rss, int64_t *anon)
{
	char path[64], buf[256];
	unsigned long long size, resident, shared;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	/* size resident shared text lib data dt, in pages; a zombie reads all 0 */
	if (sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) != 3 || !size)
		return -ESRCH;
	if (page <= 0)
		page = 4096;
	*rss = (int64_t)(resident * (unsigned long long)page);
	*anon = (int64_t)((resident > shared ? resident - shared : 0) *
			  (unsigned long long)page);
	return 0;
}
