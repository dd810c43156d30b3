#ifndef RSPROF_TESTS_TAP_H
#define RSPROF_TESTS_TAP_H

/*
 * A tiny TAP producer for the C unit tests: prove runs the binaries.
 *   ok(cond, "name %d", i); is_int(got, want, "name"); is_str(got, want, "name");
 *   tap_skip("why");   a skip outside CI, a failure on CI (CI set)
 *   return done_testing();
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static inline int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static inline int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return pass;
}

#define is_int(got, want, ...) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, __VA_ARGS__)) \
		printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	if (!ok((g_ && w_ && !strcmp(g_, w_)) || (!g_ && !w_), __VA_ARGS__)) \
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

/* Something this machine lacks: a skip, or on CI (CI set) a failure. */
#define tap_skip(...) do { \
	if (getenv("CI")) { \
		ok(0, __VA_ARGS__); \
	} else { \
		printf("ok %d # skip ", ++tap_n); \
		printf(__VA_ARGS__); \
		putchar('\n'); \
	} \
} while (0)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
