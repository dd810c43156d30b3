# tests/heap-lib.sh — helpers of the heap tests (t15xx), sourced after lib.sh.

# heap_lines FILE: live bytes and allocation count per source line,
# "file|line|function|live|allocs|frees", largest live first.
heap_lines() {
	sql "$1" "SELECT s.file, s.line, MIN(s.function),
			 SUM(h.alloc_bytes) - SUM(h.free_bytes) AS live,
			 SUM(h.alloc_count), SUM(h.free_count)
		  FROM heap_events h JOIN symbols s ON h.addr = s.addr
		  GROUP BY s.file, s.line ORDER BY live DESC"
}

# line_of MARKER SOURCE: the line number of the marker comment.
line_of() {
	grep -n -E "(//|/\*) $1([: ]|\$)" "$2" | head -n 1 | cut -d: -f1
}

# source_lines FILE SOURCE: "line|live|allocs|frees" of each line of
# SOURCE (matched by its file name) that counted anything, by line.
source_lines() {
	sql "$1" "SELECT s.line, SUM(h.alloc_bytes) - SUM(h.free_bytes), SUM(h.alloc_count),
			 SUM(h.free_count)
		  FROM heap_events h JOIN symbols s ON h.addr = s.addr
		  WHERE s.file LIKE '%$(basename "$2")' GROUP BY s.line ORDER BY s.line"
}

# want_line LINES MARKER LIVE ALLOCS FREES: the line of $SRC with MARKER
# has that row in LINES (source_lines' output).
want_line() {
	_l=$(line_of "$2" "$SRC") &&
	grep -qx "$_l|$3|$4|$5" "$1" || { echo "$2 (line $_l): want $3|$4|$5" >&2; return 1; }
}

# no_line LINES MARKER: the line of $SRC with MARKER counted nothing.
no_line() {
	_l=$(line_of "$2" "$SRC") &&
	! grep -q "^$_l|" "$1" || { echo "$2 (line $_l) should count nothing" >&2; return 1; }
}

# within VALUE WANT PCT: |VALUE - WANT| <= WANT * PCT / 100
within() {
	_d=$(( $1 - $2 ))
	[ $_d -lt 0 ] && _d=$(( -_d ))
	[ $(( _d * 100 )) -le $(( $2 * $3 )) ] || {
		echo "$1 is not within $3% of $2" >&2
		return 1
	}
}

# meta FILE KEY
meta() {
	sql "$1" "SELECT value FROM meta WHERE key = '$2'"
}

# alib_sites FILE CHURN: the sites of heap_alloclib.c (in $SRC) run with
# CHURN pairs, each on its line with what the program keeps there, none
# below zero; its lines into FILE.lines
alib_sites() {
	source_lines "$1" "$SRC" >"$1.lines" && cat "$1.lines" &&
	want_line "$1.lines" ALIB_KEEP 1024000 1000 0 &&
	want_line "$1.lines" ALIB_CALLOC 1048576 1 0 &&
	want_line "$1.lines" ALIB_ALIGNED 524288 64 0 &&
	want_line "$1.lines" ALIB_CHURN 0 "$2" "$2" &&
	want_line "$1.lines" ALIB_MIX 0 200 200 &&
	grep -q "^$(line_of ALIB_REALLOC "$SRC")|8388608|" "$1.lines" &&
	no_negative_site "$1"
}

# no_negative_site FILE: no address ends with fewer bytes than freed
no_negative_site() {
	_n=$(sql "$1" "SELECT COUNT(*) FROM (SELECT SUM(alloc_bytes) - SUM(free_bytes) AS l
		FROM heap_events GROUP BY addr HAVING l < 0)")
	[ "$_n" = 0 ] || { echo "$_n sites below zero" >&2; return 1; }
}

# The seed 000 §7.5.2 queries, verbatim, must run on the file.
seed_heap_queries() {
	sqlite3 -bail "$1" <<'SQL'
.parameter init
.parameter set ?1 20
SELECT s.file, s.line, s.function,
       SUM(h.alloc_bytes) - SUM(h.free_bytes) as live_bytes
FROM heap_events h
JOIN symbols s ON h.addr = s.addr
GROUP BY h.addr
HAVING live_bytes > 0
ORDER BY live_bytes DESC
LIMIT ?;
.parameter clear
.parameter set ?1 1000000
.parameter set ?2 20
SELECT s.file, s.line, s.function,
       SUM(h.alloc_bytes) - SUM(h.free_bytes) as live_bytes
FROM heap_events h
JOIN symbols s ON h.addr = s.addr
WHERE h.checkpoint_id <= ?
GROUP BY h.addr
HAVING live_bytes > 0
ORDER BY live_bytes DESC
LIMIT ?;
SQL
}

# The heap backends a launch test runs with (issue 8): the in-process
# tracker (needs no BPF) and uprobes. HEAP_BACKENDS overrides the list.
HEAP_BACKENDS=${HEAP_BACKENDS:-preload uprobe}

# backend_ok B: can backend B run here? uprobe needs root and kernel BTF;
# else a skip (a failure on CI).
backend_ok() {
	[ "$1" = preload ] && return 0
	have_bpf && return 0
	test_skip "the $1 backend" 'needs root and kernel BTF'
	return 1
}

# backend_meta FILE B: the file says which backend ran, and its allocator
# family: the in-process tracker interposes the malloc family (libc).
backend_meta() {
	test "$(meta "$1" heap_backend)" = "$2" || {
		echo "heap_backend: $(meta "$1" heap_backend), want $2" >&2
		return 1
	}
}
