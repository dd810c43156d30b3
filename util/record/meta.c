#include "util/record/meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "preload/block.h"
#include "util/db/query.h"
#include "util/db/db.h"
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
static int meta_alloc_fn(struct db *db, const char *const *fns)
{
	struct alloc_fns *a = alloc_fns__new(false);
	char *list = NULL;
	int err = a ? 0 : -ENOMEM;

	for (size_t i = 0; !err && fns[i]; i++)
		err = alloc_fns__add(a, fns[i]);
	if (!err)
		list = alloc_fns__user_list(a, &err);
	if (!err && list)
		err = db__meta_set(db, "heap_alloc_fn", list);
	free(list);
	alloc_fns__delete(a);
	return err;
}

int record_meta__start(struct db *db, const struct record_opts *o, const struct target *t,
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
	if (o->append && !db__meta_get(db, "start_time", &old) && old) {
		struct prof_summary s;

		free(old);
		if (!db_query_summary(db, &s) && s.checkpoints)
			*ts_base = s.duration_ms + o->interval_ms;
		err = db__meta_set_int(db, "appended_pid", t->pid);
	} else {
		iso_time(time(NULL), buf, sizeof(buf));
		err = db__meta_set(db, "start_time", buf);
	}
	if (!err)
		err = db__meta_set_int(db, "pid", t->pid);
	if (!err)
		err = db__meta_set(db, "process_name", t->comm);
	if (!err)
		err = db__meta_set(db, "exe_path", t->exe);
	if (!err)
		err = db__meta_set_int(db, "checkpoint_interval_ms", (long long)o->interval_ms);
	if (!err)
		err = db__meta_set_int(db, "cpu_freq_hz", o->cpu ? o->freq : 0);
	if (!err)
		err = db__meta_set(db, "rsprof_version", RSPROF_VERSION);
	if (!err)
		err = db__meta_set(db, "command", t->cmdline ? t->cmdline : "");
	if (!err && o->rsprof_cmdline)
		err = db__meta_set(db, "rsprof_command", o->rsprof_cmdline);
	if (!err)
		err = db__meta_set(db, "target", t->launched ? "launched" : "attached");
	if (!err)
		err = db__meta_set(db, "cpu", o->cpu ? "on" : "off");
	if (!err)
		err = db__meta_set(db, "inherit", o->inherit ? "on" : "off");
	if (!err && t->n_pids > 1) {
		char list[64 * 12] = "";
		size_t n = 0;

		for (size_t i = 0; i < t->n_pids && n < sizeof(list) - 12; i++)
			n += snprintf(list + n, sizeof(list) - n, "%s%d", i ? "," : "",
				      (int)t->pids[i]);
		err = db__meta_set(db, "pids", list);
	}
	if (!err)
		err = db__meta_set(db, "call_graph", o->call_graph ? "on" : "off");
	if (!err && o->call_graph) {
		char mode[32];

		snprintf(mode, sizeof(mode), "%s,%u", o->call_graph_fp ? "fp" : "dwarf",
			 o->stack_copy);
		err = db__meta_set(db, "call_graph_mode", mode);
	}
	if (!err)
		err = db__meta_set(db, "heap", heap_on ? "on" : "off");
	if (!err && heap_on) {
		heap__stats(heap, &hs);
		err = db__meta_set(db, "heap_backend", hs.backend);
		/* what the in-process tracker adds before each block (preload/block.h);
		 * byte sampling: none before most, and the counts are estimates */
		if (!err && !strcmp(hs.backend, "preload") && !o->heap_sample_bytes)
			err = db__meta_set_int(db, "heap_block_header_bytes", BLOCK_HDR);
		if (!err && heap_why && t->launched)
			err = db__meta_set(db, "heap_backend_reason", heap_why);
	}
	if (!err)
		err = db__meta_set(db, "heap_probes_requested", probes[o->heap_probes]);
	if (!err)
		err = db__meta_set(db, "heap_attribution", attr[o->heap_attribution]);
	if (!err)
		err = db__meta_set_int(db, "heap_sample", o->heap_sample);
	/* byte sampling: the in-process tracker's only */
	if (!err && heap_on && o->heap_sample_bytes && !strcmp(hs.backend, "preload"))
		err = db__meta_set_int(db, "heap_sample_bytes", (int64_t)o->heap_sample_bytes);
	if (!err && o->alloc_fn && o->alloc_fn[0])
		err = meta_alloc_fn(db, o->alloc_fn);
	return err;
}

int record_meta__cpu_scope(struct db *db, bool user_only)
{
	return db__meta_set(db, "cpu_scope", user_only ? "user" : "user+kernel");
}

int record_meta__process_name(struct db *db, const struct target *t)
{
	return db__meta_set(db, "process_name", t->comm);
}

int record_meta__end(struct db *db, struct sampler *s, struct heap *h, uint64_t duration_ms,
		     const char *stop_reason, int exit_status)
{
	struct sampler_stats ss = { 0 };
	struct heap_stats hs = { 0 };
	char buf[64];
	int err;

	if (s)
		sampler__stats(s, &ss);
	iso_time(time(NULL), buf, sizeof(buf));
	err = db__meta_set(db, "end_time", buf);
	if (!err)
		err = db__meta_set_int(db, "duration_ms", (long long)duration_ms);
	if (!err)
		err = db__meta_set(db, "stop_reason", stop_reason ? stop_reason : "");
	if (!err && exit_status >= 0) {
		int st = exit_status;

		err = db__meta_set_int(db, "exit_status",
				       WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
	}
	if (!err)
		err = db__meta_set_int(db, "samples", (long long)ss.samples);
	if (!err)
		err = db__meta_set_int(db, "lost_samples", (long long)ss.lost);
	if (!err)
		err = db__meta_set_int(db, "threads", (long long)ss.threads_seen);
	if (!err && h) {
		heap__stats(h, &hs);
		if (hs.probes)
			err = db__meta_set(db, "heap_probes", hs.probes);
		if (!err)
			err = db__meta_set_int(db, "unknown_frees", (long long)hs.unknown_frees);
		/* absent: the allocator's block sizes could not be read */
		if (!err && !hs.free_sizes_unknown)
			err = db__meta_set_int(db, "unknown_free_bytes",
					       (long long)hs.unknown_free_bytes);
		if (!err)
			err = db__meta_set_int(db, "heap_dropped", (long long)hs.dropped);
		if (!err)
			err = db__meta_set_int(db, "heap_peak_bytes", (long long)hs.peak_bytes);
		if (!err && hs.has_temporaries)
			err = db__meta_set_int(db, "heap_temporary", (long long)hs.temporaries);
	}
	if (ss.lost && ss.lost * 100 > ss.samples + ss.lost) {
		pr_warn("%llu samples lost (%.1f%%)", (unsigned long long)ss.lost,
			100.0 * (double)ss.lost / (double)(ss.samples + ss.lost));
		pr_hint("record at a lower frequency (-F)");
	}
	if (!err && h && hs.dropped) {
		pr_warn("%llu heap events dropped (a full map or ring)",
			(unsigned long long)hs.dropped);
		pr_hint("use --heap-sample N for allocation-heavy programs");
	}
	return err;
}
