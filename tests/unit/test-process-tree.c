/*
 * util/record/process-tree.c in a recording of every process (record -a):
 * processes that fork, exec a program, get a sample and exit, 20,000 of
 * them, cost the tree no memory per process once they have ended (the
 * heap in use after 2,000 and after 20,000 differ by less than 64 KiB;
 * 125 bytes a process before ended spaces were freed), and the samples of
 * the ended ones still add up per executable for the debug information
 * report, one line per program.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/record/maps.h"
#include "util/record/process-tree.h"
#include "util/record/sampler.h"

#define N 20000

static const char *const exes[] = { "/usr/bin/true", "/usr/bin/false" };

struct seen {
	int lines;
	uint64_t samples[2];
};

static void debug_cb(void *ctx, const char *exe, uint64_t samples, int verdict)
{
	struct seen *s = ctx;

	s->lines++;
	for (int i = 0; i < 2; i++)
		if (!strcmp(exe, exes[i]))
			s->samples[i] += samples;
}

static int no_maps(void *ctx, const struct maps *m)
{
	return 0;
}

/* One checkpoint: what the checkpoint writer asks of the tree, then its gc. */
static int checkpoint(struct process_tree *pt)
{
	const struct symbol *const *syms;
	const struct process_row *rows;
	size_t n;

	if (process_tree__new_symbols(pt, &syms, &n) || process_tree__changed_rows(pt, &rows, &n) ||
	    process_tree__changed_maps(pt, no_maps, NULL))
		return -1;
	process_tree__gc(pt);
	return 0;
}

/* pid forks from 1, execs exe, maps it, gets one sample and exits. */
static int one_process(struct process_tree *pt, pid_t pid, const char *exe, uint64_t t)
{
	struct sampler_event ev = { .type = SEV_FORK, .time = t, .pid = pid, .tid = pid,
				    .ppid = 1, .ptid = 1 };
	uint64_t key;

	if (process_tree__event(pt, &ev))
		return -1;
	ev = (struct sampler_event){ .type = SEV_COMM, .time = t + 1, .pid = pid, .tid = pid,
				     .comm = "prog", .exec = true };
	if (process_tree__event(pt, &ev))
		return -1;
	ev = (struct sampler_event){ .type = SEV_MMAP, .time = t + 2, .pid = pid, .tid = pid,
				     .start = 0x555555554000ULL, .len = 0x4000, .pgoff = 0x2000,
				     .prot = 5, .filename = exe };
	if (process_tree__event(pt, &ev) ||
	    process_tree__key(pt, pid, 0x555555554100ULL, KEY_SAMPLE, &key))
		return -1;
	ev = (struct sampler_event){ .type = SEV_EXIT, .time = t + 3, .pid = pid, .tid = pid,
				     .ppid = 1, .ptid = 1 };
	return process_tree__event(pt, &ev);
}

int main(void)
{
	struct process_tree *pt;
	size_t at_start = 0, at_end, procs, spaces;
	struct seen s = { 0 };
	int err = 0;

	if (process_tree__new(0, 0, true, false, &pt)) {
		ok(0, "a process tree");
		return done_testing();
	}
	process_tree__system_wide(pt);
	for (int i = 0; i < N && !err; i++) {
		err = one_process(pt, 2000 + i % 30000, exes[i % 2], (uint64_t)i * 1000000);
		if (!err && i % 100 == 99)
			err = checkpoint(pt);
		if (i + 1 == N / 10)
			at_start = mallinfo2().uordblks;
	}
	at_end = mallinfo2().uordblks;
	is_int(err, 0, "%d processes went through the tree", N);
	/* 0 and 0 where malloc is not glibc's (ASan, valgrind) */
	ok(at_end < at_start + 64 * 1024, "heap in use after %d processes %zu KiB, after %d %zu KiB",
	   N / 10, at_start / 1024, N, at_end / 1024);
	process_tree__counts(pt, &procs, &spaces);
	/* and pid 1, their parent, as /proc shows it */
	is_int((int)procs, N + 1, "every process counted");
	ok(spaces >= N, "every program counted (%zu)", spaces);
	process_tree__debuginfo(pt, debug_cb, &s);
	is_int(s.lines, 2, "one debug information line per executable");
	is_int((int)s.samples[0], N / 2, "%s: the samples of all its processes", exes[0]);
	is_int((int)s.samples[1], N / 2, "%s: the samples of all its processes", exes[1]);
	process_tree__delete(pt);
	return done_testing();
}
