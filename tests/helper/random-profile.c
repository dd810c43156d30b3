/*
 * Writes a random profile (tests/unit/random-profile.h) for the shell tests.
 *
 *   random-profile FILE N SEED [RETAIN_MS [COMPACT_MS]]
 *       N checkpoints of 1 s; RETAIN_MS as record --retain, COMPACT_MS the
 *       age at which blocks are compacted (0: none)
 *   FIXTURE_KILL set: the writer ends after the last checkpoint's commit as
 *   if killed, without closing the file (a compaction in the middle of a
 *   block stays so).
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/unit/random-profile.h"

int main(int argc, char **argv)
{
	struct gen g = { 0 };
	int err;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: random-profile FILE N SEED [RETAIN_MS [COMPACT_MS]]\n");
		return 2;
	}
	compact_ms = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
	err = gen_file_retain(argv[1], strtoull(argv[3], NULL, 10), 1, atoi(argv[2]), false,
			      &g, argc > 4 ? strtoull(argv[4], NULL, 10) : 0);
	if (err)
		fprintf(stderr, "random-profile: cannot write %s: %d\n", argv[1], err);
	return err ? 1 : 0;
}
