//! `PostgresReader`: messages read back by key or scanned by sequence, on a connection of the
//! reader's own, through the `(entity, sequence)` primary key.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use busbar_store::{EntityId, MessageKey, MessageReader, StoreError};
use bytes::Bytes;

use crate::client_thread::ClientThread;
use crate::url::{DatabaseUrl, database_error};

const READ_BY_KEY: &str = "SELECT m.entity, m.sequence, m.message
     FROM busbar_messages m
     JOIN unnest($1::bigint[], $2::bigint[]) AS k(entity, sequence)
       ON m.entity = k.entity AND m.sequence = k.sequence";
const SCAN_FROM: &str = "SELECT sequence, message FROM busbar_messages
     WHERE entity = $1 AND sequence >= $2 ORDER BY sequence LIMIT $3";

/// A [`MessageReader`] on its own connection, so reads never wait behind the writer's commits.
/// Reads see committed rows only. A failed read drops the connection; the next read connects
/// again, so a database outage ends with the reads failing, not with a reader that never works.
pub(crate) struct PostgresReader {
    url: DatabaseUrl,
    connection: Mutex<Option<ClientThread>>,
}

impl PostgresReader {
    pub(crate) fn new(url: DatabaseUrl) -> PostgresReader {
        PostgresReader {
            url,
            connection: Mutex::new(None),
        }
    }

    /// Runs `work` on the reader's connection, connecting first when there is none.
    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut postgres::Client) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let mut connection = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let client = match connection.take() {
            Some(client) => client,
            None => ClientThread::connect(&self.url)?,
        };
        let result = client.run(work);
        if result.is_ok() {
            *connection = Some(client);
        }
        result
    }
}

impl MessageReader for PostgresReader {
    fn read(&self, keys: &[MessageKey]) -> Result<Vec<Option<Bytes>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let entities: Vec<i64> = keys.iter().map(|key| i64::from(key.entity.0)).collect();
        let sequences: Vec<i64> = keys.iter().map(|key| key.sequence).collect();
        let found = self.run(move |client| {
            let rows = client
                .query(READ_BY_KEY, &[&entities, &sequences])
                .map_err(|error| database_error("read messages", &error))?;
            rows.iter()
                .map(|row| {
                    let entity: i64 = row.try_get(0)?;
                    let sequence: i64 = row.try_get(1)?;
                    let message: Vec<u8> = row.try_get(2)?;
                    Ok(((entity, sequence), Bytes::from(message)))
                })
                .collect::<Result<HashMap<_, _>, postgres::Error>>()
                .map_err(|error| database_error("read messages", &error))
        })?;
        Ok(keys
            .iter()
            .map(|key| found.get(&(i64::from(key.entity.0), key.sequence)).cloned())
            .collect())
    }

    fn scan(
        &self,
        entity: EntityId,
        from: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Bytes)>, StoreError> {
        let entity = i64::from(entity.0);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.run(move |client| {
            let rows = client
                .query(SCAN_FROM, &[&entity, &from, &limit])
                .map_err(|error| database_error("scan messages", &error))?;
            rows.iter()
                .map(|row| {
                    let message: Vec<u8> = row.try_get(1)?;
                    Ok((row.try_get(0)?, Bytes::from(message)))
                })
                .collect::<Result<Vec<_>, postgres::Error>>()
                .map_err(|error| database_error("scan messages", &error))
        })
    }
}
