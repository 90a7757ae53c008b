//! Integration tests of busbar-store, in one binary: the shared suite against both backends,
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
mod reads;
mod records;
mod summaries;
mod support;
mod torn_write;

mod memory {
    crate::conformance::conformance_suite!(crate::support::Memory);
    crate::reads::read_suite!(crate::support::Memory);
    crate::model::model_property!(storage_matches_the_model, crate::support::Memory);
}

mod file {
    crate::conformance::conformance_suite!(crate::support::File);
    crate::reads::read_suite!(crate::support::File);
    crate::model::model_property!(storage_matches_the_model, crate::support::File);
}

mod file_with_index {
    crate::conformance::conformance_suite!(crate::support::FileWithIndex);
    crate::reads::read_suite!(crate::support::FileWithIndex);
    crate::model::model_property!(storage_matches_the_model, crate::support::FileWithIndex);
}
