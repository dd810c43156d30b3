#include "util/symbols/symfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "util/error.h"
#include "util/infile.h"
#include "util/record/maps.h"
#include "util/record/proc.h"
#include "util/symbols/inflated.h"

int symfile__build_id(int fd, unsigned char *bits, size_t len)
{
	const void *id;
	int n = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (elf) {
		n = dwelf_elf_gnu_build_id(elf, &id);
		if (n > 0) {
			if ((size_t)n > len)
				n = (int)len;
			memcpy(bits, id, n);
		} else {
			n = 0;
		}
		elf_end(elf);
	}
	return n;
}

/* Does the ELF file at fd carry the build-id bits? */
static bool fd_has_build_id(int fd, const unsigned char *bits, int len)
{
	unsigned char got[64];

	return symfile__build_id(fd, got, sizeof(got)) == len && !memcmp(got, bits, len);
}

bool symfile__pid_alive(pid_t pid)
{
	char fn[64];

	if (pid <= 0)
		return false;
	snprintf(fn, sizeof(fn), "/proc/%d/root", (int)pid);
	return !access(fn, F_OK);
}

/* perf's build-id cache: ~/.debug/.build-id/xx/rest/NAME (HOME, or the user's home). */
static bool cache_path(const unsigned char *bits, int len, const char *name, char *buf,
		       size_t size)
{
	const char *home = getenv("HOME");
	char hex[2 * 64 + 1];
	struct passwd *pw;

	if (len <= 1)
		return false;
	if (!home || !*home) {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return false;
	for (int i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bits[i]);
	snprintf(buf, size, "%s/.debug/.build-id/%.2s/%s/%s", home, hex, hex + 2, name);
	return true;
}

/* Open path (O_RDONLY); keep it when no build-id is wanted or it matches. */
static int try_open(const char *path, const unsigned char *bits, int len)
{
	int fd = infile__open(path, 0, NULL);

	if (fd < 0)
		return fd;
	if (len > 0 && !fd_has_build_id(fd, bits, len)) {
		pr_debug(2, "%s: not the build-id that was mapped", path);
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int symfile__open_mapped(pid_t pid, const struct map *m)
{
	char fn[PATH_MAX + 64];
	bool alive = symfile__pid_alive(pid);
	int len = m->build_id_len, fd = -ENOENT;

	if (alive) {
		snprintf(fn, sizeof(fn), "/proc/%d/root%s", (int)pid,
			 proc__root_relative(pid, m->path));
		fd = try_open(fn, m->build_id, len);
	}
	if (fd < 0)
		fd = try_open(m->path, m->build_id, len);
	if (fd < 0 && alive) {
		/* a replaced or deleted file: the kernel still holds it */
		snprintf(fn, sizeof(fn), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fd = try_open(fn, m->build_id, len);
	}
	if (fd < 0 && cache_path(m->build_id, len, "elf", fn, sizeof(fn))) {
		int c = try_open(fn, m->build_id, len);

		if (c >= 0)
			fd = c;
	}
	return fd;
}

/*
 * Keep the first candidate that carries the module's build-id: as its
 * inflated copy when its sections are compressed (util/symbols/inflated.h).
 */
static int take(const char *path, const unsigned char *bits, int len, char **name)
{
	int fd = try_open(path, bits, len);

	if (fd < 0)
		return -1;
	*name = strdup(path);
	if (!*name) {
		close(fd);
		return -1;
	}
	pr_debug(2, "debug information: %s", path);
	return inflated__open(fd, path, bits, len);
}

/* The debug file of mod on this machine (or under the target's root); -1: none. */
static int find_local(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
		      const char *file_name, const char *debuglink, GElf_Word crc,
		      char **debuginfo_file_name)
{
	const struct symfile_ctx *ctx = userdata ? *userdata : NULL;
	const unsigned char *bits = NULL;
	char dir[PATH_MAX], cand[PATH_MAX * 2 + 64], root[64] = "";
	const char *path = modname && modname[0] == '/' ? modname : NULL;
	GElf_Addr vaddr;
	char *slash;
	int fd, len;

	/* without a build-id to check a candidate by, take no chance */
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0)
		return -1;
	if (ctx && symfile__pid_alive(ctx->pid))
		snprintf(root, sizeof(root), "/proc/%d/root", (int)ctx->pid);

	/*
	 * by build-id: /usr/lib/debug/.build-id/xx/rest.debug (libc6-dbg,
	 * *-dbgsym), in the target's root, then here. Opened by us, not by
	 * dwfl_build_id_find_debuginfo(), which hands libdwfl its own handle
	 * of the file (and libdw inflates it again for every process).
	 */
	for (int r = root[0] ? 0 : 1; r < 2; r++) {
		char hex[2 * 64 + 1];

		for (int i = 0; i < len && i < 64; i++)
			sprintf(hex + 2 * i, "%02x", bits[i]);
		snprintf(cand, sizeof(cand), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
			 r == 0 ? root : "", hex, hex + 2);
		fd = take(cand, bits, len, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	/* the same by libdwfl's own search path, and a dwz file's alternate */
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					  crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	/* perf's build-id cache */
	if (cache_path(bits, len, "debug", cand, sizeof(cand))) {
		fd = take(cand, bits, len, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	if (!path)
		return -1;
	for (int r = root[0] ? 0 : 1; r < 2; r++) {
		const char *pre = r == 0 ? root : "";

		/* in the target's root, the file's path there */
		path = r == 0 ? proc__root_relative(ctx->pid, modname) : modname;
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (!slash)
			return -1;
		*slash = '\0';

		/* .gnu_debuglink: beside the file, in its .debug/, under /usr/lib/debug */
		if (debuglink) {
			const char *fmts[] = { "%s%s/%s", "%s%s/.debug/%s", "%s/usr/lib/debug%s/%s" };

			for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
				snprintf(cand, sizeof(cand), fmts[i], pre, dir, debuglink);
				if (!strcmp(cand + strlen(pre), path))
					continue;
				fd = take(cand, bits, len, debuginfo_file_name);
				if (fd >= 0)
					return fd;
			}
		}
		/* the file's own path under /usr/lib/debug */
		snprintf(cand, sizeof(cand), "%s/usr/lib/debug%s", pre, path);
		fd = take(cand, bits, len, debuginfo_file_name);
		if (fd >= 0)
			return fd;
		snprintf(cand, sizeof(cand), "%s/usr/lib/debug%s.debug", pre, path);
		fd = take(cand, bits, len, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

int symfile__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			    GElf_Addr base, const char *file_name, const char *debuglink,
			    GElf_Word crc, char **debuginfo_file_name)
{
	int fd = find_local(mod, userdata, modname, base, file_name, debuglink, crc,
			    debuginfo_file_name);

	if (fd >= 0 || !getenv("DEBUGINFOD_URLS") || !*getenv("DEBUGINFOD_URLS"))
		return fd;
	/*
	 * Nothing here: libdwfl's standard search ends with its debuginfod
	 * client, which asks the servers of DEBUGINFOD_URLS by build-id (and
	 * keeps what it gets in its cache, ~/.cache/debuginfod_client).
	 */
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc,
					  debuginfo_file_name);
	if (fd >= 0)
		pr_debug(1, "%s: debug information from debuginfod", modname ? modname : "?");
	return fd;
}
