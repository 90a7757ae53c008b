//! The Service Bus error conditions and the one table that maps a [`BrokerError`] onto the wire.
//!
//! The same [`WireError`] serves every place an error appears (servicebus-amqp.md §7.3): the
//! `rejected` outcome of a send or settlement, the `detach`/`close` error, and the
//! `statusCode` + `errorCondition` + `statusDescription` of a `$management` or `$cbs` response.

use std::fmt;

use uuid::Uuid;

use crate::timestamp::iso8601_utc;

/// AMQP error condition symbols understood by the SDKs (servicebus-amqp.md §7.1), defined once.
pub mod condition {
    /// The message lock expired or the message was already settled.
    pub const MESSAGE_LOCK_LOST: &str = "com.microsoft:message-lock-lost";
    /// The session lock expired or was taken by another receiver.
    pub const SESSION_LOCK_LOST: &str = "com.microsoft:session-lock-lost";
    /// The requested session is locked by another receiver.
    pub const SESSION_CANNOT_BE_LOCKED: &str = "com.microsoft:session-cannot-be-locked";
    /// No message with the given sequence number or lock token.
    pub const MESSAGE_NOT_FOUND: &str = "com.microsoft:message-not-found";
    /// The operation did not complete in time (retriable).
    pub const TIMEOUT: &str = "com.microsoft:timeout";
    /// The broker cannot take the request now (retriable).
    pub const SERVER_BUSY: &str = "com.microsoft:server-busy";
    /// An entity or rule of that name exists already.
    pub const ENTITY_ALREADY_EXISTS: &str = "com.microsoft:entity-already-exists";
    /// A request argument is invalid.
    pub const ARGUMENT_ERROR: &str = "com.microsoft:argument-error";
    /// A request argument is outside its allowed range.
    pub const ARGUMENT_OUT_OF_RANGE: &str = "com.microsoft:argument-out-of-range";
    /// Client → broker only: the `rejected` condition that asks for dead-lettering.
    pub const DEAD_LETTER: &str = "com.microsoft:dead-letter";
    /// The entity is disabled (its status refuses the operation).
    pub const ENTITY_DISABLED: &str = "com.microsoft:entity-disabled";
    /// The entity does not exist.
    pub const NOT_FOUND: &str = "amqp:not-found";
    /// The token is missing, invalid or does not cover the entity.
    pub const UNAUTHORIZED_ACCESS: &str = "amqp:unauthorized-access";
    /// A quota was reached.
    pub const RESOURCE_LIMIT_EXCEEDED: &str = "amqp:resource-limit-exceeded";
    /// The message is larger than the link's max-message-size.
    pub const MESSAGE_SIZE_EXCEEDED: &str = "amqp:link:message-size-exceeded";
    /// The operation is not allowed in the entity's or link's current state.
    pub const NOT_ALLOWED: &str = "amqp:not-allowed";
    /// The operation is not supported by this broker.
    pub const NOT_IMPLEMENTED: &str = "amqp:not-implemented";
    /// A broker fault.
    pub const INTERNAL_ERROR: &str = "amqp:internal-error";
    /// The broker closes the connection (shutdown); clients reconnect.
    pub const CONNECTION_FORCED: &str = "amqp:connection:forced";
    /// The broker detaches the link (a token that lapsed without renewal); clients re-attach.
    pub const DETACH_FORCED: &str = "amqp:link:detach-forced";
    /// A discharge names a transaction the coordinator does not know (§4.5.6).
    pub const TRANSACTION_UNKNOWN_ID: &str = "amqp:transaction:unknown-id";
    /// The transaction could not commit and was rolled back (§4.5.6).
    pub const TRANSACTION_ROLLBACK: &str = "amqp:transaction:rollback";
    /// The transaction ran past its time-out and was rolled back (§4.5.6).
    pub const TRANSACTION_TIMEOUT: &str = "amqp:transaction:timeout";
}

/// The `statusCode` of a `$management` response (an AMQP `int` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatusCode(i32);

