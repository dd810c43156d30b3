#ifndef RSPROF_UTIL_SYMBOLS_SYMFILE_H
#define RSPROF_UTIL_SYMBOLS_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <elfutils/libdwfl.h>

/*
 * Where the files of a mapped module are: the ELF file
 * as the target sees it, and its separate debug information, by the same
 * rules for the executable and every library.
 *
 * The ELF file: through /proc/PID/root while the process lives (a process
 * in another mount namespace, a container, sees other files than we do),
 * then the same path here, then /proc/PID/map_files (a file deleted or
 * replaced since), then perf's build-id cache (~/.debug/.build-id/xx/…/elf).
 * When the kernel gave the mapping's build-id, a candidate that does not
 * carry it is not the file that was mapped and is passed over.
 *
 * Debug information, on this machine only (no debuginfod: a profiler
 * running as root makes no network requests): by build-id under
 * /usr/lib/debug/.build-id and in perf's cache (~/.debug/.build-id/xx/…/
 * debug), by .gnu_debuglink next to the file, in its .debug/ and under
 * /usr/lib/debug/DIR, and as /usr/lib/debug/PATH(.debug); each of those
 * inside the target's root first. A candidate must carry the module's
 * build-id. A debug file with compressed sections (SHF_COMPRESSED) is
 * given as its inflated copy, made once per run (util/symbols/inflated.h);
 * .zdebug sections are inflated by libdw itself.
 */
struct map;

/* Which process's view of the file system: given to libdwfl as module userdata. */
struct symfile_ctx {
	pid_t pid;		/* 0: our own */
};

/* The ELF file of mapping m of process pid (0: ours), opened read-only: fd or -errno. */
int symfile__open_mapped(pid_t pid, const struct map *m);

/* A libdwfl find_debuginfo callback; *userdata is a struct symfile_ctx or NULL. */
int symfile__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			    GElf_Addr base, const char *file_name, const char *debuglink,
			    GElf_Word crc, char **debuginfo_file_name);

/* Does pid still run (its /proc/PID/root can be used)? */
bool symfile__pid_alive(pid_t pid);

/*
 * The build-id of the ELF file at fd into bits (up to len bytes): its
 * length, or 0 when it has none.
 */
int symfile__build_id(int fd, unsigned char *bits, size_t len);

#endif
