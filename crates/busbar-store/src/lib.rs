//! What must survive a restart: the `Storage` trait, `MemoryStorage` and `FileStorage`.
//!
//! The store keeps a durable map of messages keyed by [`MessageKey`] (an immutable message part
//! plus a replaceable state part) and an entity-scoped key/value map, changed by [`Record`]s.
//! It knows nothing of AMQP or queue rules. [`GroupCommit`] runs a storage on its own thread
//! and acknowledges each submission once one shared sync has made it durable.

mod error;
mod file;
mod group_commit;
mod memory;
mod reader;
mod record;
mod recovered;
mod storage;
mod sync;

pub use error::StoreError;
pub use file::{FileOptions, FileStorage};
pub use group_commit::{
    Backlog, CommitStatsSnapshot, Completion, GROUP_SIZE_BOUNDS, GroupCommit, GroupCommitHandle,
    GroupCommitOptions, HistogramCounts, Rejected, SYNC_MICROS_BOUNDS, StoreCondition,
};
pub use memory::MemoryStorage;
pub use reader::MessageReader;
pub use record::{EntityId, Lsn, MessageKey, MetaKey, Record};
pub use recovered::{Recovered, RecoveredMessages, StoredMessage};
pub use storage::{CompactionReport, MessagePart, Storage};
