//! Oversize messages end to end against the real binary: one 1 GiB message streamed in frames of
//! the broker's max-frame-size (built as they are sent, so this process never holds it) is
//! rejected with Service Bus's `amqp:link:message-size-exceeded` as soon as it passes the link's
//! 256 KiB, long before its last frame, while the broker's resident memory stays flat: its later
//! frames are discarded as they arrive, never held. The same link then takes a normal message.
//! A queue with a larger `MaxMessageSizeInKilobytes` rejects at its own limit the same way.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::Instant;

use support::Broker;
use support::raw::{Outcome, RawConnection};

/// A normal message, well under any limit.
const SMALL_SIZE: u32 = 1024;
/// The rejection must come before this much past the limit was sent.
const ANSWERED_WITHIN: u64 = 2 << 20;

#[test]
fn a_1_gib_message_is_rejected_in_bounded_memory_and_its_link_goes_on() {
    // Service Bus's 256 KiB; the broker's VmRSS may rise by 16 MiB at most.
    rejected_early("{}", 256 * 1024, 1 << 30, 16 * 1024);
}

#[test]
fn a_large_entitys_own_limit_rejects_a_message_just_past_it() {
    // 16 MiB, past the connection's 8 MiB reassembly budget: the link holds up to its limit,
    // and the message is dropped as soon as it passes it.
    rejected_early(
        r#"{ "MaxMessageSizeInKilobytes": 16384 }"#,
        16 << 20,
        64 << 20,
        64 * 1024,
    );
}

/// Streams a `message_size` message to a queue with `properties` whose limit is `limit` and
/// checks it is rejected with Service Bus's error within [`ANSWERED_WITHIN`] past the limit,
/// the broker's VmRSS rising by less than `max_growth_kib`, and the link goes on.
fn rejected_early(properties: &str, limit: u64, message_size: u32, max_growth_kib: u64) {
    let broker = Broker::in_memory_with(&[("q", properties)]);
    let mut connection = RawConnection::open(broker.port);
    let sender = connection.attach_sender("oversize-sender", "q");
    // A first message warms up the send path, so the baseline holds what any send allocates.
    let id = connection.send_message(sender, SMALL_SIZE, &mut || {});
    assert_eq!(connection.outcome(id, &mut || {}), Outcome::Accepted);

    let before = broker.rss_kib();
    let mut peak = before;
    let mut sample = || peak = peak.max(broker.rss_kib());
    let started = Instant::now();
    let id = connection.send_message(sender, message_size, &mut sample);
    let streamed = started.elapsed();
    let outcome = connection.outcome(id, &mut sample);
    let sent = connection.sent_when_settled(id);
    eprintln!(
        "{message_size} bytes streamed in {streamed:.2?}, answered after {sent:?} bytes; broker \
         VmRSS {before} KiB before, peak {peak} KiB (+{} KiB)",
        peak - before
    );

    let Outcome::Rejected {
        condition,
        description,
    } = outcome
    else {
        panic!("the {message_size} byte message was not rejected: {outcome:?}");
    };
    assert_eq!(condition, "amqp:link:message-size-exceeded");
    // The size is what had arrived when the message passed the limit.
    let size: u64 = description
        .strip_prefix(&format!("The received message (delivery-id:{id}, size:"))
        .and_then(|rest| {
            rest.split_once(&format!(
                " bytes) exceeds the limit ({limit} bytes) currently allowed on the link."
            ))
        })
        .and_then(|(size, _)| size.parse().ok())
        .unwrap_or_else(|| panic!("not Service Bus's text: {description}"));
    assert!(
        size > limit && size < limit + ANSWERED_WITHIN,
        "{description}"
    );
    assert!(
        sent.is_some_and(|sent| sent < limit + ANSWERED_WITHIN),
        "the rejection came after {sent:?} bytes were sent, not within {ANSWERED_WITHIN} past \
         the limit"
    );
    assert!(
        peak - before < max_growth_kib,
        "the broker's VmRSS grew by {} KiB while taking the {message_size} byte message",
        peak - before
    );

    let id = connection.send_message(sender, SMALL_SIZE, &mut || {});
    assert_eq!(connection.outcome(id, &mut || {}), Outcome::Accepted);
}
