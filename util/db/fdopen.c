/*
 * SQLite reads the descriptor the reader checked (see fdopen.h).
 */
#include "util/db/fdopen.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>

#include <sqlite3.h>

typedef int (*open_fn)(const char *path, int flags, int mode);

static open_fn real_open;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread int armed_fd = -1;
static __thread const char *armed_base;

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int hooked_open(const char *path, int flags, int mode)
{
	/* SQLite wants a descriptor above 2 (it never writes a database to stderr) */
	if (armed_fd >= 0 && !(flags & O_CREAT) && path && !strcmp(base_name(path), armed_base))
		return fcntl(armed_fd, F_DUPFD_CLOEXEC, 3);
	return real_open(path, flags, mode);
}

static void install(void)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find("unix");

	if (!vfs || vfs->iVersion < 3 || !vfs->xGetSystemCall || !vfs->xSetSystemCall)
		return;
	real_open = (open_fn)vfs->xGetSystemCall(vfs, "open");
	if (real_open && vfs->xSetSystemCall(vfs, "open", (sqlite3_syscall_ptr)hooked_open))
		real_open = NULL;
}

void fdopen__arm(int fd, const char *path)
{
	pthread_once(&once, install);
	if (!real_open)
		return;		/* not the unix VFS: SQLite opens by name */
	armed_fd = fd;
	armed_base = base_name(path);
}

void fdopen__disarm(void)
{
	armed_fd = -1;
	armed_base = NULL;
}
