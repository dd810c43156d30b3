#ifndef RSPROF_UTIL_RECORD_SAMPLER_H
#define RSPROF_UTIL_RECORD_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * CPU sampling: PERF_TYPE_SOFTWARE/PERF_COUNT_SW_CPU_CLOCK at a
 * frequency, user and kernel time (or user time only), with the side-band
 * records that say what the sampled processes are: fork, exec (comm),
 * exit and every executable mapping (mmap2, with its build-id).
 *
 * Two ways of following the target, as perf record has:
 *
 * - inherit (the default): per-CPU events on each target thread with
 *   attr.inherit, so every thread and child process the target starts is
 *   sampled from its first instruction by events the kernel copies at
 *   fork; their samples come with their own pid/tid into one ring per CPU
 *   (the kernel refuses mmap on inherited per-thread events, and events
 *   on one CPU can share a ring through PERF_EVENT_IOC_SET_OUTPUT).
 * - no inherit: one event and ring per thread of the target processes, new
 *   threads found by sampler__rescan(); child processes are not followed.
 * - system-wide (record -a, as `perf record -a`): one event and ring per
 *   CPU for every process (pid -1), no inherit; the side-band records of
 *   every process come with them.
 *
 * sampler__drain() copies the rings' records, orders them by time across
 * rings (an exec on one CPU and the next sample on another) and hands
 * them to a callback, keeping back the last millisecond for the next
 * drain: a record from another ring may still be on its way.
 */
struct sampler;

struct sampler_opts {
	const pid_t *pids;		/* processes to sample */
	size_t n_pids;
	unsigned int freq;		/* Hz */
	bool call_graph;		/* PERF_SAMPLE_CALLCHAIN, user frames only */
	unsigned int stack_copy;	/* with call_graph: bytes of the user stack copied
					 * with each sample, with the user %rip, %rsp and
					 * %rbp (0: none), a multiple of 8 */
	bool enable_on_exec;		/* launched target stopped before exec */
	bool inherit;			/* follow new threads and child processes */
	bool user_only;			/* exclude the kernel */
	bool sideband_only;		/* no samples, the records only (--no-cpu) */
	bool system_wide;		/* every process on every CPU; pids unused */
	bool user_ip;			/* the user %rip with each sample, also of one in
					 * the kernel (the heap's uprobes: a kernel sample
					 * stopped at a probe is the tracking's time) */
};

/*
 * Opens events on every thread of the processes. Errors are printed:
 * -ESRCH no such process, -EPERM/-EACCES not allowed (with the paranoid
 * value or capability in the hint), -errno otherwise. Kernel samples that
 * the kernel refuses (perf_event_paranoid) fall back to user time with a
 * warning: sampler__user_only() tells.
 */
int sampler__new(const struct sampler_opts *o, struct sampler **out);

/* Whether kernel time is left out (asked for, or not allowed). */
bool sampler__user_only(const struct sampler *s);

/*
 * A launched target has exec'd: the events of threads found from now on
 * start enabled (enable_on_exec would wait for another exec).
 */
void sampler__exec_done(struct sampler *s);

/*
 * Without inherit: pick up new threads, mark exited ones (closed by the
 * next drain). Returns how many threads appeared or exited, -ESRCH when
 * every target process is gone. With inherit the kernel follows the
 * threads: returns 0.
 */
int sampler__rescan(struct sampler *s);

enum sampler_ev_type {
	SEV_SAMPLE,
	SEV_COMM,	/* comm changed; exec when .exec */
	SEV_FORK,	/* a new thread (pid == ppid) or process */
	SEV_EXIT,	/* a thread (or, when pid == tid, the process) ended */
	SEV_MMAP,	/* an executable mapping */
};

enum sampler_reg { SREG_BP, SREG_SP, SREG_IP };

/* One record. Pointers are valid during the callback only. */
struct sampler_event {
	enum sampler_ev_type type;
	uint64_t time;			/* CLOCK_MONOTONIC, ns */
	pid_t pid, tid;
	/* SEV_SAMPLE: the IP and, with call_graph, the user callchain
	 * (innermost first, context markers removed; chain[0] is normally ip,
	 * or the user frame below a kernel ip; the return addresses after the
	 * first user frame are stored minus 1: the call instruction) */
	uint64_t ip;
	bool kernel;			/* ip is in the kernel */
	const uint64_t *chain;
	unsigned int depth;
	/* with call_graph and kernel samples: the kernel's own chain of a
	 * kernel ip (innermost first, kchain[0] normally ip); kdepth 0: none */
	const uint64_t *kchain;
	unsigned int kdepth;
	/* SEV_SAMPLE with stack_copy: the user registers where the thread was
	 * in user space (user_regs false: none, a kernel thread) and the copy
	 * of its stack from regs[SREG_SP], stack_len bytes */
	bool user_regs;
	uint64_t regs[3];		/* enum sampler_reg */
	/* with user_ip: where the thread was in user space (0: unknown) */
	uint64_t user_ip;
	const unsigned char *stack;
	uint64_t stack_len;
	/* SEV_COMM */
	const char *comm;
	bool exec;
	/* SEV_FORK, SEV_EXIT */
	pid_t ppid, ptid;
	/* SEV_MMAP */
	uint64_t start, len, pgoff;
	uint32_t prot;
	const char *filename;		/* "//anon", "[vdso]", a path */
	const unsigned char *build_id;	/* NULL when the kernel gave none */
	unsigned int build_id_len;
};

typedef void (*sampler_cb)(void *ctx, const struct sampler_event *ev);

/*
 * Drain every ring; deliver the records in time order. With all, nothing
 * is kept back (the end of a recording). Returns the number of samples
 * delivered.
 */
uint64_t sampler__drain(struct sampler *s, bool all, sampler_cb cb, void *ctx);

struct sampler_stats {
	uint64_t samples;	/* delivered since sampler__new() */
	uint64_t lost;		/* PERF_RECORD_LOST totals */
	uint64_t threads;	/* running now (as far as the records tell) */
	uint64_t threads_seen;	/* ever sampled or started */
	uint64_t processes_seen;
};

void sampler__stats(const struct sampler *s, struct sampler_stats *st);
/* Drains nothing; closes every event and unmaps. NULL ok. */
void sampler__delete(struct sampler *s);

#endif
