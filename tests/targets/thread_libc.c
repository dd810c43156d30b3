/*
 * Threads through glibc, one case per argument, each printing a result
 * that does not depend on scheduling (tests/t1530):
 *   getattr    a new thread's first allocation is the one glibc makes inside
 *              pthread_getattr_np() (its cpuset), as Rust's std does for
 *              every thread
 *   stacksize  threads with a 64 KiB stack (pthread_attr_setstacksize)
 *   signal     threads started by a thread a signal handler woke (sem_post)
 *   fork       a thread forks; the child allocates and exits with a status
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static void *getattr_thread(void *arg)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	char *p;

	if (pthread_getattr_np(pthread_self(), &a) || pthread_attr_getstack(&a, &addr, &size))
		return NULL;
	pthread_attr_destroy(&a);
	p = malloc(1000);	/* GETATTR_KEEP */
	memset(p, 1, 1000);
	return p;
}

static void *sum_thread(void *arg)
{
	long n = (long)arg, *v = malloc(n * sizeof(*v)), s = 0;

	for (long i = 0; i < n; i++)
		v[i] = i;
	for (long i = 0; i < n; i++)
		s += v[i];
	free(v);
	return (void *)s;
}

static int run(void *(*fn)(void *), void *arg, const pthread_attr_t *a, void **ret)
{
	pthread_t t;
	int err = pthread_create(&t, a, fn, arg);

	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		return -1;
	}
	return pthread_join(t, ret) ? -1 : 0;
}

static int getattr(void)
{
	void *kept[4];

	for (int i = 0; i < 4; i++)
		if (run(getattr_thread, NULL, NULL, &kept[i]) || !kept[i])
			return 1;
	printf("getattr: 4 threads, %d\n", ((unsigned char *)kept[3])[999]);
	return 0;
}

static int stacksize(void)
{
	pthread_attr_t a;
	long total = 0;

	if (pthread_attr_init(&a) || pthread_attr_setstacksize(&a, 64 * 1024))
		return 1;
	for (long i = 1; i <= 8; i++) {
		void *r;

		if (run(sum_thread, (void *)(i * 1000), &a, &r))
			return 1;
		total += (long)r;
	}
	pthread_attr_destroy(&a);
	printf("stacksize: %ld\n", total);
	return 0;
}

static sem_t woken;

static void on_usr1(int sig)
{
	sem_post(&woken);	/* async-signal-safe */
}

static void *waker(void *arg)
{
	long total = 0;

	for (int round = 0; round < 3; round++) {
		void *r;

		while (sem_wait(&woken) && errno == EINTR)
			;
		if (run(sum_thread, (void *)(long)(1000 * (round + 1)), NULL, &r))
			return (void *)-1L;
		total += (long)r;
	}
	return (void *)total;
}

static int signals(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t t;
	void *r;

	if (sem_init(&woken, 0, 0) || sigaction(SIGUSR1, &sa, NULL) ||
	    pthread_create(&t, NULL, waker, NULL))
		return 1;
	for (int i = 0; i < 3; i++)
		raise(SIGUSR1);
	if (pthread_join(t, &r) || (long)r < 0)
		return 1;
	printf("signal: %ld\n", (long)r);
	return 0;
}

static void *forker(void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return (void *)-1L;
	if (!pid) {
		char *s = malloc(64);

		snprintf(s, 64, "child %d", 7);
		_exit((int)strlen(s));
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return (void *)-1L;
	return (void *)(long)WEXITSTATUS(st);
}

static int forks(void)
{
	void *r;

	if (run(forker, NULL, NULL, &r) || (long)r < 0)
		return 1;
	printf("fork: child exited %ld\n", (long)r);
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int rc;

		if (!strcmp(argv[i], "getattr"))
			rc = getattr();
		else if (!strcmp(argv[i], "stacksize"))
			rc = stacksize();
		else if (!strcmp(argv[i], "signal"))
			rc = signals();
		else if (!strcmp(argv[i], "fork"))
			rc = forks();
		else {
			fprintf(stderr, "thread_libc: unknown case %s\n", argv[i]);
			return 2;
		}
		if (rc) {
			fprintf(stderr, "thread_libc: %s failed\n", argv[i]);
			return 1;
		}
		fflush(stdout);
	}
	return 0;
}
