#!/bin/sh
# Numbers are JSON numbers in every reader's --json, on a real recording
# (launched, with heap, -g, --alloc-history: most meta keys written): no
# value anywhere is a string of digits, but for the keys that are text
# whatever they hold (a name, a command, a host). The meta keys the
# recorder writes as integers (db_writer__meta_set_int in the sources)
# are numbers in info --json.
. "$(dirname "$0")/lib.sh"

# check.py FILE...: every string value that looks like an integer is under
# a text key; prints the offenders
cat >check.py <<'PY'
import json, re, sys
TEXT = {"hostname", "process_name", "command", "rsprof_command", "exe_path", "file",
        "location", "function", "module", "filter", "rsprof_version", "target", "pids"}
bad = []
def walk(v, path):
    if isinstance(v, dict):
        for k, x in v.items():
            walk(x, path + [k])
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, path + [str(i)])
    elif isinstance(v, str) and re.fullmatch(r"-?[0-9]+", v) and path[-1] not in TEXT:
        bad.append(".".join(path) + " = " + json.dumps(v))
for f in sys.argv[1:]:
    walk(json.load(open(f)), [f])
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

test_expect_success 'record heap_temp: launched, heap, stacks, allocation history' '
	"$RSPROF" record -q -g --alloc-history -i 200ms -o r.db -- "$TARGETS/heap_temp" >/dev/null &&
	test -n "$(sql r.db "SELECT value FROM meta WHERE key = \"alloc_history_events\"")"
'

test_expect_success 'report, info, diff, timeline --json: no number as a string' '
	"$RSPROF" report --json r.db >report.json &&
	"$RSPROF" report --json --heap --sort-by temporary r.db >report-temp.json &&
	"$RSPROF" report --json -g --heap r.db >report-g.json &&
	"$RSPROF" info --json r.db >info.json &&
	"$RSPROF" diff --json r.db r.db >diff.json &&
	"$RSPROF" timeline --json -n 3 r.db >timeline.json &&
	python3 check.py report.json report-temp.json report-g.json info.json diff.json \
		timeline.json
'

test_expect_success 'report --json: pid is the recorded process, a number' '
	pid=$(sql r.db "SELECT value FROM meta WHERE key = \"pid\"") &&
	python3 -c "
import json
d = json.load(open(\"report.json\"))
assert d[\"pid\"] == $pid and isinstance(d[\"pid\"], int), d[\"pid\"]
"
'

test_expect_success 'info --json: every key the recorder writes as an integer is a number' '
	grep -rhno "meta_set_int([^,]*, \"[a-z_0-9]*\"" "$TEST_SRC/../util" |
		sed "s/.*\"\(.*\)\"/\1/" | sort -u >int-keys && cat int-keys &&
	test -s int-keys &&
	# and the readers know each of them, also those this recording has not
	for k in $(cat int-keys); do
		grep -q "^	\"$k\",$" "$TEST_SRC/../util/db/meta-keys.c" ||
			{ echo "$k: not in util/db/meta-keys.c"; return 1; }
	done &&
	python3 -c "
import json
m = json.load(open(\"info.json\"))[\"meta\"]
keys = open(\"int-keys\").read().split() + [\"version\"]
seen = [k for k in keys if k in m]
bad = [k for k in seen if not isinstance(m[k], int)]
assert not bad, bad
assert len(seen) >= 15, seen
assert isinstance(m[\"hostname\"], str) and isinstance(m[\"command\"], str)
print(len(seen), \"integer keys, all numbers\")
"
'

test_done
