#ifndef RSPROF_UTIL_HEAP_WATCHDOG_H
#define RSPROF_UTIL_HEAP_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "preload/heap-region.h"

/*
 * Watches the calls the in-process heap tracker makes out of its own code
 * (heap_region.callouts): a thread that stays in one for
 * HEAP_WATCHDOG_MS is reported once, with its process, thread and the call,
 * instead of rsprof waiting on a stuck program in silence.
 */
#define HEAP_WATCHDOG_MS	5000

struct heap_watchdog {
	struct {
		uint32_t tid;
		uint64_t seq;
		uint64_t since_ms;	/* when this (tid, seq) was first seen */
		bool told;
	} slot[HEAP_REGION_CALLOUTS];
};

/* Look at region r of process pid at now_ms; true when a stuck thread was
 * reported (on stderr) by this call. */
bool heap_watchdog__check(struct heap_watchdog *w, const struct heap_region *r, pid_t pid,
			  uint64_t now_ms);

/* The call a slot names ("pthread_setspecific", ...). */
const char *heap_watchdog__what(uint32_t what);

#endif
