#include "util/record/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/duration.h"
#include "util/error.h"
#include "util/options.h"

#define DEFAULT_FREQ		99
#define DEFAULT_INTERVAL_MS	1000
#define MIN_INTERVAL_MS		10

struct record_args record_args;

struct poptOption options_record[] = {
	{ "output", 'o', POPT_ARG_STRING, &record_args.output, 0,
	  "write the profile to FILE (default rsprof.COMM.YYMMDDhhmmss.db)", "FILE" },
	{ "freq", 'F', POPT_ARG_STRING, &record_args.freq, 0,
	  "CPU sampling frequency (default 99)", "HZ" },
	{ "interval", 'i', POPT_ARG_STRING, &record_args.interval, 0,
	  "time between checkpoints (default 1s)", "DUR" },
	{ "duration", 'd', POPT_ARG_STRING, &record_args.duration, 0,
	  "stop after DUR (default: until interrupted or the target exits)", "DUR" },
	{ "retain", 0, POPT_ARG_STRING, &record_args.retain, 0,
	  "keep the last DUR as recorded, fold older checkpoints 60 into one "
	  "(1s into 1m; 3,600 into one past 60 x DUR)", "DUR" },
	{ "compact-after", 0, POPT_ARG_STRING, &record_args.compact_after, 0,
	  "pack checkpoints older than DUR, the seed-000 tables keeping one row per "
	  "address for 60 of them (default 5m; 0: never)", "DUR" },
	{ "quiet", 'q', POPT_ARG_NONE, &record_args.quiet, 0,
	  "no status line and no summary", NULL },
	{ "no-heap", 0, POPT_ARG_NONE, &record_args.no_heap, 0,
	  "do not track the heap", NULL },
	{ "no-cpu", 0, POPT_ARG_NONE, &record_args.no_cpu, 0,
	  "do not sample the CPU (heap only)", NULL },
	{ NULL, 'g', POPT_ARG_NONE, &record_args.call_graph, 0,
	  "record call stacks with the CPU samples (--call-graph dwarf)", NULL },
	{ "call-graph", 0, POPT_ARG_STRING, &record_args.call_graph_mode, 0,
	  "record call stacks: dwarf[,SIZE] (the user stack copied, SIZE bytes, default "
	  "8192, unwound through the code's CFI: code with or without frame pointers), "
	  "or fp (the frame-pointer chain only)", "MODE" },
	{ "append", 0, POPT_ARG_NONE, &record_args.append, 0,
	  "add to an existing profile instead of refusing to overwrite it", NULL },
	{ "user-only", 0, POPT_ARG_NONE, &record_args.user_only, 0,
	  "sample user time only (CPU% then shares of user time, not of all CPU time)", NULL },
	{ "heap-backend", 0, POPT_ARG_STRING, &record_args.heap_backend, 0,
	  "how to track the heap: auto, inject (the in-process tracker put into a "
	  "running process), preload (into a launched program) or uprobe (default "
	  "auto: inject or preload, uprobes where they cannot work)", "KIND" },
	{ "heap-probes", 0, POPT_ARG_STRING, &record_args.heap_probes, 0,
	  "allocator to probe with uprobes: auto, rust or libc (default auto)", "KIND" },
	{ "heap-sample", 0, POPT_ARG_STRING, &record_args.heap_sample, 0,
	  "track one allocation in N (default 1: all)", "N" },
	{ "heap-sample-bytes", 0, POPT_ARG_STRING, &record_args.heap_sample_bytes, 0,
	  "track one allocation per SIZE bytes allocated on average (e.g. 512K), figures "
	  "scaled without bias: cheap enough to leave on (in-process tracker)", "SIZE" },
	{ "heap-attribution", 0, POPT_ARG_STRING, &record_args.heap_attribution, 0,
	  "where an allocation is counted: first-user, caller or stack "
	  "(default first-user)", "MODE" },
	{ "alloc-fn", 0, POPT_ARG_ARGV, &record_args.alloc_fn, 0,
	  "NAME is an allocation wrapper: its callers are the sites (a glob; repeatable; "
	  "kept in the profile for report)", "NAME" },
	{ "alloc-history", 0, POPT_ARG_NONE, &record_args.alloc_history, 0,
	  "keep every allocation and free (address, size, site, times) for 'rsprof history' "
	  "(a launched program, in-process tracker); the program waits for rsprof rather "
	  "than lose any (the summary says how long)", NULL },
	POPT_TABLEEND
};

/* A positive integer within [min, max]; -EINVAL otherwise. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned int *v)
{
	unsigned long n;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n < min || n > max)
		return -EINVAL;
	*v = (unsigned int)n;
	return 0;
}

/* A size in bytes, 1 to 1 GiB: a number with K, M or G (powers of 1024,
 * "KiB", "KB", "k" alike) or none. -EINVAL otherwise. */
