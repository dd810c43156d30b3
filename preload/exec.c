/*
 * The exec family, for process trees: a program of the recorded
 * tree that execs with an environment of its own making (`env -i prog`,
 * a daemon that builds envp from scratch) would lose LD_PRELOAD and the
 * region directory, and its program would run untracked. While the
 * tracker follows the tree (preload/tracker.c), every exec function puts
 * both back into the environment it is given when they are missing.
 *
 * Every variant is interposed: glibc's execv, execvp, execl... call its
 * internal execve, not the exported one. system() and popen() pass
 * environ to posix_spawn inside glibc: environ still holds both unless
 * the program removed them itself. Nothing here allocates before the
 * exec: the new environment is built on the stack. When rsprof is gone
 * (its directory removed) the library is left out, so that the loader
 * does not complain in every program exec'd afterwards.
 *
 * Not following (a process rsprof does not record, --no-inherit): each
 * function is its libc's, untouched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "preload/ld-preload.h"
#include "preload/tracker.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

static bool following;
static char so_path[PATH_MAX];			/* the library in the directory */
static char env_dir[PATH_MAX + 32];		/* RSPROF_HEAP_DIR=... */

void exec__follow(const char *dir)
{
	if (!dir || snprintf(so_path, sizeof(so_path), "%s/" HEAP_REGION_SO, dir) >=
		    (int)sizeof(so_path) ||
	    snprintf(env_dir, sizeof(env_dir), HEAP_REGION_DIR_ENV "=%s", dir) >=
		    (int)sizeof(env_dir))
		return;
	__atomic_store_n(&following, true, __ATOMIC_RELEASE);
}

void exec__unfollow(void)
{
	__atomic_store_n(&following, false, __ATOMIC_RELEASE);
}

/* Does the LD_PRELOAD value v name a tracker (ours, or another rsprof's)? */
static bool names_us(const char *v)
{
	return strstr(v, HEAP_REGION_SO) != NULL;
}

/*
 * Does envp name another rsprof's tracker in LD_PRELOAD? A program of the
 * tree that runs `rsprof record` itself: that rsprof launches its program
 * with its own tracker and directory (and without ours); mixing the two
 * would give that program one rsprof's library and the other's directory.
 */
static bool env_other_rsprof(char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11) && names_us(envp[i] + 11) &&
		    !strstr(envp[i] + 11, so_path))
			return true;
	return false;
}

