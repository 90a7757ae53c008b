//! Request parsing and response shapes of the `$management` operations.

use super::*;
use busbar_amqp::message::{MessageBuilder, Properties as AmqpProperties};
use busbar_core::{DeliveryLock, MessageState};

/// A `$management` request for `operation` with `body` as its map (also used by `sessions`).
pub(super) fn request(operation: &str, body: Vec<(&str, Value)>) -> Request {
    Request {
        message_id: None,
        reply_to: None,
        properties: busbar_amqp::message::ApplicationProperties(vec![(
            "operation".into(),
            Value::from(operation),
        )]),
        body: Value::Map(body.into_iter().map(|(k, v)| (Value::from(k), v)).collect()),
    }
}

fn uuid_array(bytes: [u8; 16]) -> Value {
    Value::Array(Array::new(ElementType::Uuid, vec![Value::Uuid(Uuid(bytes))]).unwrap())
}

#[test]
fn renew_lock_reads_an_array_of_uuid() {
    let parsed = parse(&request(
        "com.microsoft:renew-lock",
        vec![("lock-tokens", uuid_array([1; 16]))],
    ))
    .unwrap();
    assert_eq!(
        parsed,
        Operation::RenewLock(vec![LockToken::from_bytes([1; 16])])
    );
}

#[test]
fn peek_accepts_any_integer_encoding() {
    for count in [
        Value::Int(5),
        Value::Uint(5),
        Value::Long(5),
        Value::Ubyte(5),
    ] {
        let parsed = parse(&request(
            "com.microsoft:peek-message",
            vec![
                ("from-sequence-number", Value::Long(3)),
                ("message-count", count),
            ],
        ))
        .unwrap();
        assert_eq!(
            parsed,
            Operation::Peek {
                from: SequenceNumber(3),
                count: 5
            }
        );
    }
}

#[test]
fn receive_by_sequence_number_reads_the_mode() {
    let sequences =
        Value::Array(Array::new(ElementType::Long, vec![Value::Long(4), Value::Long(9)]).unwrap());
    let parsed = parse(&request(
        "com.microsoft:receive-by-sequence-number",
        vec![
            ("sequence-numbers", sequences),
            ("receiver-settle-mode", Value::Uint(0)),
        ],
    ))
    .unwrap();
    assert_eq!(
        parsed,
        Operation::ReceiveDeferred {
            sequences: vec![SequenceNumber(4), SequenceNumber(9)],
            mode: ReceiveMode::ReceiveAndDelete
        }
    );
}

#[test]
fn update_disposition_maps_every_status() {
    let with_status = |status: &str| {
        parse(&request(
            "com.microsoft:update-disposition",
            vec![
                ("disposition-status", Value::from(status)),
                ("lock-tokens", uuid_array([2; 16])),
                ("deadletter-reason", Value::from("r")),
                ("deadletter-description", Value::from("")),
            ],
        ))
    };
    let outcome = |status| match with_status(status).unwrap() {
        Operation::Settle { outcome, .. } => outcome,
        other => panic!("{other:?}"),
    };
    assert_eq!(outcome("completed"), Outcome::Complete);
    assert!(matches!(outcome("abandoned"), Outcome::Abandon { .. }));
    assert!(matches!(outcome("defered"), Outcome::Defer { .. }));
    let Outcome::DeadLetter { info, .. } = outcome("suspended") else {
        panic!("not a dead-letter");
    };
    assert_eq!(info.reason.as_deref(), Some("r"));
    assert_eq!(info.description, None);
    assert!(matches!(
        with_status("bogus"),
        Err(BrokerError::Argument(_))
    ));
}

#[test]
fn schedule_reads_the_encoded_messages() {
    let message = MessageBuilder::new()
        .properties(AmqpProperties {
            message_id: Some(busbar_amqp::message::MessageId::String("id".into())),
            ..AmqpProperties::default()
        })
        .data(Bytes::from_static(b"x"))
        .build();
    let entry = Value::Map(vec![
        (Value::from("message"), Value::Binary(message.into_bytes())),
        (Value::from("message-id"), Value::from("id")),
    ]);
    let Operation::Enqueue(messages) = parse(&request(
        "com.microsoft:schedule-message",
        vec![("messages", Value::List(vec![entry]))],
    ))
    .unwrap() else {
        panic!("not a schedule");
    };
    assert_eq!(messages.len(), 1);
}

#[test]
fn malformed_and_unknown_requests_are_errors() {
    assert!(matches!(
        parse(&request("com.microsoft:renew-lock", vec![])),
        Err(BrokerError::Argument(_))
    ));
    assert!(matches!(
        parse(&request(
            "com.microsoft:renew-lock",
            vec![("lock-tokens", Value::from("x"))]
        )),
        Err(BrokerError::Argument(_))
    ));
    assert!(matches!(
        parse(&request("com.microsoft:batch-delete-messages", vec![])),
        Err(BrokerError::NotImplemented { .. })
    ));
}

fn delivery(locked: bool) -> Delivery {
    Delivery {
        sequence: SequenceNumber(3),
        payload: MessageBuilder::new()
            .data(Bytes::from_static(b"p"))
            .build()
            .into_bytes(),
        payload_in_store: false,
        message_id: None,
        session_id: None,
        delivery_count: 0,
        enqueued_time: Timestamp(10),
        time_to_live: None,
        expires_at: None,
        state: MessageState::Deferred,
        scheduled_enqueue_time: None,
        lock: locked.then(|| DeliveryLock {
            token: LockToken::from_bytes([3; 16]),
            locked_until: Timestamp(20),
        }),
        dead_letter: None,
        properties: Properties::new(),
    }
}

#[test]
fn responses_use_arrays_and_lists_where_the_sdks_expect_them() {
    let body = response_body(&OperationResult::Expirations(vec![Timestamp(5)]))
        .unwrap()
        .unwrap();
    let Value::Array(expirations) = &body.as_map().unwrap()[0].1 else {
        panic!("expirations must be an array");
    };
    assert_eq!(expirations.element_type(), ElementType::Timestamp);

    let body = response_body(&OperationResult::SequenceNumbers(vec![SequenceNumber(8)]))
        .unwrap()
        .unwrap();
    let Value::Array(sequences) = &body.as_map().unwrap()[0].1 else {
        panic!("sequence-numbers must be an array");
    };
    assert_eq!(sequences.items(), &[Value::Long(8)]);

    let body = response_body(&OperationResult::Messages(vec![delivery(true)]))
        .unwrap()
        .unwrap();
    let Value::List(messages) = &body.as_map().unwrap()[0].1 else {
        panic!("messages must be a list");
    };
    let entry = messages[0].as_map().unwrap();
    assert!(entry[0].0.is_key("message") && matches!(entry[0].1, Value::Binary(_)));
    assert_eq!(entry[1].1, Value::Uuid(Uuid([3; 16])));
    let peeked = response_body(&OperationResult::Messages(vec![delivery(false)]))
        .unwrap()
        .unwrap();
    let Value::List(messages) = &peeked.as_map().unwrap()[0].1 else {
        panic!("messages must be a list");
    };
    assert_eq!(messages[0].as_map().unwrap().len(), 1);

    assert_eq!(
        response_body(&OperationResult::Messages(vec![])).unwrap(),
        None
    );
    assert_eq!(
        response_body(&OperationResult::Done).unwrap(),
        Some(Value::Map(vec![]))
    );
}
