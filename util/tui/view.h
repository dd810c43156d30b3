#ifndef RSPROF_UTIL_TUI_VIEW_H
#define RSPROF_UTIL_TUI_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "util/tui/follow.h"

/*
 * The screen of `rsprof top`: header (PID, comm, frequency, heap
 * mode, elapsed, output file), the CPU | heap tables side by side or one
 * alone, footer (samples, lost, live heap, peak, checkpoints) and the key
 * help; a filter prompt, a row detail with its series as a sparkline, and
 * the "terminal too small" notice. The view keeps the interactive state
 * (mode, selection, scroll, filter, pause, window); it reads what to show
 * from a struct follow and draws through util/tui/tui.h.
 */
struct tui;

enum top_mode {
	TOP_BOTH,
	TOP_CPU,
	TOP_HEAP,
};

#define TOP_MIN_COLS 80
#define TOP_MIN_ROWS 24
#define TOP_SERIES 60		/* checkpoints in the detail chart */

/* What the header says, filled by the caller from the recorder or the file. */
struct top_status {
	const char *pid, *comm, *freq, *heap_mode, *output;
	uint64_t elapsed_ms;
	bool recording;		/* a recorder of ours is writing the file */
	bool finished;		/* the recording ended */
	const char *state;	/* "target exited (0)", "no new data for 12s"; NULL: none */
};

struct top_view {
	enum top_mode mode;
	int focus;		/* 0: CPU table, 1: heap table (the one with the cursor) */
	int sel[2], first[2];	/* selected row, first row shown */
	bool end[2];		/* End: every row was asked for */
	bool paused;
	bool by_process;	/* a row per process (s toggles) */
	bool windowed;
	uint64_t window_ms;
	bool detail;		/* the selected row's detail is open */
	bool help;		/* the key help is shown (h, ?, F1); any key closes it */
	bool prompt;		/* the filter prompt is open */
	char filter[128];
	char edit[128];
	bool quit;
	int rows;		/* table rows on screen, from the last draw */
	/* the location the detail shows, kept while the ranking moves */
	char d_file[512], d_function[512];
	bool d_has_file, d_has_function;
	int d_line;
	int d_table;		/* 0 CPU, 1 heap */
	/* the detail's series, filled by the caller (follow__series) */
	int64_t cpu_series[TOP_SERIES], heap_series[TOP_SERIES];
	bool series_valid;
};

void top_view__init(struct top_view *v, enum top_mode mode, uint64_t window_ms, bool windowed,
		    bool by_process);

enum top_action {
	TOP_NOTHING,		/* the key meant nothing here */
	TOP_REDRAW,		/* the view changed */
	TOP_REQUERY,		/* ... and asks the file something new */
	TOP_QUIT,
	TOP_ANNOTATE,		/* open the selected row's annotation (key a) */
	TOP_CALLERS,		/* open the selected row's callers (key c) */
};

enum top_action top_view__key(struct top_view *v, int key, const struct follow *f);

/* What to ask the file for the current view. */
void top_view__query(const struct top_view *v, struct follow_query *q);

/* The selected row and which series it has (CPU or heap table), NULL if none. */
const struct live_row *top_view__selected(const struct top_view *v, const struct follow *f,
					  enum live_series *kind);

/* The detail's location as a row (strings owned by v); false when no detail is open. */
bool top_view__detail_row(const struct top_view *v, struct live_row *row, enum live_series *kind);

/* Draw everything (the tables from f, which may be NULL before the first poll). */
void top_view__draw(struct top_view *v, struct tui *t, const struct follow *f,
		    const struct top_status *st);

#endif
