//! Table-driven tests of address normalisation, with the strings the SDKs really send.

use super::*;

fn queue(name: &str, sub_queue: SubQueue) -> EntityNode {
    EntityNode {
        path: EntityPath::QueueOrTopic(EntityName::from(name)),
        sub_queue,
    }
}

fn subscription(topic: &str, name: &str, sub_queue: SubQueue) -> EntityNode {
    EntityNode {
        path: EntityPath::Subscription {
            topic: EntityName::from(topic),
            subscription: EntityName::from(name),
        },
        sub_queue,
    }
}

#[test]
fn every_form_the_sdks_send_is_recognised() {
    use SubQueue::*;
    let table: Vec<(&str, Address)> = vec![
        // Python (traces): full URI with amqps scheme and port, even in emulator mode.
        (
            "amqps://localhost:5673/q-basic",
            Address::Entity(queue("q-basic", Active)),
        ),
        (
            "amqp://localhost/q-basic",
            Address::Entity(queue("q-basic", Active)),
        ),
        // .NET: absolute path with a leading slash.
        ("/q", Address::Entity(queue("q", Active))),
        // JavaScript: bare relative path.
        ("q", Address::Entity(queue("q", Active))),
        (
            "q-basic/$management",
            Address::Management(queue("q-basic", Active)),
        ),
        (
            "q/$DeadLetterQueue",
            Address::Entity(queue("q", DeadLetter)),
        ),
        (
            "q/$DeadLetterQueue/$management",
            Address::Management(queue("q", DeadLetter)),
        ),
        (
            "q/$Transfer/$DeadLetterQueue",
            Address::Entity(queue("q", TransferDeadLetter)),
        ),
        (
            "q/$Transfer/$DeadLetterQueue/$management",
            Address::Management(queue("q", TransferDeadLetter)),
        ),
        ("topic.1", Address::Entity(queue("topic.1", Active))),
        (
            "topic.1/Subscriptions/subscription.1",
            Address::Entity(subscription("topic.1", "subscription.1", Active)),
        ),
        (
            "topic.1/subscriptions/subscription.1",
            Address::Entity(subscription("topic.1", "subscription.1", Active)),
        ),
        (
            "amqps://localhost:5673/t/Subscriptions/s/$DeadLetterQueue",
            Address::Entity(subscription("t", "s", DeadLetter)),
        ),
        (
            "/t/SUBSCRIPTIONS/s/$management",
            Address::Management(subscription("t", "s", Active)),
        ),
        (
            "t/Subscriptions/s/$deadletterqueue/$MANAGEMENT",
            Address::Management(subscription("t", "s", DeadLetter)),
        ),
        // Names with slashes: the topic part may contain them.
        (
            "a/b/Subscriptions/s",
            Address::Entity(subscription("a/b", "s", Active)),
        ),
        ("orders/eu", Address::Entity(queue("orders/eu", Active))),
        // .NET escapes the path; `%24` is `$`, `%2F` is `/`.
        (
            "/q%2Dx/%24management",
            Address::Management(queue("q-x", Active)),
        ),
        (
            "q%2F%24DeadLetterQueue",
            Address::Entity(queue("q", DeadLetter)),
        ),
        ("$cbs", Address::Cbs),
        ("/$cbs", Address::Cbs),
        ("amqp://localhost/$cbs", Address::Cbs),
        ("$CBS", Address::Cbs),
    ];
    for (raw, expected) in table {
        assert_eq!(Address::parse(raw), Ok(expected), "{raw}");
    }
}

#[test]
fn entity_names_compare_case_insensitively() {
    assert_eq!(
        Address::parse("Q-Basic"),
        Address::parse("amqps://localhost/q-basic")
    );
    assert_eq!(
        Address::parse("T/Subscriptions/S"),
        Address::parse("t/subscriptions/s")
    );
}

#[test]
fn malformed_addresses_are_refused_with_the_reason() {
    use AddressProblem::*;
    let table = [
        ("", Empty),
        ("/", Empty),
        ("amqps://localhost:5673", Empty),
        ("amqps://localhost:5673/", Empty),
        ("$management", Empty),
        ("$DeadLetterQueue", Empty),
        ("q//x", EmptySegment),
        ("q/", EmptySegment),
        ("//q", EmptySegment),
        ("q%2", InvalidPercentEncoding),
        ("q%zz", InvalidPercentEncoding),
        ("t/Subscriptions", MissingSubscriptionName),
        ("t/Subscriptions/$DeadLetterQueue", MissingSubscriptionName),
        ("q/$Transfer", TransferWithoutDeadLetter),
        ("q/$Transfer/$management", TransferWithoutDeadLetter),
        ("q/$foo", UnexpectedSystemSegment("$foo".into())),
        ("$cbs/$management", UnexpectedSystemSegment("$cbs".into())),
        (
            "q/$management/$DeadLetterQueue",
            UnexpectedSystemSegment("$management".into()),
        ),
        (
            "q/$DeadLetterQueue/$DeadLetterQueue",
            UnexpectedSystemSegment("$DeadLetterQueue".into()),
        ),
    ];
    for (raw, problem) in table {
        let expected = AddressError {
            address: raw.to_owned(),
            problem,
        };
        assert_eq!(Address::parse(raw), Err(expected), "{raw}");
    }
}

#[test]
fn error_message_quotes_the_address() {
    let error = Address::parse("q//x").unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"malformed address "q//x": empty path segment"#
    );
}

#[test]
fn display_gives_the_canonical_node_name() {
    for (raw, canonical) in [
        ("amqps://localhost:5673/q-basic", "q-basic"),
        (
            "/t/subscriptions/s/$deadletterqueue/$MANAGEMENT",
            "t/Subscriptions/s/$DeadLetterQueue/$management",
        ),
        (
            "q/$transfer/$deadletterqueue",
            "q/$Transfer/$DeadLetterQueue",
        ),
        ("/$cbs", "$cbs"),
    ] {
        assert_eq!(Address::parse(raw).unwrap().to_string(), canonical, "{raw}");
    }
}

#[test]
fn kind_and_entity_node() {
    let management = Address::parse("q/$management").unwrap();
    assert_eq!(management.kind(), NodeKind::Management);
    assert_eq!(
        management.entity_node(),
        Some(&queue("q", SubQueue::Active))
    );
    assert_eq!(Address::parse("q").unwrap().kind(), NodeKind::Entity);
    assert_eq!(Address::Cbs.kind(), NodeKind::Cbs);
    assert_eq!(Address::Cbs.entity_node(), None);
}

#[test]
fn path_of_strips_scheme_authority_and_one_leading_slash() {
    assert_eq!(path_of("sb://localhost:5673/q-basic"), "q-basic");
    assert_eq!(path_of("sb://localhost/"), "");
    assert_eq!(path_of("sb://localhost"), "");
    assert_eq!(path_of("/q/$management"), "q/$management");
    assert_eq!(path_of("q"), "q");
}
