//! Busbar's PostgreSQL storage backend.
//!
//! [`PostgresStorage`] implements busbar-store's [`Storage`](busbar_store::Storage) on tables
//! keyed by `(entity, sequence)`: appends are buffered and each sync writes them in one
//! transaction, committed with `synchronous_commit` on. [`Lease`] makes exactly one of several
//! busbar processes pointing at one database the active node: it holds an advisory lock on a
//! connection of its own and bumps a fencing [`Epoch`] that every commit of its storage checks,
//! so a node that was replaced can never write again.

mod changes;
mod client_thread;
mod lease;
mod reader;
mod recover;
mod schema;
mod statements;
mod storage;
mod url;

pub use lease::{Epoch, Lease, LeaseWatch};
pub use storage::PostgresStorage;
pub use url::{DatabaseUrl, UrlError};
