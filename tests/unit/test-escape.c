/* util/output/escape.h: what reaches a terminal from a profile. */
#include "util/output/escape.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

static char *captured(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	escape__fputs(s, f);
	fclose(f);
	return buf;
}

static void check(const char *in, const char *want, const char *what)
{
	char buf[256], *d = escape__dup(in), *c = captured(in);

	is_str(escape__str(in, buf, sizeof(buf)), want, "str: %s", what);
	is_str(d, want, "dup: %s", what);
	is_str(c, want, "fputs: %s", what);
	ok(escape__needed(in) == (strcmp(in, want) != 0), "needed: %s", what);
	free(d);
	free(c);
}

int main(void)
{
	char small[8];

	check("src/cache.rs:201", "src/cache.rs:201", "plain ASCII unchanged");
	check("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5",
	      "valid UTF-8 unchanged");
	check("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07", "OSC title sequence");
	check("a\x1b[2Jb", "a\\x1b[2Jb", "clear screen");
	check("line\r\nforged", "line\\x0d\\x0aforged", "CR and LF");
	check("tab\there", "tab\\x09here", "tab");
	check("del\x7f", "del\\x7f", "DEL");
	check("csi\xc2\x9b" "2J", "csi\\xc2\\x9b2J", "C1 CSI (U+009B)");
	check("\xe2\x80\xae" "evil", "\\xe2\\x80\\xaeevil", "bidi override U+202E");
	check("\xe2\x81\xa6x", "\\xe2\\x81\\xa6x", "bidi isolate U+2066");
	check("bad\xff", "bad\\xff", "0xff");
	check("\xc3", "\\xc3", "truncated sequence");
	check("\xc0\xaf", "\\xc0\\xaf", "overlong");
	check("\xed\xa0\x80", "\\xed\\xa0\\x80", "surrogate");
	check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF");
	check("\x80x", "\\x80x", "stray continuation byte");
	check("", "", "empty");

	is_str(escape__str(NULL, small, sizeof(small)), "", "NULL gives empty");
	ok(escape__dup(NULL) == NULL, "dup of NULL is NULL");
	is_str(escape__str("abc\x1b", small, 6), "abc", "cut before an escape that does not fit");
	is_str(escape__str("abcdefghij", small, sizeof(small)), "abcdefg", "cut, NUL-terminated");

	is_int(escape__utf8_len("a"), 1, "utf8_len ASCII");
	is_int(escape__utf8_len("\xc3\xa9"), 2, "utf8_len 2");
	is_int(escape__utf8_len("\xe2\x86\x92"), 3, "utf8_len 3");
	is_int(escape__utf8_len("\xf0\x9f\x94\xa5"), 4, "utf8_len 4");
	is_int(escape__utf8_len("\xff"), 0, "utf8_len invalid");
	is_int(escape__utf8_len("\xe2\x86"), 0, "utf8_len truncated");
	is_int(escape__utf8_len(""), 0, "utf8_len end");
	return done_testing();
}
