/*
 * The kernel's calls the tracker makes, through syscall(): never through
 * glibc's wrappers of open, close, read and pread, which are cancellation
 * points (a thread with a cancellation pending would act on it inside the
 * program's malloc, which is not one), and never through mmap & co., which
 * the tracker interposes itself (preload/mmap.c). syscall() takes no lock
 * and allocates nothing. Errors: -1 (MAP_FAILED) with errno set, as the
 * wrappers.
 */
#ifndef RSPROF_PRELOAD_SYS_H
#define RSPROF_PRELOAD_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

static inline int sys_open(const char *path, int flags, int mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static inline int sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static inline ssize_t sys_read(int fd, void *buf, size_t len)
{
	return (ssize_t)syscall(SYS_read, fd, buf, len);
}

static inline ssize_t sys_pread(int fd, void *buf, size_t len, off_t off)
{
	return (ssize_t)syscall(SYS_pread64, fd, buf, len, off);
}

static inline int sys_ioctl(int fd, unsigned long req, void *arg)
{
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

static inline void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (off & 4095) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static inline int sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static inline void *sys_mremap(void *old, size_t old_size, size_t new_size, int flags,
			       void *new_addr)
{
	return (void *)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
}

static inline int sys_mprotect(void *addr, size_t len, int prot)
{
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

static inline pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

#endif
