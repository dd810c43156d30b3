/*
 * rsprof top: the live view of the hottest lines.
 *
 * With a target (-p PID, -P NAME or -- CMD) it records exactly as `record`
 * does, same options and same file, in a sampler thread that owns the
 * profile's writer, while the screen reads the file through a read-only
 * connection of its own every 100 ms (WAL: neither blocks the other). With
 * a FILE it follows that file, also while another rsprof is still writing
 * it. When stdout is not a terminal, or with --stdio, it prints the ranking
 * once as a table and exits, so `rsprof top cpu profile.db | head` works.
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/tui/capture.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/output/styled.h"
#include "util/tui/follow.h"
#include "util/options.h"
#include "util/record/caps.h"
#include "util/record/options.h"
#include "util/record/recorder.h"
#include "util/output/report-table.h"
#include "util/record/status.h"
#include "util/tui/pager.h"
#include "util/tui/panes.h"
#include "util/tui/tui.h"
#include "util/tui/view.h"

#define REFRESH_MS 100
#define STDIO_ROWS 20

static struct top_opts {
	int stdio;
	const char *sort;
	bool by_process;
	uint64_t window_ms;
	enum top_mode mode;
	const char *file;
	const char *const *cmd;
} opts;

static const char top_usage[] =
	"[OPTION...] [cpu|heap] (-p PID | -P NAME | -- CMD [ARG...] | FILE)";

enum { OPT_WINDOW = OPT_VAL_BUILTIN, OPT_SORT };

static struct poptOption top_options[] = {
	{ "window", 0, POPT_ARG_STRING, NULL, OPT_WINDOW,
	  "show only the last DUR of samples (key w toggles)", "DUR" },
	{ "stdio", 0, POPT_ARG_NONE, &opts.stdio, 0,
	  "print the ranking once as a table instead of the live view", NULL },
	{ "sort", 's', POPT_ARG_STRING, &opts.sort, OPT_SORT,
	  "a row per line, or per process of the tree (default: line; key s toggles)", "KEY" },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_target, 0, "Target:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_record, 0, "Recording:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static int top_option(int val, const char *arg, void *ctx)
{
	if (val == OPT_SORT) {
		if (strcmp(arg, "line") && strcmp(arg, "process")) {
			pr_err("--sort: '%s' is not a key of top", arg);
			pr_hint("use line or process");
			return -1;
		}
		opts.by_process = !strcmp(arg, "process");
		return 0;
	}
	if (val == OPT_WINDOW && (duration__parse(arg, &opts.window_ms) || !opts.window_ms)) {
		pr_err("--window: '%s' is not a duration", arg);
		pr_hint("use a duration such as 10s, 2m or 1h30m");
		return -1;
	}
	return 0;
}

/* --- the ranking once, on stdout --------------------------------------- */

/* `rsprof report`'s tables, filled from the follower's rows. */
static int stdio_print(struct follow *f, bool heap)
{
	const struct live_table *tb = heap ? &f->heap : &f->cpu;
	struct follow_query q = { .cpu_rows = heap ? 0 : STDIO_ROWS,
				  .heap_rows = heap ? STDIO_ROWS : 0,
				  .window_ms = opts.window_ms, .by_process = opts.by_process };
	struct report_table t;
	int err;

	report_table__init(&t, opts.by_process ? GROUP_PROCESS : GROUP_LINE, false);
	err = follow__poll(f, &q);
	for (int i = 0; err >= 0 && i < tb->n; i++) {
		const struct live_row *r = &tb->rows[i];
		struct prof_row row = {
			.file = r->file, .line = r->line, .function = r->function,
			.module = r->module, .pid = r->pid, .samples = r->samples, .pct = r->pct,
			.live_bytes = r->live_bytes, .peak_bytes = r->peak_bytes,
			.alloc_bytes = r->alloc_bytes, .free_bytes = r->free_bytes,
			.alloc_count = r->alloc_count, .free_count = r->free_count,
			.kinds = r->kinds,
		};

		err = report_table__add(&row, &t);
	}
	if (err >= 0)
		err = heap ? report_table__print_heap(&t, stdout, 0) :
			     report_table__print_cpu(&t, stdout, 0);
	report_table__exit(&t);
	return err;
}

/* `rsprof top cpu FILE | cat`: the ranking as `report` prints it, once. */
static int top_stdio(const char *path)
{
	struct follow *f;
	int err = follow__open(path, &f);

	if (err < 0)
		return exit_from_err(err);
	err = follow__poll(f, &(struct follow_query){ 0 });
	if (err >= 0 && opts.mode != TOP_HEAP)
		err = stdio_print(f, false);
	if (err >= 0 && opts.mode != TOP_CPU && f->sum.has_heap) {
		if (opts.mode == TOP_BOTH)
			putchar('\n');
		err = stdio_print(f, true);
	}
	follow__delete(f);
	return err < 0 ? exit_from_err(err) : EXIT_OK;
}

