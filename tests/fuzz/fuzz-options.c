/*
 * Fuzz target: the option parser. The input is an argument list (NUL or
 * newline separated) given to popt with record's and the readers' option
 * tables, then to record_opts__from_args() and the duration parsers, as a
 * command line would be. Built as tests/fuzz/fuzz-reader.c is.
 */
#include <popt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<sanitizer/lsan_interface.h>)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif
#endif

#include "util/duration.h"
#include "util/options.h"
#include "util/record/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct poptOption table[] = {
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_target, 0, "Target:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_record, 0, "Recording:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_output, 0, "Output:", NULL },
	POPT_TABLEEND
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (!getenv("FUZZ_VERBOSE"))
		stderr = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	const char *argv[64];
	int argc = 1, rc;
	poptContext pc;
	uint64_t a, b;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "rsprof record";
	for (char *p = buf, *e; argc < 63 && p <= buf + size; p = e + 1) {
		e = p + strcspn(p, "\n");
		if (e > buf + size)
			e = buf + size;
		*e = '\0';
		argv[argc++] = p;
		if (e == buf + size)
			break;
	}
	argv[argc] = NULL;
	for (int i = 1; i < argc; i++) {
		duration__parse(argv[i], &a);
		duration__parse_range(argv[i], &a, &b);
	}
	memset(&record_args, 0, sizeof(record_args));
	memset(&target_args, 0, sizeof(target_args));
	memset(&output_args, 0, sizeof(output_args));
#ifdef HAVE_LSAN
	/* popt does not free an option's earlier string when it is repeated */
	__lsan_disable();
#endif
	pc = poptGetContext("rsprof record", argc, argv, table, POPT_CONTEXT_POSIXMEHARDER);
	if (pc) {
		while ((rc = poptGetNextOpt(pc)) > 0)
			;
		if (rc == -1) {
			struct record_opts o;

			record_opts__from_args(&o, poptGetArgs(pc));
			options_output_check();
		}
		poptFreeContext(pc);
	}
#ifdef HAVE_LSAN
	__lsan_enable();
#endif
	/* popt's copies of string arguments are the caller's to free */
	free((char *)record_args.output);
	free((char *)record_args.freq);
	free((char *)record_args.interval);
	free((char *)record_args.duration);
	free((char *)record_args.heap_probes);
	free((char *)record_args.heap_sample);
	free((char *)record_args.heap_attribution);
	free((char *)target_args.process);
	for (int i = 0; target_args.pid_args && target_args.pid_args[i]; i++)
		free((char *)target_args.pid_args[i]);
	free(target_args.pid_args);
	free(buf);
	return 0;
}
