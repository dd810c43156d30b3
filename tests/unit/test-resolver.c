/*
 * The resolver on real code: addresses of this very binary (built -O2 -g),
 * of libc, of nothing, and, when $TARGETS/rust_inline exists, the hot loop
 * of a running Rust program (issue 2, test 2).
 */
#include "util/symbols/resolver.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>

#include "util/record/maps.h"
#include "util/symbols/plt.h"
#include "util/symbols/srcpath.h"
#include "tap.h"

/* The address of the call instruction in the caller. */
__attribute__((noinline)) uint64_t here(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0) - 1;
}

#include "resolver-inline.h"

static int noinline_line, inline_line, call_line;

__attribute__((noinline)) static uint64_t in_noinline(void)
{
	uint64_t pc;

	pc = here(); noinline_line = __LINE__;
	__asm__ volatile("" ::: "memory");
	return pc;
}

__attribute__((noinline)) static uint64_t in_inline(void)
{
	uint64_t pc;

	pc = inline_helper(&inline_line); call_line = __LINE__;
	__asm__ volatile("" ::: "memory");
	return pc;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static void test_maps(void)
{
	struct maps *m = NULL;
	const struct map *e;

	is_int(maps__load(getpid(), &m), 0, "maps__load(self)");
	ok(m && m->n > 5, "maps has entries");
	e = maps__find(m, (uint64_t)(uintptr_t)&in_noinline);
	ok(e && e->perms[2] == 'x' && ends_with(e->path, "test-resolver"),
	   "maps__find: own code in r-x mapping of the binary (%s)", e ? e->path : "none");
	ok(!maps__find(m, 16), "maps__find(16) is NULL");
	maps__delete(m);
	is_int(maps__load(999999999, &m), -ESRCH, "maps__load(no such pid) is -ESRCH");
	ok(!m, "no maps on error");
}

static void test_self(void)
{
	struct resolver *r = NULL;
	const struct symbol *s, *s2;
	const struct maps *m;
	bool vdso = false;
	char buf[256];
	uint64_t pc;

	is_int(resolver__new(getpid(), &r), 0, "resolver__new(self)");
	if (!r)
		return;
	is_int(resolver__check_debuginfo(r), 0, "own binary has DWARF lines");

	pc = in_noinline();
	s = resolver__resolve(r, pc);
	ok(s && s->has_debuginfo, "noinline: resolved with debuginfo");
	ok(s && ends_with(symbol__frame(s)->file, "tests/unit/test-resolver.c"),
	   "noinline: file is test-resolver.c (%s)", s ? symbol__frame(s)->file : "");
	is_int(s ? symbol__frame(s)->line : -1, noinline_line, "noinline: line");
	is_str(s ? symbol__frame(s)->function : NULL, "in_noinline", "noinline: function");
	ok(s && ends_with(s->module, "test-resolver"), "noinline: module is the test binary");
	s2 = resolver__resolve(r, pc);
	ok(s2 == s, "second lookup comes from the cache");

	pc = in_inline();
	s = resolver__resolve(r, pc);
	ok(s && s->n_frames >= 2, "inline: at least two frames (%d)", s ? s->n_frames : 0);
	ok(s && ends_with(symbol__frame(s)->file, "tests/unit/resolver-inline.h"),
	   "inline: reported file is resolver-inline.h (%s)", s ? symbol__frame(s)->file : "");
	is_int(s ? symbol__frame(s)->line : -1, inline_line, "inline: reported at the helper's line");
	is_str(s ? symbol__frame(s)->function : NULL, "inline_helper", "inline: function");
	if (s && s->n_frames >= 2) {
		ok(ends_with(s->frames[1].file, "tests/unit/test-resolver.c"),
		   "inline: caller frame in test-resolver.c");
		is_int(s->frames[1].line, call_line, "inline: caller frame at the call line");
		is_str(s->frames[1].function, "in_inline", "inline: caller function");
	}
	is_int(s ? s->chosen : -1, 0, "inline: chosen is the innermost (not toolchain)");

	/* libc: the module is libc, no line (Debian ships no libc DWARF by default) */
	s = resolver__resolve(r, (uint64_t)(uintptr_t)&getpid + 4);
	ok(s && ends_with(s->module, "libc.so.6"), "libc address: module %s",
	   s && s->module ? s->module : "(null)");
	ok(s && (!symbol__frame(s)->file || strstr(symbol__frame(s)->file, "glibc") ||
		 strstr(symbol__frame(s)->file, "sysdeps")), "libc address: no file or a libc file");
	ok(s && symbol__frame(s)->function && strstr(symbol__frame(s)->function, "getpid"),
	   "libc address: function %s", s && symbol__frame(s)->function ?
	   symbol__frame(s)->function : "(null)");
	if (s && !symbol__frame(s)->file)
		is_str(srcpath__display(NULL, s->module, buf, sizeof(buf)), "[libc.so.6]",
		       "libc address: displayed as [libc.so.6]");

	/* a versioned symbol (clock_gettime@@GLIBC_2.17) is named without its version */
	s = resolver__resolve(r, (uint64_t)(uintptr_t)&clock_gettime + 4);
	ok(s && symbol__frame(s)->function && !strchr(symbol__frame(s)->function, '@') &&
	   strstr(symbol__frame(s)->function, "clock_gettime"),
	   "libc versioned symbol: function %s", s && symbol__frame(s)->function ?
	   symbol__frame(s)->function : "(null)");

	s = resolver__resolve(r, 16);
	ok(s && !s->module && s->n_frames == 1 && !s->frames[0].file &&
	   !s->frames[0].function && !s->has_debuginfo, "unmapped address: one empty frame");
	is_str(srcpath__display(s ? s->frames[0].file : "x", s ? s->module : "x", buf,
				sizeof(buf)), "[unknown]", "unmapped address: [unknown]");

	/* the [vdso]: names from its .dynsym */
	m = resolver__maps(r);
	for (size_t i = 0; m && i < m->n && !vdso; i++) {
		const struct map *e = &m->v[i];

		if (!e->path || strcmp(e->path, "[vdso]"))
			continue;
		for (uint64_t a = e->start; a < e->end && !vdso; a += 16) {
			s = resolver__resolve(r, a);
			vdso = s && s->module && !strcmp(s->module, "[vdso]") &&
			       s->frames[0].function &&
			       strstr(s->frames[0].function, "clock_gettime");
		}
	}
	if (getauxval(AT_SYSINFO_EHDR))
		ok(vdso, "a [vdso] address resolves to clock_gettime");
	else	/* valgrind hides the vdso from its guest */
		tap_skip("no AT_SYSINFO_EHDR");

	is_int(resolver__refresh_maps(r), 0, "refresh_maps");
	s = resolver__resolve(r, in_noinline());
	is_int(s ? symbol__frame(s)->line : -1, noinline_line, "after refresh: still resolves");
	ok(resolver__maps(r) && resolver__maps(r)->n > 5, "resolver__maps");
	resolver__delete(r);
	resolver__delete(NULL);
}

/* A library loaded after resolver__new() resolves after a refresh. */
static void test_dlopen(void)
{
	struct resolver *r = NULL;
	const struct symbol *before, *after;
	void *h, *fn;

	if (resolver__new(getpid(), &r)) {
		ok(0, "resolver__new for dlopen");
		return;
	}
	h = dlopen("libcrypt.so.1", RTLD_NOW);
	fn = h ? dlsym(h, "crypt") : NULL;
	if (!fn) {
		tap_skip("no libcrypt.so.1 to dlopen");
		resolver__delete(r);
		return;
	}
	before = resolver__resolve(r, (uint64_t)(uintptr_t)fn);
	ok(before && !before->module, "dlopen: unknown before the refresh");
	is_int(resolver__refresh_maps(r), 0, "dlopen: refresh_maps");
	after = resolver__resolve(r, (uint64_t)(uintptr_t)fn);
	ok(after && strstr(after->module, "libcrypt.so.1"), "dlopen: module %s after refresh",
	   after && after->module ? after->module : "(null)");
	ok(after && after->frames[0].function && strstr(after->frames[0].function, "crypt"),
	   "dlopen: function %s", after && after->frames[0].function ?
	   after->frames[0].function : "(null)");
	/* the old symbol stays valid till resolver__delete() (ASan checks) */
	ok(before && !before->frames[0].function && before->n_frames == 1,
	   "dlopen: the symbol from before is still readable");
	resolver__delete(r);
	dlclose(h);
}

/* A process that runs execve() after resolver__new(): refresh starts over. */
static void test_exec(void)
{
	struct resolver *r = NULL;
	const struct symbol *before, *after;
	const struct maps *m;
	char fn[64], exe[4096];
	uint64_t addr = 0;
	int fds[2], status;
	pid_t pid;
	char c;

	if (pipe(fds)) {
		ok(0, "pipe");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	is_int(resolver__new(pid, &r), 0, "exec: resolver__new before the exec");
	before = r ? resolver__resolve(r, (uint64_t)(uintptr_t)&in_noinline) : NULL;
	ok(before && before->frames[0].function && !strcmp(before->frames[0].function,
	   "in_noinline"), "exec: the child's copy of our code resolves");
	if (write(fds[1], "x", 1) != 1)
		ok(0, "write");
	close(fds[1]);
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 200; i++) {
		ssize_t n = readlink(fn, exe, sizeof(exe) - 1);

		if (n > 0 && (exe[n] = '\0', strstr(exe, "sleep")))
			break;
		usleep(5000);
	}
	usleep(50 * 1000);	/* the dynamic loader maps the libraries */
	is_int(r ? resolver__refresh_maps(r) : -1, 0, "exec: refresh_maps");
	m = r ? resolver__maps(r) : NULL;
	for (size_t i = 0; m && i < m->n; i++) {
		if (m->v[i].path && strstr(m->v[i].path, "sleep") && m->v[i].perms[2] == 'x') {
			addr = m->v[i].start + (m->v[i].end - m->v[i].start) / 2;
			break;
		}
	}
	after = addr ? resolver__resolve(r, addr) : NULL;
	ok(after && after->module && strstr(after->module, "sleep"),
	   "exec: an address of the new program is in its module (%s)",
	   after && after->module ? after->module : "(null)");
	ok(before && before->frames[0].function && !strcmp(before->frames[0].function,
	   "in_noinline"), "exec: the symbol from before the exec is still readable");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	resolver__delete(r);
}

/* The text of line `line` of file contains marker? */
static bool line_has(const char *file, int line, const char *marker)
{
	char buf[1024];
	bool found = false;
	FILE *f = fopen(file, "r");

	if (!f)
		return false;
	for (int n = 1; fgets(buf, sizeof(buf), f); n++) {
		if (n == line) {
			found = strstr(buf, marker) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Is the out-of-line function of s the target's hot work()? */
static bool in_work(const struct symbol *s)
{
	const char *fn = s->frames[s->n_frames - 1].function;

	return fn && (!strcmp(fn, "work") || strstr(fn, "::work"));
}

/*
 * Sample the program counter of a running target with ptrace (as perf
 * would with cpu-clock) and resolve each sample: most must land on the
 * source line marked HOT LINE, none of work() in toolchain source, few on the line
 * marked CALLER LINE. rust_inline: Rust -g -O, the inlined core arithmetic
 * of issue 2 test 2. clang_inline: C by clang -O2 (no .debug_aranges).
 */
static void test_sampled(const char *name, const char *src)
{
	const char *targets = getenv("TARGETS");
	char exe[4096], secs[] = "5";
	int samples = 0, hot = 0, toolchain = 0, caller = 0, status;
	struct resolver *r = NULL;
	uint64_t first_rip = 0;
	pid_t pid;

	snprintf(exe, sizeof(exe), "%s/%s", targets ? targets : "out/targets", name);
	if (access(exe, X_OK)) {
		tap_skip("%s not built (make targets)", exe);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(exe, exe, secs, (char *)NULL);
		_exit(127);
	}
	usleep(200 * 1000);
	is_int(resolver__new(pid, &r), 0, "%s: resolver__new", name);
	if (!r)
		goto out;
	is_int(resolver__check_debuginfo(r), 0, "%s has DWARF lines of its own", name);
	if (ptrace(PTRACE_SEIZE, pid, 0, 0)) {
		ok(0, "ptrace seize: %s", strerror(errno));
		goto out;
	}
	for (int i = 0; i < 200; i++) {
		struct user_regs_struct regs;
		const struct symbol *s;
		const struct frame *f;

		if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) || waitpid(pid, &status, 0) != pid)
			break;
		if (!ptrace(PTRACE_GETREGS, pid, 0, &regs) && !first_rip) {
			first_rip = regs.rip;	/* resolved after the target exits */
		} else if (!ptrace(PTRACE_GETREGS, pid, 0, &regs)) {
			s = resolver__resolve(r, regs.rip);
			f = s ? symbol__frame(s) : NULL;
			samples++;
			if (f && ends_with(f->file, src)) {
				if (line_has(f->file, f->line, "HOT LINE"))
					hot++;
				if (line_has(f->file, f->line, "CALLER LINE"))
					caller++;
			}
			/* only the hot function counts: a sample that lands in
			 * an out-of-line std function (Instant::elapsed in the
			 * loop condition) has no user frame to report */
			if (f && srcpath__is_toolchain(f->file)) {
				toolchain += in_work(s);
				printf("# toolchain: %s:%d in %s\n", f->file, f->line,
				       s->frames[s->n_frames - 1].function);
			}
		}
		ptrace(PTRACE_CONT, pid, 0, 0);
		usleep(2000);
	}
	ok(samples >= 100, "%s: %d samples", name, samples);
	ok(hot * 100 >= samples * 70, "%s: %d of %d samples on the HOT LINE", name, hot, samples);
	is_int(toolchain, 0, "%s: no sample of work() reported in toolchain source", name);
	ok(caller * 100 <= samples * 5, "%s: %d samples on the caller's line", name, caller);
out:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (r && first_rip) {
		/* the recorder resolves its last checkpoint after the target exited */
		const struct symbol *s = resolver__resolve(r, first_rip);

		ok(s && ends_with(symbol__frame(s)->file, src) && symbol__frame(s)->line > 0,
		   "%s: resolves after the target exited", name);
		ok(resolver__refresh_maps(r) == -ESRCH, "%s: refresh after exit is -ESRCH", name);
	}
	resolver__delete(r);
}

static double ms_since(const struct timespec *t0, clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Resolve n addresses spread over the first executable mapping whose path holds pat. */
static int bench_spread(struct resolver *r, const char *pat, int n, const char *what)
{
	const struct maps *m = resolver__maps(r);
	struct timespec w0, c0;
	int lines = 0;

	for (size_t i = 0; m && i < m->n; i++) {
		const struct map *e = &m->v[i];

		if (!e->path || e->perms[2] != 'x' || !strstr(e->path, pat))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &w0);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		for (int k = 0; k < n; k++) {
			const struct symbol *s;

			s = resolver__resolve(r, e->start + (e->end - e->start) / n * k);
			if (!s)
				return 1;
			lines += s->has_debuginfo;
		}
		printf("%-34s %5d addresses  %8.1f ms  (%.1f ms CPU)  %d with lines\n", what, n,
		       ms_since(&w0, CLOCK_MONOTONIC), ms_since(&c0, CLOCK_PROCESS_CPUTIME_ID),
		       lines);
		return 0;
	}
	printf("%-34s no executable mapping of %s\n", what, pat);
	return 0;
}

/*
 * test-resolver --bench EXE [N]: timings for bench/symbols.sh (never in a
 * test): resolver__new on a running EXE, then N distinct addresses spread
 * over its code (a cold cache each time: every unit they fall in is read),
 * again (the cache), and N over libc.
 */
static int bench(const char *exe, int n)
{
	struct resolver *r = NULL;
	struct timespec w0;
	int status, err;
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(exe, exe, "30", (char *)NULL);
		_exit(127);
	}
	usleep(200 * 1000);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	err = resolver__new(pid, &r);
	printf("%-34s %8.2f ms\n", "resolver__new", ms_since(&w0, CLOCK_MONOTONIC));
	if (!err) {
		err = bench_spread(r, base, n, "spread over the executable") ||
		      bench_spread(r, base, n, "the same again (cached)") ||
		      bench_spread(r, "libc.so", n, "spread over libc (symbol table)");
	}
	resolver__delete(r);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return err ? 1 : 0;
}

/* PLT stubs are NAME@plt (util/symbols/plt.h), not the symbol before them (_init). */
static int main_bias(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	*(uint64_t *)ctx = info->dlpi_addr;
	return 1;	/* the first is the executable */
}

static void test_plt(void)
{
	struct resolver *r = NULL;
	struct plt_sym *p = NULL;
	size_t n = 0, good = 0;
	uint64_t bias = 0;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open("/proc/self/exe", O_RDONLY);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	dl_iterate_phdr(main_bias, &bias);
	is_int(plt__symbols(elf, bias, &p, &n), 0, "plt__symbols(self)");
	ok(n > 0, "this binary has PLT stubs (%zu)", n);
	if (n && !resolver__new(getpid(), &r)) {
		for (size_t i = 0; i < n; i++) {
			const struct symbol *s = resolver__resolve(r, p[i].addr + p[i].size / 2);
			const char *fn = s ? s->frames[s->n_frames - 1].function : NULL;

			if (fn && !strcmp(fn, p[i].name))
				good++;
			else
				printf("# %s at %#llx resolves to %s\n", p[i].name,
				     (unsigned long long)p[i].addr, fn ? fn : "(null)");
		}
		is_int((int)good, (int)n, "every stub resolves to its NAME@plt");
		ok(ends_with(p[0].name, "@plt"), "named NAME@plt (%s)", p[0].name);
	}
	for (size_t i = 0; i < n; i++)
		free(p[i].name);
	free(p);
	resolver__delete(r);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--bench"))
		return bench(argv[2], argc > 3 ? atoi(argv[3]) : 1000);

	test_maps();
	test_self();
	test_plt();
	test_dlopen();
	test_exec();
	test_sampled("rust_inline", "rust_inline.rs");
	test_sampled("clang_inline", "clang_inline.c");
	return done_testing();
}
