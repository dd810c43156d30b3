#ifndef RSPROF_UTIL_HEAP_HEAP_H
#define RSPROF_UTIL_HEAP_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Heap tracking: running counters per allocation call stack, read
 * as deltas once per checkpoint and attributed to the user's line. Two
 * backends behind this one interface:
 *
 *  preload  the in-process tracker (preload/, util/heap/preload.c) for a
 *           program rsprof launches: LD_PRELOAD, counters in shared memory,
 *           no trap per call;
 *  uprobe   eBPF uprobes on the allocator (bpf/heap.bpf.c,
 *           util/heap/uprobe.c): any running process, attach included.
 *
 * What is shared (util/heap/heap.c): the table of stacks seen, their
 * attribution to a site through the resolver (util/heap/attrib.c), the
 * deltas and the addresses new to the file.
 */
struct heap;
struct heap_launch;
struct heap_inject;
struct resolver;
struct checkpoint;
struct alloc_fns;

enum heap_probes { HEAP_PROBES_AUTO, HEAP_PROBES_RUST, HEAP_PROBES_LIBC };
enum heap_attribution { ATTR_FIRST_USER, ATTR_CALLER, ATTR_STACK };
enum heap_backend { HEAP_BACKEND_AUTO, HEAP_BACKEND_PRELOAD, HEAP_BACKEND_UPROBE,
		    HEAP_BACKEND_INJECT };

struct heap_opts {
	pid_t pid;
	const char *exe;		/* the target's executable (path on disk) */
	bool before_exec;		/* launched target, stopped before exec: libraries not mapped yet */
	enum heap_probes probes;
	enum heap_attribution attribution;
	unsigned int sample;		/* track one allocation in N; 1 = all */
	const struct alloc_fns *alloc_fns;	/* wrappers passed over (util/heap/alloc-fn.h);
						 * the caller's, outlives the tracker */
	/* the in-process tracker's directory (heap_launch__new()); NULL: uprobes.
	 * heap__new() takes it over, even when it fails. */
	struct heap_launch *launch;
	/* the tracker injected into the attached process (heap_inject__new()),
	 * taken over as launch is; NULL with launch NULL: uprobes */
	struct heap_inject *inject;
	/* record --alloc-history: the tracker sends every allocation and free
	 * (the in-process tracker only) */
	bool alloc_history;
};

/*
 * Launching with heap tracking, before the fork: which backend for exe.
 * HEAP_BACKEND_AUTO takes the in-process tracker unless it cannot work for
 * exe: a static executable, setuid/setgid, an executable with its own
 * malloc or a Rust #[global_allocator] that is jemalloc or mimalloc, an
 * allocator library (jemalloc, tcmalloc, mimalloc) among its DT_NEEDED,
 * or --heap-probes rust; *why then says which (a static string). HEAP_BACKEND_PRELOAD
 * fails (-ENOTSUP, printed with the reason) where auto would fall back.
 * With the tracker: makes the private 0700 directory with the library in
 * it; *out is then the launch, whose environment the program execs with.
 * inherit: every process of the tree the program starts is tracked (each
 * its own region); else only the program, as launched and after its execs.
 * *out NULL: uprobes. 0 or -errno (printed).
 */
int heap_launch__new(const char *exe, enum heap_backend want, enum heap_probes probes,
		     unsigned int sample, bool inherit, struct heap_launch **out,
		     const char **why);
/* The environment to exec the program with (environ + LD_PRELOAD + RSPROF_HEAP_DIR). */
char *const *heap_launch__env(const struct heap_launch *l);
/* Byte sampling (record --heap-sample-bytes): the mean bytes between two
 * tracked allocations, for every region of the launch. */
void heap_launch__sample_bytes(struct heap_launch *l, uint64_t bytes);
/* Removes the directory and what is in it. NULL ok. */
void heap_launch__delete(struct heap_launch *l);

/* "auto", "inject", "preload", "uprobe" to the enum; -1 when unknown. */
int heap_backend__parse(const char *name);
const char *heap_backend__name(enum heap_backend b);

/*
 * Start tracking: o->launch set, the in-process tracker (its region for
 * o->pid, which must not have exec'd yet); else load the BPF programs and
 * attach the uprobes. Errors (printed with the reason and a hint):
 * -EPERM no BPF permission, -ENOTSUP no BTF / BPF unsupported,
 * -RSPROF_ENODEBUG no allocator symbol found in the target (exit 5 when
 * heap tracking was all the user asked for).
 */
int heap__new(const struct heap_opts *o, struct heap **out);

