#ifndef RSPROF_UTIL_RECORD_RECORDER_H
#define RSPROF_UTIL_RECORD_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/heap/heap.h"

struct push_opts;

/*
 * A recording: the target (attached or launched), the CPU sampler, the heap
 * tracker, the resolver and the profile writer, driven by one loop that
 * drains the rings every ~10 ms and writes a checkpoint every interval
 * (seed 002 §3.2.2). `record` runs it in the main thread; `top` runs it in
 * a sampler thread that owns the writer while the screen reads the file
 * through its own connection.
 */
struct recorder;

#define RECORD_MAX_PIDS 64

struct record_opts {
	pid_t pid;			/* attach: the first of pids; 0 when launching */
	pid_t pids[RECORD_MAX_PIDS];	/* attach: -p PID[,PID...] */
	size_t n_pids;
	bool inherit;			/* follow the children the target starts (perf's inherit) */
	bool all;			/* record -a: every process of the host, CPU only */
	const char *comm;		/* -a --comm: only the processes of this name; NULL: all */
	const char *cgroup;		/* -a --cgroup: only those in this cgroup; NULL: all */
	bool user_only;			/* CPU: user time only, no kernel samples */
	const char *process;		/* attach by name (substring of comm) */
	const char *const *argv;	/* launch: command and arguments, NULL-terminated */
	const char *output;		/* NULL: default name in output_dir */
	const char *output_dir;		/* NULL: current directory */
	unsigned int freq;		/* Hz */
	uint64_t interval_ms;
	uint64_t duration_ms;		/* 0: until stopped or the target exits */
	uint64_t retain_ms;		/* fold checkpoints older than this; 0: keep all */
	bool compact_set;		/* --compact-after given: */
	uint64_t compact_ms;		/* pack checkpoints older than this; 0: never */
	bool cpu, heap;			/* what to record */
	bool heap_required;		/* --no-cpu: heap failure is fatal */
	bool call_graph;
	bool call_graph_fp;		/* --call-graph fp: the kernel's frame-pointer chain */
	unsigned int stack_copy;	/* -g: bytes of user stack copied per sample */
	bool append;
	enum heap_backend heap_backend;	/* auto, inject (attach), preload (launch) or uprobe */
	enum heap_probes heap_probes;
	enum heap_attribution heap_attribution;
	unsigned int heap_sample;
	uint64_t heap_sample_bytes;	/* --heap-sample-bytes: mean bytes between two
					 * tracked allocations; 0: off */
	const char *const *alloc_fn;	/* --alloc-fn patterns, NULL-terminated; NULL: none */
	bool alloc_history;		/* every allocation and free into the file (the
					 * in-process tracker only) */
	/* rsprof's own command line, kept in meta `rsprof_command`; NULL: not kept */
	const char *rsprof_cmdline;
	/* record --push: the store and how (util/push/pusher.h); NULL: no push */
	const struct push_opts *push;
	/* Called by recorder__run() about every 250 ms (e.g. a status line); NULL: none. */
	void (*tick)(struct recorder *r, void *ctx);
	void *tick_ctx;
};

struct recorder_stats {
	uint64_t elapsed_ms;
	uint64_t samples, lost;
	uint64_t checkpoints;
	uint64_t threads;
	uint64_t processes;		/* seen (the target and its children) */
	bool heap_on;
	const char *heap_probes;	/* "rust", "libc" once attached; NULL before */
	const char *heap_backend;	/* "preload", "inject", "uprobe"; NULL: no heap */
	const char *heap_why;		/* why not the in-process tracker; NULL: it ran */
	uint64_t heap_sample_bytes;	/* byte sampling in force (in-process); 0: none */
	uint64_t tracking_samples;	/* CPU samples taken handling the heap's uprobes */
	unsigned int freq;		/* the CPU sampling frequency (0: no CPU) */
	int64_t live_bytes, peak_bytes;
	uint64_t allocs, frees, heap_dropped, unknown_frees;
	/* record --alloc-history: events kept and dropped, the time the
	 * program's threads waited for rsprof to take them (back-pressure) */
	bool hist_on;
	uint64_t hist_events, hist_dropped, hist_wait_ns, hist_waits;
	bool target_exited;
	int exit_status;		/* as from waitpid() when launched, -1 when unknown */
	bool finished;			/* recorder__run() returned */
	/* record --push (util/push/pusher.h): requests taken by the store,
	 * waiting in the spool, tries failed, dropped from a full spool, refused */
	bool push_on;
	uint64_t pushed, pushed_bytes, push_queued, push_failed, push_dropped, push_rejected;
	char push_store[256], push_spool[512];
};

/* Resolve the target, check permissions, open the file, attach. Errors printed. */
int recorder__new(const struct record_opts *o, struct recorder **out);
/* Record until the duration ends, recorder__stop() is called or the target exits. */
int recorder__run(struct recorder *r);
/* Async-signal-safe: ask recorder__run() to finalise and return. */
void recorder__stop(struct recorder *r);
/* Thread-safe snapshot. */
void recorder__stats(struct recorder *r, struct recorder_stats *st);
const char *recorder__path(const struct recorder *r);
pid_t recorder__pid(const struct recorder *r);
const char *recorder__comm(const struct recorder *r);
/* Why it stopped: "duration", "signal", "target-exit"; NULL while running. */
const char *recorder__stop_reason(const struct recorder *r);
/* Finalises the file (meta end_time, exit status) if not done, frees. NULL ok. */
int recorder__delete(struct recorder *r);

#endif
