#ifndef RSPROF_UTIL_RECORD_CHECKPOINT_WRITER_H
#define RSPROF_UTIL_RECORD_CHECKPOINT_WRITER_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The next checkpoint of a recording: counts the CPU samples of the
 * interval by address (and, with -g, by deduplicated call stack), then
 * writes them with the heap tracker's deltas as one struct checkpoint,
 * together with what the file does not have yet: the symbols of new
 * addresses, the new stacks and, when they changed, the mappings.
 */
struct checkpoint_writer;
struct db;
struct db_stacks;
struct heap;
struct resolver;

/*
 * dbst: -g (samples by stack), NULL: none; heap: NULL when not tracked.
 * All are the caller's and outlive the writer. 0 or -ENOMEM.
 */
int checkpoint_writer__new(struct db *db, struct db_stacks *dbst, struct resolver *res,
			   struct heap *heap, struct checkpoint_writer **out);

/* Stamp each checkpoint with pid's resident memory (schema v3); 0: none (default). */
void checkpoint_writer__watch_rss(struct checkpoint_writer *w, pid_t pid);

/* A sampler_cb (util/record/sampler.h); ctx is the writer. */
void checkpoint_writer__sample(void *ctx, pid_t tid, uint64_t ip, const uint64_t *chain,
			       unsigned int depth);

/* -ENOMEM once a sample could not be counted, else 0. */
int checkpoint_writer__error(const struct checkpoint_writer *w);

/*
 * A sample fell outside the known mappings (a library mapped since):
 * re-read them, at most once every every_ms, while the target lives.
 */
void checkpoint_writer__refresh_maps(struct checkpoint_writer *w, uint64_t now_ms,
				     uint64_t every_ms);

/* The target mapped new files (the heap tracker saw it start): re-read them soon. */
void checkpoint_writer__maps_changed(struct checkpoint_writer *w);

/*
 * Write the checkpoint stamped timestamp_ms; lost_total is the sampler's
 * count of lost samples so far (the checkpoint gets the difference). Then
 * the interval's counts start again from zero.
 */
int checkpoint_writer__write(struct checkpoint_writer *w, uint64_t timestamp_ms,
			     uint64_t lost_total);

/* NULL ok. */
void checkpoint_writer__delete(struct checkpoint_writer *w);

#endif