/* How many entries envp has. */
static size_t env_count(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

/*
 * envp with the tracker put back, into out (n + 3 slots) and buf (a new
 * LD_PRELOAD); false when envp needs nothing (or we do not follow). When
 * rsprof is gone (its directory with it), the tracker is taken out
 * instead: the loader would complain in every program.
 */
static bool env_fix(char *const envp[], char **out, char *buf, size_t len)
{
	const size_t dl = sizeof(HEAP_REGION_DIR_ENV);	/* with the '=' */
	bool have_pre = false, have_dir = false, changed = false, gone;
	size_t w = 0;

	if (!__atomic_load_n(&following, __ATOMIC_ACQUIRE))
		return false;	/* not recorded */
	if (env_other_rsprof(envp))
		return false;	/* another rsprof's program */
	gone = access(so_path, R_OK) != 0;
	for (size_t i = 0; envp && envp[i]; i++) {
		char *e = envp[i];

		if (!strncmp(e, "LD_PRELOAD=", 11)) {
			have_pre = true;
			if (gone && names_us(e + 11)) {
				changed = true;
				if (!ld_preload__strip(e + 11, buf, len))
					continue;
				e = buf;
			} else if (!gone && !names_us(e + 11)) {
				if (snprintf(buf, len, "LD_PRELOAD=%s%s%s", so_path, e[11] ? ":" : "",
					     e + 11) >= (int)len)
					return false;
				e = buf;
				changed = true;
			}
		} else if (!strncmp(e, HEAP_REGION_DIR_ENV "=", dl)) {
			have_dir = true;
			if (gone) {
				changed = true;
				continue;
			}
			if (strcmp(e, env_dir)) {
				e = env_dir;
				changed = true;
			}
		}
		out[w++] = e;
	}
	if (!have_pre && !gone) {
		snprintf(buf, len, "LD_PRELOAD=%s", so_path);
		out[w++] = buf;
		changed = true;
	}
	if (!have_dir && !gone) {
		out[w++] = env_dir;
		changed = true;
	}
	out[w] = NULL;
	return changed;
}

#define REAL(name, type)							\
	static type real_;							\
	type fn_ = __atomic_load_n(&real_, __ATOMIC_ACQUIRE);			\
	if (!fn_) {								\
		fn_ = (type)dlsym(RTLD_NEXT, name);				\
		if (!fn_) {							\
			errno = ENOSYS;						\
			return -1;						\
		}								\
		__atomic_store_n(&real_, fn_, __ATOMIC_RELEASE);		\
	}

/* The fixed environment of envp, as `fixed` (envp itself when nothing is missing). */
#define FIXED_ENV(envp)								\
	char *fixed_[env_count(envp) + 3], buf_[PATH_MAX + 4096];		\
	char *const *fixed = env_fix((envp), fixed_, buf_, sizeof(buf_)) ?	\
			     (char *const *)fixed_ : (envp)

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

/* execve, execveat, fexecve: the system call itself, as glibc's (no dlsym in a vfork child) */
EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	FIXED_ENV(envp);
	return (int)syscall(SYS_execve, path, argv, fixed);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		    int flags)
{
	FIXED_ENV(envp);
	return (int)syscall(SYS_execveat, dirfd, path, argv, fixed, flags);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return execveat(fd, "", argv, envp, AT_EMPTY_PATH);
}

/* execvpe searches PATH: glibc's, found once (a vfork child's first exec asks dlsym) */
EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REAL("execvpe", execve_fn);
	FIXED_ENV(envp);
	return fn_(file, argv, fixed);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The arguments of execl and co.: arg0, then until NULL (then envp for execle). */
#define LIST_ARGS(arg0, envp_out)						\
	va_list ap_;								\
	size_t n_ = 1;								\
	va_start(ap_, arg0);							\
	while (va_arg(ap_, char *))						\
		n_++;								\
	va_end(ap_);								\
	char *argv_[n_ + 1];							\
	va_start(ap_, arg0);							\
	argv_[0] = (char *)(arg0);						\
	for (size_t i_ = 1; i_ <= n_; i_++)					\
		argv_[i_] = va_arg(ap_, char *);				\
	envp_out;								\
	va_end(ap_)

EXPORT int execl(const char *path, const char *arg, ...)
{
	LIST_ARGS(arg, (void)0);
	return execve(path, argv_, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	LIST_ARGS(arg, (void)0);
	return execvpe(file, argv_, environ);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *const *envp;

	LIST_ARGS(arg, envp = va_arg(ap_, char *const *));
	return execve(path, argv_, envp);
}

/* posix_spawn and posix_spawnp: glibc's (*real, found once by name) with the environment fixed */
static int spawn(spawn_fn *real, const char *name, pid_t *pid, const char *file,
		 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		 char *const argv[], char *const envp[])
{
	spawn_fn fn = __atomic_load_n(real, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = (spawn_fn)dlsym(RTLD_NEXT, name);
		if (!fn)
			return ENOSYS;
		__atomic_store_n(real, fn, __ATOMIC_RELEASE);
	}
	FIXED_ENV(envp);
	return fn(pid, file, fa, attr, argv, fixed);
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	static spawn_fn real;

	return spawn(&real, "posix_spawn", pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	static spawn_fn real;

	return spawn(&real, "posix_spawnp", pid, file, fa, attr, argv, envp);
}
