#!/bin/sh
# `make bench`: the CPU benchmark, then the heap benchmark when present.
#   bench/run.sh [OUT]     OUT: the build directory (default ./out)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$(pwd)/out}
status=0
"$here/cpu.sh" "$OUT" || status=1
if [ -x "$here/heap.sh" ]; then
	echo
	"$here/heap.sh" "$OUT" || status=1
fi
if [ -x "$here/storage.sh" ]; then
	echo
	"$here/storage.sh" "$OUT" || status=1
fi
if [ -x "$here/timeline.sh" ]; then
	echo
	"$here/timeline.sh" "$OUT" || status=1
fi
exit $status
