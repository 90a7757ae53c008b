//! The error table, variant by variant, with the exact wire text.

use super::*;

const TRACKING: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

fn scope(entity: &str) -> ErrorScope<'_> {
    ErrorScope {
        namespace: "sbemulatorns",
        entity,
        tracking_id: TrackingId::from(Uuid::parse_str(TRACKING).unwrap()),
        now_unix_millis: 1_795_307_569_250,
    }
}

fn suffix(entity: &str) -> String {
    format!(
        " TrackingId:{TRACKING}, SystemTracker:sbemulatorns:{entity}, Timestamp:2026-11-22T00:32:49.250Z"
    )
}

/// How many variants `BrokerError` has.
const VARIANTS: usize = 28;

/// A number per variant. The match has no wildcard, so a new variant does not compile until it
/// is numbered here, and then the table test fails until the table covers it too.
fn variant_number(error: &BrokerError) -> usize {
    match error {
        BrokerError::MessageLockLost => 0,
        BrokerError::SessionLockLost => 1,
        BrokerError::SessionCannotBeLocked { .. } => 2,
        BrokerError::MessageNotFound { .. } => 3,
        BrokerError::EntityNotFound { .. } => 4,
        BrokerError::EntityAlreadyExists { .. } => 5,
        BrokerError::Timeout { .. } => 6,
        BrokerError::StoreUnavailable { .. } => 7,
        BrokerError::Argument(_) => 8,
        BrokerError::ArgumentOutOfRange(_) => 9,
        BrokerError::Unauthorized(_) => 10,
        BrokerError::ResourceLimitExceeded(_) => 11,
        BrokerError::MessageSizeExceeded { .. } => 12,
        BrokerError::NotAllowed(_) => 13,
        BrokerError::NotImplemented { .. } => 14,
        BrokerError::Internal(_) => 15,
        BrokerError::ShuttingDown => 16,
        BrokerError::RuleNotFound { .. } => 17,
        BrokerError::EntityQuotaExceeded { .. } => 18,
        BrokerError::ServerBusy => 19,
        BrokerError::TransactionUnknown => 20,
        BrokerError::TransactionRolledBack { .. } => 21,
        BrokerError::TransactionTimedOut => 22,
        BrokerError::MissingClaim { .. } => 23,
        BrokerError::EntityDisabled { .. } => 24,
        BrokerError::EntitySendDisabled { .. } => 25,
        BrokerError::InvalidSignature => 26,
        BrokerError::TokenLapsed { .. } => 27,
    }
}

