#ifndef RSPROF_UTIL_OUTPUT_FORMAT_H
#define RSPROF_UTIL_OUTPUT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Output formatting shared by the readers (report, diff, timeline, info,
 * query, top --stdio): numbers for humans, text tables that fit the
 * terminal, CSV (RFC 4180) and JSON.
 */

/* "0 B", "512 B", "1.50 KiB", "12.0 MiB", "3.21 GiB" (IEC: 1 KiB = 1024 B); negative values keep the sign. */
char *format__bytes(int64_t bytes, char *buf, size_t len);
/* Signed form for deltas: "+1.50 MiB", "-512 B", "0 B". */
char *format__bytes_delta(int64_t bytes, char *buf, size_t len);
/* "12.3%" (one decimal; "<0.1%" for tiny non-zero shares). */
char *format__pct(double pct, char *buf, size_t len);
/* "1234567" grouped as "1,234,567". */
char *format__count(uint64_t n, char *buf, size_t len);

/*
 * Width of the output in columns: $COLUMNS when set and sane, else the
 * terminal's width when stdout is a tty, else 100.
 */
int format__term_width(void);

/* Display width of a UTF-8 string (one column per code point). */
int format__width(const char *s);

/*
 * The mark of a shortened text, the same everywhere: "…" (one column) when
 * the locale's charset is multibyte (UTF-8), ".." (two) otherwise, as in
 * the C locale of a pipe. *cols (may be NULL) gets its width.
 */
const char *format__ellipsis(int *cols);

/* A text table: columns declared up front, rows added as strings (copied). */
enum table_align {
	TABLE_LEFT,
	TABLE_RIGHT,
};

enum table_trunc {
	TABLE_TRUNC_NONE,	/* never shortened */
	TABLE_TRUNC_RIGHT,	/* keep the start: "very_long_fun…" */
	TABLE_TRUNC_LEFT,	/* keep the end: "…/src/parser.rs:42" */
	/* a path of names: keep the first and the last ones that fit,
	 * "hashbrown::…::RawTableInner::find_insert_index_in_group" */
	TABLE_TRUNC_NAME,
};

struct table_col {
	const char *title;
	enum table_align align;
	enum table_trunc trunc;	/* how the column gives way when the table is too wide */
	int min_width;		/* never narrower than this when shortened */
};

/*
 * s shortened to w columns the way a table column of that kind is (the
 * ellipsis on the cut side), into buf; s itself when it fits. Returns buf.
 */
char *format__cut(const char *s, int w, enum table_trunc trunc, char *buf, size_t len);

/*
 * Comment lines ("# key:     value") printed within width columns (<= 0:
 * no limit): a longer line breaks at the last two blanks that fit, else
 * after the last ", ", else at the last blank, and goes on under its
 * value ("#" and blanks to the value's column). A word longer than the
 * room stays whole.
 */
void format__wrap_comment(const char *text, int width, FILE *f);

struct table;

/* The columns are copied. NULL on -ENOMEM. */
struct table *table__new(const struct table_col *cols, int n_cols);
void table__delete(struct table *t);	/* NULL ok */
/*
 * cells: n_cols strings (NULL prints as ""), copied escaped for the terminal
 * (util/output/escape.h), as the titles are. 0 or -ENOMEM.
 */
int table__add_row(struct table *t, const char *const *cells);
/* The same with the row's style (util/output/styled.h), shown in colour. */
int table__add_row_style(struct table *t, const char *const *cells, int style);
int table__rows(const struct table *t);
/* Print the header and the styled rows in colour (ANSI SGR). */
void table__set_color(struct table *t, bool color);
/*
 * Print with a header line, columns two spaces apart, fitting width columns
 * (0: format__term_width()): truncatable columns are shortened, widest
 * first, down to their min_width. Returns 0 or -EIO when writing failed.
 */
int table__print(const struct table *t, FILE *f, int width);
/*
 * Streaming: print the rows held and forget them. The first call fixes the
 * column widths from the rows it has (hold a first batch) and prints the
 * header; later calls print their rows in those widths, a wider cell
 * running over. 0, -ENOMEM or -EIO.
 */
int table__flush(struct table *t, FILE *f, int width);
/* Header row and rows as CSV, fields quoted when needed. */
int table__print_csv(const struct table *t, FILE *f);

/*
 * One CSV field, quoted when it holds a comma or a quote; control characters
 * (CR and LF too) and invalid UTF-8 are escaped (util/output/escape.h).
 */
void format__csv_field(FILE *f, const char *s);

/*
 * A JSON writer: pretty-printed, commas and string escaping handled. key is
 * the member name inside an object and NULL inside an array or at the top.
 *
 *	struct json j;
 *	json__init(&j, stdout);
 *	json__begin_object(&j, NULL);
 *	json__string(&j, "file", path);
 *	json__begin_array(&j, "rows");
 *	...
 *	json__end_array(&j);
 *	json__end_object(&j);
 *	json__finish(&j);	(newline; returns -EIO on a write error)
 */
#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
};

void json__init(struct json *j, FILE *f);
void json__begin_object(struct json *j, const char *key);
void json__end_object(struct json *j);
void json__begin_array(struct json *j, const char *key);
void json__end_array(struct json *j);
void json__string(struct json *j, const char *key, const char *v);	/* NULL: null */
void json__int(struct json *j, const char *key, long long v);
void json__uint(struct json *j, const char *key, unsigned long long v);
void json__double(struct json *j, const char *key, double v);	/* NaN/inf: null */
void json__bool(struct json *j, const char *key, bool v);
void json__null(struct json *j, const char *key);
int json__finish(struct json *j);

/*
 * A JSON string literal with quotes and escapes, to f: control characters
 * (C0, DEL, C1) as \uXXXX, bytes that are not UTF-8 as U+FFFD.
 */
void format__json_string(FILE *f, const char *s);

#endif
