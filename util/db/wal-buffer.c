/*
 * The writer's WAL appends gathered (util/db/wal-buffer.h). Hand-written:
 * SQLite has no option to gather a WAL's frames, and a VFS shim is the
 * way it offers to change how a file is written.
 */
#include "util/db/wal-buffer.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define WB_NAME		"rsprof-wal-buffer"
#define WB_MAX		(16 << 20)	/* past this, written even before the commit */
#define WB_FRAME_HDR	24		/* a WAL frame's header (bytes 4..7: commit size) */

struct wb_file {
	sqlite3_file base;		/* pMethods: wb_methods */
	sqlite3_file *real;		/* the default VFS's file, after this struct */
	unsigned char *buf;
	size_t n, cap;
	sqlite3_int64 off;		/* where buf[0] goes in the file */
	bool commit_page;		/* the last write was a commit frame's header */
};

static sqlite3_vfs wb_vfs;
static sqlite3_vfs *wb_real;
static const char *wb_name;

/*
 * In pieces the default VFS writes whole: its unix write takes the low 17
 * bits of a length (a write of 128 KiB would write nothing).
 */
#define WB_PIECE	(31 * 4096)

static int wb_flush(struct wb_file *f)
{
	int rc = SQLITE_OK;

	for (size_t at = 0; at < f->n && rc == SQLITE_OK; at += WB_PIECE) {
		size_t n = f->n - at < WB_PIECE ? f->n - at : WB_PIECE;

		rc = f->real->pMethods->xWrite(f->real, f->buf + at, (int)n,
					       f->off + (sqlite3_int64)at);
	}
	f->n = 0;
	return rc;
}

static int wb_close(sqlite3_file *file)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc = wb_flush(f), rc2 = f->real->pMethods->xClose(f->real);

	free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *file, void *p, int amt, sqlite3_int64 off)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc = wb_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, p, amt, off);
}

/* Keep p in the buffer; false: it does not go there (written through). */
static bool wb_keep(struct wb_file *f, const void *p, int amt, sqlite3_int64 off)
{
	size_t need = f->n + (size_t)amt;

	if (f->n && off != f->off + (sqlite3_int64)f->n)
		return false;
	if (need > WB_MAX)
		return false;
	if (need > f->cap) {
		size_t cap = f->cap ? f->cap : 1 << 20;
		unsigned char *b;

		while (cap < need)
			cap *= 2;
		b = realloc(f->buf, cap);
		if (!b)
			return false;
		f->buf = b;
		f->cap = cap;
	}
	if (!f->n)
		f->off = off;
	memcpy(f->buf + f->n, p, (size_t)amt);
	f->n = need;
	return true;
}

static int wb_write(sqlite3_file *file, const void *p, int amt, sqlite3_int64 off)
{
	struct wb_file *f = (struct wb_file *)file;
	const unsigned char *b = p;
	bool commit_page = f->commit_page;
	int rc = SQLITE_OK;

	f->commit_page = false;
	if (amt <= 0)
		return SQLITE_OK;
	if (!wb_keep(f, p, amt, off)) {
		rc = wb_flush(f);
		if (rc == SQLITE_OK && !wb_keep(f, p, amt, off))
			rc = f->real->pMethods->xWrite(f->real, p, amt, off);
		if (rc != SQLITE_OK)
			return rc;
	}
	if (amt == WB_FRAME_HDR && (b[4] | b[5] | b[6] | b[7]))
		f->commit_page = true;	/* a commit frame: its page comes next */
	else if (commit_page)
		rc = wb_flush(f);	/* the commit is whole: into the file */
	return rc;
}

static int wb_truncate(sqlite3_file *file, sqlite3_int64 size)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc = wb_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int wb_sync(sqlite3_file *file, int flags)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc = wb_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int wb_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc = wb_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int wb_lock(sqlite3_file *file, int lock)
{
	struct wb_file *f = (struct wb_file *)file;

	return f->real->pMethods->xLock(f->real, lock);
}

static int wb_unlock(sqlite3_file *file, int lock)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc = wb_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xUnlock(f->real, lock);
}

static int wb_check_reserved(sqlite3_file *file, int *out)
{
	struct wb_file *f = (struct wb_file *)file;

	return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int wb_file_control(sqlite3_file *file, int op, void *arg)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc = wb_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int wb_sector_size(sqlite3_file *file)
{
	struct wb_file *f = (struct wb_file *)file;

	return f->real->pMethods->xSectorSize(f->real);
}

static int wb_device(sqlite3_file *file)
{
	struct wb_file *f = (struct wb_file *)file;

	return f->real->pMethods->xDeviceCharacteristics(f->real);
}

/* a WAL file has no shared memory and is not mapped: version 1 methods */
static const sqlite3_io_methods wb_methods = {
	.iVersion = 1,
	.xClose = wb_close,
	.xRead = wb_read,
	.xWrite = wb_write,
	.xTruncate = wb_truncate,
	.xSync = wb_sync,
	.xFileSize = wb_file_size,
	.xLock = wb_lock,
	.xUnlock = wb_unlock,
	.xCheckReservedLock = wb_check_reserved,
	.xFileControl = wb_file_control,
	.xSectorSize = wb_sector_size,
	.xDeviceCharacteristics = wb_device,
};

/* The real file after ours, aligned for any type. */
static size_t wb_head(void)
{
	return (sizeof(struct wb_file) + 15) & ~(size_t)15;
}

static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
		   int *out_flags)
{
	struct wb_file *f = (struct wb_file *)file;
	int rc;

	/* every other file is the default VFS's own, in the same memory */
	if (!(flags & SQLITE_OPEN_WAL))
		return wb_real->xOpen(wb_real, name, file, flags, out_flags);
	memset(f, 0, sizeof(*f));
	f->real = (sqlite3_file *)((char *)file + wb_head());
	rc = wb_real->xOpen(wb_real, name, f->real, flags, out_flags);
	f->base.pMethods = rc == SQLITE_OK && f->real->pMethods ? &wb_methods : NULL;
	return rc;
}

static void wb_register(void)
{
	wb_real = sqlite3_vfs_find(NULL);
	if (!wb_real)
		return;
	wb_vfs = *wb_real;
	wb_vfs.szOsFile = (int)(wb_head() + (size_t)wb_real->szOsFile);
	wb_vfs.pNext = NULL;
	wb_vfs.zName = WB_NAME;
	wb_vfs.xOpen = wb_open;
	if (sqlite3_vfs_register(&wb_vfs, 0) == SQLITE_OK)
		wb_name = WB_NAME;
}

const char *wal_buffer__vfs(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, wb_register);
	return wb_name;
}
