/*
 * A program rsprof launches with the in-process heap tracker (preload/,
 * embedded in rsprof): the tracker is written into a private 0700
 * directory and handed to the program through LD_PRELOAD; the directory
 * goes at the end, by a cleaner process even when rsprof is killed. The
 * preload backend (util/heap/preload.c) then makes and reads the program's
 * regions in it.
 *
 * Where preloading cannot work, auto falls back to uprobes and says why:
 * a static executable, setuid/setgid (the loader ignores LD_PRELOAD). A
 * program linked with an allocator library (DT_NEEDED, or in LD_PRELOAD)
 * is tracked in-process: the tracker forwards to that allocator
 * (preload/next.c); an executable that defines malloc itself (rustc with
 * its jemalloc) or a Rust #[global_allocator] has its allocator's entry
 * points rewritten (preload/patch.c).
 */
#include "util/heap/heap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "preload/heap-region.h"
#include "preload/ld-preload.h"
#include "util/error.h"
#include "util/heap/alloc-syms.h"
#include "util/heap/backend.h"
#include "util/heap/preload.h"

extern char **environ;

/* Why the tracker cannot serve exe (a static string), or NULL. */
static const char *blocker(const char *exe, enum heap_probes probes)
{
	struct alloc_exe x;
	struct rlimit as;
	struct stat st;

	if (probes == HEAP_PROBES_RUST)
		return "--heap-probes rust asks for uprobes on the Rust allocator";
	/*
	 * The tracker maps its region (a few hundred MiB of address space,
	 * sparse) into the program: under a limit, the program could allocate
	 * less than it would alone.
	 */
	if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY)
		return "an address-space limit is set (ulimit -v), against which the tracker's "
		       "memory would count";
	if (stat(exe, &st))
		return "the executable cannot be read";
	if (st.st_mode & (S_ISUID | S_ISGID))
		return "the executable is setuid or setgid (the loader ignores LD_PRELOAD)";
	if (alloc_syms__inspect(exe, &x))
		return "the executable cannot be read";
	if (!x.is_elf)
		return "it is not an ELF executable";
	if (x.is_static)
		return "the executable is statically linked (no LD_PRELOAD)";
	/*
	 * An allocator library (DT_NEEDED, LD_PRELOAD): the tracker forwards to
	 * it. An executable's own malloc, a #[global_allocator] (jemalloc,
	 * mimalloc...): the tracker rewrites their entry points
	 * (preload/patch.c).
	 */
	return NULL;
}

/*
 * A directory for the library and the regions: not on a noexec file
 * system (the library is mmap'd to run). $TMPDIR when set; else /dev/shm
 * first: the regions are shared memory written page by page, and on a
 * disk file system each page a process touches first costs a block
 * allocation (300 short processes of a tree: 66 s with the directory on
 * an ext4 /tmp, 1.9 s on /dev/shm, against 1.0 s untracked).
 */
static int make_dir(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	const char *cands[] = { tmp && *tmp ? tmp : "/dev/shm", "/tmp", "/var/tmp" };
	int err = -ENOENT;

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		struct statvfs vfs;

		if (statvfs(cands[i], &vfs) || (vfs.f_flag & ST_NOEXEC))
			continue;
		snprintf(dir, len, "%s/rsprof-heap.XXXXXX", cands[i]);
		if (mkdtemp(dir))	/* mode 0700 */
			return 0;
		err = -errno;
	}
	pr_err("cannot make a private directory for the heap tracker (in $TMPDIR or "
	       "/dev/shm, /tmp, /var/tmp): %s", strerror(-err));
	pr_hint("set TMPDIR to a writable directory that allows executables, or use "
		"--heap-backend uprobe");
	return err;
}

/*
 * The tracker's bytes: the build inside rsprof, or RSPROF_HEAP_TRACKER's
 * (a developer's build, e.g. with UBSan). *buf: to free.
 */
int heap_tracker__bytes(const unsigned char **p, size_t *len, void **buf)
{
	const char *alt = getenv("RSPROF_HEAP_TRACKER");
	struct stat st;
	ssize_t n;
	int fd, err;

	*buf = NULL;
	if (!alt || !*alt) {
		*p = heap_preload_so;
		*len = (size_t)(heap_preload_so_end - heap_preload_so);
		return 0;
	}
	fd = open(alt, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !(*buf = malloc(st.st_size + 1)))
		goto fail;
	n = read(fd, *buf, st.st_size);
	if (n != st.st_size)
		goto fail;
	close(fd);
	*p = *buf;
	*len = (size_t)n;
	pr_debug(1, "heap: the tracker from %s (RSPROF_HEAP_TRACKER)", alt);
	return 0;
fail:
	err = errno ? -errno : -EIO;
	pr_err("cannot read RSPROF_HEAP_TRACKER %s: %s", alt, strerror(-err));
	if (fd >= 0)
		close(fd);
	free(*buf);
	*buf = NULL;
	return err;
}

static int write_so(const char *dir)
{
	const unsigned char *p;
	size_t left;
	char path[PATH_MAX];
	void *buf;
	int fd, err = heap_tracker__bytes(&p, &left, &buf);

	if (err)
		return err;

	snprintf(path, sizeof(path), "%s/%s", dir, HEAP_REGION_SO);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	if (fd < 0)
		goto fail;
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			close(fd);
			goto fail;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd))
		goto fail;
	free(buf);
	return 0;
fail:
	err = -errno;
	pr_err("cannot write %s: %s", path, strerror(errno));
	free(buf);
	return err;
}

