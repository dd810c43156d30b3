/*
 * The pure parts of `rsprof top`: the file follower and the live queries on
 * the small fixture profile (tests/unit/fixture.h), including a write by
 * another connection while following, and the view's key handling.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/tap.h"
#include "tests/unit/fixture.h"
#include "util/db/db.h"
#include "util/db/write/writer.h"
#include "util/db/read/live.h"
#include "util/tui/follow.h"
#include "util/tui/tui.h"
#include "util/tui/view.h"

static const struct live_row *find(const struct live_table *t, const char *function, int line)
{
	for (int i = 0; i < t->n; i++)
		if (t->rows[i].function && !strcmp(t->rows[i].function, function) &&
		    t->rows[i].line == line)
			return &t->rows[i];
	return NULL;
}

static void test_follow(const char *p)
{
	struct follow *f;
	struct follow_query q = { .cpu_rows = 10, .heap_rows = 10 };
	const struct live_row *r;
	int64_t vals[12];

	if (!ok(!follow__open(p, &f), "follow__open on the fixture"))
		return;
	is_int(follow__poll(f, &q), 1, "the first poll reads the file");
	is_int(f->sum.checkpoints, 10, "10 checkpoints");
	ok(f->sum.finished, "finished (meta end_time)");
	is_int(follow__elapsed_ms(f), 10000, "elapsed of a finished file is its duration");
	is_str(follow__meta(f, "process_name"), "fixture", "meta read");
	ok(f->cpu.n == 4 && !f->cpu.more, "four CPU locations, no more");
	is_str(f->cpu.rows[0].function, "hot_loop", "hot_loop first (two addresses, one line)");
	is_int(f->cpu.rows[0].samples, 600, "hot_loop 600 samples");
	is_int((int)(f->cpu.rows[0].pct + 0.5), 60, "hot_loop 60 %%");
	is_str(f->heap.rows[0].function, "app::cache::insert", "the retaining site heads the heap");
	is_int(f->heap.rows[0].live_bytes, 10 * FIX_MB, "10 MB live");
	is_int(follow__poll(f, &q), 0, "nothing changed: no read");
	is_int(f->reloads, 1, "one read so far");

	q.cpu_rows = 2;
	is_int(follow__poll(f, &q), 0, "fewer rows are already there");
	q.cpu_rows = 2;
	q.heap_rows = 0;
	q.pattern = "WARM";
	is_int(follow__poll(f, &q), 1, "a filter asks again");
	ok(f->cpu.n == 1 && !strcmp(f->cpu.rows[0].function, "warm"),
	   "case-insensitive filter on the function");
	is_int(f->heap.n, 0, "a hidden table is not read");

	q.pattern = NULL;
	q.cpu_rows = 1;
	is_int(follow__poll(f, &q), 1, "clearing the filter asks again");
	ok(f->cpu.n == 1 && f->cpu.more, "one row asked, more exist");
	q.cpu_rows = -1;
	is_int(follow__poll(f, &q), 1, "all rows (End) asks again");
	ok(f->cpu.n == 4 && !f->cpu.more, "all four rows");

	q.window_ms = 5000;
	is_int(follow__poll(f, &q), 1, "a window asks again");
	r = find(&f->cpu, "warm", 20);
	ok(r && r->samples == 175, "warm in the last 5 s: 5 x 35 samples");
	ok(!find(&f->cpu, "cold", 5), "cold is not in the last 5 s");

	if (ok(r != NULL, "row for the series")) {
		follow__series(f, SERIES_CPU, r, vals, 12);
		ok(vals[0] == 0 && vals[1] == 0 && vals[2] == 15 && vals[6] == 15 &&
		   vals[7] == 35 && vals[11] == 35,
		   "warm's samples per checkpoint, zeros before the start");
	}
	q.window_ms = 0;
	q.heap_rows = 10;
	follow__poll(f, &q);
	r = find(&f->heap, "app::parse", 77);
	if (r) {
		follow__series(f, SERIES_HEAP, r, vals, 10);
		ok(vals[0] == 2 * FIX_MB && vals[4] == 10 * FIX_MB && vals[5] == 8 * FIX_MB &&
		   vals[9] == 0, "app::parse live bytes: up 2 MB a checkpoint, then down");
		follow__series(f, SERIES_HEAP, r, vals, 3);
		ok(vals[0] == 4 * FIX_MB && vals[2] == 0, "the series' running total starts "
		   "before its window");
	} else {
		ok(0, "app::parse has no live bytes at the end but allocated: listed");
	}
	follow__delete(f);
}

/*
 * Another process (as `rsprof record`) has the file open for writing while
 * we follow it, and appends a checkpoint.
 */
