#ifndef RSPROF_UTIL_DB_SCHEMA_H
#define RSPROF_UTIL_DB_SCHEMA_H

/*
 * The profile file's schema: the storage contract's tables as it gives
 * them (meta, checkpoints, symbols, cpu_samples, heap_events), plus extra
 * tables, extra columns with defaults and extra meta keys, which the
 * contract allows. Every query of the contract's read path
 * (tests/seed000.sql) runs unchanged on it.
 *
 * Versions (meta.version):
 *   1  the contract's tables as written.
 *   2  + checkpoints.{lost_samples, heap_dropped, cpu_total, heap_alloc_bytes,
 *        heap_free_bytes, heap_alloc_count, heap_free_count, heap_live_bytes}
 *      + symbols.{module, mangled}
 *      + heap_events.{alloc_count, free_count, stack_id}
 *      + symbol_frames (the whole inline chain of an address)
 *      + stacks, stack_frames (deduplicated call stacks, seed 004)
 *      + map (the target's mappings, seed 003)
 *   3  + checkpoints.{rss_bytes, rss_anon_bytes} (resident memory)
 *      + meta.heap_alloc_fn (record --alloc-fn; a key, readable by any version)
 *      + alloc_slices, alloc_chunks, alloc_events (the allocation history,
 *        seed 001; empty unless recorded with --alloc-history)
 *      + cpu_samples.pid, heap_events.pid (the process of the row: a
 *        recording follows the target's children; NULL in older files
 *        means meta.pid)
 *      + processes (one row per process image: pid, ppid, comm, exe, when
 *        it started and ended, its CPU samples)
 *      + heap_events.kind (0 malloc, 1 anonymous mmap)
 *      + meta.rss_peak_bytes (the kernel's VmHWM)
 *      symbols.addr of a second program holding other code at an address
 *      already used carries the program's number in bits 48..62
 *      + cpu_totals, heap_totals, totals_state (sums per block of checkpoints,
 *        kept by the writer: util/db/totals.h); checkpoints.merged (record
 *        --retain folded it from that many intervals)
 *      + cpu_series, heap_series, series_state (compacted checkpoints: the
 *        event rows of blocks older than a few minutes, packed; their
 *        seed-000 rows folded into one per key: util/db/series.h)
 * A reader accepts every version up to RSPROF_SCHEMA_VERSION and refuses a
 * newer one.
 */

#define RSPROF_SCHEMA_VERSION 3

/* CREATE statements, one string with several statements; run once. */
extern const char db_schema_sql[];
/* The compacted checkpoints' tables, IF NOT EXISTS: for a file appended to. */
extern const char db_series_sql[];

#endif
