/*
 * Giving back the resident pages of the files libelf maps (see filepages.h).
 */
#include "util/symbols/filepages.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libelf.h>

#define PM_PRESENT	(1ULL << 63)
#define PM_FILE		(1ULL << 61)	/* file page or shared anonymous: not our copy */
#define PM_BATCH	512

static void drop(uintptr_t from, uintptr_t to)
{
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

void filepages__release(void *start, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)start + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t hi = ((uintptr_t)start + len) & ~(uintptr_t)(page - 1);
	uint64_t pm[PM_BATCH];
	uintptr_t run = 0;	/* start of the current run of droppable pages; 0: none */
	int fd;

	if (!start || hi <= lo)
		return;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (uintptr_t a = lo; a < hi;) {
		size_t n = (hi - a) / page;
		ssize_t got;

		if (n > PM_BATCH)
			n = PM_BATCH;
		got = pread(fd, pm, n * sizeof(*pm), (off_t)(a / page * sizeof(*pm)));
		if (got <= 0)
			break;
		n = (size_t)got / sizeof(*pm);
		for (size_t i = 0; i < n; i++, a += page) {
			bool ours = (pm[i] & PM_PRESENT) && (pm[i] & PM_FILE);
			bool written = (pm[i] & PM_PRESENT) && !(pm[i] & PM_FILE);

			if (ours && !run)
				run = a;
			else if (written && run) {
				drop(run, a);
				run = 0;
			}
		}
	}
	if (run)
		drop(run, hi);
	close(fd);
}

void filepages__release_elf(Elf *elf)
{
	size_t len = 0;
	char *raw = elf ? elf_rawfile(elf, &len) : NULL;

	if (raw)
		filepages__release(raw, len);
}
