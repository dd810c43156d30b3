/* util/outfile.h: files rsprof writes, never through a link or into a device. */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

static char dir[] = "/tmp/rsprof-test-outfile.XXXXXX";

static const char *tmp(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

static int entries(void)
{
	char cmd[300];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

int main(void)
{
	struct outfile o;
	mode_t old;

	if (!mkdtemp(dir))
		return 1;
	old = umask(0777);

	/* NEW */
	is_int(outfile__create(&o, tmp("new"), OUTFILE_NEW), 0, "NEW makes a file");
	ok(o.fd >= 0 && write(o.fd, "x", 1) == 1, "and it can be written");
	is_int(outfile__commit(&o), 0, "commit");
	is_int(mode_of(tmp("new")), 0600, "mode 0600 under umask 0777");
	is_int(outfile__create(&o, tmp("new"), OUTFILE_NEW), -EEXIST, "NEW over a file: -EEXIST");
	ok(!symlink(tmp("victim"), tmp("link")), "a link to a file not there yet");
	is_int(outfile__create(&o, tmp("link"), OUTFILE_NEW), -EEXIST, "NEW over a link: refused");
	is_int(mode_of(tmp("victim")), -1, "nothing made at the link's target");
	is_int(outfile__create(&o, tmp("gone"), OUTFILE_NEW), 0, "NEW, then abort");
	outfile__abort(&o);
	is_int(mode_of(tmp("gone")), -1, "abort removes it");
	umask(0277);
	is_int(outfile__create(&o, tmp("u277"), OUTFILE_NEW), 0, "umask 0277 does not stop it");
	outfile__commit(&o);
	is_int(mode_of(tmp("u277")), 0600, "mode 0600 under umask 0277");
	umask(0777);

	/* REPLACE */
	ok(!mkfifo(tmp("fifo"), 0600), "a FIFO");
	is_int(outfile__create(&o, tmp("fifo"), OUTFILE_REPLACE), -EINVAL,
	       "REPLACE of a FIFO: refused without blocking");
	ok(!symlink("/dev/null", tmp("devlink")), "a link to a device");
	is_int(outfile__create(&o, tmp("devlink"), OUTFILE_REPLACE), -ELOOP,
	       "REPLACE through a link: refused");
	{
		int fd = open(tmp("victim"), O_WRONLY | O_CREAT | O_EXCL, 0600);

		ok(fd >= 0 && write(fd, "secret", 6) == 6 && !close(fd), "a victim file");
	}
	is_int(outfile__create(&o, tmp("link"), OUTFILE_REPLACE), -ELOOP,
	       "REPLACE through a link to a regular file: refused");
	is_str(slurp(tmp("victim")), "secret", "the victim is untouched");
	is_int(outfile__create(&o, tmp("pic"), OUTFILE_REPLACE), 0, "REPLACE of a new name");
	ok(write(o.fd, "old", 3) == 3, "written");
	is_int(mode_of(tmp("pic")), -1, "nothing at the path before the commit");
	is_int(outfile__commit(&o), 0, "commit");
	is_str(slurp(tmp("pic")), "old", "the file is there");
	is_int(mode_of(tmp("pic")), 0600, "mode 0600");
	is_int(outfile__create(&o, tmp("pic"), OUTFILE_REPLACE), 0, "REPLACE of a regular file");
	ok(write(o.fd, "new", 3) == 3, "written");
	is_str(slurp(tmp("pic")), "old", "the old one stays until the commit");
	/* a link planted between create and commit is replaced, not written through */
	ok(!unlink(tmp("pic")) && !symlink(tmp("victim"), tmp("pic")), "pic swapped for a link");
	is_int(outfile__commit(&o), -ELOOP, "commit refuses the link");
	is_str(slurp(tmp("victim")), "secret", "the victim is untouched");
	unlink(tmp("pic"));
	is_int(outfile__create(&o, tmp("pic"), OUTFILE_REPLACE), 0, "REPLACE, then abort");
	outfile__abort(&o);
	is_int(mode_of(tmp("pic")), -1, "abort leaves nothing");
	/* new, u277, fifo, link, devlink, victim: no temporary file left behind */
	is_int(entries(), 6, "no temporary files left");

	umask(old);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		ok(!system(cmd), "clean up");
	}
	return done_testing();
}
