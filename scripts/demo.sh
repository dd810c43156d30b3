#!/bin/sh
# `make demo`: profile the bundled demo program and print the report.
#   scripts/demo.sh OUTDIR      (OUTDIR holds rsprof and demo, built by make)
set -eu
out=${1:-out}
db=$out/demo.db
rm -f "$db" "$db-wal" "$db-shm"

echo "== rsprof record -o $db -- $out/demo 3"
"$out/rsprof" record -q -o "$db" -- "$out/demo" 3
echo
echo "== rsprof report $db"
"$out/rsprof" report -n 10 "$db"
echo
echo "Next: '$out/rsprof info $db', '$out/rsprof timeline $db', 'man rsprof' (after make install)."
