#!/bin/sh
# Install the Debian packages of scripts/packages.txt that are missing.
#   scripts/install-deps.sh [GROUP...]    groups: build test bench fuzz (default: build test)
# Runs apt-get only when something is missing, so a prepared machine pays
# one dpkg-query per package and nothing else. Needs root for the install.
set -eu

here=$(dirname "$0")
[ $# -gt 0 ] || set -- build test

# The packages of the named [group] sections.
packages() {
	awk -v want=" $* " '
		/^[[:space:]]*(#|$)/ { next }
		/^\[/ { group = substr($0, 2, length($0) - 2); next }
		index(want, " " group " ") { print $1 }
	' "$here/packages.txt"
}

missing=
for pkg in $(packages "$@"); do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $pkg" ;;
	esac
done

[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: need root to install packages" >&2
	echo "hint: run 'sudo apt-get install$missing' or re-run as root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
