#include "util/record/caps.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool have_cap(cap_value_t cap)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (!caps)
		return false;
	if (cap_get_flag(caps, cap, CAP_EFFECTIVE, &v))
		v = CAP_CLEAR;
	cap_free(caps);
	return v == CAP_SET;
}

int caps__perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = 2;

	if (!f)
		return v;
	if (fscanf(f, "%d", &v) != 1)
		v = 2;
	fclose(f);
	return v;
}

int caps__check_perf(pid_t pid)
{
	bool perfmon = have_cap(CAP_PERFMON) || have_cap(CAP_SYS_ADMIN);
	int paranoid = caps__perf_paranoid();

	/*
	 * User-space-only sampling of one's own processes is allowed up to
	 * paranoid 2; Debian's and Android's 3 forbids perf_event_open to
	 * everyone without CAP_PERFMON.
	 */
	if (!perfmon && paranoid > 2) {
		pr_err("perf events are not allowed: kernel.perf_event_paranoid is %d "
		       "and rsprof lacks CAP_PERFMON", paranoid);
		pr_hint("run 'sysctl kernel.perf_event_paranoid=2' as root, or give rsprof "
			"CAP_PERFMON (setcap cap_perfmon,cap_bpf+ep rsprof; see rsprof-record(1))");
		return -EPERM;
	}
	/* whether pid may be traced at all: target__may_trace() (util/record/target.h) */
	return 0;
}

int caps__check_bpf(const char **why)
{
	if (have_cap(CAP_SYS_ADMIN))
		return 0;
	if (!have_cap(CAP_BPF)) {
		*why = "missing CAP_BPF";
		return -EPERM;
	}
	if (!have_cap(CAP_PERFMON)) {
		*why = "missing CAP_PERFMON (needed with CAP_BPF for uprobes)";
		return -EPERM;
	}
	return 0;
}

bool caps__has_ptrace(void)
{
	return have_cap(CAP_SYS_PTRACE);
}

int caps__drop_unneeded(bool keep_dac)
{
	/* CAP_IPC_LOCK: the rings of threads found later go past perf_event_mlock_kb */
	static const cap_value_t keep[] = { CAP_PERFMON, CAP_SYS_PTRACE, CAP_IPC_LOCK,
					    CAP_SYS_ADMIN };
	cap_t now = cap_get_proc(), next = cap_init();
	int err = 0;

	if (!now || !next) {
		err = -errno;
		goto out;
	}
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		cap_flag_value_t v = CAP_CLEAR;
		cap_value_t c = keep[i];

		/* CAP_SYS_ADMIN only where CAP_PERFMON is unknown (kernels < 5.8) */
		if (c == CAP_SYS_ADMIN && CAP_IS_SUPPORTED(CAP_PERFMON))
			continue;
		if (!CAP_IS_SUPPORTED(c))
			continue;
		if (cap_get_flag(now, c, CAP_PERMITTED, &v) || v != CAP_SET)
			continue;
		if (cap_set_flag(next, CAP_PERMITTED, 1, &c, CAP_SET) ||
		    cap_set_flag(next, CAP_EFFECTIVE, 1, &c, CAP_SET)) {
			err = -errno;
			goto out;
		}
	}
	if (keep_dac) {
		cap_flag_value_t v = CAP_CLEAR;
		cap_value_t c = CAP_DAC_OVERRIDE;

		if (!cap_get_flag(now, c, CAP_PERMITTED, &v) && v == CAP_SET &&
		    cap_set_flag(next, CAP_PERMITTED, 1, &c, CAP_SET)) {
			err = -errno;
			goto out;
		}
	}
	if (cap_set_proc(next))
		err = -errno;
out:
	if (now)
		cap_free(now);
	if (next)
		cap_free(next);
	return err;
}

void caps__raise_dac(void)
{
	cap_t now = cap_get_proc();
	cap_value_t c = CAP_DAC_OVERRIDE;
	cap_flag_value_t v = CAP_CLEAR;

	if (!now)
		return;
	if (!cap_get_flag(now, c, CAP_PERMITTED, &v) && v == CAP_SET &&
	    !cap_set_flag(now, CAP_EFFECTIVE, 1, &c, CAP_SET))
		cap_set_proc(now);
	cap_free(now);
}

int caps__drop_all(void)
{
	cap_t none = cap_init();
	uid_t ruid = getuid();
	gid_t rgid = getgid();
	int err = 0;

	/* a setuid or setgid installation: back to who ran it, for good */
	if ((getegid() != rgid && setresgid(rgid, rgid, rgid)) ||
	    (geteuid() != ruid && setresuid(ruid, ruid, ruid)))
		err = -errno;
	if (!err && (!none || cap_set_proc(none)))
		err = -errno;
	if (none)
		cap_free(none);
	if (err) {
		pr_err("cannot drop privileges: %s", strerror(-err));
		pr_hint("this command only reads files and needs none");
	}
	return err;
}

bool caps__dir_needs_privilege(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;
	gid_t groups[256];
	mode_t want;
	int n;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st))
		return true;
	if (st.st_uid == geteuid()) {
		want = S_IWUSR | S_IXUSR;
	} else {
		bool member = st.st_gid == getegid();

		n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);
		for (int i = 0; i < n && !member; i++)
			member = groups[i] == st.st_gid;
		want = member ? S_IWGRP | S_IXGRP : S_IWOTH | S_IXOTH;
	}
	return (st.st_mode & want) != want;
}

const char *caps__sensitive(const char *comm)
{
	static const char *const names[][2] = {
		{ "sshd", "the SSH server (host keys, sessions)" },
		{ "ssh-agent", "the SSH agent (private keys)" },
		{ "gpg-agent", "the GnuPG agent (private keys, passphrases)" },
		{ "gnome-keyring", "the GNOME keyring (passwords)" },
		{ "kwalletd", "the KDE wallet (passwords)" },
		{ "keepass", "a password manager" },
		{ "pinentry", "a passphrase prompt" },
		{ "polkitd", "the polkit authority" },
		{ "sudo", "sudo" },
		{ "login", "the login program" },
		{ "vault", "a secrets server" },
	};

	if (!comm)
		return NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(comm, names[i][0], strlen(names[i][0])))
			return names[i][1];
	return NULL;
}