impl StatusCode {
    /// 200: the operation succeeded and returns a result.
    pub const OK: Self = Self(200);
    /// 202: accepted (the `$cbs` put-token success code every SDK accepts).
    pub const ACCEPTED: Self = Self(202);
    /// 204: succeeded with nothing to return (e.g. peek past the end).
    pub const NO_CONTENT: Self = Self(204);
    /// 400: an argument is invalid or the operation is not allowed.
    pub const BAD_REQUEST: Self = Self(400);
    /// 401: authorisation failed.
    pub const UNAUTHORIZED: Self = Self(401);
    /// 403: a quota was reached, or the entity is disabled.
    pub const FORBIDDEN: Self = Self(403);
    /// 404: no such entity or message.
    pub const NOT_FOUND: Self = Self(404);
    /// 408: timed out.
    pub const REQUEST_TIMEOUT: Self = Self(408);
    /// 409: already exists.
    pub const CONFLICT: Self = Self(409);
    /// 410: a message or session lock is lost.
    pub const GONE: Self = Self(410);
    /// 413: the message is too large.
    pub const PAYLOAD_TOO_LARGE: Self = Self(413);
    /// 500: broker fault.
    pub const INTERNAL_SERVER_ERROR: Self = Self(500);
    /// 501: operation not supported.
    pub const NOT_IMPLEMENTED: Self = Self(501);
    /// 503: busy, try again.
    pub const SERVICE_UNAVAILABLE: Self = Self(503);

    /// The code as the AMQP `int` the SDKs require.
    pub fn as_i32(self) -> i32 {
        self.0
    }
}