static int parse_size(const char *s, uint64_t *v)
{
	unsigned long long n, mul = 1;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		mul = 1ULL << 10;
		break;
	case 'm': case 'M':
		mul = 1ULL << 20;
		break;
	case 'g': case 'G':
		mul = 1ULL << 30;
		break;
	}
	if (mul > 1) {
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B')
			end++;
	} else if (*end == 'B') {
		end++;
	}
	if (*end || !n || n > (1ULL << 30) / mul)
		return -EINVAL;
	*v = n * mul;
	return 0;
}

static unsigned long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long v = 100000;

	if (!f)
		return v;
	if (fscanf(f, "%lu", &v) != 1 || v == 0)
		v = 100000;
	fclose(f);
	return v;
}

static int get_freq(const char *arg, unsigned int *freq)
{
	const char *env = getenv("RSPROF_CPU_FREQ");
	const char *s = arg ? arg : env;
	unsigned long max = max_sample_rate();

	*freq = DEFAULT_FREQ;
	if (!s || (!arg && !*s))
		return 0;
	if (parse_uint(s, 1, max, freq)) {
		pr_err("%s '%s' is not a frequency between 1 and %lu Hz",
		       arg ? "-F/--freq" : "RSPROF_CPU_FREQ", s, max);
		if (max < 100000)
			pr_hint("the kernel allows at most %lu (kernel.perf_event_max_sample_rate)",
				max);
		return -RSPROF_EUSAGE;
	}
	return 0;
}

#define STACK_COPY_DEFAULT	8192
#define STACK_COPY_FP		512	/* the sampled frame's own return address */
#define STACK_COPY_MAX		65528	/* the kernel's limit */

/* --call-graph MODE (or -g): fp, dwarf, dwarf,SIZE. */
static int get_call_graph(struct record_opts *o)
{
	const char *m = record_args.call_graph_mode;
	unsigned int size = STACK_COPY_DEFAULT;

	o->call_graph = record_args.call_graph || m;
	o->stack_copy = STACK_COPY_DEFAULT;
	/*
	 * -a -g: frame pointers; unwinding stack copies needs the call frame
	 * information of every program of the host at once (--call-graph
	 * dwarf asks for it)
	 */
	if (!m && o->all)
		m = "fp";
	if (!m)
		return 0;
	if (!strcmp(m, "fp")) {
		o->call_graph_fp = true;
		/* -a: the kernel's frame-pointer chain alone, no CFI for the sampled frame */
		o->stack_copy = o->all ? 0 : STACK_COPY_FP;
		return 0;
	}
	if (!strncmp(m, "dwarf", 5) && (!m[5] || (m[5] == ',' &&
	    !parse_uint(m + 6, 8, STACK_COPY_MAX, &size) && !(size & 7)))) {
		o->stack_copy = size;
		return 0;
	}
	pr_err("--call-graph: '%s' is not fp, dwarf or dwarf,SIZE", m);
	pr_hint("SIZE: the bytes of stack copied with each sample, a multiple of 8 up to %d "
		"(default %d)", STACK_COPY_MAX, STACK_COPY_DEFAULT);
	return -RSPROF_EUSAGE;
}

static int get_duration(const char *what, const char *s, uint64_t *ms)
{
	if (duration__parse(s, ms)) {
		pr_err("%s: '%s' is not a duration", what, s);
		pr_hint("use e.g. 30s, 5m, 1h30m, 250ms or a number of seconds");
		return -RSPROF_EUSAGE;
	}
	return 0;
}

