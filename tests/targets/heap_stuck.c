/*
 * A program whose pthread_setspecific() never returns in its second thread
 * (it defines its own, exported; the program itself never calls it): the
 * in-process heap tracker calls it when a thread starts allocating, so
 * under the tracker the second thread is stuck in a call out of the
 * tracker for good, as a deadlock inside glibc would leave it, and main
 * waits for it in pthread_join (tests/t1530: rsprof's watchdog must say so).
 * Without the tracker it prints "done" and exits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_t main_thread;

int pthread_setspecific(pthread_key_t key, const void *value)
{
	static int (*real)(pthread_key_t, const void *);

	if (!pthread_equal(pthread_self(), main_thread))
		for (;;)
			pause();	/* STUCK */
	if (!real)
		real = (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
	return real ? real(key, value) : -1;
}

static void *worker(void *arg)
{
	char *p = malloc(100);

	strcpy(p, "worker");
	return p;
}

int main(void)
{
	pthread_t t;
	void *r;

	main_thread = pthread_self();
	free(malloc(10));
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, &r))
		return 1;
	printf("done %s\n", (char *)r);
	return 0;
}
