#include "util/output/format.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/output/escape.h"
#include "util/output/styled.h"

char *format__bytes(int64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	uint64_t mag = bytes < 0 ? -(uint64_t)bytes : (uint64_t)bytes;
	const char *sign = bytes < 0 ? "-" : "";
	double v;
	int u = -1;

	if (mag < 1024) {
		snprintf(buf, len, "%s%llu B", sign, (unsigned long long)mag);
		return buf;
	}
	v = (double)mag;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	/* IEC units (the factor is 1024), three significant digits: 1.50 KiB, 15.0 MiB, 150 GiB */
	if (v < 10)
		snprintf(buf, len, "%s%.2f %s", sign, v, unit[u]);
	else if (v < 100)
		snprintf(buf, len, "%s%.1f %s", sign, v, unit[u]);
	else
		snprintf(buf, len, "%s%.0f %s", sign, v, unit[u]);
	return buf;
}

char *format__bytes_delta(int64_t bytes, char *buf, size_t len)
{
	if (bytes > 0 && len > 1) {
		buf[0] = '+';
		format__bytes(bytes, buf + 1, len - 1);
	} else {
		format__bytes(bytes, buf, len);
	}
	return buf;
}

char *format__pct(double pct, char *buf, size_t len)
{
	if (pct > 0 && pct < 0.05)
		snprintf(buf, len, "<0.1%%");
	else
		snprintf(buf, len, "%.1f%%", pct);
	return buf;
}

char *format__count(uint64_t n, char *buf, size_t len)
{
	char digits[32];
	int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;

	for (int i = 0; i < nd && o + 1 < len; i++) {
		if (i && (nd - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (len)
		buf[o < len ? o : len - 1] = '\0';
	return buf;
}

int format__term_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;

	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);

		if (!*end && v >= 20 && v <= 10000)
			return (int)v;
	}
	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 100;
}

int format__width(const char *s)
{
	int w = 0;

	for (; s && *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

/* Byte offset of the code point that starts at display column col. */
static size_t byte_at_col(const char *s, int col)
{
	size_t i = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (col == 0)
				return i;
			col--;
		}
	}
	return i;
}

/* ---- tables -------------------------------------------------------------- */

struct table {
	struct table_col *cols;	/* titles point into titles[] */
	char **titles;		/* escaped copies */
	int n_cols;
	char **cells;		/* n_rows * n_cols */
	unsigned char *styles;	/* per row: enum text_style */
	int n_rows, cap_rows;
	bool color;
	int *fixed;		/* table__flush(): the widths, fixed by the first call */
};

struct table *table__new(const struct table_col *cols, int n_cols)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cols = calloc(n_cols, sizeof(*cols));
	t->titles = calloc(n_cols, sizeof(*t->titles));
	t->n_cols = n_cols;
	if (!t->cols || !t->titles) {
		table__delete(t);
		return NULL;
	}
	memcpy(t->cols, cols, n_cols * sizeof(*cols));
	for (int c = 0; c < n_cols; c++) {
		t->titles[c] = escape__dup(cols[c].title ? cols[c].title : "");
		if (!t->titles[c]) {
			table__delete(t);
			return NULL;
		}
		t->cols[c].title = t->titles[c];
	}
	return t;
}

void table__delete(struct table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	for (int c = 0; t->titles && c < t->n_cols; c++)
		free(t->titles[c]);
	free(t->titles);
	free(t->fixed);
	free(t->cells);
	free(t->styles);
	free(t->cols);
	free(t);
}

int table__rows(const struct table *t)
{
	return t->n_rows;
}

int table__add_row(struct table *t, const char *const *cells)
{
	return table__add_row_style(t, cells, TS_NORMAL);
}

void table__set_color(struct table *t, bool color)
{
	t->color = color;
}

