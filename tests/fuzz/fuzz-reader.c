/*
 * Fuzz target: a profile's bytes through what the readers do with a file
 * (util/db and util/output): open (with its checks), summary, meta, the CPU
 * and heap tables at every grouping and their text, CSV and JSON, --at,
 * stacks as folded text and pprof, the timeline and its SVG, diff against
 * itself, the integrity check and a user query.
 *
 * `make fuzz` builds it with libFuzzer (clang -fsanitize=fuzzer,address,
 * undefined) and runs it from tests/fuzz/corpus/reader; `make test` builds
 * it with tests/fuzz/replay.c instead of libFuzzer, under ASan and UBSan
 * (fatal), and replays that corpus.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/db/db.h"
#include "util/analysis/diff.h"
#include "util/db/read/query.h"
#include "util/analysis/timeline.h"
#include "util/db/read/user.h"
#include "util/output/format.h"
#include "util/output/pprof.h"
#include "util/output/report-table.h"
#include "util/output/svg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char path[256], wal[300], shm[300];
static FILE *null;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/rsprof-fuzz-%d.db", dir ? dir : "/tmp", (int)getpid());
	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	null = fopen("/dev/null", "w");
	/* the readers' messages (sanitizer reports go to fd 2 directly) */
	if (!getenv("FUZZ_VERBOSE"))
		stderr = null;
	/* a hostile file must stop within the budget, not after a minute */
	setenv("RSPROF_TIME_LIMIT", "2s", 0);
	return 0;
}

static int stack_cb(const struct prof_stack *s, void *ctx)
{
	int err = pprof__add(ctx, s);

	for (int i = 0; !err && i < s->depth; i++)
		for (int k = 0; k < s->frames[i].n_lines; k++)
			fprintf(null, "%s;", s->frames[i].module ? s->frames[i].module : "?");
	return err;
}

static int meta_cb(const char *key, const char *value, void *ctx)
{
	format__csv_field(null, key);
	format__json_string(null, value);
	return 0;
}

static int user_row(int n, const struct user_value *v, void *ctx)
{
	for (int i = 0; i < n; i++)
		format__csv_field(null, v[i].text);
	return 0;
}

static void tables(struct db *db, struct query_filter *f)
{
	struct report_table cpu, heap;
	uint64_t total = 0;
	int64_t live = 0;
	struct json j;

	report_table__init(&cpu, f->group, false);
	report_table__init(&heap, f->group, f->group == GROUP_FILE);
	if (!db_query_cpu(db, f, &total, report_table__add, &cpu))
		report_table__print_cpu(&cpu, null, 80);
	if (!db_query_heap(db, f, &live, report_table__add, &heap))
		report_table__print_heap(&heap, null, 80);
	report_table__csv_rows(&cpu, "cpu", null);
	json__init(&j, null);
	json__begin_array(&j, NULL);
	report_table__json_rows(&heap, &j, true);
	json__end_array(&j);
	json__finish(&j);
	report_table__exit(&cpu);
	report_table__exit(&heap);
}

static void stacks(struct db *db, const struct query_filter *f, bool heap)
{
	struct pprof *pp = pprof__new(heap ? PPROF_HEAP : PPROF_CPU, 10101010, 0, 1000);

	if (pp && !db_query_stacks(db, f, heap, stack_cb, pp))
		pprof__write(pp, null);
	pprof__delete(pp);
}

static void timeline(struct db *db)
{
	struct timeline_opts o = { .top = 3, .cpu_top = 3, .rank = RANK_GROWTH,
				   .need_growth = true };
	struct timeline *tl = NULL;

	if (!timeline__load(db, &o, &tl) && tl->n) {
		struct svg_series s[4] = { { "live", tl->live } };
		struct svg_panel p = { "live heap", CHART_BYTES, CHART_LEVEL, s, 1 };
		char lab[768];

		for (size_t i = 0; i < tl->n_sites && i < 3; i++) {
			s[i + 1].label = timeline__site_label(&tl->sites[i], lab, sizeof(lab));
			s[i + 1].values = tl->sites[i].values;
			p.n_series++;
		}
		svg__write(null, "fuzz", tl->t_ms, tl->n, &p, 1);
	}
	timeline__delete(tl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct user_cbs cbs = { .row = user_row };
	struct query_filter f;
	struct prof_summary sum;
	struct diff_opts dopt = { 0 };
	struct diff *d = NULL;
	struct db *db = NULL;
	int fd;

	if (!null)
		LLVMFuzzerInitialize(NULL, NULL);
	unlink(wal);
	unlink(shm);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	if (db__open(path, &db))
		return 0;
	db__snapshot_begin(db);
	db_query_summary(db, &sum);
	db_query_meta(db, meta_cb, NULL);
	for (int g = GROUP_LINE; g <= GROUP_MODULE; g++) {
		query_filter__init(&f);
		f.group = g;
		f.limit = g == GROUP_FILE ? 3 : 0;
		f.threshold_pct = g == GROUP_FUNCTION ? 1.5 : 0;
		f.pattern = g == GROUP_MODULE ? "a" : NULL;
		tables(db, &f);
	}
	query_filter__init(&f);
	f.at_ms = 1500;
	f.win.from_ms = 1000;
	tables(db, &f);
	query_filter__init(&f);
	stacks(db, &f, false);
	stacks(db, &f, true);
	timeline(db);
	if (!diff__compute(db, db, &dopt, &d))
		diff__delete(d);
	db__snapshot_end(db);
	db__check(db);
	db_user__run(db, "SELECT * FROM meta", 100, &cbs, NULL);
	db__close(db);
	return 0;
}