/* --- the live view ----------------------------------------------------- */

struct sampler {
	struct recorder *rec;
	pthread_t thread;
	int err;
	bool started;
};

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;

	s->err = recorder__run(s->rec);
	return NULL;
}

/* The screen's signals (SIGINT, SIGTERM, SIGWINCH) go to the main thread only. */
static int sampler__start(struct sampler *s)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&s->thread, NULL, sampler_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the sampler thread: %s", strerror(err));
		return -err;
	}
	s->started = true;
	return 0;
}

static void sampler__join(struct sampler *s)
{
	if (!s->started)
		return;
	recorder__stop(s->rec);
	pthread_join(s->thread, NULL);
	s->started = false;
}

static const char *heap_mode(const struct follow *f, const struct recorder_stats *rs)
{
	const char *on = follow__meta(f, "heap");
	const char *probes = follow__meta(f, "heap_probes");
	const char *backend = follow__meta(f, "heap_backend");

	if (rs && !rs->heap_on)
		return "off";
	if (on && !strcmp(on, "off"))
		return "off";
	/* the in-process tracker: the malloc family, whatever the program */
	if ((rs && rs->heap_backend && !strcmp(rs->heap_backend, "preload")) ||
	    (backend && !strcmp(backend, "preload")))
		return "preload";
	/* the allocator probed: one word from the first checkpoint to the end */
	if (rs && rs->heap_probes)
		return rs->heap_probes;
	/* the allocator probed is known once the recording ended */
	if (probes && *probes)
		return probes;
	return (on && !strcmp(on, "on")) || f->sum.has_heap ? "on" : "off";
}

static void fill_status(struct top_status *st, struct follow *f, struct sampler *s,
			char *state, size_t len)
{
	struct recorder_stats rs;

	memset(st, 0, sizeof(*st));
	st->pid = follow__meta(f, "pid");
	st->comm = follow__meta(f, "process_name");
	st->freq = follow__meta(f, "cpu_freq_hz");
	st->output = follow__path(f);
	if (s) {
		recorder__stats(s->rec, &rs);
		st->recording = true;
		/*
		 * The recorder's clock, frozen when it finished: the duration it
		 * wrote to the file, already right before the last checkpoint is
		 * read back (the file's start_time has whole seconds only).
		 */
		st->elapsed_ms = rs.elapsed_ms;
		st->heap_mode = heap_mode(f, &rs);
		st->finished = rs.finished || rs.target_exited;
		if (rs.target_exited && rs.exit_status >= 0 && WIFEXITED(rs.exit_status)) {
			snprintf(state, len, "target exited (%d)", WEXITSTATUS(rs.exit_status));
			st->state = state;
		} else if (rs.target_exited) {
			st->state = "target exited";
		}
	} else {
		const char *iv = follow__meta(f, "checkpoint_interval_ms");
		uint64_t interval = iv ? strtoull(iv, NULL, 10) : 1000;
		char d[32];

		st->elapsed_ms = follow__elapsed_ms(f);
		st->heap_mode = heap_mode(f, NULL);
		st->finished = f->sum.finished;
		/* a recorder that died leaves no end_time: say the data stopped */
		if (!st->finished && st->elapsed_ms > f->sum.duration_ms + 3 * interval + 2000) {
			snprintf(state, len, "no new data for %s",
				 duration__format(st->elapsed_ms - f->sum.duration_ms, d, sizeof(d)));
			st->state = state;
		}
	}
}

static int load_series(struct top_view *v, struct follow *f)
{
	struct live_row row;
	enum live_series kind;
	int err;

	if (!top_view__detail_row(v, &row, &kind))
		return 0;
	err = follow__series(f, kind, &row,
			     kind == SERIES_CPU ? v->cpu_series : v->heap_series, TOP_SERIES);
	v->series_valid = err >= 0;
	return err;
}

/*
 * Keys a and c: the selected row (or the detail's) annotated or with its
 * callers, in the pager over the screen; the recording goes on meanwhile.
 */