int table__add_row_style(struct table *t, const char *const *cells, int style)
{
	char **row;

	if (t->n_rows == t->cap_rows) {
		int cap = t->cap_rows ? t->cap_rows * 2 : 32;
		char **v = realloc(t->cells, (size_t)cap * t->n_cols * sizeof(*v));
		unsigned char *st;

		if (!v)
			return -ENOMEM;
		t->cells = v;
		st = realloc(t->styles, (size_t)cap);
		if (!st)
			return -ENOMEM;
		t->styles = st;
		t->cap_rows = cap;
	}
	t->styles[t->n_rows] = (unsigned char)style;
	row = t->cells + (size_t)t->n_rows * t->n_cols;
	/* escaped on the way in: widths count what the terminal will show */
	for (int c = 0; c < t->n_cols; c++) {
		row[c] = escape__dup(cells[c] ? cells[c] : "");
		if (!row[c]) {
			while (c--)
				free(row[c]);
			return -ENOMEM;
		}
	}
	t->n_rows++;
	return 0;
}

const char *format__ellipsis(int *cols)
{
	bool utf8 = MB_CUR_MAX > 1;

	if (cols)
		*cols = utf8 ? 1 : 2;
	return utf8 ? "\u2026" : "..";
}

/*
 * A name path cut to w columns (ell of ew columns): its first name, then
 * the longest tail from a "::" on that fits. 0 when there is no such cut.
 */
static int print_name_cut(FILE *f, const char *s, int w, const char *ell, int ew)
{
	const char *first = strstr(s, "::"), *p;
	int head;

	if (!first)
		return 0;
	head = format__width(s) - format__width(first) + 2;	/* "crate::" */
	for (p = first + 2; (p = strstr(p, "::")); p += 2) {
		if (head + ew + format__width(p) > w)
			continue;
		fwrite(s, 1, (size_t)(first + 2 - s), f);
		fputs(ell, f);
		fputs(p, f);
		return 1;
	}
	return 0;
}

/* A cell padded to w columns, or shortened with the ellipsis on the cut side. */
static void print_cell(FILE *f, const char *s, int w, enum table_align align,
		       enum table_trunc trunc, bool last)
{
	int ew;
	const char *ell = format__ellipsis(&ew);
	int sw = format__width(s);
	int pad = sw < w ? w - sw : 0;

	if (sw > w && trunc != TABLE_TRUNC_NONE && w > ew) {
		if (trunc == TABLE_TRUNC_NAME && print_name_cut(f, s, w, ell, ew))
			return;
		if (trunc == TABLE_TRUNC_LEFT || trunc == TABLE_TRUNC_NAME) {
			fputs(ell, f);
			fputs(s + byte_at_col(s, sw - (w - ew)), f);
		} else {
			fwrite(s, 1, byte_at_col(s, w - ew), f);
			fputs(ell, f);
		}
		return;
	}
	if (align == TABLE_RIGHT)
		fprintf(f, "%*s", pad, "");
	fputs(s, f);
	if (align == TABLE_LEFT && !last)
		fprintf(f, "%*s", pad, "");
}

/* The column a comment line's value starts at: after "# key:" and its blanks. */
static int value_col(const char *l)
{
	const char *p = l + 1, *colon;

	while (*p == ' ')
		p++;
	if (p - l > 2)		/* "#    ..." : a continuation already */
		return (int)(p - l);
	colon = strchr(p, ':');
	if (!colon || strchr(p, ' ') < colon)
		return 2;
	for (p = colon + 1; *p == ' '; p++)
		;
	return (int)(p - l);
}

/* Where a line longer than width breaks: a byte offset after from, or 0. */
static size_t wrap_at(const char *l, size_t from, int width)
{
	size_t max = byte_at_col(l, width);
	static const char *const seps[] = { "  ", ", ", " " };

	for (size_t k = 0; k < 3; k++) {
		size_t n = strlen(seps[k]);

		for (size_t i = max; i > from; i--) {
			if (strncmp(l + i, seps[k], n))
				continue;
			/* after a comma the comma stays on the first line */
			return seps[k][0] == ',' ? i + 1 : i;
		}
	}
	return 0;
}

