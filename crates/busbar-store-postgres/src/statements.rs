//! The statements a sync runs, prepared once per connection: each writes all rows of one kind
//! at once from arrays (`unnest`), so a sync costs a handful of round trips whatever its size.

use busbar_store::StoreError;
use postgres::{Client, Statement, Transaction};

use crate::changes::Changes;
use crate::url::database_error;

/// The most payload one statement carries; larger syncs write their messages in several.
const MAX_STATEMENT_BYTES: usize = 64 << 20;

/// The prepared statements of one connection.
pub(crate) struct Statements {
    fence: Statement,
    put: Statement,
    set_state: Statement,
    delete: Statement,
    meta_put: Statement,
    meta_delete: Statement,
    high_water: Statement,
    position: Statement,
}

impl Statements {
    pub(crate) fn prepare(client: &mut Client) -> Result<Statements, StoreError> {
        let mut prepare = |sql: &str| {
            client
                .prepare(sql)
                .map_err(|error| database_error("prepare", &error))
        };
        Ok(Statements {
            // FOR SHARE: a takeover's epoch bump waits for this commit, and this commit waits
            // for a bump in progress, so no commit of an old epoch lands after a new one starts.
            fence: prepare("SELECT epoch FROM busbar_lease FOR SHARE")?,
            put: prepare(
                "INSERT INTO busbar_messages (entity, sequence, message, state)
                 SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bytea[])
                 ON CONFLICT (entity, sequence)
                 DO UPDATE SET message = excluded.message, state = excluded.state",
            )?,
            set_state: prepare(
                "UPDATE busbar_messages m SET state = u.state
                 FROM unnest($1::bigint[], $2::bigint[], $3::bytea[]) AS u(entity, sequence, state)
                 WHERE m.entity = u.entity AND m.sequence = u.sequence",
            )?,
            delete: prepare(
                "DELETE FROM busbar_messages m
                 USING unnest($1::bigint[], $2::bigint[]) AS d(entity, sequence)
                 WHERE m.entity = d.entity AND m.sequence = d.sequence",
            )?,
            meta_put: prepare(
                "INSERT INTO busbar_meta (entity, key, value)
                 SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[])
                 ON CONFLICT (entity, key) DO UPDATE SET value = excluded.value",
            )?,
            meta_delete: prepare(
                "DELETE FROM busbar_meta m
                 USING unnest($1::bigint[], $2::bytea[]) AS d(entity, key)
                 WHERE m.entity = d.entity AND m.key = d.key",
            )?,
            high_water: prepare(
                "INSERT INTO busbar_high_water (entity, sequence)
                 SELECT * FROM unnest($1::bigint[], $2::bigint[])
                 ON CONFLICT (entity)
                 DO UPDATE SET sequence = greatest(busbar_high_water.sequence, excluded.sequence)",
            )?,
            position: prepare("UPDATE busbar_position SET lsn = $1")?,
        })
    }

    /// The epoch the database holds, row-locked until the transaction ends.
    pub(crate) fn current_epoch(
        &self,
        transaction: &mut Transaction<'_>,
    ) -> Result<i64, StoreError> {
        transaction
            .query_one(&self.fence, &[])
            .map(|row| row.get(0))
            .map_err(|error| database_error("check the lease", &error))
    }

    /// Writes `changes` and the new log position in `transaction` (not committed).
    pub(crate) fn write(
        &self,
        transaction: &mut Transaction<'_>,
        changes: &Changes<'_>,
        lsn: i64,
    ) -> Result<(), StoreError> {
        let failed = |error: postgres::Error| database_error("write", &error);
        if !changes.deletes.is_empty() {
            let rows = &changes.deletes;
            transaction
                .execute(&self.delete, &[&rows.entities, &rows.sequences])
                .map_err(failed)?;
        }
        let puts = &changes.puts;
        for run in puts.runs(MAX_STATEMENT_BYTES) {
            transaction
                .execute(
                    &self.put,
                    &[
                        &&puts.entities[run.clone()],
                        &&puts.sequences[run.clone()],
                        &&puts.messages[run.clone()],
                        &&puts.states[run],
                    ],
                )
                .map_err(failed)?;
        }
        if !changes.set_states.is_empty() {
            let rows = &changes.set_states;
            transaction
                .execute(
                    &self.set_state,
                    &[&rows.entities, &rows.sequences, &rows.values],
                )
                .map_err(failed)?;
        }
        if !changes.meta_deletes.is_empty() {
            let rows = &changes.meta_deletes;
            transaction
                .execute(&self.meta_delete, &[&rows.entities, &rows.keys])
                .map_err(failed)?;
        }
        if !changes.meta_puts.is_empty() {
            let rows = &changes.meta_puts;
            transaction
                .execute(&self.meta_put, &[&rows.entities, &rows.keys, &rows.values])
                .map_err(failed)?;
        }
        if !changes.high_water.is_empty() {
            let rows = &changes.high_water;
            transaction
                .execute(&self.high_water, &[&rows.entities, &rows.sequences])
                .map_err(failed)?;
        }
        transaction
            .execute(&self.position, &[&lsn])
            .map_err(failed)?;
        Ok(())
    }
}