static int open_pane(struct tui *t, struct top_view *v, struct follow *f, enum top_action a)
{
	struct pane_ctx c = { .db = f->db, .path = follow__path(f), .exe = follow__meta(f, "exe_path"),
			      .from_ms = TIME_NONE, .utf8 = tui__utf8(t) };
	struct styled_text text = { 0 };
	const struct live_row *r;
	enum live_series kind;
	struct live_row bare;
	char title[600], fn[512];
	int hot = -1, err;

	r = top_view__detail_row(v, &bare, &kind) ? &bare : top_view__selected(v, f, &kind);
	if (!r)
		return 0;
	c.heap = kind == SERIES_HEAP;
	if (v->windowed) {
		struct time_window w = TIME_WINDOW_ALL;

		time_window__since(&w, v->window_ms, f->sum.duration_ms);
		c.from_ms = w.from_ms;
	}
	snprintf(fn, sizeof(fn), "%s", r->function ? r->function : "[unknown]");
	if (a == TOP_ANNOTATE) {
		snprintf(title, sizeof(title), "annotate %s", fn);
		err = pane__annotate(&c, r, &text, &hot);
	} else {
		snprintf(title, sizeof(title), "callers of %s (%s stacks)", fn,
			 c.heap ? "heap" : "CPU");
		err = pane__callers(&c, r, &text);
	}
	if (!err && pager__run(t, title, &text, hot))
		err = 0;	/* interrupted: the loop sees it */
	styled__free(&text);
	return err;
}

/*
 * The loop: keys as they come, the file every REFRESH_MS (one PRAGMA when
 * nothing was committed), a redraw only when something on screen changed.
 */
static int top_loop(struct tui *t, struct follow *f, struct sampler *s)
{
	struct top_view v;
	struct top_status st;
	struct follow_query q;
	char state[64], last_header[1200] = "", header[1200];
	bool dirty = true, requery = true;
	int err = 0;

	top_view__init(&v, opts.mode, opts.window_ms, opts.window_ms != 0, opts.by_process);
	while (!tui__interrupted()) {
		int key = tui__getkey(t, REFRESH_MS);

		while (key != TUI_KEY_NONE) {
			enum top_action a = top_view__key(&v, key, f);

			if (a == TOP_QUIT)
				return 0;
			if (a == TOP_ANNOTATE || a == TOP_CALLERS) {
				err = open_pane(t, &v, f, a);
				if (err < 0)
					return err;
				dirty = true;
				break;
			}
			dirty |= a != TOP_NOTHING;
			if (a == TOP_REQUERY) {
				requery = true;
				break;	/* the next key may need the new rows */
			}
			key = tui__getkey(t, 0);	/* a burst of keys, one redraw */
		}
		if (!v.paused || requery) {
			top_view__query(&v, &q);
			err = follow__poll(f, &q);
			if (err < 0)
				return err;
			if (err > 0 || (requery && v.detail)) {
				err = load_series(&v, f);
				if (err < 0)
					return err;
				dirty = true;
			}
			requery = false;
		}
		/* The header's clock ticks every second; nothing else moves. */
		fill_status(&st, f, s, state, sizeof(state));
		snprintf(header, sizeof(header), "%s|%llu|%d", st.state ? st.state : "",
			 (unsigned long long)st.elapsed_ms / 1000, st.finished);
		if (strcmp(header, last_header)) {
			strcpy(last_header, header);
			dirty = true;
		}
		if (dirty) {
			top_view__draw(&v, t, f, &st);
			dirty = false;
		}
	}
	return 0;
}

static int top_follow(const char *path)
{
	struct follow *f;
	struct tui *t;
	int err = follow__open(path, &f);

	if (err < 0)
		return exit_from_err(err);
	err = tui__start(&t);
	if (!err) {
		err = top_loop(t, f, NULL);
		tui__stop(t);
		pr_debug(1, "%llu polls, %llu reads of the file", (unsigned long long)f->polls,
			 (unsigned long long)f->reloads);
	}
	follow__delete(f);
	return err < 0 ? exit_from_err(err) : EXIT_OK;
}

/*
 * A launched target shares our terminal: its input is /dev/null and its
 * output is kept and shown after the screen closes (it is set up by
 * recorder__new(), which forks the target).
 */
