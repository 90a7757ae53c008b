//! Paging past 100 entities as each SDK pages (admin-api.md §5), and the 400s of validation:
//! names, property ranges, create-only properties, forwarding targets, bodies.

#![allow(clippy::unwrap_used)]

mod support;

use support::{
    Client, TestServer, entry_titles, next_link, queue_body, subscription_body, text_of, topic_body,
};

const V: &str = "?api-version=2021-05";

/// The path and query of an absolute link.
fn path_of(link: &str) -> &str {
    let after_scheme = link.split_once("://").map_or(link, |(_, rest)| rest);
    &after_scheme[after_scheme.find('/').unwrap()..]
}

async fn create_queues(client: &Client, count: usize) {
    for index in 0..count {
        let reply = client
            .put(&format!("/page-{index:03}{V}"), &queue_body(""))
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
}

#[tokio::test]
async fn paging_past_one_hundred_queues() {
    let server = TestServer::start().await;
    let client = server.client();
    create_queues(&client, 106).await;
    assert_eq!(
        client
            .put(&format!("/a-topic{V}"), &topic_body(""))
            .await
            .status,
        201
    );

    // JS and Go: no $top; follow rel="next".
    let first = client.get("/$Resources/Queues?api-version=2021-05").await;
    assert_eq!(first.status, 200);
    assert_eq!(
        first.content_type(),
        "application/atom+xml;type=feed;charset=utf-8"
    );
    let titles = entry_titles(&first.body);
    assert_eq!(titles.len(), 100);
    assert_eq!(titles[0], "page-000");
    assert_eq!(text_of(&first.body, "title"), Some("Queues"));
    let next = next_link(&first.body).expect("a next link");
    assert!(
        next.ends_with("?api-version=2021-05&$skip=100&$top=100"),
        "{next}"
    );
    // Python takes the feed's second link: it must be the next one.
    let links: Vec<&str> = first
        .body
        .match_indices("<link rel=")
        .map(|(at, _)| &first.body[at..at + 16])
        .take(2)
        .collect();
    assert_eq!(links, [r#"<link rel="self""#, r#"<link rel="next""#]);

    let second = client.get(path_of(&next)).await;
    let titles = entry_titles(&second.body);
    assert_eq!(titles.first().map(String::as_str), Some("page-100"));
    assert_eq!(titles.len(), 6, "queue lists hold queues only");
    assert_eq!(next_link(&second.body), None);

    // Go asks once more and stops at the empty page.
    let past = client
        .get("/$Resources/Queues?api-version=2024-05&%24skip=200")
        .await;
    assert_eq!(past.status, 200);
    assert!(entry_titles(&past.body).is_empty());

    // Python and Java: $skip and $top in the query.
    let python = client
        .get("/$Resources/queues?$skip=0&$top=100&api-version=2024-05")
        .await;
    assert_eq!(entry_titles(&python.body).len(), 100);
    let next = next_link(&python.body).unwrap();
    assert!(
        next.contains("$skip=100&$top=100&api-version=2024-05"),
        "{next}"
    );

    // Small pages partition the list.
    let mut seen = Vec::new();
    let mut path = "/$Resources/Queues?$top=7".to_owned();
    loop {
        let page = client.get(&path).await;
        seen.extend(entry_titles(&page.body));
        match next_link(&page.body) {
            Some(next) => path = path_of(&next).to_owned(),
            None => break,
        }
    }
    assert_eq!(seen, server.control.queue_names());

    for bad in ["$top=0", "$skip=-1", "$top=many"] {
        let reply = client.get(&format!("/$Resources/Queues?{bad}")).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert!(reply.body.contains("SubCode=40000"), "{}", reply.body);
    }
}

#[tokio::test]
async fn names_are_checked_as_service_bus_does() {
    let server = TestServer::start().await;
    let client = server.client();
    for path in [
        "/a@b",
        "/q*",
        "/a%5Cb",
        "/a//b",
        &format!("/{}", "x".repeat(261)),
    ] {
        let reply = client.put(&format!("{path}{V}"), &queue_body("")).await;
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        assert!(reply.body.contains("SubCode=40000."), "{}", reply.body);
    }
    // Names the emulator's pattern would refuse.
    for path in ["/-q", "/q.", "/a/b/c", &format!("/{}", "x".repeat(260))] {
        let reply = client.put(&format!("{path}{V}"), &queue_body("")).await;
        assert_eq!(reply.status, 201, "{path}: {}", reply.body);
    }
    assert_eq!(
        client.put(&format!("/t{V}"), &topic_body("")).await.status,
        201
    );
    let long = "s".repeat(51);
    let reply = client
        .put(
            &format!("/t/Subscriptions/{long}{V}"),
            &subscription_body(""),
        )
        .await;
    assert_eq!(reply.status, 400);
    // A GET of an invalid name is a 400 too, not the empty feed.
    assert_eq!(client.get(&format!("/a@b{V}")).await.status, 400);
}

#[tokio::test]
async fn property_ranges() {
    let server = TestServer::start().await;
    let client = server.client();
    for (children, property) in [
        ("<LockDuration>PT4S</LockDuration>", "LockDuration"),
        ("<LockDuration>PT5M1S</LockDuration>", "LockDuration"),
        ("<MaxDeliveryCount>0</MaxDeliveryCount>", "MaxDeliveryCount"),
        (
            "<DuplicateDetectionHistoryTimeWindow>PT19S</DuplicateDetectionHistoryTimeWindow>",
            "DuplicateDetectionHistoryTimeWindow",
        ),
        (
            "<DuplicateDetectionHistoryTimeWindow>P8D</DuplicateDetectionHistoryTimeWindow>",
            "DuplicateDetectionHistoryTimeWindow",
        ),
        (
            "<AutoDeleteOnIdle>PT4M</AutoDeleteOnIdle>",
            "AutoDeleteOnIdle",
        ),
        (
            "<DefaultMessageTimeToLive>PT0S</DefaultMessageTimeToLive>",
            "DefaultMessageTimeToLive",
        ),
        ("<LockDuration>soon</LockDuration>", "LockDuration"),
    ] {
        let reply = client.put(&format!("/q{V}"), &queue_body(children)).await;
        assert_eq!(reply.status, 400, "{children}");
        assert!(reply.body.contains(property), "{children}: {}", reply.body);
    }
    for children in [
        "<LockDuration>PT5S</LockDuration><MaxDeliveryCount>1</MaxDeliveryCount>",
        "<LockDuration>PT5M</LockDuration><RequiresDuplicateDetection>true</RequiresDuplicateDetection><DuplicateDetectionHistoryTimeWindow>P7D</DuplicateDetectionHistoryTimeWindow>",
    ] {
        let reply = client.delete(&format!("/q{V}")).await;
        assert!(matches!(reply.status, 200 | 404));
        let reply = client.put(&format!("/q{V}"), &queue_body(children)).await;
        assert_eq!(reply.status, 201, "{children}: {}", reply.body);
    }
    // Create-only properties may be re-sent unchanged, not changed.
    let same = client
        .update(
            &format!("/q{V}"),
            &queue_body("<RequiresDuplicateDetection>true</RequiresDuplicateDetection>"),
        )
        .await;
    assert_eq!(same.status, 200, "{}", same.body);
    let changed = client
        .update(
            &format!("/q{V}"),
            &queue_body("<RequiresSession>true</RequiresSession>"),
        )
        .await;
    assert_eq!(changed.status, 400);
    assert!(
        changed.body.contains("RequiresSession cannot be changed"),
        "{}",
        changed.body
    );
    // An update is validated as a whole.
    let bad = client
        .update(
            &format!("/q{V}"),
            &queue_body("<LockDuration>PT10M</LockDuration>"),
        )
        .await;
    assert_eq!(bad.status, 400);
}

#[tokio::test]
async fn forwarding_targets_must_exist() {
    let server = TestServer::start().await;
    let client = server.client();
    let to_nowhere = queue_body("<ForwardTo>sb://localhost:5300/q-min</ForwardTo>");
    let reply = client.put(&format!("/q-fwd{V}"), &to_nowhere).await;
    assert_eq!(reply.status, 400);
    assert!(
        reply
            .body
            .contains("\"q-min\", which is not an existing queue or topic"),
        "{}",
        reply.body
    );

    assert_eq!(
        client
            .put(&format!("/q-min{V}"), &queue_body(""))
            .await
            .status,
        201
    );
    assert_eq!(
        client.put(&format!("/t{V}"), &topic_body("")).await.status,
        201
    );
    // The four spellings of admin-api.md §0 item 6, and a topic as target.
    for (index, target) in [
        "sb://localhost:5300/q-min",
        "https://localhost/q-min",
        "http://localhost/q-min",
        "q-min",
        "sb://localhost:5300/T",
    ]
    .into_iter()
    .enumerate()
    {
        let body = queue_body(&format!(
            "<ForwardTo>{target}</ForwardTo><ForwardDeadLetteredMessagesTo>{target}</ForwardDeadLetteredMessagesTo>"
        ));
        let reply = client.put(&format!("/q-fwd-{index}{V}"), &body).await;
        assert_eq!(reply.status, 201, "{target}: {}", reply.body);
        // The value is echoed as sent.
        assert_eq!(text_of(&reply.body, "ForwardTo"), Some(target));
    }
    let to_self = client
        .put(
            &format!("/q-self{V}"),
            &queue_body("<ForwardTo>q-self</ForwardTo>"),
        )
        .await;
    assert_eq!(to_self.status, 400);

    let subscription = subscription_body("<ForwardTo>sb://localhost:5300/q-min</ForwardTo>");
    assert_eq!(
        client
            .put(&format!("/t/Subscriptions/s{V}"), &subscription)
            .await
            .status,
        201
    );
    let dangling =
        subscription_body("<ForwardDeadLetteredMessagesTo>gone</ForwardDeadLetteredMessagesTo>");
    assert_eq!(
        client
            .update(&format!("/t/Subscriptions/s{V}"), &dangling)
            .await
            .status,
        400
    );
}

#[tokio::test]
async fn bodies_that_are_not_the_right_description() {
    let server = TestServer::start().await;
    let client = server.client();
    assert_eq!(
        client.put(&format!("/t{V}"), &topic_body("")).await.status,
        201
    );
    for (path, body) in [
        ("/q", subscription_body("")),
        ("/t/Subscriptions/s", queue_body("")),
        ("/t/Subscriptions/s/Rules/r", topic_body("")),
        (
            "/q",
            "<entry xmlns=\"http://www.w3.org/2005/Atom\">".to_owned(),
        ),
        ("/q", String::new()),
        ("/q", "not xml at all".to_owned()),
    ] {
        let reply = client.put(&format!("{path}{V}"), &body).await;
        assert_eq!(reply.status, 400, "{path} {body}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/xml; charset=utf-8");
        assert!(
            reply
                .body
                .starts_with("<Error><Code>400</Code><Detail>SubCode=40000."),
            "{}",
            reply.body
        );
    }
}
