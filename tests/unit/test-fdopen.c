/*
 * util/db/fdopen.c: while armed, SQLite reads the descriptor given, not
 * whatever the name points to at its open() (a reader's check, then a
 * file swapped under the name: issue 11).
 */
#include "util/db/fdopen.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tap.h"

static int make_db(const char *path, const char *table)
{
	sqlite3 *db;
	char sql[128];
	int rc;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	snprintf(sql, sizeof(sql), "CREATE TABLE %s (x); INSERT INTO %s VALUES (1);", table, table);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

/* The name of the first table of the database at path, opened read-only. */
static char *first_table(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *name = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		name = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return name;
}

int main(void)
{
	char dir[] = "/tmp/rsprof-test-fdopen.XXXXXX", a[512], b[512], sub[256];
	char *t;
	int fd;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	snprintf(sub, sizeof(sub), "%s/swapped", dir);
	mkdir(sub, 0700);
	snprintf(a, sizeof(a), "%s/p.db", dir);		/* the file checked */
	snprintf(b, sizeof(b), "%s/p.db", sub);		/* what the name points to later */
	ok(!make_db(a, "checked") && !make_db(b, "other"), "two databases of one base name");

	fd = open(a, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	fdopen__arm(fd, a);
	t = first_table(b);
	fdopen__disarm();
	is_str(t, "checked", "armed: SQLite reads the checked descriptor, not the name");
	free(t);

	t = first_table(b);
	is_str(t, "other", "disarmed: SQLite opens by name again");
	free(t);

	close(fd);
	unlink(a);
	unlink(b);
	rmdir(sub);
	rmdir(dir);
	return done_testing();
}
