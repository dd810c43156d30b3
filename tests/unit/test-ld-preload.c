/*
 * preload/ld-preload.h: LD_PRELOAD without any rsprof's tracker, whatever
 * its directory, the other libraries kept in order; nothing left said so.
 */
#include "preload/ld-preload.h"
#include "tap.h"

int main(void)
{
	static const struct {
		const char *in, *out;
		bool kept;
	} cases[] = {
		{ "/a/librsprof-heap.so", "LD_PRELOAD=", false },
		{ "/a/librsprof-heap.so:/b/librsprof-heap.so", "LD_PRELOAD=", false },
		{ "/x/libjemalloc.so.2", "LD_PRELOAD=/x/libjemalloc.so.2", true },
		{ "/d/rsprof-heap.A/librsprof-heap.so:/x/libjemalloc.so.2:/d/rsprof-heap.B/librsprof-heap.so",
		  "LD_PRELOAD=/x/libjemalloc.so.2", true },
		{ "libfoo.so /e/librsprof-heap.so libbar.so", "LD_PRELOAD=libfoo.so:libbar.so", true },
		{ "/a/xlibrsprof-heap.so", "LD_PRELOAD=/a/xlibrsprof-heap.so", true },
		{ "/a/librsprof-heap.so.1", "LD_PRELOAD=/a/librsprof-heap.so.1", true },
		{ "::", "LD_PRELOAD=", false },
		{ "", "LD_PRELOAD=", false },
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool kept = ld_preload__strip(cases[i].in, buf, sizeof(buf));

		ok(!strcmp(buf, cases[i].out), "'%s' -> '%s' (got '%s')", cases[i].in,
		   cases[i].out, buf);
		is_int(kept, cases[i].kept, "'%s': %s left", cases[i].in,
		       cases[i].kept ? "something" : "nothing");
	}
	/* a buffer too small drops what does not fit, never overflows */
	ld_preload__strip("/x/libjemalloc.so.2:/y/libmimalloc.so.2", buf, 24);
	ok(!strcmp(buf, "LD_PRELOAD="), "a small buffer: '%s'", buf);
	return done_testing();
}
