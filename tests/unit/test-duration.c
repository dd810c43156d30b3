#include "util/duration.h"

#include <errno.h>
#include <stdint.h>

#include "tap.h"

static void parses(const char *s, uint64_t want)
{
	uint64_t ms = 0;
	int err = duration__parse(s, &ms);

	ok(!err && ms == want, "'%s' is %llu ms (got %llu, err %d)", s,
	   (unsigned long long)want, (unsigned long long)ms, err);
}

static void refuses(const char *s)
{
	uint64_t ms;

	ok(duration__parse(s, &ms) == -EINVAL, "'%s' is refused", s);
}

int main(void)
{
	uint64_t a, b;
	char buf[32];

	parses("30s", 30000);
	parses("5m", 300000);
	parses("2h", 7200000);
	parses("1h30m", 5400000);
	parses("250ms", 250);
	parses("10", 10000);
	parses("1.5", 1500);
	parses("0", 0);
	parses("1m30s", 90000);
	parses("1d", 86400000);
	refuses("");
	refuses("abc");
	refuses("10x");
	refuses("-5s");
	refuses("1e3");
	refuses("5 s");
	refuses("1h30");

	ok(!duration__parse_range("10s..20s", &a, &b) && a == 10000 && b == 20000, "range A..B");
	ok(!duration__parse_range("..30s", &a, &b) && a == UINT64_MAX && b == 30000, "range ..B");
	ok(!duration__parse_range("5s..", &a, &b) && a == 5000 && b == UINT64_MAX, "range A..");
	ok(duration__parse_range("20s..10s", &a, &b) == -EINVAL, "range with A > B refused");
	ok(duration__parse_range("..", &a, &b) == -EINVAL, "empty range refused");
	ok(duration__parse_range("10s", &a, &b) == -EINVAL, "range without .. refused");

	is_str(duration__format(850, buf, sizeof(buf)), "850ms", "format ms");
	is_str(duration__format(12345, buf, sizeof(buf)), "12.3s", "format s");
	is_str(duration__format(245000, buf, sizeof(buf)), "4m05s", "format m");
	is_str(duration__format(3720000, buf, sizeof(buf)), "1h02m", "format h");
	return done_testing();
}