/// A failure the broker reports to a client. The text of each variant is the description the
/// client sees (before the tracking suffix); the conditions come from [`BrokerError::to_wire`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokerError {
    /// The lock token is unknown, expired, or its message already settled.
    #[error(
        "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue."
    )]
    MessageLockLost,
    /// The session lock expired or belongs to another receiver.
    #[error("The session lock has expired on the MessageSession. Accept a new MessageSession.")]
    SessionLockLost,
    /// The session is locked by another receiver.
    #[error(
        "The requested session '{session_id}' cannot be accepted. It may be locked by another receiver."
    )]
    SessionCannotBeLocked {
        /// The session asked for.
        session_id: String,
    },
    /// No message has that sequence number (receive-by-sequence-number, cancel-scheduled).
    #[error("The message with sequence number {sequence_number} could not be found.")]
    MessageNotFound {
        /// The sequence number asked for.
        sequence_number: i64,
    },
    /// remove-rule named a rule the subscription does not have.
    #[error("The rule '{name}' could not be found.")]
    RuleNotFound {
        /// The rule name asked for.
        name: String,
    },
    /// The entity does not exist; the wording is the one the JS SDK recognises.
    #[error(
        "The messaging entity 'sb://{namespace}/{entity}' could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions."
    )]
    EntityNotFound {
        /// The namespace name.
        namespace: String,
        /// The entity path as the client named it.
        entity: String,
    },
    /// The entity's status refuses the operation (`Disabled`, or `ReceiveDisabled` for a
    /// receive); Service Bus's words.
    #[error(
        "Messaging entity 'sb://{namespace}/{entity}' is currently disabled. For more information please see https://aka.ms/ServiceBusExceptions ."
    )]
    EntityDisabled {
        /// The namespace name.
        namespace: String,
        /// The entity path.
        entity: String,
    },
    /// A send to a `SendDisabled` queue or topic; Service Bus names the entity by kind here.
    #[error(
        "Messaging entity '{namespace}:{kind}:{entity}' is currently disabled for Send operations. For more information please see https://aka.ms/ServiceBusExceptions ."
    )]
    EntitySendDisabled {
        /// The namespace name.
        namespace: String,
        /// `Queue` or `Topic`.
        kind: &'static str,
        /// The entity path.
        entity: String,
    },
    /// A rule (or entity) of that name exists already.
    #[error("The messaging entity '{name}' already exists.")]
    EntityAlreadyExists {
        /// The name that clashes.
        name: String,
    },
    /// The operation did not complete within its time-out.
    #[error("The operation did not complete within the allotted timeout: {operation}.")]
    Timeout {
        /// What timed out.
        operation: String,
    },
    /// Storage refused or failed a write; the client should retry later.
    #[error("The server is busy: storage is unavailable ({reason}). Please retry the operation.")]
    StoreUnavailable {
        /// The store's own error, for the log and the client.
        reason: String,
    },
    /// The entity is throttled (or a test injected the fault): the SDKs back off and retry.
    #[error(
        "The request was terminated because the entity is being throttled. Error code : 50009. Please wait 2 seconds and try again."
    )]
    ServerBusy,
    /// A request argument is invalid.
    #[error("{0}")]
    Argument(String),
    /// A request argument is out of its allowed range.
    #[error("{0}")]
    ArgumentOutOfRange(String),
    /// The token is missing, invalid, expired, or does not cover the entity.
    #[error("Unauthorized access: {0}")]
    Unauthorized(String),
    /// A put-token whose signature no key of its rule made, in Service Bus's words.
    #[error("InvalidSignature: The token has an invalid signature.")]
    InvalidSignature,
    /// The caller's tokens cover the entity but their rule lacks the right the operation needs.
    #[error(
        "Unauthorized access. '{claim}' claim(s) are required to perform this operation. Resource: '{resource}'."
    )]
    MissingClaim {
        /// The right needed (`Send`, `Listen`, `Manage`).
        claim: &'static str,
        /// The entity's address, `sb://namespace/entity`.
        resource: String,
    },
    /// The token that let a link open expired without a renewal, in Service Bus's words (the
    /// service force-detaches the link with code `RenewToken`; the SDKs re-attach with a fresh
    /// token).
    #[error(
        "The link '{link}' is force detached. Code: RenewToken. Details: Unauthorized access. '{claim}' claim(s) are required to perform this operation. Resource: '{resource}'."
    )]
    TokenLapsed {
        /// The link's name.
        link: String,
        /// The right the link needs (`Send`, `Listen`).
        claim: &'static str,
        /// The entity's address, `sb://namespace/entity`.
        resource: String,
    },
    /// A quota was reached.
    #[error("{0}")]
    ResourceLimitExceeded(String),
    /// The entity's stored messages reached its size quota (`MaxSizeInMegabytes`); in Service
    /// Bus's words (the entity itself is named in the tracking suffix).
    #[error(
        "The maximum entity size has been reached or exceeded. Size of entity in bytes:{size}, Max entity size in bytes:{max}."
    )]
    EntityQuotaExceeded {
        /// Bytes stored when the send was refused.
        size: u64,
        /// The quota in bytes.
        max: u64,
    },
    /// The message exceeds the maximum message size (Service Bus's wording).
    #[error(
        "The received message ({}size:{size} bytes) exceeds the limit ({limit} bytes) currently allowed on the link.",
        delivery_id.map(|id| format!("delivery-id:{id}, ")).unwrap_or_default()
    )]
    MessageSizeExceeded {
        /// The transfer's delivery-id, when a transfer was refused.
        delivery_id: Option<u32>,
        /// The message's encoded size.
        size: u64,
        /// The link's max-message-size.
        limit: u64,
    },
    /// The operation is not allowed on this entity or link.
    #[error("{0}")]
    NotAllowed(String),
    /// The operation is not supported by this broker.
    #[error("The operation '{operation}' is not implemented by this broker.")]
    NotImplemented {
        /// The operation's name, e.g. `com.microsoft:batch-delete-messages`.
        operation: String,
    },
    /// A discharge or a transactional operation names a transaction that is not open.
    #[error("The transaction does not exist or has already ended.")]
    TransactionUnknown,
    /// The transaction could not commit (a lock was lost, a send refused): nothing of it
    /// happened.
    #[error("The transaction was rolled back: {reason}")]
    TransactionRolledBack {
        /// Why it could not commit.
        reason: String,
    },
    /// The transaction was open longer than Service Bus allows (2 minutes) and rolled back.
    #[error("The transaction timed out and was rolled back.")]
    TransactionTimedOut,
    /// A broker fault.
    #[error("Internal error: {0}")]
    Internal(String),
    /// The broker is shutting down and closes the connection.
    #[error("The broker is shutting down.")]
    ShuttingDown,
}

/// An error as it goes on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// The AMQP condition symbol (`errorCondition` on `$management`).
    pub condition: &'static str,
    /// The description with the tracking suffix (`statusDescription` on `$management`).
    pub description: String,
    /// The `statusCode` for `$management` and `$cbs` responses.
    pub status: StatusCode,
}

/// Where and when an error happened, for the Service Bus style tracking suffix of its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorScope<'a> {
    /// The namespace name.
    pub namespace: &'a str,
    /// The entity path the operation concerned (empty when none).
    pub entity: &'a str,
    /// The tracking id of this occurrence.
    pub tracking_id: TrackingId,
    /// The time of the error, in milliseconds since the Unix epoch.
    pub now_unix_millis: i64,
}

