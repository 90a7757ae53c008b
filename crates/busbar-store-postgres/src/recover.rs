//! Reading the live state at start-up: every row, in one read-only snapshot, streamed rather
//! than collected so a large backlog is held once.

use busbar_store::{
    EntityId, Lsn, MessageKey, MessagePart, MetaKey, Recovered, StoreError, StoredMessage,
};
use bytes::Bytes;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, IsolationLevel, Row, Transaction};

use crate::url::database_error;

/// The messages, metadata, high-water marks and log position, as of one snapshot; of each
/// message's immutable part, what `keep` makes of it as its row arrives.
pub(crate) fn read_live_rows(
    client: &mut Client,
    keep: MessagePart,
) -> Result<Recovered, StoreError> {
    let failed = |error: postgres::Error| database_error("recover", &error);
    let mut transaction = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(failed)?;
    let mut recovered = Recovered::default();
    for_each_row(
        &mut transaction,
        "SELECT entity, sequence, message, state FROM busbar_messages",
        |row| {
            let key = MessageKey {
                entity: entity(row.try_get(0)?)?,
                sequence: row.try_get(1)?,
            };
            let stored = StoredMessage {
                message: keep(&Bytes::from(row.try_get::<_, Vec<u8>>(2)?)),
                state: Bytes::from(row.try_get::<_, Vec<u8>>(3)?),
            };
            recovered.messages.insert(key, stored);
            Ok(())
        },
    )?;
    for_each_row(
        &mut transaction,
        "SELECT entity, key, value FROM busbar_meta",
        |row| {
            let key = MetaKey {
                entity: entity(row.try_get(0)?)?,
                key: Bytes::from(row.try_get::<_, Vec<u8>>(1)?),
            };
            let value = Bytes::from(row.try_get::<_, Vec<u8>>(2)?);
            recovered.meta.insert(key, value);
            Ok(())
        },
    )?;
    for_each_row(
        &mut transaction,
        "SELECT entity, sequence FROM busbar_high_water",
        |row| {
            recovered
                .high_water
                .insert(entity(row.try_get(0)?)?, row.try_get(1)?);
            Ok(())
        },
    )?;
    let position: i64 = transaction
        .query_one("SELECT lsn FROM busbar_position", &[])
        .map_err(failed)?
        .get(0);
    recovered.durable = Lsn(u64::try_from(position).unwrap_or(0));
    transaction.commit().map_err(failed)?;
    Ok(recovered)
}

/// Runs `query` and hands each row to `apply` as it arrives.
fn for_each_row(
    transaction: &mut Transaction<'_>,
    query: &str,
    mut apply: impl FnMut(&Row) -> Result<(), RowError>,
) -> Result<(), StoreError> {
    let failed = |error: postgres::Error| database_error("recover", &error);
    let no_parameters: [&str; 0] = [];
    let mut rows = transaction
        .query_raw(query, no_parameters)
        .map_err(failed)?;
    while let Some(row) = rows.next().map_err(failed)? {
        apply(&row).map_err(|error| match error {
            RowError::Driver(error) => failed(error),
            RowError::Entity(value) => StoreError::Database {
                operation: "recover",
                reason: format!(
                    "entity id {value} is out of range: the tables were changed by hand"
                ),
            },
        })?;
    }
    Ok(())
}

/// Why a row could not be read.
enum RowError {
    Driver(postgres::Error),
    Entity(i64),
}

impl From<postgres::Error> for RowError {
    fn from(error: postgres::Error) -> Self {
        RowError::Driver(error)
    }
}

fn entity(value: i64) -> Result<EntityId, RowError> {
    u32::try_from(value)
        .map(EntityId)
        .map_err(|_| RowError::Entity(value))
}
