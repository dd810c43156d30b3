#ifndef RSPROF_UTIL_DB_ROWS_H
#define RSPROF_UTIL_DB_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The rows the writer puts in the file, as its producers hand them over
 * (util/record, util/heap): what one checkpoint carries. Storage defines
 * them so that it includes nothing of the producers.
 */
struct symbol;

struct cpu_count {
	uint64_t addr;
	uint64_t count;
	int pid;		/* v3: the process sampled; 0: not known */
};

struct heap_count {
	uint64_t addr;		/* the attributed site (a symbols.addr) */
	int64_t stack_id;	/* stacks.id, or -1 */
	int64_t alloc_bytes, free_bytes;
	int64_t alloc_count, free_count;
	int pid;		/* v3: the process allocating; 0: not known */
	int64_t temp_count;	/* v3: temporaries freed (heaptrack's); -1: not counted */
	int code_pid;		/* whose address space addr is in (not written) */
	int kind;		/* v3: heap_events.kind, 0 malloc, 1 anonymous mmap */
};

struct stack_rec {
	int64_t id;		/* from db_writer__stack_id(), unique in the file */
	uint64_t hash;
	const uint64_t *addrs;	/* frame addresses, innermost first; each also in symbols */
	int depth;
	int pid;		/* heap stacks: whose address space (not written) */
};

/* -g: samples per call stack in a checkpoint (a cpu_stacks row) */
struct stack_count {
	int64_t stack_id;
	uint64_t count;
};

/* One image of a process (a pid has one per exec): a row of the processes table. */
struct process_row {
	int pid, ppid;
	const char *comm, *exe;
	const char *cgroup;	/* its cgroup v2 path; NULL: not known */
	uint64_t start_ms;	/* fork, exec or start of the recording */
	int64_t end_ms;		/* exec or exit; -1 while running */
	uint64_t samples;	/* CPU samples so far */
};

/* One mapping of a process: a row of the `map` table. */
struct map_row {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	const char *perms;	/* "r-xp" */
	const char *path;	/* NULL for anonymous mappings */
	const char *build_id;	/* the file's build-id in hex; NULL: unknown */
};

/* The mappings of process pid, sorted by start. */
struct map_set {
	int pid;
	const struct map_row *v;
	size_t n;
};

/* One checkpoint's data, written in one transaction. */
struct checkpoint {
	uint64_t timestamp_ms;	/* from start_time */
	const struct cpu_count *cpu;
	size_t n_cpu;
	const struct heap_count *heap;
	size_t n_heap;
	/* the symbols rows of addresses no checkpoint had before: every addr a
	 * row refers to has its symbols row, written with its first checkpoint */
	const struct symbol *const *symbols;
	size_t n_symbols;
	const struct stack_rec *stacks;	/* new stacks */
	size_t n_stacks;
	/* v3: process images new or changed since the last checkpoint */
	const struct process_row *processes;
	size_t n_processes;
	/* per-checkpoint totals (schema v2 columns) */
	uint64_t lost_samples;
	uint64_t heap_dropped;
	int64_t heap_live_bytes;	/* live heap at the end of the interval */
	/* schema v3: the process's resident memory at the checkpoint */
	bool has_rss;			/* false: unknown (written as NULL) */
	int64_t rss_bytes, rss_anon_bytes;
	/* record -g: the samples per call stack (cpu_stacks rows), stacks written before */
	const struct stack_count *stack_counts;
	size_t n_stack_counts;
	/*
	 * What else the checkpoint carries, that its producer writes in the
	 * checkpoint's transaction once the rest is in (the allocation
	 * history, the mappings that changed: db_writer__write_maps()); its
	 * error rolls the whole checkpoint back. NULL: nothing.
	 */
	int (*also)(void *ctx, int64_t id);
	void *also_ctx;
};

#endif
