/*
 * Writes a fixture profile of known numbers (tests/unit/fixture.h) for the
 * shell tests and the benchmarks.
 *
 *   fixture FILE [KIND]   KIND: small (the default), big, big-retain, day,
 *                         cpu-only, or history (the small one with an
 *                         allocation history: tests/unit/history-fixture.h)
 */
#include <stdio.h>
#include <string.h>

#include "tests/unit/fixture.h"
#include "tests/unit/history-fixture.h"

int main(int argc, char **argv)
{
	const char *kind = argc > 2 ? argv[2] : "small";
	int err;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: fixture FILE [small|big|big-retain|day|cpu-only|history]\n");
		return 2;
	}
	if (!strcmp(kind, "history")) {
		err = history_fixture__write(argv[1]);
	} else {
		enum fixture_kind k = !strcmp(kind, "big") ? FIXTURE_BIG :
				      !strcmp(kind, "big-retain") ? FIXTURE_BIG_RETAIN :
				      !strcmp(kind, "day") ? FIXTURE_DAY :
				      !strcmp(kind, "cpu-only") ? FIXTURE_CPU_ONLY : FIXTURE_SMALL;

		err = fixture__write(argv[1], k);
	}
	if (err)
		fprintf(stderr, "fixture: cannot write fixture %s: %d\n", argv[1], err);
	return err ? 1 : 0;
}