void format__wrap_comment(const char *text, int width, FILE *f)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		char *line = strndup(text, n), *l = line;
		int indent;

		if (!line) {
			fwrite(text, 1, n, f);
			fputc('\n', f);
		} else {
			indent = l[0] == '#' ? value_col(l) : 0;
			if (indent > width / 2)
				indent = width / 2;
			while (width > 0 && format__width(l) > width) {
				size_t at = wrap_at(l, (size_t)indent, width);

				if (!at)
					break;
				fprintf(f, "%.*s\n", (int)at, l);
				l += at;
				while (*l == ' ')
					l++;
				/* the rest under the value: reuse the bytes before it */
				l -= indent;
				memset(l, ' ', (size_t)indent);
				if (line[0] == '#')
					l[0] = '#';
			}
			fprintf(f, "%s\n", l);
			free(line);
		}
		text += n + (nl != NULL);
	}
}

char *format__cut(const char *s, int w, enum table_trunc trunc, char *buf, size_t len)
{
	FILE *f;

	if (!len)
		return buf;
	if (format__width(s) <= w || trunc == TABLE_TRUNC_NONE || !(f = fmemopen(buf, len, "w"))) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	print_cell(f, s, w, TABLE_LEFT, trunc, true);
	fclose(f);
	buf[len - 1] = '\0';
	return buf;
}

/* Column widths for the rows held, fitting width (0: the terminal's). NULL on -ENOMEM. */
static int *table_widths(const struct table *t, int width)
{
	int *w = calloc(t->n_cols, sizeof(int));
	int total = 0;

	if (!w)
		return NULL;
	if (width <= 0)
		width = format__term_width();
	for (int c = 0; c < t->n_cols; c++) {
		w[c] = format__width(t->cols[c].title);
		for (int r = 0; r < t->n_rows; r++) {
			int cw = format__width(t->cells[(size_t)r * t->n_cols + c]);

			if (cw > w[c])
				w[c] = cw;
		}
		total += w[c] + (c ? 2 : 0);
	}
	/* give way: shorten the widest truncatable column, one column at a time */
	while (total > width) {
		int best = -1;

		for (int c = 0; c < t->n_cols; c++) {
			int min = t->cols[c].min_width > 4 ? t->cols[c].min_width : 4;

			if (t->cols[c].trunc == TABLE_TRUNC_NONE || w[c] <= min)
				continue;
			if (best < 0 || w[c] > w[best])
				best = c;
		}
		if (best < 0)
			break;
		w[best]--;
		total--;
	}
	return w;
}

/* The header (when header) and the rows held, in widths w. */
static int table_lines(const struct table *t, FILE *f, const int *w, bool header)
{
	for (int r = header ? -1 : 0; r < t->n_rows; r++) {
		const char *on;
		char *line = NULL;
		size_t len = 0;
		FILE *lf = open_memstream(&line, &len);

		if (!lf)
			return -ENOMEM;
		for (int c = 0; c < t->n_cols; c++) {
			const char *s = r < 0 ? t->cols[c].title : t->cells[(size_t)r * t->n_cols + c];
			bool last = c == t->n_cols - 1;

			if (c)
				fputs("  ", lf);
			print_cell(lf, s, w[c], t->cols[c].align, t->cols[c].trunc, last);
		}
		if (fclose(lf)) {
			free(line);
			return -ENOMEM;
		}
		/* no trailing blanks when the last cells are empty */
		while (len && line[len - 1] == ' ')
			line[--len] = '\0';
		on = t->color ? styled__sgr(r < 0 ? TS_HEAD : t->styles[r]) : NULL;
		fprintf(f, on ? "%s%s\033[m\n" : "%s%s\n", on ? on : "", line);
		free(line);
	}
	return ferror(f) ? -EIO : 0;
}

