#include "util/record/meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>

#include "preload/block.h"
#include "util/db/read/query.h"
#include "util/db/db.h"
#include "util/db/write/writer.h"
#include "util/error.h"
#include "util/heap/alloc-fn.h"
#include "util/heap/heap.h"
#include "util/record/recorder.h"
#include "util/record/sampler.h"
#include "util/record/target.h"

static void iso_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* record --alloc-fn: the patterns, one a line, for the readers (heap_alloc_fn). */
static int meta_alloc_fn(struct db_writer *w, const char *const *fns)
{
	struct alloc_fns *a = alloc_fns__new(false);
	char *list = NULL;
	int err = a ? 0 : -ENOMEM;

	for (size_t i = 0; !err && fns[i]; i++)
		err = alloc_fns__add(a, fns[i]);
	if (!err)
		list = alloc_fns__user_list(a, &err);
	if (!err && list)
		err = db_writer__meta_set(w, "heap_alloc_fn", list);
	free(list);
	alloc_fns__delete(a);
	return err;
}

int record_meta__start(struct db_writer *w, const struct record_opts *o, const struct target *t,
		       struct heap *heap, const char *heap_why, uint64_t *ts_base)
{
	bool heap_on = heap != NULL;
	struct heap_stats hs;
	static const char *const probes[] = { "auto", "rust", "libc" };
	static const char *const attr[] = { "first-user", "caller", "stack" };
	char buf[64];
	char *old = NULL;
	int err = 0;

	/* --append to a profile: keep where and when it began */
	if (o->append && !db__meta_get(db_writer__db(w), "start_time", &old) && old) {
		struct prof_summary s;

		free(old);
		if (!db_query_summary(db_writer__db(w), &s) && s.checkpoints)
			*ts_base = s.duration_ms + o->interval_ms;
		err = db_writer__meta_set_int(w, "appended_pid", t->pid);
	} else {
		iso_time(time(NULL), buf, sizeof(buf));
		err = db_writer__meta_set(w, "start_time", buf);
	}
	if (!err)
		err = db_writer__meta_set_int(w, "pid", t->pid);
	if (!err)
		err = db_writer__meta_set(w, "process_name", t->comm);
	if (!err)
		err = db_writer__meta_set(w, "exe_path", t->exe);
	if (!err)
		err = db_writer__meta_set_int(w, "checkpoint_interval_ms", (long long)o->interval_ms);
	if (!err)
		err = db_writer__meta_set_int(w, "cpu_freq_hz", o->cpu ? o->freq : 0);
	if (!err)
		err = db_writer__meta_set(w, "rsprof_version", RSPROF_VERSION);
	/* where it was recorded: the hostname label of what is pushed from it */
	if (!err && !gethostname(buf, sizeof(buf))) {
		buf[sizeof(buf) - 1] = '\0';
		err = db_writer__meta_set(w, "hostname", buf);
	}
	if (!err)
		err = db_writer__meta_set(w, "command", t->cmdline ? t->cmdline : "");
	if (!err && o->rsprof_cmdline)
		err = db_writer__meta_set(w, "rsprof_command", o->rsprof_cmdline);
	if (!err)
		err = db_writer__meta_set(w, "target", t->launched ? "launched" :
					  t->n_pids ? "attached" : "system");
	if (!err)
		err = db_writer__meta_set(w, "cpu", o->cpu ? "on" : "off");
	if (!err)
		err = db_writer__meta_set(w, "inherit", o->inherit ? "on" : "off");
	if (!err && t->n_pids > 1) {
		char list[64 * 12] = "";
		size_t n = 0;

		for (size_t i = 0; i < t->n_pids && n < sizeof(list) - 12; i++)
			n += snprintf(list + n, sizeof(list) - n, "%s%d", i ? "," : "",
				      (int)t->pids[i]);
		err = db_writer__meta_set(w, "pids", list);
	}
	if (!err)
		err = db_writer__meta_set(w, "call_graph", o->call_graph ? "on" : "off");
	if (!err && o->call_graph) {
		char mode[32];

		snprintf(mode, sizeof(mode), "%s,%u", o->call_graph_fp ? "fp" : "dwarf",
			 o->stack_copy);
		err = db_writer__meta_set(w, "call_graph_mode", mode);
	}
	if (!err)
		err = db_writer__meta_set(w, "heap", heap_on ? "on" : "off");
	if (!err && heap_on) {
		heap__stats(heap, &hs);
		err = db_writer__meta_set(w, "heap_backend", hs.backend);
		/* what the in-process tracker adds before each block (preload/block.h);
		 * byte sampling: none before most, and the counts are estimates */
		if (!err && strcmp(hs.backend, "uprobe") && !o->heap_sample_bytes)
			err = db_writer__meta_set_int(w, "heap_block_header_bytes", BLOCK_HDR);
		if (!err && heap_why)
			err = db_writer__meta_set(w, "heap_backend_reason", heap_why);
	}
	if (!err)
		err = db_writer__meta_set(w, "heap_probes_requested", probes[o->heap_probes]);
	if (!err)
		err = db_writer__meta_set(w, "heap_attribution", attr[o->heap_attribution]);
	if (!err)
		err = db_writer__meta_set_int(w, "heap_sample", o->heap_sample);
	/* byte sampling: the in-process tracker's only */
	if (!err && heap_on && o->heap_sample_bytes && strcmp(hs.backend, "uprobe"))
		err = db_writer__meta_set_int(w, "heap_sample_bytes", (int64_t)o->heap_sample_bytes);
	if (!err && o->alloc_fn && o->alloc_fn[0])
		err = meta_alloc_fn(w, o->alloc_fn);
	return err;
}

