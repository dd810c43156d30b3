#ifndef RSPROF_UTIL_SYMBOLS_SYMCACHE_H
#define RSPROF_UTIL_SYMBOLS_SYMCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct symbol;

/*
 * What the code at one offset of one file means, shared by every resolver
 * of the run. Each profiled process has a resolver of its own (its
 * addresses are its own: ASLR), and naming an address of a file makes that
 * resolver load the file's symbol table and DWARF line tables: 40
 * compilers of one build loaded cc1's and libc's 40 times, 325 MiB of
 * libdw's line tables live at once in `rsprof record -- make -j2`. Here the
 * first resolver to name an offset of a file leaves a copy, and every later
 * one with the same file (build-id, path as mapped, DWARF looked up or not)
 * takes it without reading the file. A file without a build-id (Rust's
 * toolchain ships none) is known by the one its resolver read: device,
 * inode, size and modification time. The copies stay until rsprof exits:
 * one per distinct (file, offset) named, up to 64 MiB of them (then the
 * later names are not shared).
 */
struct symcache_key {
	const unsigned char *build_id;	/* the file's GNU build-id, or its identity */
	int build_id_len;		/* > 0: else not shared */
	const char *module;		/* the path the process mapped it by */
	uint64_t offset;		/* the address less the module's start */
	bool dwarf;			/* the resolver looks up DWARF lines in it */
	uint64_t file_hash;		/* symcache__file_hash() of the above */
};

/* The hash of a key's file (build_id, module): once per module, not per address. */
uint64_t symcache__file_hash(const struct symcache_key *k);

/* A copy of the symbol stored for k, at address addr; NULL: none (or no memory). */
struct symbol *symcache__get(const struct symcache_key *k, uint64_t addr);

/* Keeps a copy of s for k (the first one stored for k stays). */
void symcache__put(const struct symcache_key *k, const struct symbol *s);

/* Entries, their bytes (roughly) and lookups that found one, for -vv. */
void symcache__stats(uint64_t *entries, uint64_t *bytes, uint64_t *hits);

#endif