static void test_follow_live(const char *p)
{
	struct follow *f = NULL;
	struct follow_query q = { .cpu_rows = 10 };
	struct cpu_count cpu[] = { { 0x401200, 1000 } };
	struct checkpoint cp = { .timestamp_ms = 11000, .cpu = cpu, .n_cpu = 1 };
	int to_child[2], to_parent[2], status;
	sqlite3 *sq = NULL;
	char c = 0;
	pid_t pid;

	/* a finished profile is read as immutable (util/db/db.c): make it a live one */
	if (sqlite3_open(p, &sq) != SQLITE_OK ||
	    sqlite3_exec(sq, "DELETE FROM meta WHERE key = 'end_time'", NULL, NULL, NULL) !=
	    SQLITE_OK)
		ok(0, "end_time removed");
	sqlite3_close(sq);
	if (pipe(to_child) || pipe(to_parent))
		return;
	pid = fork();
	if (pid == 0) {
		struct db_writer *w;
		int err = db_writer__create(p, true, &w);

		/* opened: let the parent follow, then write when told */
		if (write(to_parent[1], "o", 1) != 1 || read(to_child[0], &c, 1) != 1)
			err = -1;
		if (!err)
			err = db_writer__checkpoint(w, &cp, NULL);
		if (!err)
			err = db_writer__close(w);
		_exit(err ? 1 : 0);
	}
	if (!ok(pid > 0 && read(to_parent[0], &c, 1) == 1, "a writer process has the file open"))
		return;
	if (ok(!follow__open(p, &f), "follow__open while it is open for writing")) {
		is_int(follow__poll(f, &q), 1, "first poll");
		is_int(follow__poll(f, &q), 0, "nothing new");
	}
	ok(write(to_child[1], "w", 1) == 1 && waitpid(pid, &status, 0) == pid &&
	   WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer appended checkpoint 11");
	if (!f)
		return;
	{
		int seen = 0;

		for (int i = 0; i < 20 && !seen; i++) {
			seen = follow__poll(f, &q);
			if (!seen)
				usleep(100 * 1000);
		}
		is_int(seen, 1, "the follower sees the write");
	}
	is_int(f->sum.checkpoints, 11, "11 checkpoints");
	is_str(f->cpu.rows[0].function, "cold", "cold now leads (1,100 samples)");
	follow__delete(f);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

static void test_keys(const char *p)
{
	struct top_view v;
	struct follow_query q;
	struct follow *f;
	struct live_row row;
	enum live_series kind;

	top_view__init(&v, TOP_BOTH, 0, false, false);
	top_view__query(&v, &q);
	ok(q.cpu_rows > 0 && q.heap_rows > 0 && !q.window_ms && !q.pattern, "both tables asked");
	is_int(top_view__key(&v, '2', NULL), TOP_REQUERY, "2: requery");
	top_view__query(&v, &q);
	ok(v.mode == TOP_HEAP && v.focus == 1 && !q.cpu_rows && q.heap_rows, "2: heap only");
	top_view__key(&v, '1', NULL);
	top_view__query(&v, &q);
	ok(v.mode == TOP_CPU && v.focus == 0 && q.cpu_rows && !q.heap_rows, "1: CPU only");
	top_view__key(&v, '3', NULL);
	ok(v.mode == TOP_BOTH, "3: both");

	is_int(top_view__key(&v, '/', NULL), TOP_REDRAW, "/ opens the prompt");
	ok(v.prompt, "prompting");
	top_view__key(&v, 'h', NULL);
	top_view__key(&v, 'x', NULL);
	top_view__key(&v, TUI_KEY_BACKSPACE, NULL);
	top_view__key(&v, 'o', NULL);
	is_int(top_view__key(&v, 'q', NULL), TOP_REDRAW, "q in the prompt is a letter");
	is_int(top_view__key(&v, TUI_KEY_ENTER, NULL), TOP_REQUERY, "Enter applies");
	top_view__query(&v, &q);
	ok(!v.prompt && q.pattern && !strcmp(q.pattern, "hoq"), "filter 'hoq'");
	is_int(top_view__key(&v, TUI_KEY_ESC, NULL), TOP_REQUERY, "Esc clears the filter");
	top_view__query(&v, &q);
	ok(!q.pattern, "no filter");
	is_int(top_view__key(&v, TUI_KEY_ESC, NULL), TOP_NOTHING, "Esc again: nothing");

	top_view__key(&v, 'p', NULL);
	ok(v.paused, "p pauses");
	top_view__key(&v, 'p', NULL);
	ok(!v.paused, "p again resumes");
	top_view__key(&v, 'w', NULL);
	top_view__query(&v, &q);
	is_int(q.window_ms, 10000, "w without --window: the last 10 s");
	top_view__key(&v, 'w', NULL);
	top_view__query(&v, &q);
	is_int(q.window_ms, 0, "w again: the whole run");

	if (!ok(!follow__open(p, &f), "follow the fixture for the selection"))
		return;
	top_view__query(&v, &q);
	follow__poll(f, &q);
	top_view__key(&v, TUI_KEY_DOWN, f);
	top_view__key(&v, TUI_KEY_DOWN, f);
	is_int(v.sel[0], 2, "two rows down");
	top_view__key(&v, TUI_KEY_DOWN, f);
	top_view__key(&v, TUI_KEY_DOWN, f);
	is_int(v.sel[0], 3, "stops at the last row");
	top_view__key(&v, TUI_KEY_HOME, f);
	is_int(v.sel[0], 0, "Home");
	top_view__key(&v, TUI_KEY_END, f);
	top_view__query(&v, &q);
	is_int(q.cpu_rows, -1, "End asks for every row");
	top_view__key(&v, TUI_KEY_UP, f);
	is_int(v.sel[0], 3, "up from the end: the last row");
	top_view__key(&v, TUI_KEY_HOME, f);
	is_int(top_view__key(&v, TUI_KEY_ENTER, f), TOP_REQUERY, "Enter opens the detail");
	ok(top_view__detail_row(&v, &row, &kind) && kind == SERIES_CPU &&
	   !strcmp(row.function, "hot_loop") && row.line == 10, "detail of hot_loop:10");
	top_view__key(&v, TUI_KEY_RIGHT, f);
	ok(!v.detail && v.focus == 1, "Right: the heap table, detail closed");
	top_view__key(&v, TUI_KEY_ENTER, f);
	ok(top_view__detail_row(&v, &row, &kind) && kind == SERIES_HEAP &&
	   !strcmp(row.function, "app::cache::insert"), "detail of the top heap site");
	top_view__key(&v, TUI_KEY_ESC, f);
	ok(!v.detail, "Esc closes the detail");
	is_int(top_view__key(&v, 'q', f), TOP_QUIT, "q quits");
	follow__delete(f);
}

int main(void)
{
	char p[] = "/tmp/rsprof-test-top.XXXXXX";
	char path[64];
	int fd = mkstemp(p);

	if (fd < 0)
		return 1;
	close(fd);
	unlink(p);
	snprintf(path, sizeof(path), "%s.db", p);
	if (!ok(!fixture__write(path, FIXTURE_SMALL), "small fixture written"))
		return done_testing();
	test_follow(path);
	test_keys(path);
	test_follow_live(path);
	unlink(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "-wal");
	unlink(path);
	path[strlen(path) - 4] = 0;
	strcat(path, "-shm");
	unlink(path);
	return done_testing();
}
