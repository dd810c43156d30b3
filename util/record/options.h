#ifndef RSPROF_UTIL_RECORD_OPTIONS_H
#define RSPROF_UTIL_RECORD_OPTIONS_H

#include <popt.h>

#include "util/record/recorder.h"

/*
 * The recording options shared by `record` and `top` (pulled into their popt
 * tables with POPT_ARG_INCLUDE_TABLE next to options_target), and their
 * conversion, with the environment (RSPROF_OUTPUT_DIR, RSPROF_INTERVAL,
 * RSPROF_CPU_FREQ), into struct record_opts.
 */
struct record_args {
	const char *output;
	const char *freq;
	const char *interval;
	const char *duration;
	const char *retain;
	const char *compact_after;
	int quiet;
	int no_heap;
	int no_cpu;
	int call_graph;
	const char *call_graph_mode;
	int append;
	int user_only;
	const char *heap_backend;
	const char *heap_probes;
	const char *heap_sample;
	const char *heap_sample_bytes;
	const char *heap_attribution;
	const char **alloc_fn;		/* --alloc-fn, repeatable (popt's, NULL-terminated) */
	int alloc_history;
	/* record -a (record's own options, not top's) */
	int all_cpus;
	const char *comm;
	const char *cgroup;
};

extern struct record_args record_args;
extern struct poptOption options_record[];

/*
 * Fill o from record_args, target_args (-p, -P), the environment and cmd
 * (the command to launch, NULL-terminated, or NULL/empty when attaching).
 * o->argv points into cmd. Prints what is wrong and returns -RSPROF_EUSAGE,
 * or 0.
 */
int record_opts__from_args(struct record_opts *o, const char *const *cmd);

/* Frees what popt allocated for record_args (the --alloc-fn list). */
void record_args__free(void);

#endif
