#ifndef RSPROF_UTIL_HEAP_DYNSYM_H
#define RSPROF_UTIL_HEAP_DYNSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The dynamic symbols of an ELF object as it is mapped: read from a
 * process's memory (the object it runs, whatever the file on disk has
 * become since), or from a buffer holding the file (the tracker rsprof
 * carries). Only what the loader maps is read: the program headers, the
 * dynamic section, the symbol and string tables (their size from the
 * hash table).
 */
struct dynsym {
	uint64_t base;			/* load bias: symbol values + base = addresses */
	uint64_t lo, hi;		/* the object's extent (its PT_LOADs) */
	uint64_t text_lo, text_hi;	/* its executable PT_LOAD */
	void *sym;			/* Elf64_Sym[n] */
	size_t n;
	char *str;
	size_t strsz;
	unsigned char build_id[20];
	size_t build_id_len;
};

/*
 * The object whose ELF header is mapped at start in process pid (the
 * mapping of its file at offset 0). 0 or -errno (-ENOEXEC: not an ELF
 * object of this machine).
 */
int dynsym__load_pid(pid_t pid, uint64_t start, struct dynsym *d);
/* The object in buf (a whole file, as loaded at base 0). */
int dynsym__load_buf(const void *buf, size_t len, struct dynsym *d);
/* A defined symbol's address and size; false: none of that name. */
bool dynsym__find(const struct dynsym *d, const char *name, uint64_t *addr, uint64_t *size);
void dynsym__free(struct dynsym *d);

#endif