#[test]
fn every_variant_maps_to_its_condition_status_and_description() {
    use condition as c;
    let table: Vec<(BrokerError, &str, i32, &str)> = vec![
        (
            BrokerError::MessageLockLost,
            c::MESSAGE_LOCK_LOST,
            410,
            "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.",
        ),
        (
            BrokerError::SessionLockLost,
            c::SESSION_LOCK_LOST,
            410,
            "The session lock has expired on the MessageSession. Accept a new MessageSession.",
        ),
        (
            BrokerError::SessionCannotBeLocked {
                session_id: "s1".into(),
            },
            c::SESSION_CANNOT_BE_LOCKED,
            410,
            "The requested session 's1' cannot be accepted. It may be locked by another receiver.",
        ),
        (
            BrokerError::MessageNotFound {
                sequence_number: 42,
            },
            c::MESSAGE_NOT_FOUND,
            404,
            "The message with sequence number 42 could not be found.",
        ),
        (
            BrokerError::RuleNotFound { name: "red".into() },
            c::NOT_FOUND,
            404,
            "The rule 'red' could not be found.",
        ),
        (
            BrokerError::EntityNotFound {
                namespace: "sbemulatorns".into(),
                entity: "q".into(),
            },
            c::NOT_FOUND,
            404,
            "The messaging entity 'sb://sbemulatorns/q' could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions.",
        ),
        (
            BrokerError::EntityAlreadyExists { name: "r1".into() },
            c::ENTITY_ALREADY_EXISTS,
            409,
            "The messaging entity 'r1' already exists.",
        ),
        (
            BrokerError::Timeout {
                operation: "accept next session".into(),
            },
            c::TIMEOUT,
            408,
            "The operation did not complete within the allotted timeout: accept next session.",
        ),
        (
            BrokerError::ServerBusy,
            c::SERVER_BUSY,
            503,
            "The request was terminated because the entity is being throttled. Error code : 50009. Please wait 2 seconds and try again.",
        ),
        (
            BrokerError::TransactionUnknown,
            c::TRANSACTION_UNKNOWN_ID,
            404,
            "The transaction does not exist or has already ended.",
        ),
        (
            BrokerError::TransactionRolledBack {
                reason: "a lock was lost".into(),
            },
            c::TRANSACTION_ROLLBACK,
            409,
            "The transaction was rolled back: a lock was lost",
        ),
        (
            BrokerError::TransactionTimedOut,
            c::TRANSACTION_TIMEOUT,
            408,
            "The transaction timed out and was rolled back.",
        ),
        (
            BrokerError::InvalidSignature,
            c::UNAUTHORIZED_ACCESS,
            401,
            "InvalidSignature: The token has an invalid signature.",
        ),
        (
            BrokerError::MissingClaim {
                claim: "Send",
                resource: "sb://sbemulatorns/q".into(),
            },
            c::UNAUTHORIZED_ACCESS,
            401,
            "Unauthorized access. 'Send' claim(s) are required to perform this operation. Resource: 'sb://sbemulatorns/q'.",
        ),
        (
            BrokerError::TokenLapsed {
                link: "receiver-1".into(),
                claim: "Listen",
                resource: "sb://sbemulatorns/q".into(),
            },
            c::DETACH_FORCED,
            401,
            "The link 'receiver-1' is force detached. Code: RenewToken. Details: Unauthorized access. 'Listen' claim(s) are required to perform this operation. Resource: 'sb://sbemulatorns/q'.",
        ),
        (
            BrokerError::StoreUnavailable {
                reason: "journal poisoned".into(),
            },
            c::SERVER_BUSY,
            503,
            "The server is busy: storage is unavailable (journal poisoned). Please retry the operation.",
        ),
        (
            BrokerError::Argument("lock-tokens is missing".into()),
            c::ARGUMENT_ERROR,
            400,
            "lock-tokens is missing",
        ),
        (
            BrokerError::ArgumentOutOfRange("message-count must be positive".into()),
            c::ARGUMENT_OUT_OF_RANGE,
            400,
            "message-count must be positive",
        ),
        (
            BrokerError::Unauthorized("the token has expired".into()),
            c::UNAUTHORIZED_ACCESS,
            401,
            "Unauthorized access: the token has expired",
        ),
        (
            BrokerError::ResourceLimitExceeded("entity full".into()),
            c::RESOURCE_LIMIT_EXCEEDED,
            403,
            "entity full",
        ),
        (
            BrokerError::EntityQuotaExceeded {
                size: 1_048_700,
                max: 1_048_576,
            },
            c::RESOURCE_LIMIT_EXCEEDED,
            403,
            "The maximum entity size has been reached or exceeded. Size of entity in bytes:1048700, Max entity size in bytes:1048576.",
        ),
        (
            BrokerError::MessageSizeExceeded {
                delivery_id: Some(3),
                size: 300_000,
                limit: 262_144,
            },
            c::MESSAGE_SIZE_EXCEEDED,
            413,
            "The received message (delivery-id:3, size:300000 bytes) exceeds the limit (262144 bytes) currently allowed on the link.",
        ),
        (
            BrokerError::MessageSizeExceeded {
                delivery_id: None,
                size: 300_000,
                limit: 262_144,
            },
            c::MESSAGE_SIZE_EXCEEDED,
            413,
            "The received message (size:300000 bytes) exceeds the limit (262144 bytes) currently allowed on the link.",
        ),
        (
            BrokerError::NotAllowed("sessionful entity".into()),
            c::NOT_ALLOWED,
            400,
            "sessionful entity",
        ),
        (
            BrokerError::NotImplemented {
                operation: "com.microsoft:batch-delete-messages".into(),
            },
            c::NOT_IMPLEMENTED,
            501,
            "The operation 'com.microsoft:batch-delete-messages' is not implemented by this broker.",
        ),
        (
            BrokerError::Internal("bug".into()),
            c::INTERNAL_ERROR,
            500,
            "Internal error: bug",
        ),
        (
            BrokerError::ShuttingDown,
            c::CONNECTION_FORCED,
            503,
            "The broker is shutting down.",
        ),
        // Service Bus's texts (azure-service-bus#677 for a disabled entity,
        // azure-sdk-for-net#10535 for a send-disabled one).
        (
            BrokerError::EntityDisabled {
                namespace: "sbemulatorns".into(),
                entity: "q".into(),
            },
            c::ENTITY_DISABLED,
            403,
            "Messaging entity 'sb://sbemulatorns/q' is currently disabled. For more information please see https://aka.ms/ServiceBusExceptions .",
        ),
        (
            BrokerError::EntitySendDisabled {
                namespace: "sbemulatorns".into(),
                kind: "Queue",
                entity: "q".into(),
            },
            c::ENTITY_DISABLED,
            403,
            "Messaging entity 'sbemulatorns:Queue:q' is currently disabled for Send operations. For more information please see https://aka.ms/ServiceBusExceptions .",
        ),
    ];
    let mut covered: Vec<usize> = table
        .iter()
        .map(|(error, ..)| variant_number(error))
        .collect();
    covered.sort_unstable();
    covered.dedup();
    assert_eq!(
        covered,
        (0..VARIANTS).collect::<Vec<_>>(),
        "every variant is in the table"
    );
    for (error, condition, status, text) in table {
        let wire = error.to_wire(&scope("q"));
        assert_eq!(wire.condition, condition, "{error:?}");
        assert_eq!(wire.status.as_i32(), status, "{error:?}");
        assert_eq!(
            wire.description,
            format!("{text}{}", suffix("q")),
            "{error:?}"
        );
    }
}

