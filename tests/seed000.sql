-- The read-path queries of seed 000 §7.5.1, §7.5.2 and §7.5.3, verbatim, for the
-- sqlite3 shell: sqlite3 -bail FILE < tests/seed000.sql must succeed on every
-- file rsprof writes. Anonymous ? parameters are numbered ?1, ?2, ... in order.

-- §7.5.1 Full run
.parameter init
.parameter set ?1 20
SELECT s.file, s.line, s.function, SUM(c.count) as samples
FROM cpu_samples c
JOIN symbols s ON c.addr = s.addr
GROUP BY c.addr
ORDER BY samples DESC
LIMIT ?;

-- §7.5.1 With time window (last N seconds)
.parameter clear
.parameter set ?1 10000
.parameter set ?2 20
SELECT s.file, s.line, s.function, SUM(c.count) as samples
FROM cpu_samples c
JOIN symbols s ON c.addr = s.addr
JOIN checkpoints cp ON c.checkpoint_id = cp.id
WHERE cp.timestamp_ms >= (SELECT MAX(timestamp_ms) - ? FROM checkpoints)
GROUP BY c.addr
ORDER BY samples DESC
LIMIT ?;

-- §7.5.1 With threshold (only locations > X% of total)
.parameter clear
.parameter set ?1 0
.parameter set ?2 0
.parameter set ?3 1.0
.parameter set ?4 20
WITH totals AS (
    SELECT SUM(count) as total FROM cpu_samples
    WHERE checkpoint_id IN (SELECT id FROM checkpoints WHERE timestamp_ms >= ?)
)
SELECT s.file, s.line, s.function, 
       SUM(c.count) as samples,
       CAST(SUM(c.count) AS REAL) / totals.total * 100 as pct
FROM cpu_samples c
JOIN symbols s ON c.addr = s.addr
CROSS JOIN totals
WHERE c.checkpoint_id IN (SELECT id FROM checkpoints WHERE timestamp_ms >= ?)
GROUP BY c.addr
HAVING pct >= ?
ORDER BY samples DESC
LIMIT ?;

-- §7.5.2 Live bytes at end of recording
.parameter clear
.parameter set ?1 20
SELECT s.file, s.line, s.function,
       SUM(h.alloc_bytes) - SUM(h.free_bytes) as live_bytes
FROM heap_events h
JOIN symbols s ON h.addr = s.addr
GROUP BY h.addr
HAVING live_bytes > 0
ORDER BY live_bytes DESC
LIMIT ?;

-- §7.5.2 Live bytes at specific checkpoint
.parameter clear
.parameter set ?1 1
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

-- §7.5.3 CPU samples over time for a specific location
.parameter clear
.parameter set ?1 0
SELECT cp.timestamp_ms, c.count
FROM cpu_samples c
JOIN checkpoints cp ON c.checkpoint_id = cp.id
WHERE c.addr = ?
ORDER BY cp.timestamp_ms;

-- §7.5.3 Heap growth over time
SELECT cp.timestamp_ms,
       SUM(h.alloc_bytes) - SUM(h.free_bytes) as live_bytes
FROM heap_events h
JOIN checkpoints cp ON h.checkpoint_id = cp.id
WHERE h.checkpoint_id <= cp.id
GROUP BY cp.id
ORDER BY cp.timestamp_ms;