int record_meta__cpu_scope(struct db_writer *w, bool user_only)
{
	return db_writer__meta_set(w, "cpu_scope", user_only ? "user" : "user+kernel");
}

int record_meta__process_name(struct db_writer *w, const struct target *t)
{
	return db_writer__meta_set(w, "process_name", t->comm);
}

int record_meta__end(struct db_writer *w, struct sampler *s, struct heap *h, uint64_t duration_ms,
		     const char *stop_reason, int exit_status)
{
	struct sampler_stats ss = { 0 };
	struct heap_stats hs = { 0 };
	char buf[64];
	int err;

	if (s)
		sampler__stats(s, &ss);
	iso_time(time(NULL), buf, sizeof(buf));
	err = db_writer__meta_set(w, "end_time", buf);
	if (!err)
		err = db_writer__meta_set_int(w, "duration_ms", (long long)duration_ms);
	if (!err)
		err = db_writer__meta_set(w, "stop_reason", stop_reason ? stop_reason : "");
	if (!err && exit_status >= 0) {
		int st = exit_status;

		err = db_writer__meta_set_int(w, "exit_status",
				       WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
	}
	if (!err)
		err = db_writer__meta_set_int(w, "samples", (long long)ss.samples);
	if (!err)
		err = db_writer__meta_set_int(w, "lost_samples", (long long)ss.lost);
	if (!err)
		err = db_writer__meta_set_int(w, "threads", (long long)ss.threads_seen);
	if (!err && h) {
		heap__stats(h, &hs);
		if (hs.probes)
			err = db_writer__meta_set(w, "heap_probes", hs.probes);
		if (!err)
			err = db_writer__meta_set_int(w, "unknown_frees", (long long)hs.unknown_frees);
		/* absent: the allocator's block sizes could not be read */
		if (!err && !hs.free_sizes_unknown)
			err = db_writer__meta_set_int(w, "unknown_free_bytes",
					       (long long)hs.unknown_free_bytes);
		if (!err)
			err = db_writer__meta_set_int(w, "heap_dropped", (long long)hs.dropped);
		if (!err)
			err = db_writer__meta_set_int(w, "heap_peak_bytes", (long long)hs.peak_bytes);
		if (!err && hs.has_temporaries)
			err = db_writer__meta_set_int(w, "heap_temporary", (long long)hs.temporaries);
		/* the tracker served another allocator, whose blocks carry no header */
		if (!err && hs.no_headers)
			err = db_writer__meta_set_int(w, "heap_block_header_bytes", 0);
		if (!err && hs.limited)
			err = db_writer__meta_set_int(w, "heap_untracked_limited",
						     (long long)hs.limited);
	}
	if (ss.lost && ss.lost * 100 > ss.samples + ss.lost) {
		pr_warn("%llu samples lost (%.1f%%)", (unsigned long long)ss.lost,
			100.0 * (double)ss.lost / (double)(ss.samples + ss.lost));
		pr_hint("record at a lower frequency (-F)");
	}
	if (!err && h && hs.limited) {
		pr_warn("%llu process%s of the tree ran under an address-space limit (ulimit -v): "
			"%s heap %s not tracked", (unsigned long long)hs.limited,
			hs.limited == 1 ? "" : "es", hs.limited == 1 ? "its" : "their",
			hs.limited == 1 ? "was" : "were");
		pr_hint("the tracker's region would count against the limit; "
			"a program run without one (ulimit -v unlimited) is tracked");
	}
	if (!err && h && hs.dropped) {
		pr_warn("%llu heap events dropped (a full map or ring)",
			(unsigned long long)hs.dropped);
		pr_hint("use --heap-sample N for allocation-heavy programs");
	}
	return err;
}
