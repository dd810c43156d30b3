/*
 * report's stack exports (util/output/export.h): folded stacks and pprof.
 */
#include "util/output/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/db/db.h"
#include "util/db/read/query.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/output/folded.h"
#include "util/output/membuf.h"
#include "util/output/pprof.h"
#include "util/record/maps.h"
#include "util/saturate.h"

static int folded_cb(const struct prof_stack *s, void *ctx)
{
	return folded__add(ctx, s);
}

static int pprof_cb(const struct prof_stack *s, void *ctx)
{
	return pprof__add(ctx, s);
}

/* The finished export to path (replacing an older one), or stdout. */
static int export_flush(struct membuf *mem, int err, const char *path)
{
	struct outfile of;
	FILE *f;

	if (err || !path)
		return membuf__flush(mem, err, stdout);
	err = outfile__create(&of, path, OUTFILE_REPLACE);
	f = err ? NULL : outfile__fdopen(&of);
	if (!f) {
		err = err ? err : -errno;
		membuf__flush(mem, err, NULL);
		outfile__abort(&of);
		return err;
	}
	err = membuf__flush(mem, 0, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		pr_err("cannot write '%s': %s", path, strerror(-err));
		outfile__abort(&of);
		return err;
	}
	return outfile__commit(&of);
}

/* Unix nanoseconds of an ISO 8601 UTC time as the recorder writes it, 0 if unknown. */
static int64_t iso_ns(const char *s)
{
	struct tm tm = { 0 };
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;

	return end ? (int64_t)timegm(&tm) * 1000000000LL : 0;
}

int export__stacks(struct db *db, const struct query_filter *f, bool heap,
		   enum export_format format, uint64_t duration_ms, const char *path)
{
	char *freq = NULL, *start = NULL, *exe = NULL;
	struct pprof *pp = NULL;
	struct membuf mem;
	int err;

	/* all or nothing on stdout or in the file, as for --json */
	err = membuf__open(&mem);
	if (err)
		return err;
	if (format == EXPORT_FOLDED) {
		struct folded *fo = folded__new();

		err = fo ? db_query_stacks(db, f, heap, folded_cb, fo) : -ENOMEM;
		if (!err)
			err = folded__write(fo, mem.f);
		folded__delete(fo);
		return export_flush(&mem, err, path);
	}
	err = db__meta_get(db, "cpu_freq_hz", &freq);
	if (!err)
		err = db__meta_get(db, "start_time", &start);
	if (!err)
		err = db__meta_get(db, "exe_path", &exe);
	if (!err) {
		long hz = freq ? atol(freq) : 0;

		pp = pprof__new(heap ? PPROF_HEAP : PPROF_CPU,
				1000000000ULL / (uint64_t)(hz > 0 ? hz : 99), iso_ns(start),
				sat__mul((int64_t)duration_ms, 1000000));
		if (!pp)
			err = -ENOMEM;
	}
	if (!err) {
		struct maps *m = NULL;

		err = maps__from_profile(db, &m);
		if (!err)
			err = pprof__add_maps(pp, m);
		if (!err)	/* the program's mapping first: pprof names the profile after it */
			err = pprof__main(pp, exe);
		maps__delete(m);
	}
	if (!err)
		err = db_query_stacks(db, f, heap, pprof_cb, pp);
	if (!err)
		err = pprof__write(pp, mem.f);
	pprof__delete(pp);
	free(freq);
	free(start);
	free(exe);
	return export_flush(&mem, err, path);
}
