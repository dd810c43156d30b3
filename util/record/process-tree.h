#ifndef RSPROF_UTIL_RECORD_PROCESS_TREE_H
#define RSPROF_UTIL_RECORD_PROCESS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/db/rows.h"

/*
 * The processes of a recording and their address spaces, as perf's
 * side-band records tell them (util/record/sampler.h): a fork gives the
 * child its parent's address space, an exec a new one, each executable
 * mmap2 adds a mapping with its build-id. So a sample is placed in the
 * image its process ran at that moment: samples before an exec resolve
 * against the old program, after it against the new one, in the same
 * interval; a child that lived 5 ms resolves against its own libraries.
 *
 * One resolver per address space (made at its first symbol), shared by
 * the processes forked from one another without exec.
 *
 * Keys. The file stores one symbols row per address (seed 000: symbols.addr
 * is the primary key and cpu_samples joins on it), but two processes may
 * hold different code at one address (two non-PIE programs, a wrapper and
 * its child). An address is stored as itself when the code there is the
 * same (same file and offset, or the kernel) as the first process that
 * used it; otherwise with the address space's number in bits 48..62
 * (user addresses end below bit 47): addr & 0xffffffffffff is the address
 * in that process.
 */
struct process_tree;
struct resolver;
struct sampler_event;
struct symbol;

/*
 * t0_ns: CLOCK_MONOTONIC of the recording's time 0; ts_base_ms added to it
 * (--append); inherit: children are followed; kernel: kernel samples come,
 * read /proc/kallsyms now (while rsprof may still read its addresses).
 */
int process_tree__new(uint64_t t0_ns, uint64_t ts_base_ms, bool inherit, bool kernel,
		      struct process_tree **out);
void process_tree__delete(struct process_tree *pt);

/*
 * Every process of the host (record -a), hundreds of them running the same
 * files: an address is named once per file and offset (the first space to
 * meet it resolves it, the others take that symbol), a space's resolver is
 * made when it has an address nobody named yet (at the checkpoint, not at
 * its first sample) and freed after a checkpoint that did not use it, and
 * a process seen only in the kernel (a kernel thread) is a process too;
 * the address space of a program that ended is freed, its samples kept
 * with the first ended one of its executable. Memory then grows with the
 * code that runs, not with the processes.
 */
void process_tree__system_wide(struct process_tree *pt);

/*
 * A process there at the start: attached (from_proc: its mappings,
 * executable and comm from /proc), or launched and not yet exec'd (its
 * address space begins with its exec record).
 */
int process_tree__add(struct process_tree *pt, pid_t pid, bool from_proc);

/*
 * Without records (no perf events at all): pid's mappings read again from
 * /proc, a new address space when its executable changed. 0 or -errno.
 */
int process_tree__refresh(struct process_tree *pt, pid_t pid);

/*
 * A process the heap tracker found (util/heap/heap.h, heap_hooks) or saw
 * end. Unknown to the tree (no perf records: --no-cpu; or its records were
 * lost): a fork child of ppid that has not exec'd (forked) enters its
 * parent's address space; another is read from /proc, as is a known one
 * that exec'd (exec) when the tree has no records. exited: its image ends
 * at ms (without perf records nothing else says so). 0 or -ENOMEM.
 */
int process_tree__learn(struct process_tree *pt, pid_t pid, pid_t ppid, bool forked, bool exec,
			bool exited, uint64_t ms);

/* A fork, exec, exit or mmap record. 0 or -ENOMEM. */
int process_tree__event(struct process_tree *pt, const struct sampler_event *ev);

/* What an address given to process_tree__key() is. */
enum key_use {
	KEY_FRAME,		/* a frame of a call stack */
	KEY_SAMPLE,		/* a CPU sample's instruction: counted */
	KEY_HEAP_SITE,		/* a heap row's site: the program has data */
};

/*
 * The key of addr in pid's address space at the time of the last record
 * (see above); new keys are queued for process_tree__new_symbols(). A
 * sample is counted, a heap site noted, for process_tree__debuginfo().
 * 0 or -ENOMEM.
 */
int process_tree__key(struct process_tree *pt, pid_t pid, uint64_t addr, enum key_use use,
		      uint64_t *key);

/*
 * The key of the frame that ends a call stack which could not be unwound
 * to its first frame: no code's address (bits 48..62 all set, the address
 * part above every user address); its symbol is named "[truncated]".
 */
#define KEY_TRUNCATED	0x7fffffffffffffffULL
int process_tree__truncated_key(struct process_tree *pt, uint64_t *key);

/*
 * The key of the heap tracking's own time (a CPU sample taken while the
 * kernel handled one of the heap's uprobes), counted as a sample of pid:
 * its symbol is the "[rsprof heap tracking]" row, as the in-process
 * tracker's code is.
 */
#define KEY_HEAP_TRACKING	0x7ffffffffffffffeULL
/* The function of kernel address addr (NULL: unknown). */
const char *process_tree__kernel_fn(struct process_tree *pt, uint64_t addr);
int process_tree__tracking_key(struct process_tree *pt, pid_t pid, uint64_t *key);

/*
 * The symbols of the keys queued since the last call, each with addr set
 * to its key: *syms (owned by the tree, valid until the next call), *n.
 * 0 or -ENOMEM.
 */
int process_tree__new_symbols(struct process_tree *pt, const struct symbol *const **syms,
			      size_t *n);

/* The resolver of the address space with the most samples so far and its executable. */
struct resolver *process_tree__busiest(struct process_tree *pt, const char **exe);

/* The resolver of pid's current address space, made if needed; NULL when unknown. */
struct resolver *process_tree__resolver(struct process_tree *pt, pid_t pid);

/* The rows changed since the last call: *rows owned by the tree until the next call. */
int process_tree__changed_rows(struct process_tree *pt, const struct process_row **rows,
			       size_t *n);

/* The mappings of each address space that changed since the last call: cb for each (pid in maps). */
struct maps;
int process_tree__changed_maps(struct process_tree *pt,
			       int (*cb)(void *ctx, const struct maps *m), void *ctx);

/* The current executable of pid (NULL when unknown). */
const char *process_tree__exe(struct process_tree *pt, pid_t pid);

/*
 * After a checkpoint: the resolvers of address spaces no process uses any
 * more are freed (their symbols are in the file); the others give back
 * the file pages their lookups touched (resolver__release_pages()).
 */
void process_tree__gc(struct process_tree *pt);

/*
 * Debug information of the programs that ran: for each executable with
 * data, user samples or heap sites (or, when none had any, each executable
 * exec'd or attached), cb gets its path, its samples and the resolver's
 * verdict (0 DWARF lines, 1 symbol table only, -RSPROF_ENODEBUG neither).
 */
int process_tree__debuginfo(struct process_tree *pt,
			    void (*cb)(void *ctx, const char *exe, uint64_t samples, int verdict),
			    void *ctx);

/* How many of the symbols handed out have a name (a function): 0 when nothing
 * recorded could be named at all. */
uint64_t process_tree__named(const struct process_tree *pt);

/* How many address spaces (programs) and processes the recording saw. */
void process_tree__counts(const struct process_tree *pt, size_t *processes, size_t *spaces);

#endif
