//! The process's allocator: jemalloc, whose background threads purge the pages freed when a
//! backlog drains and give them back to the system (on jemalloc's 10 s decay: a drained 1 GB
//! backlog was back to 24 MiB within 30 s). glibc's malloc kept them (650–1000 MiB after the
//! same drain; BENCHMARKS.md "Memory after a backlog drains" compares glibc, glibc with
//! `malloc_trim`, mimalloc and jemalloc).

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Turns on jemalloc's background purging threads (off by default: without them, freed pages
/// are purged only as a side effect of later allocations, so an idle broker keeps them).
pub(crate) fn purge_in_background() {
    #[cfg(not(target_env = "msvc"))]
    if let Err(error) = tikv_jemalloc_ctl::background_thread::write(true) {
        tracing::warn!(%error, "cannot start the allocator's background threads");
    }
}