static int get_heap(struct record_opts *o)
{
	const char *p = record_args.heap_probes, *a = record_args.heap_attribution;
	const char *b = record_args.heap_backend;
	int be = HEAP_BACKEND_AUTO;

	if (b && (be = heap_backend__parse(b)) < 0) {
		pr_err("--heap-backend: '%s' is not one of auto, inject, preload, uprobe", b);
		return -RSPROF_EUSAGE;
	}
	if (be == HEAP_BACKEND_PRELOAD && !o->argv) {
		pr_err("--heap-backend preload: preloading needs a program rsprof launches "
		       "(-- COMMAND)");
		pr_hint("a running process (-p, -P) gets the tracker with --heap-backend inject");
		return -RSPROF_EUSAGE;
	}
	if (be == HEAP_BACKEND_INJECT && o->argv) {
		pr_err("--heap-backend inject: injection is for a running process (-p, -P)");
		pr_hint("a program rsprof launches gets the tracker with --heap-backend preload");
		return -RSPROF_EUSAGE;
	}
	if ((be == HEAP_BACKEND_PRELOAD || be == HEAP_BACKEND_INJECT) && p && !strcmp(p, "rust")) {
		pr_err("--heap-probes rust is for uprobes; the in-process tracker sees malloc");
		pr_hint("use --heap-backend uprobe with it");
		return -RSPROF_EUSAGE;
	}
	if (be == HEAP_BACKEND_AUTO && p && !strcmp(p, "rust"))
		be = HEAP_BACKEND_UPROBE;	/* probes of the Rust allocator: uprobes */
	o->heap_backend = (enum heap_backend)be;
	o->alloc_history = record_args.alloc_history;
	if (o->alloc_history && (be == HEAP_BACKEND_UPROBE || !o->heap)) {
		pr_err("--alloc-history: %s", !o->heap ? "the history is of the heap: not with "
		       "--no-heap" : "every allocation and free comes from the in-process tracker, "
		       "not uprobes");
		pr_hint("rsprof record --alloc-history -- COMMAND [ARGS...], or -p PID without "
			"--heap-backend uprobe");
		return -RSPROF_EUSAGE;
	}

	o->heap_probes = HEAP_PROBES_AUTO;
	if (p) {
		if (!strcmp(p, "auto")) {
			o->heap_probes = HEAP_PROBES_AUTO;
		} else if (!strcmp(p, "rust")) {
			o->heap_probes = HEAP_PROBES_RUST;
		} else if (!strcmp(p, "libc")) {
			o->heap_probes = HEAP_PROBES_LIBC;
		} else {
			pr_err("--heap-probes: '%s' is not one of auto, rust, libc", p);
			return -RSPROF_EUSAGE;
		}
	}
	o->heap_attribution = ATTR_FIRST_USER;
	if (a) {
		if (!strcmp(a, "first-user")) {
			o->heap_attribution = ATTR_FIRST_USER;
		} else if (!strcmp(a, "caller")) {
			o->heap_attribution = ATTR_CALLER;
		} else if (!strcmp(a, "stack")) {
			o->heap_attribution = ATTR_STACK;
		} else {
			pr_err("--heap-attribution: '%s' is not one of first-user, caller, stack", a);
			return -RSPROF_EUSAGE;
		}
	}
	for (size_t i = 0; record_args.alloc_fn && record_args.alloc_fn[i]; i++) {
		const char *f = record_args.alloc_fn[i];

		if (!*f || strchr(f, '\n')) {
			pr_err("--alloc-fn: '%s' is not a function name or pattern", f);
			return -RSPROF_EUSAGE;
		}
	}
	o->alloc_fn = record_args.alloc_fn;
	o->heap_sample = 1;
	if (record_args.heap_sample &&
	    parse_uint(record_args.heap_sample, 1, 1000000, &o->heap_sample)) {
		pr_err("--heap-sample: '%s' is not a number between 1 and 1000000",
		       record_args.heap_sample);
		return -RSPROF_EUSAGE;
	}
	if (record_args.heap_sample_bytes &&
	    parse_size(record_args.heap_sample_bytes, &o->heap_sample_bytes)) {
		pr_err("--heap-sample-bytes: '%s' is not a size between 1 and 1G (e.g. 512K)",
		       record_args.heap_sample_bytes);
		return -RSPROF_EUSAGE;
	}
	if (o->heap_sample_bytes && o->heap_sample > 1) {
		pr_err("--heap-sample and --heap-sample-bytes: choose one");
		pr_hint("--heap-sample-bytes estimates without bias; --heap-sample N counts "
			"large blocks N times or never");
		return -RSPROF_EUSAGE;
	}
	return 0;
}

/* -p PID[,PID...], as often as given: into o->pids, each once. */
static int get_pids(struct record_opts *o)
{
	for (const char **a = target_args.pid_args; a && *a; a++) {
		const char *p = *a;

		for (;;) {
			size_t len = strcspn(p, ",");
			char one[32];
			unsigned int v;
			size_t i;

			snprintf(one, sizeof(one), "%.*s", (int)(len < 31 ? len : 31), p);
			if (len >= sizeof(one) || parse_uint(one, 1, 2147483647, &v)) {
				pr_err("-p/--pid: '%.*s' is not a process ID", (int)len, p);
				pr_hint("give PIDs as numbers: -p 4242, -p 4242,4243 or -p 4242 -p 4243");
				return -RSPROF_EUSAGE;
			}
			for (i = 0; i < o->n_pids && o->pids[i] != (pid_t)v; i++)
				;
			if (i == o->n_pids) {
				if (o->n_pids == RECORD_MAX_PIDS) {
					pr_err("-p/--pid: more than %d processes", RECORD_MAX_PIDS);
					return -RSPROF_EUSAGE;
				}
				o->pids[o->n_pids++] = (pid_t)v;
			}
			if (!p[len])
				break;
			p += len + 1;
		}
	}
	return 0;
}

