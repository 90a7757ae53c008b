//! The explorer's control operations against a running broker on a memory store: a page peeked
//! from a sequence number, a send decoded back, and re-drive moving dead-lettered messages (and
//! refusing a destination that does not exist, which would otherwise drop them).

use busbar_core::{DeadLetterInfo, NewMessage};
use busbar_store::MemoryStorage;

use super::super::tests::{enqueue, start};
use super::*;

const QUEUE: &str = "queue.1";

fn text_message(body: &str) -> OutgoingMessage {
    OutgoingMessage {
        body: Bytes::from(body.to_owned()),
        message_id: Some(format!("id-{body}")),
        application_properties: vec![("origin".into(), "test".into())],
        ..OutgoingMessage::default()
    }
}

/// Stores `count` messages straight into the queue's dead-letter sub-queue.
async fn dead_letter(control: &Control, count: usize) {
    let message = outgoing(text_message("dead")).unwrap();
    let messages = (0..count)
        .map(|_| NewMessage {
            dead_letter: Some(DeadLetterInfo {
                reason: Some("bad".into()),
                description: Some("test".into()),
            }),
            ..message.clone()
        })
        .collect();
    assert!(enqueue(control, QUEUE, messages).await.is_ok());
}

fn sequences(messages: &[PeekedMessage]) -> Vec<i64> {
    messages.iter().map(|message| message.sequence).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peek_reads_a_page_from_a_sequence_number() {
    let (control, _stop, _broker) = start(MemoryStorage::new()).await;
    for body in ["a", "b", "c"] {
        control.send(QUEUE, text_message(body)).await.unwrap();
    }
    let page = control.peek(QUEUE, false, 2, 5).await.unwrap();
    assert_eq!(sequences(&page), [2, 3]);
    assert_eq!(page[0].body, Bytes::from_static(b"b"));
    assert_eq!(page[0].state, "active");
    assert!(
        page[0]
            .system_properties
            .contains(&("message-id", "id-b".into()))
    );
    assert_eq!(
        page[0].application_properties,
        [("origin".into(), "test".into())]
    );
    assert!(control.peek(QUEUE, true, 1, 5).await.unwrap().is_empty());
    assert!(matches!(
        control.peek("no-such-queue", false, 1, 5).await,
        Err(ControlError::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_moves_dead_letters_back_and_refuses_unknown_destinations() {
    let (control, _stop, _broker) = start(MemoryStorage::new()).await;
    dead_letter(&control, 3).await;
    let dead = control.peek(QUEUE, true, 1, 10).await.unwrap();
    assert_eq!(dead.len(), 3);
    assert_eq!(dead[0].dead_letter_reason.as_deref(), Some("bad"));

    let nowhere = control.redrive(QUEUE, None, Some("no-such-queue")).await;
    assert!(matches!(nowhere, Err(ControlError::NotFound(_))));
    assert_eq!(control.peek(QUEUE, true, 1, 10).await.unwrap().len(), 3);

    let first = control
        .redrive(QUEUE, Some(vec![dead[0].sequence]), None)
        .await;
    assert_eq!(first.unwrap(), Redriven { moved: 1, kept: 0 });
    let rest = control.redrive(QUEUE, None, None).await.unwrap();
    assert_eq!(rest, Redriven { moved: 2, kept: 0 });
    assert!(control.peek(QUEUE, true, 1, 10).await.unwrap().is_empty());
    let active = control.peek(QUEUE, false, 1, 10).await.unwrap();
    assert_eq!(active.len(), 3);
    assert!(
        active
            .iter()
            .all(|message| message.dead_letter_reason.is_none())
    );
}
