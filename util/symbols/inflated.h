#ifndef RSPROF_UTIL_SYMBOLS_INFLATED_H
#define RSPROF_UTIL_SYMBOLS_INFLATED_H

/*
 * Debug files with compressed sections (SHF_COMPRESSED: Debian's -dbg and
 * -dbgsym packages, libc6-dbg among them) decompressed once per run.
 *
 * libdw inflates every compressed .debug_* section of a file when it opens
 * its DWARF, and each resolver (one per profiled process) opens its own:
 * twenty short processes that allocate through libc inflated libc6-dbg's
 * 4 MB twenty times, 74 % of the recorder's time, each copy malloc'd
 * anew. Here the first opening writes the file again with its sections
 * inflated into a memfd (an ELF file like the original: the same
 * sections, headers and notes, the build-id among them), and every
 * opening of a file with the same build-id is given that memfd: libelf
 * maps it, so the pages are shared too. The copies stay until rsprof
 * exits: one per distinct debug file, where each process had its own.
 */

/*
 * fd: the debug file path (named in -vv's messages), carrying the build-id
 * bits[0..len) (checked by the caller). Returns the descriptor to read it by: fd itself when it has no
 * compressed section or the copy cannot be made, else a new descriptor of
 * the inflated copy (fd is then closed). Never fails.
 */
int inflated__open(int fd, const char *path, const unsigned char *bits, int len);

#endif