/* What heap__collect() asks its caller: the process tree (util/record/process-tree.h). */
struct heap_hooks {
	/* the resolver of pid's address space now; NULL: unknown */
	struct resolver *(*resolver)(void *ctx, pid_t pid);
	/*
	 * A process of the tree the tracker found (it made its region: ppid,
	 * forked: its parent's code, not exec'd; exec: a new image of it) or
	 * saw end (exited). 0 or -errno.
	 */
	int (*process)(void *ctx, pid_t pid, pid_t ppid, bool forked, bool exec, bool exited);
	/* the file's id for a stack stored for the first time: 0 or -errno */
	int (*stack_id)(void *ctx, int64_t *id);
	void *ctx;
};

/*
 * Collect this checkpoint's heap deltas: reads the backend's per-stack
 * counters, attributes each stack to a site with the resolver of its
 * process (first user frame, caller, or innermost frame of the stack),
 * and fills cp->heap, cp->n_heap, cp->stacks, cp->n_stacks,
 * cp->heap_dropped and cp->heap_live_bytes. Rows and stacks carry the pid
 * whose addresses they hold (the launched or attached target's: h's pid).
 * Stack ids are the backend's 64-bit stack key >> 1 (stable across
 * --append; any value in 0..2^63). The arrays stay owned by h until the
 * next call.
 */
int heap__collect(struct heap *h, const struct heap_hooks *hooks, struct checkpoint *cp);

struct heap_stats {
	int64_t live_bytes, peak_bytes;
	uint64_t allocs, frees;
	uint64_t temporaries;	/* freed by their thread before its next allocation or free */
	bool has_temporaries;	/* the backend counts them (preload; not uprobes) */
	uint64_t unknown_frees, unknown_free_bytes;	/* memory allocated before tracking */
	bool free_sizes_unknown;	/* the allocator tells no size: unknown_free_bytes is 0 */
	uint64_t dropped;	/* tables full, lost events: never silent */
	const char *backend;	/* "preload", "inject", "uprobe" */
	const char *probes;	/* "rust", "libc" */
	unsigned int sample;
	bool started;		/* preload: the tracker claimed its region */
	bool no_headers;	/* preload: a process's allocator was another library's,
				 * whose blocks carry no header of the tracker's */
	uint64_t limited;	/* preload: processes of the tree under an address-space
				 * limit, not tracked */
};

void heap__stats(const struct heap *h, struct heap_stats *st);

/*
 * The allocation history (record --alloc-history, util/heap/history.h):
 * the tracker's events, each allocation with its site and stack resolved
 * as the checkpoint's rows are.
 */
struct heap_hist_rec {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t ptr, size;	/* size: an allocation's */
	uint64_t site;		/* an allocation's site (as heap_count.addr), 0: unknown */
	int64_t stack_id;	/* as heap_count.stack_id, -1: none */
	bool free;		/* the free of the block at ptr */
};
typedef int (*heap_hist_cb)(void *ctx, const struct heap_hist_rec *e);

struct heap_hist_stats {
	uint64_t events;	/* drained from the tracker */
	uint64_t dropped;	/* lost by the tracker: it gave up waiting, or no ring free */
	uint64_t rings;		/* threads with a ring */
	uint64_t wait_ns;	/* the program's threads waited for rsprof, in all */
	uint64_t waits;		/* times a thread waited */
	bool gave_up;		/* the tracker stopped waiting (rsprof gone or stuck) */
};

/* Is the history recorded (the in-process tracker, --alloc-history)? */
bool heap__has_history(const struct heap *h);
/* Before heap__collect(): take the events drained since the last take,
 * unless some taken before are still to be written. 0 or -ENOMEM. */
int heap__history_take(struct heap *h);
/*
 * The events taken, in time order, to cb until max_ns of time is spent
 * (0: no limit), the rest at the next call. After heap__collect() every
 * event taken before it has its stack known; between checkpoints
 * (known_only) the call stops at the first event of a stack not collected
 * yet, which waits for the next checkpoint. 0, or cb's error.
 */
int heap__history_each(struct heap *h, uint64_t max_ns, bool known_only, heap_hist_cb cb,
		       void *ctx);
/* The end of the recording: the last events, all of them, to cb. */
int heap__history_end(struct heap *h, heap_hist_cb cb, void *ctx);
void heap__history_stats(const struct heap *h, struct heap_hist_stats *st);
/* Is the tracker running (preload: it claimed its region; uprobes: attached)? */
bool heap__started(struct heap *h);
/*
 * Is offset off of the file path an instruction the heap backend probes
 * (uprobes)? A CPU sample taken in the kernel while the thread stood
 * there is the probe's cost, not the program's.
 */
bool heap__probe_at(struct heap *h, const char *path, uint64_t off);
/* Does the heap backend probe the program (uprobes)? */
bool heap__probes(const struct heap *h);
void heap__delete(struct heap *h);

#endif