#[test]
fn entity_not_found_matches_the_js_sdk_pattern() {
    // JS only raises MessagingEntityNotFound when the description matches
    // /The messaging entity .* could not be found.*/i (servicebus-amqp.md §1.5).
    let error = BrokerError::EntityNotFound {
        namespace: "sbemulatorns".into(),
        entity: "t/Subscriptions/s".into(),
    };
    let wire = error.to_wire(&scope("t/Subscriptions/s"));
    assert!(wire.description.starts_with(
        "The messaging entity 'sb://sbemulatorns/t/Subscriptions/s' could not be found."
    ));
    assert!(wire.description.ends_with(&suffix("t/Subscriptions/s")));
}

#[test]
fn condition_names_are_the_service_bus_symbols() {
    assert_eq!(
        condition::MESSAGE_LOCK_LOST,
        "com.microsoft:message-lock-lost"
    );
    assert_eq!(condition::DEAD_LETTER, "com.microsoft:dead-letter");
    assert_eq!(
        condition::MESSAGE_SIZE_EXCEEDED,
        "amqp:link:message-size-exceeded"
    );
    assert_eq!(condition::CONNECTION_FORCED, "amqp:connection:forced");
}

#[test]
fn tracking_ids_are_random_hyphenated_uuids() {
    let first = TrackingId::random();
    let second = TrackingId::random();
    assert_ne!(first, second);
    let text = first.to_string();
    assert_eq!(text.len(), 36);
    assert_eq!(text.matches('-').count(), 4);
    assert_eq!(Uuid::parse_str(&text).unwrap().get_version_num(), 4);
}
