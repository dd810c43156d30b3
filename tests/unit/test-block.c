/*
 * preload/block.h, the in-process tracker's header before each block: its
 * fields come back as written, at every offset, size and site; and the
 * test of whose block it is holds against this machine's glibc: bit 3 of
 * the word before a block glibc hands out (its chunk's size field) is
 * clear, for small, large (mmap'd) and aligned blocks, fresh and reused.
 */
#include <malloc.h>
#include <stdlib.h>

#include "preload/block.h"
#include "tap.h"

static _Alignas(64) unsigned char buf[256];

int main(void)
{
	static const uint32_t offs[] = { 16, 32, 64 };
	static const uint64_t sizes[] = { 0, 1, 24, 4096, (1ULL << 32) + 5, BLOCK_SIZE_MAX - 64 };
	static const uint32_t sites[] = { 0, 1, 123456, BLOCK_UNTRACKED - 1, BLOCK_UNTRACKED };
	int bad = 0, n = 0, glibc_marked = 0;
	struct block_info b;

	for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
				void *p = block_make(buf, offs[o], sizes[s], sites[i],
						     0xabcdef12u + (uint32_t)i, (uint16_t)(o * 7 + s));

				n++;
				block_read(p, &b);
				if (p != buf + offs[o] || !block_ours(p) || b.off != offs[o] ||
				    b.size != sizes[s] || b.site != sites[i] ||
				    b.tick != ((0xabcdef12u + (uint32_t)i) & BLOCK_TICK_MASK) ||
				    b.epoch != (uint16_t)(o * 7 + s) || block_raw(p, &b) != buf)
					bad++;
			}
	is_int(bad, 0, "%d headers read back as written", n);

	/* glibc's own blocks never look like ours (under ASan malloc is ASan's,
	 * and the word before a block its redzone: the plain build checks) */
#ifdef __SANITIZE_ADDRESS__
	ok(1, "glibc's blocks: checked by the plain build (malloc is AddressSanitizer's here)");
	return done_testing();
#endif
	for (int round = 0; round < 2; round++) {
		void *v[400];

		for (int i = 0; i < 400; i++) {
			size_t size = i < 300 ? (size_t)i * 8 : (size_t)(i - 299) * 40000;

			v[i] = i % 3 == 2 ? memalign(64 << (i % 4), size) : malloc(size);
			if (!v[i] || block_ours(v[i]))
				glibc_marked++;
		}
		for (int i = 0; i < 400; i += 2)
			free(v[i]);	/* the next round reuses them */
		for (int i = 1; i < 400; i += 2)
			free(v[i]);
	}
	is_int(glibc_marked, 0, "800 glibc blocks (0 B to 4 MB, aligned to 64-512, reused): none marked");
	return done_testing();
}
