#include "util/db/schema.h"

#define DB_SERIES_SQL \
	"CREATE TABLE IF NOT EXISTS cpu_series (\n" \
	"    id INTEGER PRIMARY KEY,\n" \
	"    addr INTEGER NOT NULL,\n" \
	"    data BLOB NOT NULL\n" \
	");\n" \
	"CREATE TABLE IF NOT EXISTS heap_series (\n" \
	"    id INTEGER PRIMARY KEY,\n" \
	"    addr INTEGER NOT NULL,\n" \
	"    data BLOB NOT NULL\n" \
	");\n" \
	"CREATE TABLE IF NOT EXISTS series_state (\n" \
	"    since INTEGER NOT NULL,\n" \
	"    through INTEGER NOT NULL,\n" \
	"    pack_addr INTEGER DEFAULT NULL,\n" \
	"    dropped INTEGER DEFAULT NULL,\n" \
	"    drop_addr INTEGER DEFAULT NULL\n" \
	");\n" \
	"INSERT INTO series_state (since, through) SELECT IFNULL(MAX(through), 0), IFNULL(MAX(through), 0)" \
	" FROM totals_state WHERE NOT EXISTS (SELECT 1 FROM series_state);\n"

/*
 * v3: compacted checkpoints (util/db/series.h): the event rows of the
 * level-0 blocks of checkpoints (max(totals_state.folded0, series_state.since),
 * series_state.through] (since: where a file appended to began to be compacted)
 * packed per block (id: block * 2^20 + part; addr: the part's first key's), their seed-000 rows folded
 * into one per key at the block's last checkpoint. Rowid tables: a blob of
 * a few hundred bytes spills out of a 1 KiB page of a WITHOUT ROWID table.
 */
const char db_series_sql[] = DB_SERIES_SQL;

