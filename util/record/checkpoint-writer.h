#ifndef RSPROF_UTIL_RECORD_CHECKPOINT_WRITER_H
#define RSPROF_UTIL_RECORD_CHECKPOINT_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The next checkpoint of a recording: takes the sampler's records in time
 * order, gives fork/exec/exit/mmap to the process tree and counts the CPU
 * samples of the interval by process and address key (and, with -g, by
 * deduplicated call stack), then writes them with the heap tracker's
 * deltas as one struct checkpoint, together with what the file does not
 * have yet: the symbols of new keys, the new stacks, the processes that
 * changed and, when they changed, the mappings.
 */
struct checkpoint_writer;
struct db_writer;
struct heap;
struct history_writer;
struct process_tree;
struct sampler_event;

/*
 * call_graph: -g (samples by stack, the file has cpu_stacks); heap: NULL when not tracked,
 * else heap_pid is the process it tracks. All are the caller's and
 * outlive the writer. 0 or -ENOMEM.
 */
int checkpoint_writer__new(struct db_writer *db, bool call_graph, struct process_tree *pt,
			   struct heap *heap, pid_t heap_pid, struct checkpoint_writer **out);

/* Stamp each checkpoint with pid's resident memory (schema v3); 0: none (default). */
void checkpoint_writer__watch_rss(struct checkpoint_writer *w, pid_t pid);
/* The highest of its VmHWM (the kernel's peak resident memory) read so far; 0: none. */
int64_t checkpoint_writer__rss_peak(const struct checkpoint_writer *w);

/*
 * record --alloc-history: with each checkpoint, the tracker's allocation
 * events (heap__history_each()) go to hw, at most budget_ms of writing
 * per checkpoint (the rest waits for the next one); an event at
 * CLOCK_MONOTONIC time t is stored at t - t0_ns + base_ns (--append: the
 * file's times go on). hw is the caller's and outlives the writer.
 */
void checkpoint_writer__history(struct checkpoint_writer *w, struct history_writer *hw,
				uint64_t t0_ns, uint64_t base_ns, uint64_t budget_ms);
/*
 * Between checkpoints (the recorder's loop): write the events drained so
 * far, at most budget_ms of it, those of stacks already collected (a new
 * stack's wait for the next checkpoint). 0 or an error.
 */
int checkpoint_writer__history_pump(struct checkpoint_writer *w, uint64_t budget_ms);
/* The end of the recording: the tracker's last events, all written. 0 or an error. */
int checkpoint_writer__history_end(struct checkpoint_writer *w);

/* A sampler_cb (util/record/sampler.h); ctx is the writer. */
void checkpoint_writer__event(void *ctx, const struct sampler_event *ev);

/* -ENOMEM once a record could not be counted, else 0. */
int checkpoint_writer__error(const struct checkpoint_writer *w);

/* -g: the samples whose stacks were unwound from their stack copies, and
 * how many of those could not be followed down to their first frame. */
/* CPU samples taken while the kernel handled one of the heap's uprobes. */
uint64_t checkpoint_writer__tracking_samples(const struct checkpoint_writer *w);
void checkpoint_writer__stacks(const struct checkpoint_writer *w, uint64_t *unwound,
			       uint64_t *truncated);

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