static int env_add(struct heap_launch *l, char *s)
{
	char **v;

	if (!s)
		return -ENOMEM;
	v = realloc(l->env, (l->n_env + 2) * sizeof(*v));
	if (!v) {
		free(s);
		return -ENOMEM;
	}
	l->env = v;
	l->env[l->n_env++] = s;
	l->env[l->n_env] = NULL;
	return 0;
}

/*
 * environ, with our library first in LD_PRELOAD and the directory named.
 * Another rsprof's tracker in LD_PRELOAD (rsprof run by a program that
 * rsprof records) is left out: a program with two trackers spun in
 * malloc.
 */
static int make_env(struct heap_launch *l)
{
	const char *old = getenv("LD_PRELOAD");
	char *s, *kept = NULL;
	size_t len = old ? strlen(old) + sizeof("LD_PRELOAD=") + 2 : 0;
	int err = 0;

	if (old && !(kept = malloc(len)))
		err = -ENOMEM;
	else if (old)
		old = ld_preload__strip(old, kept, len) ? kept + sizeof("LD_PRELOAD=") - 1 : NULL;
	for (char **e = environ; e && *e && !err; e++) {
		if (!strncmp(*e, "LD_PRELOAD=", 11) ||
		    !strncmp(*e, HEAP_REGION_DIR_ENV "=", sizeof(HEAP_REGION_DIR_ENV)))
			continue;
		err = env_add(l, strdup(*e));
	}
	if (!err) {
		if (asprintf(&s, "LD_PRELOAD=%s/%s%s%s", l->dir, HEAP_REGION_SO,
			     old && *old ? ":" : "", old ? old : "") < 0)
			s = NULL;
		err = env_add(l, s);
	}
	if (!err) {
		if (asprintf(&s, "%s=%s", HEAP_REGION_DIR_ENV, l->dir) < 0)
			s = NULL;
		err = env_add(l, s);
	}
	if (err)
		pr_err("cannot make the environment of the program: %s", strerror(-err));
	free(kept);
	return err;
}

/* Remove dir and the files in it (no subdirectories are made there). */
static int dir_remove(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return rmdir(dir) && errno != ENOENT ? -errno : 0;
}

/*
 * The cleaner: a process of its own (its own session, signals of the
 * terminal ignored, every file closed but its pipe) that removes the
 * directory when rsprof ends, whatever the way: the pipe's last writer is
 * rsprof, so a SIGKILL of rsprof is the pipe's end too. The recorded tree
 * then finds no directory: the processes tracking go on into their
 * regions (unlinked: gone with the last of them), programs exec'd from
 * then on run without the tracker (preload/exec.c leaves it out).
 */
static int cleaner_start(struct heap_launch *l)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (!pid) {
		char c;

		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGTSTP, SIG_IGN);
		prctl(PR_SET_NAME, "rsprof-cleanup");
		if (fds[0] > 0)
			syscall(SYS_close_range, 0, fds[0] - 1, 0);
		syscall(SYS_close_range, fds[0] + 1, ~0U, 0);
		while (read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		dir_remove(l->dir);
		_exit(0);
	}
	close(fds[0]);
	l->cleanup_fd = fds[1];
	l->cleaner = pid;
	return 0;
}

int heap_launch__new(const char *exe, enum heap_backend want, enum heap_probes probes,
		     unsigned int sample, bool inherit, struct heap_launch **out,
		     const char **why)
{
	struct heap_launch *l;
	const char *no;
	int err;

	*out = NULL;
	*why = NULL;
	if (want == HEAP_BACKEND_UPROBE) {
		*why = "--heap-backend uprobe";
		return 0;
	}
	no = blocker(exe, probes);
	if (no) {
		if (want == HEAP_BACKEND_PRELOAD) {
			pr_err("the in-process heap tracker cannot run in %s: %s", exe, no);
			pr_hint("use --heap-backend uprobe, or auto to fall back by itself");
			return -ENOTSUP;
		}
		*why = no;
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sample = sample ? sample : 1;
	l->inherit = inherit;
	l->cleanup_fd = -1;
	err = make_dir(l->dir, sizeof(l->dir));
	if (err) {
		l->dir[0] = '\0';
		goto fail;
	}
	err = cleaner_start(l);
	if (err) {
		pr_err("cannot start the heap tracker's cleaner: %s", strerror(-err));
		goto fail;
	}
	err = write_so(l->dir);
	if (!err)
		err = make_env(l);
	if (err)
		goto fail;
	pr_debug(1, "heap: the in-process tracker in %s", l->dir);
	*out = l;
	return 0;
fail:
	heap_launch__delete(l);
	return err;
}

char *const *heap_launch__env(const struct heap_launch *l)
{
	return l->env;
}

void heap_launch__sample_bytes(struct heap_launch *l, uint64_t bytes)
{
	l->sample_bytes = bytes;
	if (bytes)
		l->sample = 1;
}

void heap_launch__delete(struct heap_launch *l)
{
	int err = l && l->dir[0] ? dir_remove(l->dir) : 0;

	if (!l)
		return;
	if (err)
		pr_warn("cannot remove %s: %s", l->dir, strerror(-err));
	/*
	 * The directory is gone already: the cleaner has nothing left to do.
	 * It ends when the pipe's last writer does, which may be a child
	 * forked for the launch and still waiting for its go (a failed
	 * start): waiting for it here would wait for that child, which waits
	 * for us. Reaped when it ends within 200 ms (at once, but for that),
	 * else it ends on its own.
	 */
	if (l->cleanup_fd >= 0) {
		close(l->cleanup_fd);
		for (int i = 0; i < 200 && !waitpid(l->cleaner, NULL, WNOHANG); i++)
			usleep(1000);
	}
	for (size_t i = 0; i < l->n_env; i++)
		free(l->env[i]);
	free(l->env);
	free(l);
}