impl BrokerError {
    /// The one mapping of broker errors to wire conditions and `$management` status codes
    /// (servicebus-amqp.md §5.1 and §7.1); the description ends with the tracking suffix
    /// ` TrackingId:<guid>, SystemTracker:<namespace>:<entity>, Timestamp:<ISO-8601 UTC>`.
    pub fn to_wire(&self, scope: &ErrorScope<'_>) -> WireError {
        use condition as c;
        let (condition, status) = match self {
            Self::MessageLockLost => (c::MESSAGE_LOCK_LOST, StatusCode::GONE),
            Self::SessionLockLost => (c::SESSION_LOCK_LOST, StatusCode::GONE),
            Self::SessionCannotBeLocked { .. } => (c::SESSION_CANNOT_BE_LOCKED, StatusCode::GONE),
            Self::MessageNotFound { .. } => (c::MESSAGE_NOT_FOUND, StatusCode::NOT_FOUND),
            Self::EntityNotFound { .. } | Self::RuleNotFound { .. } => {
                (c::NOT_FOUND, StatusCode::NOT_FOUND)
            }
            Self::EntityAlreadyExists { .. } => (c::ENTITY_ALREADY_EXISTS, StatusCode::CONFLICT),
            Self::EntityDisabled { .. } | Self::EntitySendDisabled { .. } => {
                (c::ENTITY_DISABLED, StatusCode::FORBIDDEN)
            }
            Self::Timeout { .. } => (c::TIMEOUT, StatusCode::REQUEST_TIMEOUT),
            // server-busy is the condition every SDK retries on its own.
            Self::StoreUnavailable { .. } | Self::ServerBusy => {
                (c::SERVER_BUSY, StatusCode::SERVICE_UNAVAILABLE)
            }
            Self::Argument(_) => (c::ARGUMENT_ERROR, StatusCode::BAD_REQUEST),
            Self::ArgumentOutOfRange(_) => (c::ARGUMENT_OUT_OF_RANGE, StatusCode::BAD_REQUEST),
            Self::Unauthorized(_) | Self::InvalidSignature | Self::MissingClaim { .. } => {
                (c::UNAUTHORIZED_ACCESS, StatusCode::UNAUTHORIZED)
            }
            Self::TokenLapsed { .. } => (c::DETACH_FORCED, StatusCode::UNAUTHORIZED),
            Self::ResourceLimitExceeded(_) | Self::EntityQuotaExceeded { .. } => {
                (c::RESOURCE_LIMIT_EXCEEDED, StatusCode::FORBIDDEN)
            }
            Self::MessageSizeExceeded { .. } => {
                (c::MESSAGE_SIZE_EXCEEDED, StatusCode::PAYLOAD_TOO_LARGE)
            }
            Self::NotAllowed(_) => (c::NOT_ALLOWED, StatusCode::BAD_REQUEST),
            Self::NotImplemented { .. } => (c::NOT_IMPLEMENTED, StatusCode::NOT_IMPLEMENTED),
            Self::TransactionUnknown => (c::TRANSACTION_UNKNOWN_ID, StatusCode::NOT_FOUND),
            Self::TransactionRolledBack { .. } => (c::TRANSACTION_ROLLBACK, StatusCode::CONFLICT),
            Self::TransactionTimedOut => (c::TRANSACTION_TIMEOUT, StatusCode::REQUEST_TIMEOUT),
            Self::Internal(_) => (c::INTERNAL_ERROR, StatusCode::INTERNAL_SERVER_ERROR),
            Self::ShuttingDown => (c::CONNECTION_FORCED, StatusCode::SERVICE_UNAVAILABLE),
        };
        let description = format!(
            "{self} TrackingId:{}, SystemTracker:{}:{}, Timestamp:{}",
            scope.tracking_id,
            scope.namespace,
            scope.entity,
            iso8601_utc(scope.now_unix_millis)
        );
        WireError {
            condition,
            description,
            status,
        }
    }
}

/// The id that ties a client-visible error to the broker's log line: a random (v4) UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TrackingId(Uuid);

impl TrackingId {
    /// A fresh random tracking id.
    pub fn random() -> Self {
        Self(Uuid::new_v4())
    }
}

impl From<Uuid> for TrackingId {
    fn from(uuid: Uuid) -> Self {
        Self(uuid)
    }
}

impl fmt::Display for TrackingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.hyphenated())
    }
}

#[cfg(test)]
mod tests;
