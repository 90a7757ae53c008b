//! Oversize messages end to end against the real binary: one 1 GiB message streamed in frames of
//! the broker's max-frame-size (built as they are sent, so this process never holds it) is
//! rejected with Service Bus's `amqp:link:message-size-exceeded` as soon as it passes the link's
//! 256 KiB, long before its last frame, while the broker's resident memory stays flat: its later
//! frames are discarded as they arrive, never held. The same link then takes a normal message.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::Instant;

use support::Broker;
use support::raw::{Outcome, RawConnection};

/// The message the issue asks about: 1 GiB, encoded size.
const MESSAGE_SIZE: u32 = 1 << 30;
/// A normal message, well under the 256 KiB limit.
const SMALL_SIZE: u32 = 1024;
/// How far the broker's VmRSS may rise over its level before the big message.
const MAX_GROWTH_KIB: u64 = 16 * 1024;
/// The link's max-message-size, Service Bus's 256 KiB.
const LIMIT: u64 = 256 * 1024;
/// The rejection must come before this much of the big message was sent.
const ANSWERED_WITHIN: u64 = 2 << 20;

#[test]
fn a_1_gib_message_is_rejected_in_bounded_memory_and_its_link_goes_on() {
    let broker = Broker::in_memory(&["q"]);
    let mut connection = RawConnection::open(broker.port);
    let sender = connection.attach_sender("oversize-sender", "q");
    // A first message warms up the send path, so the baseline holds what any send allocates.
    let id = connection.send_message(sender, SMALL_SIZE, &mut || {});
    assert_eq!(connection.outcome(id, &mut || {}), Outcome::Accepted);

    let before = broker.rss_kib();
    let mut peak = before;
    let mut sample = || peak = peak.max(broker.rss_kib());
    let started = Instant::now();
    let id = connection.send_message(sender, MESSAGE_SIZE, &mut sample);
    let streamed = started.elapsed();
    let outcome = connection.outcome(id, &mut sample);
    let sent = connection.sent_when_settled(id);
    eprintln!(
        "1 GiB streamed in {streamed:.2?}, answered after {sent:?} bytes; broker VmRSS \
         {before} KiB before, peak {peak} KiB (+{} KiB)",
        peak - before
    );

    let Outcome::Rejected {
        condition,
        description,
    } = outcome
    else {
        panic!("the 1 GiB message was not rejected: {outcome:?}");
    };
    assert_eq!(condition, "amqp:link:message-size-exceeded");
    // The size is what had arrived when the message passed the limit.
    let size: u64 = description
        .strip_prefix(&format!("The received message (delivery-id:{id}, size:"))
        .and_then(|rest| {
            rest.split_once(
                " bytes) exceeds the limit (262144 bytes) currently allowed on the link.",
            )
        })
        .and_then(|(size, _)| size.parse().ok())
        .unwrap_or_else(|| panic!("not Service Bus's text: {description}"));
    assert!(size > LIMIT && size < ANSWERED_WITHIN, "{description}");
    assert!(
        sent.is_some_and(|sent| sent < ANSWERED_WITHIN),
        "the rejection came after {sent:?} bytes were sent, not within {ANSWERED_WITHIN}"
    );
    assert!(
        peak - before < MAX_GROWTH_KIB,
        "the broker's VmRSS grew by {} KiB while taking the 1 GiB message",
        peak - before
    );

    let id = connection.send_message(sender, SMALL_SIZE, &mut || {});
    assert_eq!(connection.outcome(id, &mut || {}), Outcome::Accepted);
}
