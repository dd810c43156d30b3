/* util/format: numbers, tables, CSV, JSON. */
#include "util/output/format.h"

#include <locale.h>
#include <stdlib.h>

#include "tap.h"

/* What fn wrote to a memory stream. */
static char *captured(void (*fn)(FILE *f, void *ctx), void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, ctx);
	fclose(f);
	return buf;
}

static void test_numbers(void)
{
	char b[64];

	is_str(format__bytes(0, b, sizeof(b)), "0 B", "0 B");
	is_str(format__bytes(1023, b, sizeof(b)), "1023 B", "1023 B");
	is_str(format__bytes(1536, b, sizeof(b)), "1.50 KiB", "1.5 KiB");
	is_str(format__bytes(10 * 1024 * 1024, b, sizeof(b)), "10.0 MiB", "10 MiB");
	is_str(format__bytes(150LL * 1024 * 1024 * 1024, b, sizeof(b)), "150 GiB", "150 GiB");
	is_str(format__bytes(-2048, b, sizeof(b)), "-2.00 KiB", "negative");
	is_str(format__bytes(INT64_MIN, b, sizeof(b)), "-8192 PiB", "INT64_MIN does not overflow");
	is_str(format__bytes_delta(1536, b, sizeof(b)), "+1.50 KiB", "delta +");
	is_str(format__bytes_delta(-5, b, sizeof(b)), "-5 B", "delta -");
	is_str(format__bytes_delta(0, b, sizeof(b)), "0 B", "delta 0");
	is_str(format__pct(60, b, sizeof(b)), "60.0%", "pct");
	is_str(format__pct(0.01, b, sizeof(b)), "<0.1%", "tiny pct");
	is_str(format__pct(0, b, sizeof(b)), "0.0%", "zero pct");
	is_str(format__count(0, b, sizeof(b)), "0", "count 0");
	is_str(format__count(999, b, sizeof(b)), "999", "count 999");
	is_str(format__count(1000, b, sizeof(b)), "1,000", "count 1,000");
	is_str(format__count(1234567, b, sizeof(b)), "1,234,567", "count 1,234,567");
	is_str(format__count(1234567, b, 4), "1,2", "count cut to the buffer");
	is_int(format__width("abc"), 3, "width ascii");
	is_int(format__width("a\xe2\x80\xa6" "b"), 3, "width counts code points");
	setenv("COLUMNS", "77", 1);
	is_int(format__term_width(), 77, "COLUMNS wins");
	setenv("COLUMNS", "junk", 1);
	ok(format__term_width() >= 20, "bad COLUMNS ignored");
	unsetenv("COLUMNS");
}

