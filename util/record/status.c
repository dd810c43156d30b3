#include "util/record/status.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/duration.h"
#include "util/output/escape.h"
#include "util/output/format.h"
#include "util/error.h"

bool status__is_live(FILE *f)
{
	const char *term = getenv("TERM");

	return isatty(fileno(f)) && !(term && !strcmp(term, "dumb"));
}

void status__line(FILE *f, const struct recorder_stats *st)
{
	char el[32], live[32];

	duration__format(st->elapsed_ms, el, sizeof(el));
	fprintf(f, "\r[ rsprof: %s, %llu samples, %llu lost", el,
		(unsigned long long)st->samples, (unsigned long long)st->lost);
	if (st->heap_on)
		fprintf(f, ", heap %s live", format__bytes(st->live_bytes, live, sizeof(live)));
	fprintf(f, ", %llu checkpoint%s, %llu thread%s",
		(unsigned long long)st->checkpoints, st->checkpoints == 1 ? "" : "s",
		(unsigned long long)st->threads, st->threads == 1 ? "" : "s");
	if (st->push_on)
		fprintf(f, ", pushed %llu, queued %llu, failed %llu",
			(unsigned long long)st->pushed, (unsigned long long)st->push_queued,
			(unsigned long long)st->push_failed);
	fputs(" ]\033[K", f);
	fflush(f);
}

void status__clear(FILE *f)
{
	fputs("\r\033[K", f);
	fflush(f);
}

/*
 * What the uprobes cost the program, said up front: each allocation and
 * free traps into the kernel, whose handling and the BPF program run on
 * the program's thread. Measured from the CPU samples taken there (the
 * [rsprof heap tracking] row) when the CPU is sampled.
 */
static void uprobe_cost(FILE *f, const struct recorder_stats *st)
{
	char a[32];

	if (st->freq && st->allocs && st->tracking_samples) {
		double ns = (double)st->tracking_samples * 1e9 / st->freq / (double)st->allocs;

		fprintf(f, "[ the uprobes cost the program ~%s of CPU per allocation with its free"
			" (the [rsprof heap tracking] row); the in-process tracker, where it can"
			" run: ~0.05 us ]\n",
			ns >= 1000 ? (snprintf(a, sizeof(a), "%.1f us", ns / 1000), a) :
				     (snprintf(a, sizeof(a), "%.0f ns", ns), a));
	} else {
		fputs("[ the uprobes cost the program a trap into the kernel per allocation and per"
		      " free, ~1-20 us each (the in-process tracker of a launched program:"
		      " ~0.05 us) ]\n", f);
	}
}

