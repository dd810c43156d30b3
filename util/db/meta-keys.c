/*
 * The meta keys whose values are integers (see meta-keys.h).
 */
#include "util/db/meta-keys.h"

#include <stdlib.h>
#include <string.h>

static const char *const integer_keys[] = {	/* sorted, for bsearch */
	"alloc_history_dropped",
	"alloc_history_events",
	"alloc_history_monotonic_ns",
	"alloc_history_wait_ns",
	"appended_pid",
	"checkpoint_interval_ms",
	"cpu_freq_hz",
	"cpu_stacks_truncated",
	"cpu_stacks_unwound",
	"duration_ms",
	"exit_status",
	"heap_block_header_bytes",
	"heap_dropped",
	"heap_peak_bytes",
	"heap_sample",
	"heap_sample_bytes",
	"heap_temporary",
	"heap_untracked_limited",
	"lost_samples",
	"pid",
	"retain_ms",
	"rss_peak_bytes",
	"samples",
	"threads",
	"unknown_free_bytes",
	"unknown_frees",
	"version",
};

static int cmp(const void *a, const void *b)
{
	return strcmp(a, *(const char *const *)b);
}

bool meta_key__integer(const char *key)
{
	return key && bsearch(key, integer_keys, sizeof(integer_keys) / sizeof(integer_keys[0]),
			      sizeof(integer_keys[0]), cmp);
}
