//! The request parser on hostile and broken input: DTDs and entity tricks are refused without
//! expansion, nesting, size and element count are bounded, malformed XML and bad values are
//! clear errors (which become a 400 `<Error>`), and no input makes it panic (the cargo-fuzz
//! target `admin_entry` goes further, off CI).

#![allow(clippy::unwrap_used)]

mod common;

use busbar_admin::atom::{
    AtomError, EntityDescription, ErrorBody, ErrorContext, MAX_DEPTH, MAX_DOCUMENT_BYTES,
    MAX_ELEMENTS, QueueProperties, Timestamp, parse_entry,
};
use common::{assert_rewrite_is_stable, fixture, fixture_names};
use proptest::prelude::*;

const ENTRY_OPEN: &str = r#"<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">"#;
const ENTRY_CLOSE: &str = "</QueueDescription></content></entry>";

fn queue_body(children: &str) -> String {
    format!("{ENTRY_OPEN}{children}{ENTRY_CLOSE}")
}

fn parse_queue(children: &str) -> Result<QueueProperties, AtomError> {
    match parse_entry(queue_body(children).as_bytes())? {
        EntityDescription::Queue(queue) => Ok(queue.into_properties()),
        other => panic!("not a queue: {other:?}"),
    }
}

#[test]
fn every_trace_request_rewrites_stably() {
    for name in fixture_names("requests") {
        assert_rewrite_is_stable(&fixture("requests", &name));
    }
}

