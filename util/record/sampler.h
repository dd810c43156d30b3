#ifndef RSPROF_UTIL_RECORD_SAMPLER_H
#define RSPROF_UTIL_RECORD_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * CPU sampling (SPEC §5): PERF_TYPE_SOFTWARE/PERF_COUNT_SW_CPU_CLOCK at a
 * frequency, user space only, one perf event and one mmap'd ring buffer per
 * thread of the target. sampler__rescan() opens events on threads that
 * appeared and closes the ones of threads that exited; sampler__drain()
 * reads every ring and hands each sample to a callback, without allocating.
 */
struct sampler;

struct sampler_opts {
	pid_t pid;
	unsigned int freq;		/* Hz */
	bool call_graph;		/* PERF_SAMPLE_CALLCHAIN, user frames only */
	bool enable_on_exec;		/* launched target stopped before exec */
};

/*
 * Opens an event on every thread of o->pid. Errors are printed: -ESRCH no
 * such process, -EPERM/-EACCES not allowed (with the paranoid value or
 * capability in the hint), -errno otherwise.
 */
int sampler__new(const struct sampler_opts *o, struct sampler **out);

/*
 * A launched target has exec'd: the events of threads found from now on
 * start enabled (enable_on_exec would wait for another exec).
 */
void sampler__exec_done(struct sampler *s);

/*
 * Pick up new threads, mark exited ones (closed by the next drain). Returns
 * how many threads appeared or exited, -ESRCH when the process is gone.
 */
int sampler__rescan(struct sampler *s);

/*
 * One sample: the user-space IP and, with call_graph, the user callchain
 * (innermost first, context markers removed; chain[0] is normally ip).
 * Pointers are valid during the call only.
 */
typedef void (*sampler_cb)(void *ctx, pid_t tid, uint64_t ip,
			   const uint64_t *chain, unsigned int depth);

/* Drain every ring. Returns the number of samples delivered. */
uint64_t sampler__drain(struct sampler *s, sampler_cb cb, void *ctx);

struct sampler_stats {
	uint64_t samples;	/* delivered since sampler__new() */
	uint64_t lost;		/* PERF_RECORD_LOST totals */
	uint64_t threads;	/* open now */
	uint64_t threads_seen;	/* ever opened */
};

void sampler__stats(const struct sampler *s, struct sampler_stats *st);
/* Drains nothing; closes every event and unmaps. NULL ok. */
void sampler__delete(struct sampler *s);

#endif
