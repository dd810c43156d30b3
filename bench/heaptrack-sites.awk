# heaptrack_print's peak (-p) or leak (-l) listing, one line a backtrace:
# for every location heaptrack merged on (the function that called the
# allocator: a wrapper such as zmalloc), the bytes and calls of each
# backtrace under it, with
#   past   the first frame past that location (heaptrack's own next frame)
#   site   the first frame whose file does not match `skip` (the allocation
#          wrappers: zmalloc.c for Redis, obmalloc.c for CPython): the line
#          that asked for the memory
#   also   with -v also=REGEX, the first frame whose file matches it (for
#          Redis the command: t_string.c, t_list.c), "-" when none does;
#          also_name: its column's title
# Used by bench/redis.sh and bench/python-heap.sh:
#   heaptrack_print -f F.zst -p 1 -a 0 -T 0 -n 5 -s 10 |
#       awk -v skip='zmalloc[.]c' -v strip=/src/dir/ -f heaptrack-sites.awk
# skip: a regex on the source path ("" skips nothing); strip: a path
# prefix to leave out of the file names shown.

function short(at) {
	if (strip != "" && index(at, strip) == 1)
		at = substr(at, length(strip) + 1)
	return at
}

function frame(fn, at) {
	return fn " " (at == "" ? "(no line)" : short(at))
}

# the pending backtrace, if any, as one row
function flush() {
	if (bytes == "")
		return
	if (nfr > 0 && site == "")
		site = "(none outside the wrappers)"
	if (also == "")
		printf "  %9s %9s  %-44s %s\n", bytes, calls, past, (site == past ? "=" : site)
	else
		printf "  %9s %9s  %-44s %-36s %s\n", bytes, calls, past,
			(site == past ? "=" : site), (hit == "" ? "-" : hit)
	bytes = ""
}

# a frame has ended: its function and its "at FILE:LINE" (may be empty)
function took(fn, at) {
	if (fn == "")
		return
	nfr++
	if (nfr == 1)
		past = frame(fn, at)
	if (site == "" && at != "" && (skip == "" || at !~ skip))
		site = frame(fn, at)
	if (also != "" && hit == "" && at ~ also)
		hit = frame(fn, at)
}

function endframe() {
	took(cur_fn, cur_at)
	cur_fn = ""
	cur_at = ""
}

/^(PEAK MEMORY CONSUMERS|MEMORY LEAKS)$/ {
	print
	next
}

# a merged location: "22.49M peak memory consumed over 741702 calls from"
/^[0-9.]+[A-Za-z]* (peak memory consumed|leaked) over [0-9]+ calls from$/ {
	endframe(); flush()
	head = $1 " over " $(NF - 2) " calls"
	merged = ""
	in_head = 1
	next
}

# one backtrace under it: "16.55M consumed over 100000 calls from:"
/^[0-9.]+[A-Za-z]* (consumed|leaked) over [0-9]+ calls from:$/ {
	endframe(); flush()
	if (in_head) {
		printf "%s at %s\n", head, merged
		if (also == "")
			printf "  %9s %9s  %-44s %s\n", "bytes", "calls", "one frame past it", "first outside the wrappers"
		else
			printf "  %9s %9s  %-44s %-36s %s\n", "bytes", "calls", "one frame past it",
				"first outside the wrappers", (also_name != "" ? also_name : "first in " also)
		in_head = 0
	}
	bytes = $1
	calls = $(NF - 2)
	nfr = 0
	past = ""
	site = ""
	hit = ""
	next
}

/^  and [0-9.]+/ {
	endframe(); flush()
	print "  " $0
	next
}

# the merged location's own frames (column 0, inlined ones follow)
in_head && /^[^ ]/ {
	merged = merged (merged == "" ? "" : " < ") $0
	next
}
in_head && /^  at / {
	merged = merged " " short($2)
	next
}

# a frame of the backtrace: "    name", then "      at F:L", "      in MODULE"
bytes != "" && /^    [^ ]/ {
	endframe()
	cur_fn = substr($0, 5)
	next
}
bytes != "" && /^      at / {
	cur_at = $2
	next
}

/^$/ {
	endframe(); flush()
}

END {
	endframe(); flush()
}
