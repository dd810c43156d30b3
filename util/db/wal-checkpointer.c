/*
 * The writer's WAL copied into the file by a thread of its own
 * (wal-checkpointer.h).
 */
#include "util/db/wal-checkpointer.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "util/error.h"

struct wal_checkpointer {
	sqlite3 *writer;	/* the writer's connection (its hook) */
	sqlite3 *ck;		/* the thread's own */
	int max_frames;		/* past this many the writer copies itself */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* to the thread: a commit; to the writer: a copy done */
	uint64_t asked, done;	/* commits signalled; of them, copied (the thread's count) */
	bool stop;
	struct wal_checkpointer_stats stats;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *ck_main(void *arg)
{
	struct wal_checkpointer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		uint64_t upto, c0, t0, c1, t1;

		while (w->done == w->asked && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		upto = w->asked;	/* every commit signalled so far is in the WAL */
		pthread_mutex_unlock(&w->lock);
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		t0 = clock_ns(CLOCK_MONOTONIC);
		/* PASSIVE: as far as readers let it, never waiting on the writer */
		if (sqlite3_wal_checkpoint_v2(w->ck, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) !=
		    SQLITE_OK)
			pr_debug(1, "WAL checkpoint: %s", sqlite3_errmsg(w->ck));
		c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		t1 = clock_ns(CLOCK_MONOTONIC);
		pthread_mutex_lock(&w->lock);
		w->stats.copies++;
		w->stats.cpu_ns += c1 - c0;
		w->stats.wall_ns += t1 - t0;
		w->done = upto;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* After each commit of the writer, on its thread: nothing more than a signal. */
static int ck_hook(void *arg, sqlite3 *sq, const char *name, int n_frames)
{
	struct wal_checkpointer *w = arg;

	if (n_frames >= w->max_frames) {
		/* the WAL is not getting back to the start (readers): the writer copies */
		sqlite3_wal_checkpoint_v2(sq, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		return SQLITE_OK;
	}
	pthread_mutex_lock(&w->lock);
	w->asked++;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return SQLITE_OK;
}

void wal_checkpointer__wait(struct wal_checkpointer *w)
{
	uint64_t t0;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->done != w->asked) {
		t0 = clock_ns(CLOCK_MONOTONIC);
		while (w->done != w->asked)
			pthread_cond_wait(&w->cond, &w->lock);
		w->stats.wait_ns += clock_ns(CLOCK_MONOTONIC) - t0;
	}
	pthread_mutex_unlock(&w->lock);
}

void wal_checkpointer__stats(struct wal_checkpointer *w, struct wal_checkpointer_stats *out)
{
	*out = (struct wal_checkpointer_stats){ 0 };
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	*out = w->stats;
	pthread_mutex_unlock(&w->lock);
}

int wal_checkpointer__start(sqlite3 *sq, const char *path, int max_frames,
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
	w->max_frames = max_frames;
	/* the file and its companions exist and are the writer's: never a link */
	if (sqlite3_open_v2(path, &w->ck, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK) {
		pr_debug(1, "%s: WAL checkpoint connection: %s", path,
			 w->ck ? sqlite3_errmsg(w->ck) : "out of memory");
		sqlite3_close(w->ck);
		free(w);
		return -RSPROF_EDB;
	}
	sqlite3_db_config(w->ck, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	/* never a checkpoint of its own when it closes: the writer's close does it */
	sqlite3_db_config(w->ck, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
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
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	sqlite3_close(w->ck);
	free(w);
}
