#ifndef RSPROF_UTIL_DB_DB_PRIV_H
#define RSPROF_UTIL_DB_DB_PRIV_H

/*
 * The connection to a profile file, inside util/db/ (db.c: the connection,
 * open.c: a reader's, create.c: a new or appended file's). Not for other
 * files: they see struct db through util/db/db.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>
#include <sys/types.h>

struct db {
	sqlite3 *sq;
	char *path;
	bool rw;		/* made by db__create(): read-write */
	int version;		/* meta.version of the file */
	unsigned int features;	/* enum db_feature bits */
	/*
	 * The reader's own fd of the file (header check), kept open until
	 * db__close(): closing any fd of a file drops every POSIX lock the
	 * process holds on it, also those of a writer connection in the same
	 * process (`top` with a target). Another process would then think it
	 * is the last connection, checkpoint and delete the live WAL, and the
	 * writer's later checkpoints would be lost.
	 */
	int check_fd;
	/*
	 * The writer's own fd of the file: flock()ed for the whole recording
	 * (a second writer is refused; flock locks are apart from SQLite's
	 * POSIX locks), and compared with the path to notice that the file was
	 * deleted or replaced. dev/ino: the file created or opened.
	 */
	int lock_fd;
	dev_t dev;
	ino_t ino;
	bool gone;		/* deleted or replaced: reported once */
	bool appending;		/* --append: the file was there before */
	/* companions this writer created, removed again when the create fails */
	bool made_wal, made_shm;
	/* reader: the time budget of the progress handler */
	uint64_t limit_ms;	/* 0: none */
	uint64_t deadline_ns;
	bool timed_out;
};

/* A connection not opened yet (fds -1); NULL on -ENOMEM. */
struct db *db_alloc(const char *path);
/* The primary result code of the first step of sql (a probe of the schema). */
int db_probe(struct db *db, const char *sql);
/* The feature bits, from the schema as it is now (db->version read before). */
void db_features(struct db *db);

#endif
