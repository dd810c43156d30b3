/* record_opts__from_args(): options, environment, defaults; caps__sensitive(). */
#include "util/record/options.h"

#include <stdlib.h>
#include <string.h>

#include "util/record/caps.h"
#include "util/error.h"
#include "util/options.h"
#include "util/record/status.h"

#include "tap.h"

static void reset(void)
{
	memset(&record_args, 0, sizeof(record_args));
	memset(&target_args, 0, sizeof(target_args));
	unsetenv("RSPROF_OUTPUT_DIR");
	unsetenv("RSPROF_INTERVAL");
	unsetenv("RSPROF_CPU_FREQ");
}

static const char *p42[] = { "42", NULL }, *p1[] = { "1", NULL }, *p7[] = { "7", NULL };

int main(void)
{
	static const char *const cmd[] = { "./app", "-p", "3", NULL };
	static const char *list[] = { "10,11", "12", "11", NULL };
	static const char *bad1[] = { "10,x", NULL }, *bad2[] = { "0", NULL },
			  *bad3[] = { "10,", NULL }, *bad4[] = { "-3", NULL };
	struct record_opts o;
	int err;

	/* errors are expected below: keep them out of the TAP stream */
	if (!freopen("/dev/null", "w", stderr))
		return 1;

	reset();
	target_args.pid_args = p42;
	err = record_opts__from_args(&o, NULL);
	is_int(err, 0, "-p 42 alone is fine");
	is_int(o.pid, 42, "pid");
	is_int(o.freq, 99, "default frequency 99 Hz");
	is_int(o.interval_ms, 1000, "default interval 1s");
	is_int(o.duration_ms, 0, "no duration");
	ok(o.cpu && o.heap && !o.heap_required, "CPU and heap by default");
	is_int(o.heap_sample, 1, "every allocation by default");
	ok(o.heap_probes == HEAP_PROBES_AUTO && o.heap_attribution == ATTR_FIRST_USER,
	   "heap defaults: auto, first-user");
	ok(!o.output && !o.output_dir && !o.argv, "no output, no dir, no command");
	ok(o.inherit && !o.user_only, "children followed, kernel time counted by default");

	reset();
	target_args.pid_args = list;
	is_int(record_opts__from_args(&o, NULL), 0, "-p 10,11 -p 12 -p 11");
	ok(o.n_pids == 3 && o.pids[0] == 10 && o.pids[1] == 11 && o.pids[2] == 12 && o.pid == 10,
	   "every PID once, in order");
	target_args.no_inherit = 1;
	record_args.user_only = 1;
	is_int(record_opts__from_args(&o, NULL), 0, "--no-inherit --user-only");
	ok(!o.inherit && o.user_only, "--no-inherit, --user-only");
	target_args.no_inherit = 0;
	record_args.user_only = 0;
	target_args.pid_args = bad1;
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "-p 10,x refused");
	target_args.pid_args = bad2;
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "-p 0 refused");
	target_args.pid_args = bad3;
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "-p 10, refused");
	target_args.pid_args = bad4;
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "-p -3 refused");

	reset();
	err = record_opts__from_args(&o, cmd);
	is_int(err, 0, "a command alone is fine");
	ok(o.argv == cmd && o.pid == 0, "the command is kept as is, with its own -p");

	reset();
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "no target: usage error");
	target_args.pid_args = p1;
	is_int(record_opts__from_args(&o, cmd), -RSPROF_EUSAGE, "two targets: usage error");
	target_args.pid_args = NULL;
	target_args.process = "x";
	record_args.no_cpu = record_args.no_heap = 1;
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "--no-cpu --no-heap: usage error");

	reset();
	target_args.pid_args = p42;
	record_args.append = 1;
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE,
	       "--append without -o: usage error (exit 2), not a database error");
	record_args.output = "p.db";
	is_int(record_opts__from_args(&o, NULL), 0, "--append -o p.db is fine");

	reset();
	target_args.process = "app";
	record_args.freq = "999";
	record_args.interval = "250ms";
	record_args.duration = "1m30s";
	record_args.no_cpu = 1;
	record_args.heap_probes = "libc";
	record_args.heap_sample = "10";
	record_args.heap_attribution = "stack";
	record_args.output = "x.db";
	setenv("RSPROF_CPU_FREQ", "49", 1);
	setenv("RSPROF_INTERVAL", "5s", 1);
	setenv("RSPROF_OUTPUT_DIR", "/tmp", 1);
	err = record_opts__from_args(&o, NULL);
	is_int(err, 0, "every option");
	is_int(o.freq, 999, "-F beats RSPROF_CPU_FREQ");
	is_int(o.interval_ms, 250, "-i beats RSPROF_INTERVAL");
	is_int(o.duration_ms, 90000, "-d 1m30s");
	ok(!o.cpu && o.heap && o.heap_required, "--no-cpu makes the heap required");
	ok(o.heap_probes == HEAP_PROBES_LIBC && o.heap_attribution == ATTR_STACK &&
	   o.heap_sample == 10, "heap options");
	is_str(o.output, "x.db", "-o");
	is_str(o.output_dir, "/tmp", "RSPROF_OUTPUT_DIR");

	reset();
	target_args.pid_args = p7;
	setenv("RSPROF_CPU_FREQ", "49", 1);
	setenv("RSPROF_INTERVAL", "5s", 1);
	is_int(record_opts__from_args(&o, NULL), 0, "environment defaults");
	ok(o.freq == 49 && o.interval_ms == 5000, "RSPROF_CPU_FREQ and RSPROF_INTERVAL apply");
	setenv("RSPROF_CPU_FREQ", "fast", 1);
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "bad RSPROF_CPU_FREQ");
	unsetenv("RSPROF_CPU_FREQ");
	setenv("RSPROF_INTERVAL", "soon", 1);
	is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "bad RSPROF_INTERVAL");

	static const struct { const char *field; const char *value; } bad[] = {
		{ "freq", "0" }, { "freq", "-5" }, { "freq", "12x" }, { "freq", "99999999" },
		{ "interval", "1ms" }, { "interval", "x" }, { "duration", "3x" },
		{ "duration", "0" }, { "heap_probes", "jemalloc" }, { "heap_sample", "0" },
		{ "heap_sample", "-1" }, { "heap_attribution", "callee" }, { "output", "" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reset();
		target_args.pid_args = p7;
		if (!strcmp(bad[i].field, "freq"))
			record_args.freq = bad[i].value;
		else if (!strcmp(bad[i].field, "interval"))
			record_args.interval = bad[i].value;
		else if (!strcmp(bad[i].field, "duration"))
			record_args.duration = bad[i].value;
		else if (!strcmp(bad[i].field, "heap_probes"))
			record_args.heap_probes = bad[i].value;
		else if (!strcmp(bad[i].field, "heap_sample"))
			record_args.heap_sample = bad[i].value;
		else if (!strcmp(bad[i].field, "heap_attribution"))
			record_args.heap_attribution = bad[i].value;
		else
			record_args.output = bad[i].value;
		is_int(record_opts__from_args(&o, NULL), -RSPROF_EUSAGE, "%s '%s' refused",
		       bad[i].field, bad[i].value);
	}

	ok(caps__sensitive("sshd") != NULL, "sshd is sensitive");
	ok(caps__sensitive("gpg-agent") != NULL, "gpg-agent is sensitive");
	ok(caps__sensitive("cpu_split") == NULL, "cpu_split is not");
	ok(caps__sensitive(NULL) == NULL, "NULL comm");

	return done_testing();
}
