#!/bin/sh
# The README's quick start on a fresh Debian 12 machine.
#   scripts/fresh-check.sh [REV]        as root; REV defaults to HEAD
#
# Makes a minimal Debian 12 root with debootstrap (the minbase variant plus
# git and make, from the Debian mirror this machine's apt already uses, read
# from /etc/apt/sources.list*), unpacks a pristine copy of it, clones REV of
# this repository into /root/rsprof there, and runs exactly the README's two
# commands, `make demo` then `make test`, under chroot as root with a clean
# environment (PATH=/usr/sbin:/usr/bin:/sbin:/bin, HOME=/root, nothing else),
# the root a mount point as on a machine, and /proc, /sys, /sys/kernel/btf,
# /sys/fs/bpf, /sys/kernel/tracing and /dev mounted. Prints how long each
# took and the tail of its output; exits 1 when either fails, and what the
# two commands installed. Not part of `make test`: it takes a few minutes
# (README.md, Quick start).
#
# Everything lives in $FRESH_DIR (default ${TMPDIR:-/tmp}/rsprof-fresh-check):
# the base system as a tarball, made once and reused (delete it to fetch the
# base system again), the logs of the last run (last/), and the root while it
# runs. The mounts live in a mount namespace of their own and are undone on
# any exit, Ctrl-C included; the root is removed unless FRESH_KEEP=1.
# FRESH_TAIL=N: lines of each command's output shown (default 25).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
me=$top/scripts/fresh-check.sh
FRESH_DIR=${FRESH_DIR:-${TMPDIR:-/tmp}/rsprof-fresh-check}
FRESH_TAIL=${FRESH_TAIL:-25}
suite=bookworm
variant=minbase
include=git,make

die() {
	echo "fresh-check: $1" >&2
	[ $# -gt 1 ] && echo "hint: $2" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mount)" "run it as root"
case $FRESH_DIR in
/*) ;;
*) FRESH_DIR=$(pwd)/$FRESH_DIR ;;
esac
case $FRESH_DIR in
*[[:space:]]*) die "FRESH_DIR must not contain white space: '$FRESH_DIR'" ;;
esac

# The mounts go into a private mount namespace: they cannot leak to the
# host, and the kernel drops them when the last process in it ends.
if [ -z "${FRESH_CHECK_NS:-}" ]; then
	"$top/scripts/install-deps.sh" fresh || exit 1
	FRESH_CHECK_NS=1 exec unshare --mount --propagation private /bin/sh "$me" "$@"
fi

rev=$(git -C "$top" rev-parse --verify -q "${1:-HEAD}^{commit}") ||
	die "no such revision: ${1:-HEAD}"
[ $# -eq 0 ] && [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ] &&
	echo "note: uncommitted changes are not checked: the root gets a clone of HEAD"

# "URI SUITE" for each Debian 12 source of the host's apt (one-line and
# deb822 formats; deb lines only, options in [...] skipped).
host_sources() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			print $i, $(i + 1)
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
		function flush(  i, j, nu, ns, u, s) {
			if (types ~ /(^| )deb( |$)/ && enabled !~ /^(no|false)$/) {
				nu = split(uris, u, " "); ns = split(suites, s, " ")
				for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
			}
			types = uris = suites = enabled = ""
		}
		/^[[:space:]]*#/ { next }
		/^[[:space:]]*$/ { flush(); next }
		{ key = tolower($1); sub(/^[^:]*:[[:space:]]*/, "") }
		key == "types:" { types = $0 } key == "uris:" { uris = $0 }
		key == "suites:" { suites = $0 } key == "enabled:" { enabled = tolower($0) }
		END { flush() }' "$f"
	done
}
sources=$(host_sources | awk -v s=$suite '$2 ~ "^" s "(-updates|-security|/updates)?$"' | sort -u)
mirror=$(echo "$sources" | awk -v s=$suite '$2 == s { print $1; exit }')
[ -n "$mirror" ] || die "no '$suite' source in /etc/apt/sources.list*" \
	"the fresh root is fetched from the Debian mirror this machine's apt uses"

