#ifndef RSPROF_UTIL_SYMBOLS_OBJFILE_H
#define RSPROF_UTIL_SYMBOLS_OBJFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/*
 * What an export needs to name the binary a mapping came from, read from
 * the file on disk: its GNU build-id and where the mapped part sits in its
 * own (link-time) addresses. pprof's Mapping (`go tool pprof -disasm` reads
 * the binary at link-time addresses: its own tool does not relocate).
 */
struct objfile_ident {
	char build_id[2 * 64 + 1];	/* lower-case hex; "" when the file has none */
	/*
	 * The load segment holding the mapped file offset: a runtime
	 * address x of the mapping (start, offset) is the link-time address
	 * x - start + offset - seg_offset + seg_vaddr.
	 */
	bool has_segment;
	uint64_t seg_offset, seg_vaddr;
};

/*
 * Read path's ident for a mapping at file offset `offset`. 0; -ESTALE when
 * the file was modified after not_after (rebuilt since: not the binary
 * that ran; 0 checks nothing); -errno when it cannot be read; -EINVAL when
 * it is not ELF.
 */
int objfile__ident(const char *path, time_t not_after, uint64_t offset,
		   struct objfile_ident *id);

#endif
