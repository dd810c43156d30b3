/*
 * The writer's WAL checkpoints in a thread of their own (wal-checkpointer.h).
 */
#include "util/db/wal-checkpointer.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/error.h"

struct wal_checkpointer {
	sqlite3 *writer;	/* the writer's connection (its hook) */
	sqlite3 *ck;		/* the thread's own */
	int frames;		/* a checkpoint when the WAL holds this many */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool pending, stop;
};

static void *ck_main(void *arg)
{
	struct wal_checkpointer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->pending && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		w->pending = false;
		pthread_mutex_unlock(&w->lock);
		/* PASSIVE: as far as readers let it, never waiting on the writer */
		if (sqlite3_wal_checkpoint_v2(w->ck, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) !=
		    SQLITE_OK)
			pr_debug(1, "WAL checkpoint: %s", sqlite3_errmsg(w->ck));
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* After each commit of the writer, on its thread: nothing more than a signal. */
static int ck_hook(void *arg, sqlite3 *sq, const char *name, int n_frames)
{
	struct wal_checkpointer *w = arg;

	if (n_frames >= 4 * w->frames) {
		/* the thread does not get the WAL back: the writer does it, as before */
		sqlite3_wal_checkpoint_v2(sq, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		return SQLITE_OK;
	}
	if (n_frames >= w->frames) {
		pthread_mutex_lock(&w->lock);
		w->pending = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	return SQLITE_OK;
}

int wal_checkpointer__start(sqlite3 *sq, const char *path, int frames,
			    struct wal_checkpointer **out)
{
	struct wal_checkpointer *w;
	int err;

	*out = NULL;
	if (!sqlite3_threadsafe())
		return -ENOSYS;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->writer = sq;
	w->frames = frames;
	if (sqlite3_open_v2(path, &w->ck, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		pr_debug(1, "%s: WAL checkpoint connection: %s", path,
			 w->ck ? sqlite3_errmsg(w->ck) : "out of memory");
		sqlite3_close(w->ck);
		free(w);
		return -RSPROF_EDB;
	}
	/* never a checkpoint of its own when it closes: the writer's close does it */
	sqlite3_db_config(w->ck, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/* a first read: the connection finds the file in WAL mode (a checkpoint
	 * on a connection that has not read it does nothing) */
	if (sqlite3_exec(w->ck, "SELECT COUNT(*) FROM sqlite_master", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		pr_debug(1, "%s: WAL checkpoint connection: %s", path, sqlite3_errmsg(w->ck));
		sqlite3_close(w->ck);
		free(w);
		return -RSPROF_EDB;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	err = pthread_create(&w->thread, NULL, ck_main, w);
	if (err) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		sqlite3_close(w->ck);
		free(w);
		return -err;
	}
	sqlite3_wal_hook(sq, ck_hook, w);	/* replaces wal_autocheckpoint's hook */
	*out = w;
	return 0;
}

void wal_checkpointer__stop(struct wal_checkpointer *w)
{
	if (!w)
		return;
	sqlite3_wal_hook(w->writer, NULL, NULL);
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	sqlite3_close(w->ck);
	free(w);
}
