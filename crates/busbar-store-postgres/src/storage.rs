//! `PostgresStorage`: appends buffered in memory, each sync one transaction committed with
//! `synchronous_commit` on (checking the lease's fencing epoch first when there is one),
//! recovery a consistent read of the live rows, compaction left to PostgreSQL's vacuum.

use std::sync::Arc;

use busbar_store::{
    CompactionReport, Lsn, MessagePart, MessageReader, Record, Recovered, Storage, StoreError,
};
use bytes::Bytes;

use crate::changes::Changes;
use crate::client_thread::ClientThread;
use crate::lease::Epoch;
use crate::reader::PostgresReader;
use crate::recover::read_live_rows;
use crate::schema::migrate;
use crate::statements::Statements;
use crate::url::{DatabaseUrl, database_error};

/// The largest message or state part stored: PostgreSQL's limit on one `bytea` value.
const MAX_PART_BYTES: usize = (1 << 30) - 1;

/// Called once, on the writer thread, when the store becomes poisoned.
type FailureHook = Box<dyn FnOnce(&StoreError) + Send>;

/// A [`Storage`] on a PostgreSQL database (see the crate documentation).
///
/// Like every backend it is poisoned by the first failure: when a commit fails the outcome may
/// be unknown (the connection can drop after the server committed), so nothing more is
/// acknowledged and the broker must recover from the database to go on.
pub struct PostgresStorage {
    /// Where the readers connect.
    url: DatabaseUrl,
    connection: ClientThread,
    statements: Arc<Statements>,
    fence: Option<Epoch>,
    /// Appended since the last sync; written by the next one.
    pending: Vec<Record>,
    last: Lsn,
    durable: Lsn,
    poisoned: Option<Arc<StoreError>>,
    on_failure: Option<FailureHook>,
}

impl PostgresStorage {
    /// Connects, applies the schema migrations this build knows, and reads the log position.
    ///
    /// With `fence`, every commit first checks that the database's lease epoch is still that
    /// one and fails with [`StoreError::LeaseLost`] otherwise (see [`Lease`](crate::Lease)).
    pub fn open(url: &DatabaseUrl, fence: Option<Epoch>) -> Result<PostgresStorage, StoreError> {
        let connection = ClientThread::connect(url)?;
        let (statements, position) = connection.run(|client| {
            migrate(client)?;
            let statements = Statements::prepare(client)?;
            let position: i64 = client
                .query_one("SELECT lsn FROM busbar_position", &[])
                .map_err(|error| database_error("open", &error))?
                .get(0);
            Ok((statements, position))
        })?;
        let position = Lsn(u64::try_from(position).unwrap_or(0));
        Ok(PostgresStorage {
            url: url.clone(),
            connection,
            statements: Arc::new(statements),
            fence,
            pending: Vec::new(),
            last: position,
            durable: position,
            poisoned: None,
            on_failure: None,
        })
    }

    /// Calls `hook` with the failure that poisons the store, once (the binary stops serving).
    pub fn on_failure(mut self, hook: impl FnOnce(&StoreError) + Send + 'static) -> Self {
        self.on_failure = Some(Box::new(hook));
        self
    }

    fn check(&self) -> Result<(), StoreError> {
        match &self.poisoned {
            Some(cause) => Err(StoreError::Poisoned {
                cause: Arc::clone(cause),
            }),
            None => Ok(()),
        }
    }

    fn poison(&mut self, error: StoreError) -> StoreError {
        if self.poisoned.is_none() {
            tracing::error!(%error, "the PostgreSQL store failed and accepts nothing more");
            self.poisoned = Some(Arc::new(error.clone()));
            if let Some(hook) = self.on_failure.take() {
                hook(&error);
            }
        }
        error
    }

    /// Writes the pending records in one transaction and commits it.
    fn commit_pending(&mut self) -> Result<(), StoreError> {
        let records = std::mem::take(&mut self.pending);
        let lsn = i64::try_from(self.last.0).unwrap_or(i64::MAX);
        let (statements, fence) = (Arc::clone(&self.statements), self.fence);
        self.connection.run(move |client| {
            let changes = Changes::fold(&records);
            let mut transaction = client
                .transaction()
                .map_err(|error| database_error("begin", &error))?;
            if let Some(held) = fence {
                let current = statements.current_epoch(&mut transaction)?;
                if current != held.value() {
                    return Err(StoreError::LeaseLost {
                        held: held.value(),
                        current,
                    });
                }
            }
            statements.write(&mut transaction, &changes, lsn)?;
            transaction
                .commit()
                .map_err(|error| database_error("commit", &error))
        })
    }
}

impl Storage for PostgresStorage {
    fn append(&mut self, records: &[Record]) -> Result<Lsn, StoreError> {
        self.check()?;
        for record in records {
            let size = match record {
                Record::Insert { message, state, .. } => message.len().max(state.len()),
                Record::Update { state, .. } => state.len(),
                Record::Meta { key, value, .. } => {
                    key.len().max(value.as_ref().map_or(0, |value| value.len()))
                }
                Record::Remove { .. } => 0,
            };
            if size > MAX_PART_BYTES {
                return Err(StoreError::RecordTooLarge {
                    size,
                    limit: MAX_PART_BYTES,
                });
            }
        }
        self.pending.extend_from_slice(records);
        self.last = Lsn(self.last.0 + records.len() as u64);
        Ok(self.last)
    }

    fn sync(&mut self) -> Result<Lsn, StoreError> {
        self.check()?;
        if self.pending.is_empty() {
            return Ok(self.durable);
        }
        match self.commit_pending() {
            Ok(()) => {
                self.durable = self.last;
                Ok(self.durable)
            }
            Err(error) => Err(self.poison(error)),
        }
    }

    fn recover(&mut self) -> Result<Recovered, StoreError> {
        self.recover_keeping(Bytes::clone)
    }

    /// Trims each message as its row arrives, so the rows are never all held whole.
    fn recover_keeping(&mut self, keep: MessagePart) -> Result<Recovered, StoreError> {
        self.check()?;
        match self
            .connection
            .run(move |client| read_live_rows(client, keep))
        {
            Ok(recovered) => Ok(recovered),
            Err(error) => Err(self.poison(error)),
        }
    }

    /// Readers connect on their first read, each on a connection of its own.
    fn reader(&self) -> Result<Arc<dyn MessageReader>, StoreError> {
        Ok(Arc::new(PostgresReader::new(self.url.clone())))
    }

    /// Nothing to do: PostgreSQL's vacuum reclaims the rows updates and deletes leave behind.
    fn compact(&mut self) -> Result<CompactionReport, StoreError> {
        self.check()?;
        Ok(CompactionReport::default())
    }
}
