/*
 * The tracker's calls out, watched (util/heap/watchdog.h). The region is
 * the target's memory: what it says is read as hostile input (a slot index,
 * a name out of range), and only ever printed.
 */
#include "util/heap/watchdog.h"

#include "util/error.h"

const char *heap_watchdog__what(uint32_t what)
{
	switch (what) {
	case HEAP_CALLOUT_THREAD_KEY:
		return "pthread_setspecific";
	case HEAP_CALLOUT_MODULES:
		return "dl_iterate_phdr";
	case HEAP_CALLOUT_LIBUNWIND:
		return "libunwind's unw_backtrace";
	case HEAP_CALLOUT_STACK:
		return "reading /proc/self/maps";
	default:
		return "an unknown call";
	}
}

bool heap_watchdog__check(struct heap_watchdog *w, const struct heap_region *r, pid_t pid,
			  uint64_t now_ms)
{
	bool told = false;

	for (unsigned int i = 0; i < HEAP_REGION_CALLOUTS; i++) {
		const struct heap_region_callout *c = &r->callouts[i];
		uint32_t tid = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
		uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		uint32_t what = __atomic_load_n(&c->what, __ATOMIC_RELAXED);

		if (!tid || tid != w->slot[i].tid || seq != w->slot[i].seq) {
			w->slot[i].tid = tid;
			w->slot[i].seq = seq;
			w->slot[i].since_ms = now_ms;
			w->slot[i].told = false;
			continue;
		}
		if (w->slot[i].told || now_ms - w->slot[i].since_ms < HEAP_WATCHDOG_MS)
			continue;
		w->slot[i].told = true;
		told = true;
		pr_warn("the heap tracker is stuck in PID %d, thread %u: in %s for %llu s",
			(int)pid, tid, heap_watchdog__what(what),
			(unsigned long long)(now_ms - w->slot[i].since_ms) / 1000);
		pr_hint("the program waits on the tracker; stop with Ctrl-C, and record it with "
			"--heap-backend uprobe or --no-heap; please report this with the program");
	}
	return told;
}