static int top_record(bool screen)
{
	struct record_opts o;
	struct sampler s = { 0 };
	struct recorder_stats rs;
	struct capture *io = NULL;
	struct follow *f = NULL;
	struct tui *t = NULL;
	int err;

	err = record_opts__from_args(&o, opts.cmd);
	if (err < 0)
		return exit_from_err(err);
	if (o.argv && screen)
		io = capture__start(CAPTURE_STDIN | CAPTURE_STDOUT | CAPTURE_STDERR);
	err = recorder__new(&o, &s.rec);
	capture__end(io);
	if (err < 0) {
		capture__replay(io, stderr);
		return exit_from_err(err);
	}
	if (screen) {
		err = follow__open(recorder__path(s.rec), &f);
		if (!err)
			err = tui__start(&t);
		if (!err)
			err = sampler__start(&s);
		if (!err)
			err = top_loop(t, f, &s);
		tui__stop(t);
		sampler__join(&s);
	} else {
		/* --stdio with a target: record in the foreground, then print */
		err = sampler__start(&s);
		if (!err) {
			sigset_t set;
			int sig;

			sigemptyset(&set);
			sigaddset(&set, SIGINT);
			sigaddset(&set, SIGTERM);
			pthread_sigmask(SIG_BLOCK, &set, NULL);
			for (;;) {
				struct timespec ts = { 0, 100 * 1000000 };

				recorder__stats(s.rec, &rs);
				if (rs.finished)
					break;
				sig = sigtimedwait(&set, NULL, &ts);
				if (sig > 0)
					break;
			}
			sampler__join(&s);
		}
	}
	capture__replay(io, stderr);
	if (!err && s.err < 0)
		err = s.err;
	recorder__stats(s.rec, &rs);
	if (!err && !screen) {
		char path[4096];
		int rc;

		snprintf(path, sizeof(path), "%s", recorder__path(s.rec));
		rc = recorder__delete(s.rec);
		if (rc < 0)
			return exit_from_err(rc);
		return top_stdio(path);
	}
	{
		char path[4096];
		int rc;

		snprintf(path, sizeof(path), "%s", s.rec ? recorder__path(s.rec) : "");
		rc = recorder__delete(s.rec);
		if (!err && rc < 0)
			err = rc;
		if (s.rec && !err && !record_args.quiet)
			status__summary(stderr, &rs, path, NULL, true);
	}
	/* the reader goes after the writer (see check_fd in util/db/db.c) */
	follow__delete(f);
	return err < 0 ? exit_from_err(err) : EXIT_OK;
}

static int top_run(void)
{
	/* keys come from stdin: without a terminal on both (or TERM=dumb), print once */
	bool screen = !opts.stdio && tui__usable();
	bool target = target_args.pid_args || target_args.process || opts.cmd;

	if (target)
		return top_record(screen);
	/* a file only (the newest here when none is named): nothing but reading */
	if (caps__drop_all())
		return EXIT_PERM;
	return screen ? top_follow(opts.file) : top_stdio(opts.file);
}

/* Where "--" starts the command to launch, or argc. */
static int dashdash(int argc, const char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i;
	return argc;
}

/*
 * [cpu|heap] first, then the options again (popt stops at the first
 * non-option: POPT_CONTEXT_POSIXMEHARDER), then FILE or -- CMD.
 */
static int top_args(poptContext *pc, int n_cmd)
{
	const char **args;
	int n, ret;

	args = options_args(*pc, &n);
	if (n > n_cmd && (!strcmp(args[0], "cpu") || !strcmp(args[0], "heap"))) {
		opts.mode = !strcmp(args[0], "cpu") ? TOP_CPU : TOP_HEAP;
		pc[1] = poptGetContext("rsprof top", n, args, top_options,
				       POPT_CONTEXT_POSIXMEHARDER);
		ret = options_parse(pc[1], top_usage, top_option, NULL);
		if (ret)
			return ret;
		args = options_args(pc[1], &n);
	}
	if (n_cmd) {
		if (n < n_cmd || n_cmd == 0) {
			pr_err("no command after --");
			return -RSPROF_EUSAGE;
		}
		opts.cmd = &args[n - n_cmd];
		n -= n_cmd;
	}
	if (n > 1 || (n == 1 && (opts.cmd || target_args.pid_args || target_args.process))) {
		pr_err("unexpected argument '%s'", args[n - 1]);
		pr_hint("give one of -p PID, -P NAME, -- CMD or a profile FILE");
		return -RSPROF_EUSAGE;
	}
	if (n == 1)
		opts.file = args[0];
	if ((target_args.pid_args != 0) + (target_args.process != NULL) + (opts.cmd != NULL) > 1) {
		pr_err("-p, -P and -- CMD cannot be used together");
		return -RSPROF_EUSAGE;
	}
	return 0;
}

int cmd_top(int argc, const char **argv)
{
	int dd = dashdash(argc, argv);
	int n_cmd = dd < argc ? argc - dd - 1 : 0;
	poptContext pc[2] = { NULL, NULL };
	int ret;

	opts.mode = TOP_BOTH;
	pc[0] = poptGetContext("rsprof top", argc, argv, top_options, POPT_CONTEXT_POSIXMEHARDER);
	ret = options_parse(pc[0], top_usage, top_option, NULL);
	if (ret == 0) {
		if (dd < argc && n_cmd == 0) {
			pr_err("no command after --");
			ret = -RSPROF_EUSAGE;
		} else {
			ret = top_args(pc, n_cmd);
		}
	}
	if (ret == 0)
		ret = top_run();
	else
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	poptFreeContext(pc[1]);
	poptFreeContext(pc[0]);
	record_args__free();
	return ret;
}