void status__summary(FILE *f, const struct recorder_stats *st, const char *path,
		     const char *stop_reason, bool written)
{
	char el[32], b1[32], b2[32];

	duration__format(st->elapsed_ms, el, sizeof(el));
	/* "rsprof record" or "rsprof top": the command that recorded */
	fprintf(f, "[ %s: %s recorded, %llu sample%s", rsprof_cmd_name, el,
		(unsigned long long)st->samples, st->samples == 1 ? "" : "s");
	if (st->processes > 1)
		fprintf(f, " in %llu processes", (unsigned long long)st->processes);
	fprintf(f, ", %llu checkpoint%s", (unsigned long long)st->checkpoints,
		st->checkpoints == 1 ? "" : "s");
	if (stop_reason)
		fprintf(f, ", stopped by %s", stop_reason);
	fputs(" ]\n", f);
	if (st->heap_on) {
		char n1[32], n2[32];

		fprintf(f, "[ heap: %s live at the end, %s peak, %s allocation%s, %s free%s",
			format__bytes(st->live_bytes, b1, sizeof(b1)),
			format__bytes(st->peak_bytes, b2, sizeof(b2)),
			format__count(st->allocs, n1, sizeof(n1)), st->allocs == 1 ? "" : "s",
			format__count(st->frees, n2, sizeof(n2)), st->frees == 1 ? "" : "s");
		/* never silent: what could not be attributed or counted */
		if (st->unknown_frees)
			fprintf(f, ", %s free%s of memory allocated before the recording",
				format__count(st->unknown_frees, n1, sizeof(n1)),
				st->unknown_frees == 1 ? "" : "s");
		if (st->heap_dropped)
			fprintf(f, ", %s event%s dropped",
				format__count(st->heap_dropped, n1, sizeof(n1)),
				st->heap_dropped == 1 ? "" : "s");
		fputs(" ]\n", f);
		/* which backend ran, and why not the in-process tracker */
		if (st->heap_backend && !strcmp(st->heap_backend, "preload"))
			fputs("[ heap tracked in-process (LD_PRELOAD) ]\n", f);
		else if (st->heap_backend && !strcmp(st->heap_backend, "inject"))
			fputs("[ heap tracked in-process (the tracker injected into the running "
			      "process) ]\n", f);
		else if (st->heap_backend && st->heap_why)
			fprintf(f, "[ heap tracked with uprobes: %s ]\n", st->heap_why);
		else if (st->heap_backend)
			fputs("[ heap tracked with uprobes ]\n", f);
		if (st->heap_backend && !strcmp(st->heap_backend, "uprobe"))
			uprobe_cost(f, st);
		if (st->heap_sample_bytes)
			fprintf(f, "[ heap figures are estimates: one allocation tracked per %s "
				"allocated on average, scaled ]\n",
				format__bytes((int64_t)st->heap_sample_bytes, b1, sizeof(b1)));
	}
	if (st->hist_on) {
		char n1[32], n2[32];
		double s = (double)st->hist_wait_ns / 1e9;

		/* --alloc-history: what was kept, and what keeping it cost the program */
		fprintf(f, "[ allocation history: %s event%s kept, %s dropped; ",
			format__count(st->hist_events, n1, sizeof(n1)),
			st->hist_events == 1 ? "" : "s",
			format__count(st->hist_dropped, n2, sizeof(n2)));
		if (!st->hist_waits)
			fputs("the program never waited for the recorder ]\n", f);
		else
			fprintf(f, "the program waited %.*f %s for the recorder (alloc history "
				"back-pressure) ]\n", s >= 1 ? 1 : 0, s >= 1 ? s : s * 1000,
				s >= 1 ? "s" : "ms");
	}
	if (st->push_on) {
		fprintf(f, "[ pushed %llu profile%s (%s) to ", (unsigned long long)st->pushed,
			st->pushed == 1 ? "" : "s",
			format__bytes((int64_t)st->pushed_bytes, b1, sizeof(b1)));
		escape__fputs(st->push_store, f);
		if (st->push_failed)
			fprintf(f, ", %llu tr%s failed", (unsigned long long)st->push_failed,
				st->push_failed == 1 ? "y" : "ies");
		if (st->push_dropped)
			fprintf(f, ", %llu dropped from the full spool", (unsigned long long)st->push_dropped);
		if (st->push_rejected)
			fprintf(f, ", %llu refused: pushing stopped",
				(unsigned long long)st->push_rejected);
		if (st->push_queued) {
			fprintf(f, ", %llu queued in ", (unsigned long long)st->push_queued);
			escape__fputs(st->push_spool, f);
		}
		fputs(" ]\n", f);
		if (written && (st->push_queued || st->push_dropped || st->push_rejected)) {
			fputs("[ the rest is in the profile: rsprof push ", f);
			escape__fputs(path, f);
			fputs(" ", f);
			escape__fputs(st->push_store, f);
			fputs(" ]\n", f);
		}
	}
	if (st->target_exited && st->exit_status >= 0) {
		int s = st->exit_status;

		if (WIFSIGNALED(s))
			fprintf(f, "[ the target was killed by signal %d ]\n", WTERMSIG(s));
		else if (WIFEXITED(s))
			fprintf(f, "[ the target exited with status %d ]\n", WEXITSTATUS(s));
	}
	if (!written)
		return;
	fputs("[ profile written to ", f);
	escape__fputs(path, f);
	fputs("; read it with: rsprof report ", f);
	escape__fputs(path, f);
	fputs(" ]\n", f);
}
