#ifndef RSPROF_UTIL_PUSH_OTLP_H
#define RSPROF_UTIL_PUSH_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "util/output/pprof.h"

/*
 * One process's profile of one interval as an OTLP profiles export
 * (ExportProfilesServiceRequest of opentelemetry-proto v1.9.0,
 * util/push/proto/otlp-profiles.proto): the dictionary (strings, mappings
 * with their build-ids, locations with their inline chains, functions,
 * stacks; every table's entry 0 the zero value, as the format wants), one
 * resource with its attributes, one scope (rsprof), and one Profile per
 * sample type: samples/count (period cpu/nanoseconds) for CPU;
 * alloc_objects, alloc_space, inuse_objects, inuse_space for the heap.
 * Built from db_query_stacks() stacks as util/output/pprof.h is; packed
 * with protobuf-c.
 */
struct otlp_profile;
struct maps;
struct prof_stack;

/* A resource attribute: string value, or an integer when is_int. */
struct otlp_attr {
	const char *key;
	const char *str;
	int64_t num;
	int is_int;
};

/* NULL on -ENOMEM. time_ns: the interval's start (Unix), duration_ns its length. */
struct otlp_profile *otlp_profile__new(enum pprof_kind kind, uint64_t period_ns, int64_t time_ns,
				       int64_t duration_ns);
/* The process's mappings: executable ones give locations a Mapping. 0 or -ENOMEM. */
int otlp_profile__add_maps(struct otlp_profile *o, const struct maps *m);
/* 0 or -ENOMEM. */
int otlp_profile__add(struct otlp_profile *o, const struct prof_stack *s);
/* The request's bytes, malloc'd; attrs: the resource's. 0 or -ENOMEM. */
int otlp_profile__encode(struct otlp_profile *o, const struct otlp_attr *attrs, size_t n_attrs,
			 void **buf, size_t *len);
void otlp_profile__delete(struct otlp_profile *o);	/* NULL ok */

#endif