int table__print(const struct table *t, FILE *f, int width)
{
	int *w = table_widths(t, width);
	int err;

	if (!w)
		return -ENOMEM;
	err = table_lines(t, f, w, true);
	free(w);
	return err;
}

int table__flush(struct table *t, FILE *f, int width)
{
	bool first = !t->fixed;
	int err;

	if (first) {
		t->fixed = table_widths(t, width);
		if (!t->fixed)
			return -ENOMEM;
	}
	err = table_lines(t, f, t->fixed, first);
	for (int i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	t->n_rows = 0;
	return err;
}

void format__csv_field(FILE *f, const char *s)
{
	char *e = NULL;

	if (!s)
		return;
	/* control characters as \xNN (util/output/escape.h): no raw CR or LF either */
	if (escape__needed(s)) {
		e = escape__dup(s);
		if (!e) {
			fputs("?", f);
			return;
		}
		s = e;
	}
	if (!strpbrk(s, ",\"")) {
		fputs(s, f);
	} else {
		fputc('"', f);
		for (const char *p = s; *p; p++) {
			if (*p == '"')
				fputc('"', f);
			fputc(*p, f);
		}
		fputc('"', f);
	}
	free(e);
}

int table__print_csv(const struct table *t, FILE *f)
{
	for (int r = -1; r < t->n_rows; r++) {
		for (int c = 0; c < t->n_cols; c++) {
			if (c)
				fputc(',', f);
			format__csv_field(f, r < 0 ? t->cols[c].title :
					  t->cells[(size_t)r * t->n_cols + c]);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---------------------------------------------------------------- */

void format__json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80) {
			int n = escape__utf8_len((const char *)p);
			unsigned int cp;

			/* what the terminal escaper escapes (C1, bidi) as \uXXXX */
			if (!n) {		/* not UTF-8: the replacement character */
				fputs("\\ufffd", f);
			} else if (!escape__plain_len((const char *)p)) {
				cp = n == 2 ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu) :
				     (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu);
				fprintf(f, "\\u%04x", cp);
			} else {
				fwrite(p, 1, n, f);
			}
			p += n ? n - 1 : 0;
			continue;
		}
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json__init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

/* Comma, newline, indentation and "key": before a value. */
static void json_value_start(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->need_comma[j->depth])
			fputc(',', j->f);
		fputc('\n', j->f);
		fprintf(j->f, "%*s", 2 * j->depth, "");
	}
	if (j->depth < JSON_MAX_DEPTH)
		j->need_comma[j->depth] = true;
	if (key) {
		format__json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_value_start(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH) {
		j->depth++;
		j->need_comma[j->depth] = false;
	}
}

static void json_close(struct json *j, char c)
{
	bool empty = !j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty) {
		fputc('\n', j->f);
		fprintf(j->f, "%*s", 2 * j->depth, "");
	}
	fputc(c, j->f);
}

void json__begin_object(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json__end_object(struct json *j)
{
	json_close(j, '}');
}

void json__begin_array(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json__end_array(struct json *j)
{
	json_close(j, ']');
}

void json__string(struct json *j, const char *key, const char *v)
{
	json_value_start(j, key);
	if (v)
		format__json_string(j->f, v);
	else
		fputs("null", j->f);
}

void json__int(struct json *j, const char *key, long long v)
{
	json_value_start(j, key);
	fprintf(j->f, "%lld", v);
}

void json__uint(struct json *j, const char *key, unsigned long long v)
{
	json_value_start(j, key);
	fprintf(j->f, "%llu", v);
}

void json__double(struct json *j, const char *key, double v)
{
	json_value_start(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void json__bool(struct json *j, const char *key, bool v)
{
	json_value_start(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json__null(struct json *j, const char *key)
{
	json_value_start(j, key);
	fputs("null", j->f);
}

int json__finish(struct json *j)
{
	fputc('\n', j->f);
	return ferror(j->f) ? -EIO : 0;
}
