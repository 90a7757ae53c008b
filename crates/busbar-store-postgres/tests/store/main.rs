//! busbar-store's shared suite (conformance, reads and the model property test) over PostgreSQL, plus
//! what only this backend has: the lease, fencing, and failures of the database connection.
//! Every test talks to a real server started for this process (`pg_server`).

// The shared suite and helpers are plain functions called from `#[test]`s.
#![allow(clippy::unwrap_used)]

#[path = "../../../busbar-store/tests/store/conformance.rs"]
mod conformance;
mod failures;
mod lease;
#[path = "../../../busbar-store/tests/store/model.rs"]
mod model;
#[path = "../pg_server/mod.rs"]
mod pg_server;
mod postgres_backend;
#[path = "../../../busbar-store/tests/store/reads.rs"]
mod reads;
#[path = "../../../busbar-store/tests/store/records.rs"]
mod records;

mod postgres {
    crate::conformance::conformance_suite!(crate::postgres_backend::Postgres);
    crate::reads::read_suite!(crate::postgres_backend::Postgres);
    crate::model::model_property!(storage_matches_the_model, crate::postgres_backend::Postgres);
}
