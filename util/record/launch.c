#include "util/record/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/error.h"

int launch__fork(const char *const *argv, char *const *envp, struct launch *l)
{
	int go[2], ex[2], err;
	pid_t pid;

	l->pid = 0;
	l->go_fd = l->exec_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		goto pipe_err;
	if (pipe2(ex, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto pipe_err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		pr_err("cannot fork: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return err;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		/* rsprof's handlers stop rsprof; the program gets the defaults */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the parent gave up */
		/* on failure errno says why: reported below */
		if (!l->no_new_privs || !prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
			if (envp)
				execvpe(argv[0], (char *const *)argv, envp);
			else
				execvp(argv[0], (char *const *)argv);
		}
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->exec_fd = ex[0];
	return 0;
pipe_err:
	err = -errno;
	pr_err("cannot create a pipe: %s", strerror(errno));
	return err;
}

int launch__go(struct launch *l, const char *name)
{
	ssize_t n;
	int e = 0;

	n = write(l->go_fd, "g", 1);
	close(l->go_fd);
	l->go_fd = -1;
	if (n == 1) {
		do
			n = read(l->exec_fd, &e, sizeof(e));
		while (n < 0 && errno == EINTR);
	} else {
		n = 0;
		e = EPIPE;
	}
	close(l->exec_fd);
	l->exec_fd = -1;
	if (n == 0 && !e)
		return 0;	/* EOF: the exec closed the pipe */
	if (n != (ssize_t)sizeof(e))
		e = EIO;
	pr_err("cannot run '%s': %s", name, strerror(e));
	if (e == ENOENT)
		pr_hint("check the command name and PATH");
	kill(l->pid, SIGKILL);
	waitpid(l->pid, NULL, 0);
	l->pid = 0;
	return -e;
}

void launch__abort(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);	/* the child reads EOF and exits */
	if (l->exec_fd >= 0)
		close(l->exec_fd);
	l->go_fd = l->exec_fd = -1;
	if (l->pid > 0)
		waitpid(l->pid, NULL, 0);
	l->pid = 0;
}

void launch__kill(struct launch *l, int *status)
{
	int st;

	*status = -1;
	if (l->pid <= 0)
		return;
	kill(l->pid, SIGTERM);
	for (int i = 0; i < 50; i++) {
		if (waitpid(l->pid, &st, WNOHANG) == l->pid) {
			*status = st;
			l->pid = 0;
			return;
		}
		usleep(10000);
	}
	kill(l->pid, SIGKILL);
	if (waitpid(l->pid, &st, 0) == l->pid)
		*status = st;
	l->pid = 0;
}