#[test]
fn billion_laughs_is_refused_not_expanded() {
    let mut dtd = String::from(r#"<!ENTITY lol0 "lol">"#);
    for level in 1..10 {
        let refs = format!("&lol{};", level - 1).repeat(10);
        dtd.push_str(&format!(r#"<!ENTITY lol{level} "{refs}">"#));
    }
    let body = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE entry [{dtd}]>{}",
        queue_body("<UserMetadata>&lol9;</UserMetadata>")
    );
    assert_eq!(parse_entry(body.as_bytes()), Err(AtomError::DocumentType));
}

#[test]
fn external_entities_are_refused() {
    let body = format!(
        r#"<!DOCTYPE entry [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>{}"#,
        queue_body("<UserMetadata>&xxe;</UserMetadata>")
    );
    assert_eq!(parse_entry(body.as_bytes()), Err(AtomError::DocumentType));
    assert_eq!(
        parse_entry(b"<!DOCTYPE entry SYSTEM \"http://example.invalid/x.dtd\"><entry/>"),
        Err(AtomError::DocumentType)
    );
}

#[test]
fn only_predefined_entities_and_character_references_resolve() {
    let queue =
        parse_queue("<UserMetadata>&lt;&gt;&amp;&apos;&quot;&#65;&#x42;</UserMetadata>").unwrap();
    assert_eq!(queue.user_metadata.as_deref(), Some("<>&'\"AB"));
    assert_eq!(
        parse_queue("<UserMetadata>&lol;</UserMetadata>"),
        Err(AtomError::UndefinedEntity {
            name: "lol".to_owned()
        })
    );
    assert!(matches!(
        parse_queue("<UserMetadata>&#0;</UserMetadata>"),
        Err(AtomError::Malformed { .. })
    ));
    assert!(matches!(
        parse_queue("<UserMetadata>&#xD800;</UserMetadata>"),
        Err(AtomError::Malformed { .. })
    ));
    assert!(matches!(
        parse_queue("<UserMetadata>&#xFFFE;</UserMetadata>"),
        Err(AtomError::Malformed { .. })
    ));
    assert!(matches!(
        parse_queue("<UserMetadata>a\u{1}b</UserMetadata>"),
        Err(AtomError::Malformed { .. })
    ));
}

#[test]
fn cdata_comments_processing_instructions_and_bom() {
    let body = format!(
        "\u{feff}<?xml version=\"1.0\"?><!-- c --><?pi x?>{}",
        queue_body("<UserMetadata><![CDATA[a<b]]>&amp;c<!-- d --></UserMetadata>")
    );
    let Ok(EntityDescription::Queue(queue)) = parse_entry(body.as_bytes()) else {
        panic!()
    };
    assert_eq!(queue.user_metadata.as_deref(), Some("a<b&c"));
}

#[test]
fn deep_nesting_is_bounded() {
    let depth = 100_000;
    let body = format!("{}{}", "<a>".repeat(depth), "</a>".repeat(depth));
    assert_eq!(
        parse_entry(body.as_bytes()),
        Err(AtomError::TooDeep { limit: MAX_DEPTH })
    );
}

#[test]
fn element_count_is_bounded() {
    let body = queue_body(&"<x/>".repeat(MAX_ELEMENTS));
    assert_eq!(
        parse_entry(body.as_bytes()),
        Err(AtomError::TooManyElements {
            limit: MAX_ELEMENTS
        })
    );
}

#[test]
fn size_is_bounded() {
    let padding = " ".repeat(MAX_DOCUMENT_BYTES);
    let body = queue_body(&padding);
    assert_eq!(
        parse_entry(body.as_bytes()),
        Err(AtomError::TooLarge {
            limit: MAX_DOCUMENT_BYTES
        })
    );
}

#[test]
fn malformed_documents_are_clear_errors() {
    let malformed = [
        "",
        "   ",
        "<entry",
        "<entry xmlns=\"http://www.w3.org/2005/Atom\">",
        "<a></b>",
        "</a>",
        "<a/><b/>",
        "text<a/>",
        "<a/>text",
        "<p:a/>",
        "<a x=\"1\" x=\"2\"/>",
        "<a x=1/>",
        "<a>&amp</a>",
    ];
    for body in malformed {
        assert!(
            matches!(
                parse_entry(body.as_bytes()),
                Err(AtomError::Malformed { .. })
            ),
            "{body:?}: {:?}",
            parse_entry(body.as_bytes())
        );
    }
    assert_eq!(parse_entry(&[0xff, 0xfe, b'<', 0]), Err(AtomError::NotUtf8));
}

#[test]
fn envelope_errors() {
    assert_eq!(
        parse_entry(b"<entry xmlns=\"urn:not-atom\"/>"),
        Err(AtomError::NotAnEntry {
            found: "entry".to_owned()
        })
    );
    assert_eq!(
        parse_entry(b"<feed xmlns=\"http://www.w3.org/2005/Atom\"/>"),
        Err(AtomError::NotAnEntry {
            found: "feed".to_owned()
        })
    );
    assert_eq!(
        parse_entry(b"<entry xmlns=\"http://www.w3.org/2005/Atom\"><content/></entry>"),
        Err(AtomError::MissingDescription)
    );
    let namespace_info = fixture("responses", "python_get_namespace_properties");
    assert_eq!(
        parse_entry(&namespace_info),
        Err(AtomError::UnsupportedDescription {
            name: "NamespaceInfo".to_owned()
        })
    );
}

#[test]
fn a_bare_description_is_accepted() {
    let body = br#"<QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"><MaxDeliveryCount>3</MaxDeliveryCount></QueueDescription>"#;
    let Ok(EntityDescription::Queue(queue)) = parse_entry(body) else {
        panic!()
    };
    assert_eq!(queue.max_delivery_count, Some(3));
}

#[test]
fn elements_are_matched_by_namespace_not_prefix() {
    // Java's TopicDescription writes `wstxns1:` prefixes (§6.1); any prefix works.
    let body = br#"<a:entry xmlns:a="http://www.w3.org/2005/Atom"><a:content type="application/xml"><wstxns1:TopicDescription xmlns:wstxns1="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"><wstxns1:MaxSizeInMegabytes>2048</wstxns1:MaxSizeInMegabytes><MaxSizeInMegabytes>1</MaxSizeInMegabytes><x:UserMetadata xmlns:x="urn:other">ignored</x:UserMetadata></wstxns1:TopicDescription></a:content></a:entry>"#;
    let Ok(EntityDescription::Topic(topic)) = parse_entry(body) else {
        panic!()
    };
    // The unprefixed MaxSizeInMegabytes is in no namespace, the UserMetadata in another one.
    assert_eq!(topic.max_size_in_megabytes, Some(2048));
    assert_eq!(topic.user_metadata, None);
}

#[test]
fn invalid_values_name_the_element() {
    let cases = [
        ("<LockDuration>one minute</LockDuration>", "LockDuration"),
        (
            "<MaxDeliveryCount>-1</MaxDeliveryCount>",
            "MaxDeliveryCount",
        ),
        (
            "<MaxSizeInMegabytes>1e3</MaxSizeInMegabytes>",
            "MaxSizeInMegabytes",
        ),
        ("<RequiresSession>yes</RequiresSession>", "RequiresSession"),
        ("<Status>Paused</Status>", "Status"),
        (
            "<AuthorizationRules><AuthorizationRule><Rights><AccessRights>Read</AccessRights></Rights></AuthorizationRule></AuthorizationRules>",
            "AccessRights",
        ),
    ];
    for (children, field) in cases {
        match parse_queue(children) {
            Err(AtomError::InvalidValue { field: got, .. }) => assert_eq!(got, field, "{children}"),
            other => panic!("{children}: {other:?}"),
        }
    }
}

fn rule_body(inner: &str) -> String {
    format!(
        r#"<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><RuleDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">{inner}<Name>r</Name></RuleDescription></content></entry>"#
    )
}

#[test]
fn invalid_rules_are_clear_errors() {
    let bogus_filter = rule_body(r#"<Filter i:type="BogusFilter"/>"#);
    assert!(matches!(
        parse_entry(bogus_filter.as_bytes()),
        Err(AtomError::InvalidValue { field, .. }) if field == "Filter i:type"
    ));
    let untyped_filter = rule_body("<Filter><SqlExpression>1=1</SqlExpression></Filter>");
    assert!(matches!(
        parse_entry(untyped_filter.as_bytes()),
        Err(AtomError::InvalidValue { .. })
    ));
    let no_expression =
        rule_body(r#"<Filter i:type="SqlFilter"><SqlExpression> </SqlExpression></Filter>"#);
    assert_eq!(
        parse_entry(no_expression.as_bytes()),
        Err(AtomError::MissingElement {
            element: "SqlExpression"
        })
    );
    let bad_value = rule_body(
        r#"<Filter i:type="SqlFilter"><SqlExpression>a = @a</SqlExpression><Parameters><KeyValueOfstringanyType><Key>@a</Key><Value xmlns:d="http://www.w3.org/2001/XMLSchema" i:type="d:int">x</Value></KeyValueOfstringanyType></Parameters></Filter>"#,
    );
    assert!(matches!(
        parse_entry(bad_value.as_bytes()),
        Err(AtomError::InvalidValue { field, .. }) if field == "Value"
    ));
    let no_key = rule_body(
        r#"<Filter i:type="CorrelationFilter"><Properties><KeyValueOfstringanyType><Value>v</Value></KeyValueOfstringanyType></Properties></Filter>"#,
    );
    assert_eq!(
        parse_entry(no_key.as_bytes()),
        Err(AtomError::MissingElement { element: "Key" })
    );
    let bad_action = rule_body(r#"<Action i:type="DeleteEverythingAction"/>"#);
    assert!(matches!(
        parse_entry(bad_action.as_bytes()),
        Err(AtomError::InvalidValue { .. })
    ));
}

#[test]
fn errors_become_the_service_error_body() {
    let error = parse_queue("<LockDuration>soon</LockDuration>").unwrap_err();
    let context = ErrorContext {
        tracking_id: "4a4d",
        system_tracker: "busbar",
        timestamp: Timestamp::parse("2026-11-24T19:14:36Z").unwrap(),
    };
    let body = ErrorBody::bad_request(&error, &context);
    assert_eq!(body.status, 400);
    assert_eq!(
        body.to_xml(),
        "<Error><Code>400</Code><Detail>SubCode=40000. invalid value \"soon\" for LockDuration: \
         expected an ISO 8601 duration such as PT1M. TrackingId:4a4d, SystemTracker:busbar, \
         Timestamp:2026-11-24T19:14:36</Detail></Error>"
    );
    // A quoted value is shortened, whatever was sent.
    let long = parse_queue(&format!(
        "<LockDuration>{}</LockDuration>",
        "x".repeat(10_000)
    ))
    .unwrap_err();
    assert!(long.to_string().len() < 200, "{long}");
}

/// Markup fragments from which random documents are assembled.
const TOKENS: &[&str] = &[
    "<entry xmlns=\"http://www.w3.org/2005/Atom\">",
    "</entry>",
    "<content type=\"application/xml\">",
    "</content>",
    "<QueueDescription xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\">",
    "</QueueDescription>",
    "<RuleDescription xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">",
    "</RuleDescription>",
    "<SubscriptionDescription xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\">",
    "</SubscriptionDescription>",
    "<DefaultRuleDescription>",
    "</DefaultRuleDescription>",
    "<Filter i:type=\"SqlFilter\">",
    "<Filter i:type=\"CorrelationFilter\">",
    "</Filter>",
    "<Action i:type=\"SqlRuleAction\">",
    "</Action>",
    "<SqlExpression>",
    "</SqlExpression>",
    "<Parameters>",
    "</Parameters>",
    "<KeyValueOfstringanyType><Key>k</Key>",
    "</KeyValueOfstringanyType>",
    "<Value i:type=\"d:int\" xmlns:d=\"http://www.w3.org/2001/XMLSchema\">",
    "</Value>",
    "<LockDuration>",
    "</LockDuration>",
    "<MaxDeliveryCount>",
    "</MaxDeliveryCount>",
    "<Status>",
    "</Status>",
    "PT1M",
    "P10675199DT2H48M5.4775807S",
    "42",
    "-1",
    "true",
    "Active",
    "&amp;",
    "&lol;",
    "&#x41;",
    "<![CDATA[<x>]]>",
    "<!DOCTYPE x>",
    "<!-- c -->",
    "<p:x>",
    "<x/>",
    "\u{feff}",
    "é",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..512)) {
        assert_rewrite_is_stable(&body);
    }

    #[test]
    fn token_soups_never_panic(tokens in proptest::collection::vec(proptest::sample::select(TOKENS), 0..64)) {
        assert_rewrite_is_stable(tokens.concat().as_bytes());
    }

    #[test]
    fn damaged_trace_bodies_never_panic(
        which in any::<proptest::sample::Index>(),
        cut in any::<proptest::sample::Index>(),
        flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let names = fixture_names("requests");
        let name: &String = which.get(&names);
        let mut body = fixture("requests", name);
        for (position, byte) in flips {
            let index = position.index(body.len());
            body[index] = byte;
        }
        let end = cut.index(body.len() + 1);
        assert_rewrite_is_stable(&body[..end]);
        assert_rewrite_is_stable(&body);
    }
}
