#ifndef RSPROF_UTIL_OUTPUT_PPROF_H
#define RSPROF_UTIL_OUTPUT_PPROF_H

#include <stdint.h>
#include <stdio.h>

/*
 * A profile in pprof's format (github.com/google/pprof proto/profile.proto),
 * gzipped: what `go tool pprof`, Parca and Pyroscope read. Built
 * from db_query_stacks() stacks; each address becomes one Location whose
 * Lines are its inline chain (innermost first, as the format wants), each
 * (function, file) one Function.
 */
struct pprof;
struct maps;
struct prof_stack;

enum pprof_kind {
	PPROF_CPU,	/* samples/count, cpu/nanoseconds; period = 1e9 / frequency */
	PPROF_HEAP,	/* alloc_objects/count, alloc_space/bytes, inuse_objects/count,
			 * inuse_space/bytes (the default) */
};

/* NULL on -ENOMEM. time_ns: start of the recording (Unix), duration_ns its length. */
struct pprof *pprof__new(enum pprof_kind kind, uint64_t period_ns, int64_t time_ns,
			 int64_t duration_ns);
/*
 * The target's mappings (db_query_maps()); the executable ones give
 * locations their Mapping with start, limit, offset and build-id. Call
 * before pprof__add(); m may be NULL. 0 or -ENOMEM.
 */
int pprof__add_maps(struct pprof *p, const struct maps *m);
/*
 * The program's executable, whose mapping goes first (pprof tools name a
 * profile after its first mapping: "File: app"); after pprof__add_maps(),
 * before pprof__add(). 0 or -ENOMEM.
 */
int pprof__main(struct pprof *p, const char *exe);
/* 0 or -ENOMEM. */
int pprof__add(struct pprof *p, const struct prof_stack *s);
/* The gzipped protobuf to f: 0, -ENOMEM, or -EIO when writing failed. */
int pprof__write(struct pprof *p, FILE *f);
void pprof__delete(struct pprof *p);	/* NULL ok */

#endif
