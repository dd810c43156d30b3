/*
 * A main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput() once per file named on the command line, and
 * prints TAP. `make test` builds the targets with it under ASan and UBSan
 * (UBSan fatal) and replays tests/fuzz/corpus/: a finding is a crash, so
 * the test fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int main(int argc, char **argv)
{
	int failed = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		long len;

		if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
		    fseek(f, 0, SEEK_SET) || !(buf = malloc(len + 1)) ||
		    fread(buf, 1, len, f) != (size_t)len) {
			printf("not ok %d - %s: cannot read\n", i, argv[i]);
			failed++;
		} else {
			LLVMFuzzerTestOneInput(buf, len);
			printf("ok %d - %s\n", i, argv[i]);
		}
		fflush(stdout);
		free(buf);
		if (f)
			fclose(f);
	}
	printf("1..%d\n", argc - 1);
	return failed != 0;
}