int record_opts__from_args(struct record_opts *o, const char *const *cmd)
{
	const char *env_interval = getenv("RSPROF_INTERVAL");
	const char *dir = getenv("RSPROF_OUTPUT_DIR");
	int targets = 0, err;

	memset(o, 0, sizeof(*o));
	err = get_pids(o);
	if (err)
		return err;
	if (o->n_pids)
		targets++;
	if (target_args.process)
		targets++;
	if (cmd && cmd[0])
		targets++;
	if (record_args.all_cpus)
		targets++;
	if (targets != 1) {
		pr_err(targets ? "give only one target: -p PID, -P NAME, -a or -- COMMAND"
			       : "no target: give -p PID, -P NAME, -a or -- COMMAND");
		return -RSPROF_EUSAGE;
	}
	if ((record_args.comm || record_args.cgroup) && !record_args.all_cpus) {
		pr_err("--comm and --cgroup narrow a recording of every process (-a)");
		pr_hint("a process by name is -P NAME");
		return -RSPROF_EUSAGE;
	}
	if (record_args.comm && !*record_args.comm) {
		pr_err("--comm: the name is empty");
		return -RSPROF_EUSAGE;
	}
	o->all = record_args.all_cpus;
	o->comm = record_args.comm;
	o->cgroup = record_args.cgroup;
	if (target_args.process && !*target_args.process) {
		pr_err("-P/--process: the name is empty");
		return -RSPROF_EUSAGE;
	}
	o->pid = o->n_pids ? o->pids[0] : 0;
	o->process = target_args.process;
	o->inherit = !target_args.no_inherit;
	o->user_only = record_args.user_only;
	o->argv = cmd && cmd[0] ? cmd : NULL;

	o->output = record_args.output;
	if (o->output && !*o->output) {
		pr_err("-o/--output: the file name is empty");
		return -RSPROF_EUSAGE;
	}
	o->output_dir = dir && *dir ? dir : NULL;

	err = get_freq(record_args.freq, &o->freq);
	if (err)
		return err;
	o->interval_ms = DEFAULT_INTERVAL_MS;
	if (record_args.interval)
		err = get_duration("-i/--interval", record_args.interval, &o->interval_ms);
	else if (env_interval && *env_interval)
		err = get_duration("RSPROF_INTERVAL", env_interval, &o->interval_ms);
	if (err)
		return err;
	if (o->interval_ms < MIN_INTERVAL_MS) {
		pr_err("the checkpoint interval must be at least %dms", MIN_INTERVAL_MS);
		return -RSPROF_EUSAGE;
	}
	if (record_args.duration) {
		err = get_duration("-d/--duration", record_args.duration, &o->duration_ms);
		if (err)
			return err;
		if (!o->duration_ms) {
			pr_err("-d/--duration: '%s' is zero", record_args.duration);
			return -RSPROF_EUSAGE;
		}
	}
	if (record_args.retain) {
		err = get_duration("--retain", record_args.retain, &o->retain_ms);
		if (err)
			return err;
		if (!o->retain_ms) {
			pr_err("--retain: '%s' is zero", record_args.retain);
			pr_hint("leave --retain out to keep every checkpoint");
			return -RSPROF_EUSAGE;
		}
	}
	if (record_args.compact_after) {
		err = get_duration("--compact-after", record_args.compact_after, &o->compact_ms);
		if (err)
			return err;
		o->compact_set = true;
	}
	if (record_args.no_cpu && record_args.no_heap) {
		pr_err("--no-cpu and --no-heap leave nothing to record");
		return -RSPROF_EUSAGE;
	}
	if (o->all && record_args.no_cpu) {
		pr_err("-a records the CPU of every process: not with --no-cpu");
		pr_hint("the heap is tracked per process: -p PID or -- COMMAND");
		return -RSPROF_EUSAGE;
	}
	o->cpu = !record_args.no_cpu;
	/* the heap is tracked per process (an in-process tracker or uprobes): -a is CPU */
	o->heap = !record_args.no_heap && !o->all;
	o->heap_required = record_args.no_cpu;
	err = get_call_graph(o);
	if (err)
		return err;
	o->append = record_args.append;
	if (o->append && !o->output) {
		pr_err("--append needs the profile to add to: give it with -o FILE");
		return -RSPROF_EUSAGE;
	}
	return get_heap(o);
}

void record_args__free(void)
{
	for (size_t i = 0; record_args.alloc_fn && record_args.alloc_fn[i]; i++)
		free((char *)record_args.alloc_fn[i]);
	free(record_args.alloc_fn);
	record_args.alloc_fn = NULL;
}
