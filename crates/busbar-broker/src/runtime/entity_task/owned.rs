//! What an entity task owns: a plain core entity, or (for `RequiresSession`) a session entity
//! over one; the operations whose rules differ between the two go through here.

use busbar_core::{EnqueueOutcome, Entity, HeldCopies, NewMessage, SequenceNumber, Timestamp};
use busbar_sessions::{SessionEntity, SessionError, SessionLimits, StateRecord};
use busbar_store::{EntityId, Record, Recovered};

use super::tag;
use crate::errors::BrokerError;
use crate::runtime::atomic_send::HeldResolution;
use crate::runtime::refusals::core_error;

/// The entity an entity task owns (boxed: the two differ much in size).
pub(crate) enum OwnedEntity {
    /// Sessionless: any receiver takes any message.
    Plain(Box<Entity>),
    /// `RequiresSession`: messages need a session id and main-queue receivers lock sessions.
    Sessions(Box<SessionEntity>),
}

impl From<Entity> for OwnedEntity {
    fn from(entity: Entity) -> Self {
        OwnedEntity::Plain(Box::new(entity))
    }
}

impl From<SessionEntity> for OwnedEntity {
    fn from(entity: SessionEntity) -> Self {
        OwnedEntity::Sessions(Box::new(entity))
    }
}

impl OwnedEntity {
    /// The session entity over `core` (restored or new), with the session states the store
    /// recovered for entity `id`; every session starts unlocked.
    pub(crate) fn with_sessions(
        core: Entity,
        id: EntityId,
        recovered: &Recovered,
    ) -> Result<OwnedEntity, SessionError> {
        let mut states = Vec::new();
        for (key, value) in &recovered.meta {
            if key.entity == id
                && let Some(state) = StateRecord::decode(&key.key, value)?
            {
                states.push(state);
            }
        }
        Ok(SessionEntity::new(core, SessionLimits::default(), states).into())
    }

    /// The core entity, for what sessions do not change (dead-letter sub-queue, peek, lock
    /// renewal of plain receivers, scheduling).
    pub(crate) fn core(&self) -> &Entity {
        match self {
            OwnedEntity::Plain(entity) => entity,
            OwnedEntity::Sessions(entity) => entity.core(),
        }
    }

    /// The core entity, mutably (see [`core`](Self::core)).
    pub(crate) fn core_mut(&mut self) -> &mut Entity {
        match self {
            OwnedEntity::Plain(entity) => entity,
            OwnedEntity::Sessions(entity) => entity.core_mut(),
        }
    }

    /// Whether the entity is `RequiresSession`.
    pub(crate) fn requires_session(&self) -> bool {
        matches!(self, OwnedEntity::Sessions(_))
    }

    /// The session layer, for a `RequiresSession` entity.
    pub(crate) fn sessions(&self) -> Option<&SessionEntity> {
        match self {
            OwnedEntity::Plain(_) => None,
            OwnedEntity::Sessions(entity) => Some(entity),
        }
    }

    /// The session layer, mutably (see [`sessions`](Self::sessions)).
    pub(crate) fn sessions_mut(&mut self) -> Option<&mut SessionEntity> {
        match self {
            OwnedEntity::Plain(_) => None,
            OwnedEntity::Sessions(entity) => Some(entity),
        }
    }

    /// Enqueues a batch, all or nothing; a session entity refuses a batch with any message
    /// lacking a session id.
    pub(crate) fn enqueue(
        &mut self,
        messages: Vec<NewMessage>,
        now: Timestamp,
    ) -> Result<Vec<EnqueueOutcome>, BrokerError> {
        match self {
            OwnedEntity::Plain(entity) => entity.enqueue(messages, now).map_err(core_error),
            OwnedEntity::Sessions(entity) => entity.enqueue(messages, now).map_err(session_error),
        }
    }

    /// Holds this entity's copies of a send to several entities ([`Entity::hold`]), all or
    /// nothing; a session entity refuses a batch with any message lacking a session id.
    pub(crate) fn hold(
        &mut self,
        messages: Vec<NewMessage>,
        now: Timestamp,
    ) -> Result<HeldCopies, BrokerError> {
        match self {
            OwnedEntity::Plain(entity) => entity.hold(messages, now).map_err(core_error),
            OwnedEntity::Sessions(entity) => entity.hold(messages, now).map_err(session_error),
        }
    }

    /// Releases held copies that were stored (a session entity hands newly available sessions
    /// to waiting receivers) or discards those that were not.
    pub(crate) fn resolve_held(&mut self, resolution: &HeldResolution, now: Timestamp) {
        match (self, resolution.stored) {
            (OwnedEntity::Plain(entity), true) => entity.release_held(&resolution.sequences),
            (OwnedEntity::Sessions(entity), true) => {
                entity.release_held(&resolution.sequences, now);
            }
            (entity, false) => entity.core_mut().discard_held(&resolution.sequences),
        }
    }

    /// When the entity next needs [`handle_timeout`](Self::handle_timeout).
    pub(crate) fn poll_timeout(&self) -> Option<Timestamp> {
        match self {
            OwnedEntity::Plain(entity) => entity.poll_timeout(),
            OwnedEntity::Sessions(entity) => entity.poll_timeout(),
        }
    }

    /// Runs the timers due at `now`.
    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        match self {
            OwnedEntity::Plain(entity) => entity.handle_timeout(now),
            OwnedEntity::Sessions(entity) => entity.handle_timeout(now),
        }
    }

    /// Reports the inserts up to `through` durable: their messages become deliverable (and a
    /// session entity hands newly available sessions to waiting receivers).
    pub(crate) fn mark_durable(&mut self, through: SequenceNumber, now: Timestamp) {
        match self {
            OwnedEntity::Plain(entity) => entity.mark_durable(through),
            OwnedEntity::Sessions(entity) => entity.mark_durable(through, now),
        }
    }

    /// The records to persist, tagged with the entity's store id: message records, then
    /// session-state changes as `Meta` entries.
    pub(crate) fn drain_records(&mut self, id: EntityId) -> Vec<Record> {
        match self {
            OwnedEntity::Plain(entity) => entity.drain_records().map(|r| tag(id, r)).collect(),
            OwnedEntity::Sessions(entity) => {
                let mut records: Vec<Record> = entity.drain_records().map(|r| tag(id, r)).collect();
                records.extend(
                    entity
                        .drain_state_records()
                        .map(|StateRecord { key, value }| Record::Meta {
                            entity: id,
                            key,
                            value,
                        }),
                );
                records
            }
        }
    }
}

/// The one mapping of session-layer refusals onto broker errors.
pub(crate) fn session_error(error: SessionError) -> BrokerError {
    match error {
        SessionError::Core(error) => core_error(error),
        SessionError::LockLost(_) => BrokerError::SessionLockLost,
        SessionError::MessageLockLost => BrokerError::MessageLockLost,
        SessionError::CannotBeLocked(session) => BrokerError::SessionCannotBeLocked {
            session_id: session.as_str().to_owned(),
        },
        SessionError::StateTooLarge { size, max } => BrokerError::MessageSizeExceeded {
            delivery_id: None,
            size: u64::try_from(size).unwrap_or(u64::MAX),
            limit: u64::try_from(max).unwrap_or(u64::MAX),
        },
        SessionError::SessionIdRequired
        | SessionError::InvalidSessionId(_)
        | SessionError::ReceiverBusy(_) => BrokerError::NotAllowed(error.to_string()),
        SessionError::Decode(_) => BrokerError::Internal(error.to_string()),
    }
}
