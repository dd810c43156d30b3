#!/bin/sh
# Issue 11, item 4: escape characters in every string column of a profile
# (ESC and OSC sequences, CSI, CR, LF, BEL, C1 controls, bidi overrides,
# bytes that are not UTF-8) reach no terminal raw, from any reader in any
# format, nor through an error message; JSON and SVG stay well-formed.
. "$(dirname "$0")/lib.sh"

export COLUMNS=1000	# whole cells, nothing cut
cp "$TEST_SRC/fuzz/corpus/reader/v2-cpu-heap-stacks" clean.db
cp clean.db evil.db
# H: the hostile text; every TEXT column of every table gets it, keys kept apart
python3 - evil.db <<'EOP' || exit 1
import sqlite3, sys
H = "\x1b]0;pwned\x07\x1b[2J\r\nforged line\x1b[31m\u202e\x9b\x85"
bad = H.encode() + b"\xff\xfe\xc3"
conn = sqlite3.connect(sys.argv[1])
n = 0
for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
    for r in conn.execute("PRAGMA table_info(%s)" % t).fetchall():
        c, typ = r[1], r[2].upper()
        if typ != "TEXT" or (t, c) == ("meta", "key"):
            continue
        n += conn.execute("UPDATE %s SET %s = CAST(? || COALESCE(%s, '') AS TEXT)%s"
                          % (t, c, c, " WHERE key != 'version'" if t == "meta" else ""),
                          (bad,)).rowcount
# meta keys too, apart from the ones rsprof needs
conn.execute("INSERT INTO meta (key, value) VALUES (CAST(? AS TEXT), 'v')", (bad,))
conn.commit()
if n < 50:
    sys.exit("only %d values changed" % n)
EOP

# check.py OUT: no raw control character, C1 control, bidi override or
# invalid UTF-8 in a file of output (newlines between lines are fine)
cat >check.py <<'EOP'
import sys
data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("invalid UTF-8 at byte %d: %r" % (e.start, data[max(0, e.start - 20):e.start + 5]))
for i, ch in enumerate(text):
    o = ord(ch)
    if (o < 0x20 and ch != "\n") or o == 0x7f or 0x80 <= o <= 0x9f or \
       0x202a <= o <= 0x202e or 0x2066 <= o <= 0x2069:
        sys.exit("raw U+%04X at %d: %r" % (o, i, text[max(0, i - 20):i + 5]))
EOP

# one command: stdout and stderr both clean
clean() {
	"$RSPROF" "$@" >out 2>err
	rc=$?
	python3 check.py out && python3 check.py err && return 0
	echo "rsprof $* (exit $rc)"
	return 1
}

test_expect_success 'report: text, CSV, folded, every grouping; the error for --heap' '
	clean report evil.db && grep -q "\\\\x1b]0;pwned\\\\x07" out && clean report --csv evil.db &&
	clean report --format folded evil.db && clean report --full-paths evil.db &&
	clean report --sort function evil.db && clean report --sort file evil.db &&
	clean report --sort module evil.db
'

test_expect_success 'report --json and --format pprof stay well-formed' '
	clean report --json evil.db && python3 -c "import json,sys; json.load(open(\"out\"))" &&
	"$RSPROF" report --format pprof evil.db >p.pb.gz && python3 "$TEST_SRC/pprof-dump.py" p.pb.gz >/dev/null
'

test_expect_success 'info (text, JSON), info --check' '
	clean info evil.db && grep -q "\\\\x1b" out &&
	clean info --json evil.db && python3 -c "import json; json.load(open(\"out\"))" &&
	clean info --check evil.db
'

test_expect_success 'diff: text, CSV, JSON, both ways' '
	clean diff clean.db evil.db && clean diff evil.db clean.db &&
	clean diff --by function clean.db evil.db && clean diff --csv clean.db evil.db &&
	clean diff --json clean.db evil.db && python3 -c "import json; json.load(open(\"out\"))"
'

test_expect_success 'timeline: chart, CSV, JSON, SVG (well-formed XML)' '
	clean timeline -n 3 evil.db && clean timeline --cpu -n 3 evil.db &&
	clean timeline --csv -n 3 evil.db &&
	clean timeline --json -n 3 evil.db && python3 -c "import json; json.load(open(\"out\"))" &&
	clean timeline -n 3 --svg pic.svg evil.db &&
	python3 -c "import xml.etree.ElementTree as E; E.parse(\"pic.svg\")"
'

test_expect_success 'query: table and CSV escaped, JSON well-formed' '
	clean query evil.db "SELECT * FROM symbols" &&
	clean query evil.db "SELECT * FROM meta" &&
	clean query --csv evil.db "SELECT * FROM map" &&
	clean query --json evil.db "SELECT * FROM symbols" &&
	python3 -c "import json; json.load(open(\"out\"))"
'

test_expect_success 'top --stdio: CPU and heap tables' '
	clean top --stdio evil.db && clean top --stdio heap evil.db
'

test_expect_success 'an error message quoting the file (a hostile meta.version)' '
	cp evil.db badver.db &&
	sqlite3 badver.db "UPDATE meta SET value = char(27) || \"]0;x\" || char(7) WHERE key = \"version\"" &&
	expect_exit 6 "$RSPROF" info badver.db 2>err; r=$?;
	cat err; test $r = 0 && python3 check.py err && grep -q "\\\\x1b" err
'

test_done