root=
bg=
cleanup() {
	trap '' INT TERM HUP
	[ -n "$bg" ] && kill "$bg" 2>/dev/null
	bg=
	[ -n "$root" ] || return 0
	# Processes left in the root (a tmux server of a test, say): each by PID.
	for _ in 1 2 3 4 5; do
		pids=
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && pids="$pids ${p#/proc/}"
		done
		[ -z "$pids" ] && break
		# shellcheck disable=SC2086
		kill -9 $pids 2>/dev/null
		sleep 0.2
	done
	# Every mount below the root and the root's own, deepest first.
	for _ in 1 2 3; do
		mps=$(awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' \
			/proc/self/mountinfo | sort -r)
		[ -z "$mps" ] && break
		for mp in $mps; do
			umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null
		done
	done
	if awk -v r="$root" '$5 == r || index($5, r "/") == 1 { found = 1 } END { exit !found }' \
		/proc/self/mountinfo; then
		echo "fresh-check: mounts left below $root; not removing it" >&2
	elif [ "${FRESH_KEEP:-0}" = 1 ]; then
		echo "fresh-check: root kept: $root"
	else
		rm -rf --one-file-system "$root"
	fi
	root=
}
trap 'cleanup' EXIT
trap 'echo "fresh-check: interrupted" >&2; cleanup; exit 130' INT
trap 'echo "fresh-check: terminated" >&2; cleanup; exit 143' TERM
trap 'echo "fresh-check: hung up" >&2; cleanup; exit 129' HUP

# run CMD...: in the background, so that a signal to this script is handled
# at once (the trap ends what runs in the root); $? is the command's status.
run() {
	"$@" &
	bg=$!
	wait $bg
	_rc=$?
	bg=
	return $_rc
}

secs() {	# SECONDS -> "12m 05s (725 s)"
	printf '%dm %02ds (%d s)' $(($1 / 60)) $(($1 % 60)) "$1"
}

mkdir -p "$FRESH_DIR" || die "cannot create $FRESH_DIR"
# Roots a killed run left (named by its PID; mounted in no namespace but its
# own, gone with it).
for d in "$FRESH_DIR"/root.* "$FRESH_DIR"/debootstrap.*; do
	[ -d "$d" ] || continue
	kill -0 "${d##*.}" 2>/dev/null && continue
	echo "removing $d (left by an earlier run)"
	rm -rf --one-file-system "$d"
done
logs=$FRESH_DIR/last
rm -rf "$logs" && mkdir -p "$logs" || die "cannot create $logs"

echo "fresh-check: rsprof $(git -C "$top" rev-parse --short "$rev") ($(git -C "$top" log -1 --format=%s "$rev" | cut -c1-60))"
echo "host: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r), $(nproc) CPUs;$(uptime | sed 's/.*load/ load/')"
echo "mirror: $mirror ($suite, from this machine's apt sources)"

# The base system: debootstrap once, kept as a tarball.
key=$(printf '%s %s %s %s\n' "$suite" "$variant" "$include" "$mirror" | md5sum | cut -c1-8)
base=$FRESH_DIR/base-$suite-$variant-$key.tar
if [ -s "$base" ]; then
	echo "base: $base (cached; delete it to fetch the base system again)"
else
	echo "base: debootstrap --variant=$variant --include=$include $suite ..."
	t0=$(date +%s)
	root=$FRESH_DIR/debootstrap.$$
	rm -rf "$root"
	if ! run debootstrap --variant=$variant --include=$include $suite "$root" "$mirror" \
		>"$logs/debootstrap.log" 2>&1; then
		tail -n "$FRESH_TAIL" "$logs/debootstrap.log"
		die "debootstrap failed (log: $logs/debootstrap.log)"
	fi
	chroot "$root" apt-get clean
	tar -C "$root" --numeric-owner --xattrs --xattrs-include='*' -cf "$base.tmp" . &&
		mv "$base.tmp" "$base" || { rm -f "$base.tmp"; die "cannot write $base"; }
	cleanup
	echo "base: made in $(secs $(($(date +%s) - t0))): $base"
fi

# A pristine root from the tarball, with the network set-up and the apt
# sources a Debian 12 installation has (the suite, its updates and security).
root=$FRESH_DIR/root.$$
rm -rf "$root" && mkdir -p "$root" || die "cannot create $root"
tar -C "$root" --numeric-owner --xattrs --xattrs-include='*' -xpf "$base" ||
	die "cannot unpack $base" "delete it and re-run"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
echo "$sources" | awk '{ print "deb", $1, $2, "main" }' >"$root/etc/apt/sources.list"

# A clean clone of REV.
src=$root/root/rsprof
git clone -q --no-checkout --no-hardlinks "$top" "$src" &&
	git -C "$src" checkout -q --detach "$rev" ||
	die "cannot clone $top at $rev into the root"

# What the kernel offers a real machine: the issue's list, plus /dev/pts
# (tmux needs terminals) and /dev/shm, and a root that is a mount point,
# as / is (unshare -m makes its mounts private there: tests/t1016, t1527).
mount --bind "$root" "$root" || die "cannot bind-mount the root on itself"
mount -t proc proc "$root/proc" || die "cannot mount /proc"
mount -t sysfs sysfs "$root/sys" || die "cannot mount /sys"
mount --bind /dev "$root/dev" || die "cannot mount /dev"
mount --bind /dev/pts "$root/dev/pts" || die "cannot mount /dev/pts"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm" || die "cannot mount /dev/shm"
if [ -d /sys/kernel/btf ]; then
	mount --bind /sys/kernel/btf "$root/sys/kernel/btf" || die "cannot mount /sys/kernel/btf"
else
	echo "warning: no /sys/kernel/btf on this machine"
fi
mount -t bpf bpf "$root/sys/fs/bpf" || echo "warning: cannot mount /sys/fs/bpf"
mount -t tracefs tracefs "$root/sys/kernel/tracing" || echo "warning: cannot mount /sys/kernel/tracing"

packages() {	# how many packages the root has
	chroot "$root" dpkg-query -W -f '.\n' | wc -l
}
npkg0=$(packages)
mb0=$(du -sm -x "$root" | cut -f1)

status=0
summary=
for cmd in "make demo" "make test"; do
	log=$logs/$(echo "$cmd" | tr ' ' -).log
	echo
	echo "== $cmd    (chroot, as root, in /root/rsprof, env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root)"
	t0=$(date +%s)
	run chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		/bin/sh -c "cd /root/rsprof && $cmd" </dev/null >"$log" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	echo "... ($(wc -l <"$log") lines; last $FRESH_TAIL; all: $log)"
	tail -n "$FRESH_TAIL" "$log"
	if [ $rc = 0 ]; then
		result=ok
	else
		result="FAILED (exit $rc)"
		status=1
	fi
	echo "== $cmd: $result in $(secs $dt)"
	summary="$summary${summary:+, }$cmd $result in $(secs $dt)"
done

# The scratch directories that failing tests keep (tests/lib.sh).
for d in "$root"/tmp/rsprof-*; do
	[ -d "$d" ] || continue
	mkdir -p "$logs/kept" && cp -a "$d" "$logs/kept/" &&
		echo "kept by a failing test: $logs/kept/${d##*/}"
done

echo
npkg1=$(packages)
echo "installed by the two commands: $((npkg1 - npkg0)) packages," \
	"$(du -cm "$root"/var/cache/apt/archives/*.deb 2>/dev/null | tail -n 1 | cut -f1) MB downloaded;" \
	"the root grew from $mb0 MB to $(du -sm -x "$root" | cut -f1) MB"
echo "fresh-check: $summary"
exit $status