static struct table *sample_table(void)
{
	static const struct table_col cols[] = {
		{ "N", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Location", TABLE_LEFT, TABLE_TRUNC_LEFT, 8 },
		{ "Function", TABLE_LEFT, TABLE_TRUNC_RIGHT, 6 },
	};
	struct table *t = table__new(cols, 3);
	const char *r1[] = { "1", "src/very/long/path/parser.rs:42", "parse_line_of_input" };
	const char *r2[] = { "100", "a.c:1", NULL };
	const char *r3[] = { "7", "x,\"y\"", "multi\nline" };

	if (!t || table__add_row(t, r1) || table__add_row(t, r2) || table__add_row(t, r3))
		return NULL;
	return t;
}

static void print_wide(FILE *f, void *t)
{
	table__print(t, f, 200);
}

static void print_narrow(FILE *f, void *t)
{
	table__print(t, f, 40);
}

static void print_csv(FILE *f, void *t)
{
	table__print_csv(t, f);
}

static void test_table(void)
{
	struct table *t = sample_table();
	char *s;

	ok(t != NULL, "table with three rows");
	if (!t)
		return;
	is_int(table__rows(t), 3, "rows");
	s = captured(print_wide, t);
	is_str(s, "  N  Location                         Function\n"
		  "  1  src/very/long/path/parser.rs:42  parse_line_of_input\n"
		  "100  a.c:1\n"
		  "  7  x,\"y\"                            multi\\x0aline\n",
	       "wide: aligned, last column not padded");
	free(s);
	s = captured(print_narrow, t);
	ok(s && strstr(s, "  ..") && strstr(s, "/parser.rs:42  parse_line") &&
	   !strstr(s, "src/very") && !strstr(s, "of_input"),
	   "narrow: left-cut location, right-cut function");
	if (s)
		printf("# %s", s);
	{
		int bad = 0;

		for (char *l = s, *e; l && *l; l = e + 1) {
			e = strchr(l, '\n');
			if (!e)
				break;
			if (e - l > 40)
				bad = 1;
		}
		ok(!bad, "narrow: lines fit 40 columns");
	}
	free(s);
	s = captured(print_csv, t);
	is_str(s, "N,Location,Function\n"
		  "1,src/very/long/path/parser.rs:42,parse_line_of_input\n"
		  "100,a.c:1,\n"
		  "7,\"x,\"\"y\"\"\",multi\\x0aline\n", "CSV quoting; a newline escaped");
	free(s);
	table__delete(t);
	table__delete(NULL);
}

static void print_names(FILE *f, void *t)
{
	table__print(t, f, 44);
}

/* A name cut keeps its first name and the last ones, one ellipsis style. */
static void test_name_cut(void)
{
	static const struct table_col cols[] = {
		{ "Function", TABLE_LEFT, TABLE_TRUNC_NAME, 12 },
	};
	const char *r1[] = { "hashbrown::raw::inner::RawTableInner::find_insert_index_in_group" };
	const char *r2[] = { "a_single_name_that_is_far_too_long_for_the_column_width" };
	struct table *t = table__new(cols, 1);
	char *s;
	int w;

	is_str(format__ellipsis(&w), "..", "C locale: the ASCII ellipsis");
	is_int(w, 2, "... two columns");
	if (!t || table__add_row(t, r1) || table__add_row(t, r2)) {
		ok(0, "name table");
		table__delete(t);
		return;
	}
	s = captured(print_names, t);
	ok(s && strstr(s, "hashbrown::..::find_insert_index_in_group\n"),
	   "a path keeps its crate and its function");
	ok(s && strstr(s, "\n.._that_is_far_too_long_for_the_column_width\n"),
	   "one name: cut from the left");
	if (s)
		printf("# %s", s);
	free(s);
	table__delete(t);
	if (setlocale(LC_CTYPE, "C.UTF-8")) {
		is_str(format__ellipsis(&w), "\u2026", "UTF-8 locale: one ellipsis character");
		is_int(w, 1, "... one column");
		setlocale(LC_CTYPE, "C");
	} else {
		ok(1, "# SKIP no C.UTF-8 locale");
		ok(1, "# SKIP no C.UTF-8 locale");
	}
}

static void wrap_80(FILE *f, void *ctx)
{
	format__wrap_comment(ctx, 40, f);
}

/* Header lines within the width, the rest under the value. */
static void test_wrap(void)
{
	char *s = captured(wrap_80, "# target:   prog (pid 12)  /a/very/long/path/to/the/prog\n"
			   "# short:    fits\n"
			   "# list:     one, two, three, four, five, six, seven\n"
			   "# word:     aWordFarTooLongToBreakAnywhereAtAllReally\n");

	is_str(s, "# target:   prog (pid 12)\n"
		  "#           /a/very/long/path/to/the/prog\n"
		  "# short:    fits\n"
		  "# list:     one, two, three, four, five,\n"
		  "#           six, seven\n"
		  "# word:     aWordFarTooLongToBreakAnywhereAtAllReally\n",
	       "comment lines wrapped under their values");
	free(s);
}

static void write_json(FILE *f, void *ctx)
{
	struct json j;

	json__init(&j, f);
	json__begin_object(&j, NULL);
	json__string(&j, "s", "a\"b\\c\n\x01");
	json__string(&j, "null", NULL);
	json__int(&j, "i", -3);
	json__uint(&j, "u", 18446744073709551615ULL);
	json__double(&j, "d", 0.5);
	json__double(&j, "nan", 0.0 / 0.0);
	json__bool(&j, "b", true);
	json__begin_array(&j, "empty");
	json__end_array(&j);
	json__begin_array(&j, "a");
	json__int(&j, NULL, 1);
	json__begin_object(&j, NULL);
	json__null(&j, "x");
	json__end_object(&j);
	json__end_array(&j);
	json__end_object(&j);
	json__finish(&j);
}

static void test_json(void)
{
	char *s = captured(write_json, NULL);

	is_str(s, "{\n"
		  "  \"s\": \"a\\\"b\\\\c\\n\\u0001\",\n"
		  "  \"null\": null,\n"
		  "  \"i\": -3,\n"
		  "  \"u\": 18446744073709551615,\n"
		  "  \"d\": 0.5,\n"
		  "  \"nan\": null,\n"
		  "  \"b\": true,\n"
		  "  \"empty\": [],\n"
		  "  \"a\": [\n"
		  "    1,\n"
		  "    {\n"
		  "      \"x\": null\n"
		  "    }\n"
		  "  ]\n"
		  "}\n", "JSON: escapes, nesting, commas, empty array");
	free(s);
}

int main(void)
{
	test_numbers();
	test_table();
	test_name_cut();
	test_wrap();
	test_json();
	return done_testing();
}