const char db_schema_sql[] =
	/* key/value facts of the recording: version, pid, start_time, ... */
	"CREATE TABLE meta (\n"
	"    key TEXT PRIMARY KEY,\n"
	"    value TEXT NOT NULL\n"
	");\n"
	/* one row per checkpoint (timestamp_ms from start_time); the extra
	 * columns are per-checkpoint totals that the recorder knows anyway, so
	 * timeline and top need not recompute them from the event tables
	 * (3,600 checkpoints read in under a second). */
	"CREATE TABLE checkpoints (\n"
	"    id INTEGER PRIMARY KEY,\n"
	"    timestamp_ms INTEGER NOT NULL,\n"
	"    lost_samples INTEGER NOT NULL DEFAULT 0,\n"
	"    heap_dropped INTEGER NOT NULL DEFAULT 0,\n"
	"    cpu_total INTEGER NOT NULL DEFAULT 0,\n"
	"    heap_alloc_bytes INTEGER NOT NULL DEFAULT 0,\n"
	"    heap_free_bytes INTEGER NOT NULL DEFAULT 0,\n"
	"    heap_alloc_count INTEGER NOT NULL DEFAULT 0,\n"
	"    heap_free_count INTEGER NOT NULL DEFAULT 0,\n"
	"    heap_live_bytes INTEGER NOT NULL DEFAULT 0,\n"
	/* v3: the process's resident memory at the checkpoint
	 * (/proc/PID/statm), all of it and the anonymous part; NULL when it
	 * could not be read (the process had gone) */
	"    rss_bytes INTEGER DEFAULT NULL,\n"
	"    rss_anon_bytes INTEGER DEFAULT NULL,\n"
	/* v3: how many intervals the checkpoint holds: more than 1 when
	 * record --retain folded older ones together (util/db/write/retain.c) */
	"    merged INTEGER NOT NULL DEFAULT 1\n"
	");\n"
	/* an address's source: file/line/function are the chosen (user's own)
	 * frame of the inline chain; the whole chain is in symbol_frames. */
	"CREATE TABLE symbols (\n"
	"    addr INTEGER PRIMARY KEY,\n"
	"    file TEXT,\n"
	"    line INTEGER,\n"
	"    function TEXT,\n"
	"    module TEXT DEFAULT NULL,\n"
	"    mangled TEXT DEFAULT NULL\n"
	");\n"
	/* CPU samples per checkpoint and address */
	"CREATE TABLE cpu_samples (\n"
	"    checkpoint_id INTEGER NOT NULL,\n"
	"    addr INTEGER NOT NULL,\n"
	"    count INTEGER NOT NULL,\n"
	"    pid INTEGER DEFAULT NULL,\n"
	"    FOREIGN KEY (checkpoint_id) REFERENCES checkpoints(id),\n"
	"    FOREIGN KEY (addr) REFERENCES symbols(addr)\n"
	");\n"
	"CREATE INDEX idx_cpu_checkpoint ON cpu_samples(checkpoint_id);\n"
	"CREATE INDEX idx_cpu_addr ON cpu_samples(addr);\n"
	/* heap bytes allocated and freed per checkpoint and site; counts and
	 * the stack the site came from added */
	"CREATE TABLE heap_events (\n"
	"    checkpoint_id INTEGER NOT NULL,\n"
	"    addr INTEGER NOT NULL,\n"
	"    alloc_bytes INTEGER NOT NULL DEFAULT 0,\n"
	"    free_bytes INTEGER NOT NULL DEFAULT 0,\n"
	"    alloc_count INTEGER NOT NULL DEFAULT 0,\n"
	"    free_count INTEGER NOT NULL DEFAULT 0,\n"
	"    stack_id INTEGER DEFAULT NULL,\n"
	"    pid INTEGER DEFAULT NULL,\n"
	/* v3: of the frees, the temporaries (freed by the allocating
	 * thread before its next allocation or free, heaptrack's definition); NULL
	 * where the backend does not count them (uprobes) */
	"    temp_count INTEGER DEFAULT NULL,\n"
	/* v3: what the site's memory is: 0 the malloc family,
	 * 1 anonymous mappings (mmap) */
	"    kind INTEGER NOT NULL DEFAULT 0,\n"
	"    FOREIGN KEY (checkpoint_id) REFERENCES checkpoints(id),\n"
	"    FOREIGN KEY (addr) REFERENCES symbols(addr)\n"
	");\n"
	"CREATE INDEX idx_heap_checkpoint ON heap_events(checkpoint_id);\n"
	"CREATE INDEX idx_heap_addr ON heap_events(addr);\n"
	/* The inline chain of an address, depth 0 innermost. */
	"CREATE TABLE symbol_frames (\n"
	"    addr INTEGER NOT NULL,\n"
	"    depth INTEGER NOT NULL,\n"
	"    file TEXT,\n"
	"    line INTEGER,\n"
	"    function TEXT,\n"
	"    PRIMARY KEY (addr, depth)\n"
	");\n"
	/* Deduplicated call stacks (seed 004): a stack is stored once and
	 * referenced; frames are addresses in symbols, pos 0 innermost. The
	 * frames are their key's b-tree alone (no rowid table beside it):
	 * a third of a heap profile's size. */
	"CREATE TABLE stacks (\n"
	"    id INTEGER PRIMARY KEY,\n"
	"    hash INTEGER NOT NULL,\n"
	"    depth INTEGER NOT NULL\n"
	");\n"
	"CREATE INDEX idx_stacks_hash ON stacks(hash);\n"
	"CREATE TABLE stack_frames (\n"
	"    stack_id INTEGER NOT NULL,\n"
	"    pos INTEGER NOT NULL,\n"
	"    addr INTEGER NOT NULL,\n"
	"    PRIMARY KEY (stack_id, pos),\n"
	"    FOREIGN KEY (stack_id) REFERENCES stacks(id)\n"
	") WITHOUT ROWID;\n"
	/* The target's mappings (seed 003 `map`), as read from /proc/PID/maps. */
	"CREATE TABLE map (\n"
	"    pid INTEGER NOT NULL,\n"
	"    addr_begin INTEGER NOT NULL,\n"
	"    addr_end INTEGER NOT NULL,\n"
	"    perm TEXT NOT NULL,\n"
	"    offset INTEGER NOT NULL DEFAULT 0,\n"
	"    path TEXT,\n"
	/* the file's GNU build-id (hex) as the kernel gave it; NULL: unknown */
	"    build_id TEXT DEFAULT NULL\n"
	");\n"
	/* the writer replaces a process's rows at each change of its mappings */
	"CREATE INDEX idx_map_pid ON map(pid);\n"
	/*
	 * Version 3: the allocation history (record --alloc-history), seed
	 * 001's layout for "half-axis" queries (util/db/history.h): time
	 * slices that never overlap (consecutive ids in time order), per slice
	 * address chunks that never overlap for one kind, events in order of
	 * appearance (rowid), each in exactly one chunk. Times are ns from
	 * start_time; addr_last is inclusive.
	 */
	"CREATE TABLE alloc_slices (\n"
	"    id INTEGER PRIMARY KEY,\n"
	"    time_first INTEGER NOT NULL,\n"
	"    time_last INTEGER NOT NULL\n"
	");\n"
	"CREATE INDEX idx_alloc_slices_last ON alloc_slices(time_last);\n"
	"CREATE TABLE alloc_chunks (\n"
	"    id INTEGER PRIMARY KEY,\n"
	"    slice_id INTEGER NOT NULL,\n"
	"    addr_first INTEGER NOT NULL,\n"
	"    addr_last INTEGER NOT NULL,\n"
	"    kind INTEGER NOT NULL DEFAULT 0\n"
	");\n"
	"CREATE INDEX idx_alloc_chunks ON alloc_chunks(kind, slice_id, addr_last);\n"
	"CREATE TABLE alloc_events (\n"
	"    id INTEGER PRIMARY KEY,\n"
	"    chunk_id INTEGER NOT NULL,\n"
	"    time_alloc INTEGER NOT NULL,\n"
	"    addr INTEGER NOT NULL,\n"
	"    size INTEGER NOT NULL,\n"
	"    site INTEGER DEFAULT NULL,\n"
	"    stack_id INTEGER DEFAULT NULL,\n"
	"    time_free INTEGER DEFAULT NULL\n"
	");\n"
	"CREATE INDEX idx_alloc_events_chunk ON alloc_events(chunk_id, time_alloc, addr, size);\n"
	/* v3: the processes of the recording (the target and the children it
	 * started), one row per image: an exec ends one and starts the next. */
	"CREATE TABLE processes (\n"
	"    pid INTEGER NOT NULL,\n"
	"    ppid INTEGER,\n"
	"    comm TEXT,\n"
	"    exe TEXT,\n"
	"    start_ms INTEGER NOT NULL,\n"
	"    end_ms INTEGER DEFAULT NULL,\n"
	"    samples INTEGER NOT NULL DEFAULT 0,\n"
	/* its cgroup v2 path (/proc/PID/cgroup's 0:: line); NULL: not known */
	"    cgroup TEXT DEFAULT NULL,\n"
	"    PRIMARY KEY (pid, start_ms)\n"
	");\n"
	/*
	 * v3: totals per block of checkpoints, kept by the writer in each
	 * checkpoint's transaction (util/db/write/totals.c), so readers add up a
	 * few thousand rows instead of scanning the event tables. Level k
	 * blocks hold 60^(k+1) checkpoints; the key is that of the event
	 * table's rows (pid 0 for NULL). peak: the key's highest live bytes
	 * at a checkpoint of the block that has a row for it, less its live
	 * bytes at the block's start. heap_totals.temp_count: the sum of the
	 * rows' temp_count, NULL when none of them counted temporaries (the
	 * uprobe backend), as a scan tells "-" from 0; kind is
	 * heap_events.kind, part of the key (a site's mmap rows are not its
	 * malloc rows).
	 */
	"CREATE TABLE cpu_totals (\n"
	"    level INTEGER NOT NULL,\n"
	"    block INTEGER NOT NULL,\n"
	"    addr INTEGER NOT NULL,\n"
	"    pid INTEGER NOT NULL,\n"
	"    count INTEGER NOT NULL,\n"
	"    PRIMARY KEY (level, block, addr, pid)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE heap_totals (\n"
	"    level INTEGER NOT NULL,\n"
	"    block INTEGER NOT NULL,\n"
	"    addr INTEGER NOT NULL,\n"
	"    stack_id INTEGER NOT NULL,\n"
	"    pid INTEGER NOT NULL,\n"
	/* the key's columns first: SQLite 3.40's integrity_check misreads a
	 * WITHOUT ROWID table whose key columns are not (Debian 12's) */
	"    kind INTEGER NOT NULL DEFAULT 0,\n"
	"    alloc_bytes INTEGER NOT NULL,\n"
	"    free_bytes INTEGER NOT NULL,\n"
	"    alloc_count INTEGER NOT NULL,\n"
	"    free_count INTEGER NOT NULL,\n"
	"    peak INTEGER NOT NULL,\n"
	"    temp_count INTEGER DEFAULT NULL,\n"
	"    PRIMARY KEY (level, block, addr, stack_id, pid, kind)\n"
	") WITHOUT ROWID;\n"
	/* one row: checkpoints 1..through are in the totals; event rows with
	 * a larger rowid than cpu_rowid/heap_rowid came after; the blocks of
	 * level 0 up to checkpoint folded0 and of level 1 up to folded1 are
	 * folded into one checkpoint each (record --retain) */
	"CREATE TABLE totals_state (\n"
	"    span INTEGER NOT NULL,\n"
	"    through INTEGER NOT NULL,\n"
	"    cpu_rowid INTEGER NOT NULL,\n"
	"    heap_rowid INTEGER NOT NULL,\n"
	"    folded0 INTEGER NOT NULL DEFAULT 0,\n"
	"    folded1 INTEGER NOT NULL DEFAULT 0\n"
	");\n"
	"INSERT INTO totals_state (span, through, cpu_rowid, heap_rowid) VALUES (60, 0, 0, 0);\n"
	DB_SERIES_SQL;
