//! Integration tests of busbar-store, in one binary: the same suite against both backends,
//! torn writes, corruption, crashes of a child process, fault switches and group commit.

// The generic suite and helpers are plain functions called from `#[test]`s.
#![allow(clippy::unwrap_used)]

mod compaction;
mod conformance;
mod corruption;
mod faults;
mod group_commit;
mod model;
mod preallocate;
mod support;
mod torn_write;
