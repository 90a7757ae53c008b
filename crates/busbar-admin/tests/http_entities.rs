//! Create, read, update and delete of every kind of entity over HTTP, against the in-memory
//! control: status codes, the two not-found shapes, conflicts, and what the entries carry
//! (admin-api.md §4, §9).

#![allow(clippy::unwrap_used)]

mod support;

use support::{
    NAMESPACE, TestServer, entry_titles, queue_body, rule_body, sql_rule_body, subscription_body,
    text_of, topic_body,
};

const V: &str = "?api-version=2021-05";

#[tokio::test]
async fn namespace_info_and_health() {
    let server = TestServer::start().await;
    let reply = server.client().get(&format!("/$namespaceinfo{V}")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.content_type(),
        "application/atom+xml;type=entry;charset=utf-8"
    );
    assert_eq!(text_of(&reply.body, "Name"), Some(NAMESPACE));
    assert_eq!(text_of(&reply.body, "MessagingSKU"), Some("Standard"));
    assert_eq!(text_of(&reply.body, "title"), Some(NAMESPACE));
    let port = server.addr.port();
    assert_eq!(
        text_of(&reply.body, "id"),
        Some(format!("http://localhost:{port}/$namespaceinfo?api-version=2021-05").as_str())
    );

    // The probe needs no token.
    let health = server.client().with_token(None).get("/health").await;
    assert_eq!(health.status, 200);
    assert_eq!(health.content_type(), "application/json");
    assert_eq!(
        health.body,
        r#"{"status":"healthy","message":"Service is healthy.","testControls":false}"#
    );
}

#[tokio::test]
async fn queue_lifecycle() {
    let server = TestServer::start().await;
    let client = server.client();
    let created = client
        .put(
            &format!("/q-full{V}"),
            &queue_body("<LockDuration>PT45S</LockDuration><MaxDeliveryCount>7</MaxDeliveryCount>"),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.content_type(),
        "application/atom+xml;type=entry;charset=utf-8"
    );
    assert_eq!(text_of(&created.body, "title"), Some("q-full"));
    assert_eq!(text_of(&created.body, "name"), Some(NAMESPACE), "author");
    assert_eq!(text_of(&created.body, "LockDuration"), Some("PT45S"));
    assert_eq!(text_of(&created.body, "MaxDeliveryCount"), Some("7"));
    assert_eq!(text_of(&created.body, "ActiveMessageCount"), Some("0"));

    let again = client.put(&format!("/q-full{V}"), &queue_body("")).await;
    assert_eq!(again.status, 409);
    assert_eq!(again.content_type(), "application/xml; charset=utf-8");
    assert!(
        again
            .body
            .starts_with("<Error><Code>409</Code><Detail>SubCode=40900."),
        "{}",
        again.body
    );

    // Names are case-insensitive; the entry keeps the created spelling.
    let read = client.get("/Q-FULL?enrich=false&api-version=2024-05").await;
    assert_eq!(read.status, 200);
    assert_eq!(text_of(&read.body, "title"), Some("q-full"));

    // An update keeps what the body leaves out.
    let updated = client
        .update(
            &format!("/q-full{V}"),
            &queue_body("<MaxDeliveryCount>3</MaxDeliveryCount>"),
        )
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(text_of(&updated.body, "MaxDeliveryCount"), Some("3"));
    assert_eq!(text_of(&updated.body, "LockDuration"), Some("PT45S"));
    let read = client.get(&format!("/q-full{V}")).await;
    assert_eq!(text_of(&read.body, "MaxDeliveryCount"), Some("3"));

    let deleted = client.delete(&format!("/q-full{V}")).await;
    assert_eq!((deleted.status, deleted.body.as_str()), (200, ""));

    // A missing queue is 200 with the empty feed; deleting or updating it is 404.
    let missing = client.get(&format!("/q-full{V}")).await;
    assert_eq!(missing.status, 200);
    assert_eq!(
        missing.content_type(),
        "application/atom+xml;type=feed;charset=utf-8"
    );
    assert_eq!(
        text_of(&missing.body, "title"),
        Some("Publicly Listed Services")
    );
    assert!(!missing.body.contains("<entry"));
    let gone = client.delete(&format!("/q-full{V}")).await;
    assert_eq!(gone.status, 404);
    assert!(
        gone.body.contains("Entity 'q-full' was not found."),
        "{}",
        gone.body
    );
    let update_missing = client.update(&format!("/q-full{V}"), &queue_body("")).await;
    assert_eq!(update_missing.status, 404);
}

#[tokio::test]
async fn queues_and_topics_share_one_name_space() {
    let server = TestServer::start().await;
    let client = server.client();
    let topic = client
        .put(
            &format!("/t{V}"),
            &topic_body("<DefaultMessageTimeToLive>PT1H</DefaultMessageTimeToLive>"),
        )
        .await;
    assert_eq!(topic.status, 201, "{}", topic.body);
    assert!(topic.body.contains("<TopicDescription "));
    assert_eq!(
        client.put(&format!("/T{V}"), &queue_body("")).await.status,
        409
    );
    let queue = client.put(&format!("/orders/eu{V}"), &queue_body("")).await;
    assert_eq!(queue.status, 201, "{}", queue.body);
    assert_eq!(
        client
            .put(&format!("/orders/EU{V}"), &topic_body(""))
            .await
            .status,
        409
    );

    let read = client.get(&format!("/t{V}")).await;
    assert_eq!(read.status, 200);
    assert_eq!(
        text_of(&read.body, "DefaultMessageTimeToLive"),
        Some("PT1H")
    );
    assert_eq!(text_of(&read.body, "SubscriptionCount"), Some("0"));
    let updated = client
        .update(
            &format!("/t{V}"),
            &topic_body("<Status>SendDisabled</Status>"),
        )
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(text_of(&updated.body, "Status"), Some("SendDisabled"));
    assert_eq!(
        text_of(&updated.body, "DefaultMessageTimeToLive"),
        Some("PT1H")
    );

    // A queue body cannot update a topic.
    assert_eq!(
        client
            .update(&format!("/t{V}"), &queue_body(""))
            .await
            .status,
        404
    );

    let lists = client.get(&format!("/$Resources/Topics{V}")).await;
    assert_eq!(entry_titles(&lists.body), ["t"]);
    let lists = client.get(&format!("/$Resources/Queues{V}")).await;
    assert_eq!(entry_titles(&lists.body), ["orders/eu"]);

    assert_eq!(client.delete(&format!("/t{V}")).await.status, 200);
    assert_eq!(client.delete(&format!("/orders/eu{V}")).await.status, 200);
    let lists = client.get(&format!("/$Resources/Topics{V}")).await;
    assert_eq!(entry_titles(&lists.body), Vec::<String>::new());
}

#[tokio::test]
async fn subscription_lifecycle() {
    let server = TestServer::start().await;
    let client = server.client();
    assert_eq!(
        client.put(&format!("/t{V}"), &topic_body("")).await.status,
        201
    );

    let path = "/t/Subscriptions/s?api-version=2024-05";
    let created = client
        .put(
            path,
            &subscription_body(
                "<LockDuration>PT30S</LockDuration><RequiresSession>true</RequiresSession>",
            ),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(text_of(&created.body, "title"), Some("s"));
    assert!(
        !created.body.contains("<author>"),
        "subscriptions have no author"
    );
    let port = server.addr.port();
    assert_eq!(
        text_of(&created.body, "id"),
        Some(format!("http://localhost:{port}/t/Subscriptions/s?api-version=2024-05").as_str())
    );
    assert_eq!(client.put(path, &subscription_body("")).await.status, 409);

    // Without a DefaultRuleDescription the subscription gets `$Default`, true, no action.
    let rules = client
        .get("/t/Subscriptions/s/Rules/?api-version=2021-05")
        .await;
    assert_eq!(rules.status, 200);
    assert_eq!(entry_titles(&rules.body), ["$Default"]);
    assert!(
        rules
            .body
            .contains(r#"<Filter i:type="TrueFilter"><SqlExpression>1=1</SqlExpression>"#)
    );
    assert!(rules.body.contains(r#"<Action i:type="EmptyRuleAction"/>"#));
    assert!(rules.body.contains(&format!(
        "<id>http://localhost:{port}/t/Subscriptions/s/Rules/$Default?api-version=2021-05</id>"
    )));

    // Python spells the path in lower case; the id echoes it.
    let read = client
        .get("/t/subscriptions/s?enrich=false&api-version=2024-05")
        .await;
    assert_eq!(read.status, 200);
    assert_eq!(
        text_of(&read.body, "id"),
        Some(format!("http://localhost:{port}/t/subscriptions/s?api-version=2024-05").as_str())
    );
    let topic = client.get(&format!("/t{V}")).await;
    assert_eq!(text_of(&topic.body, "SubscriptionCount"), Some("1"));

    let updated = client
        .update(
            path,
            &subscription_body("<MaxDeliveryCount>2</MaxDeliveryCount>"),
        )
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(text_of(&updated.body, "MaxDeliveryCount"), Some("2"));
    assert_eq!(text_of(&updated.body, "LockDuration"), Some("PT30S"));

    // A missing subscription is a 404 Error, unlike a missing queue.
    let missing = client
        .get("/t/Subscriptions/nope?api-version=2021-05")
        .await;
    assert_eq!(missing.status, 404);
    assert!(
        missing.body.contains("Entity 't|nope' was not found."),
        "{}",
        missing.body
    );
    let orphan = client
        .put(
            "/no-topic/Subscriptions/s?api-version=2021-05",
            &subscription_body(""),
        )
        .await;
    assert_eq!(orphan.status, 404);
    let listing_orphan = client
        .get("/no-topic/Subscriptions?api-version=2021-05")
        .await;
    assert_eq!(listing_orphan.status, 404);

    let listed = client.get("/t/Subscriptions/?api-version=2021-05").await;
    assert_eq!(entry_titles(&listed.body), ["s"]);

    assert_eq!(client.delete(path).await.status, 200);
    assert_eq!(client.delete(path).await.status, 404);
    assert_eq!(client.get(path).await.status, 404);
}

#[tokio::test]
async fn a_described_default_rule_replaces_the_true_one() {
    let server = TestServer::start().await;
    let client = server.client();
    assert_eq!(
        client.put(&format!("/t{V}"), &topic_body("")).await.status,
        201
    );
    // JS puts DefaultRuleDescription first; its rule has no Name, so it is `$Default`.
    let body = subscription_body(
        r#"<DefaultRuleDescription><Filter i:type="SqlFilter"><SqlExpression>color = 'red'</SqlExpression></Filter></DefaultRuleDescription><LockDuration>PT1M</LockDuration>"#,
    );
    assert_eq!(
        client
            .put(&format!("/t/Subscriptions/s{V}"), &body)
            .await
            .status,
        201
    );
    let rule = client
        .get(&format!("/t/Subscriptions/s/Rules/$Default{V}"))
        .await;
    assert_eq!(rule.status, 200, "{}", rule.body);
    assert_eq!(text_of(&rule.body, "SqlExpression"), Some("color = 'red'"));

    let named = subscription_body(
        r#"<DefaultRuleDescription><Filter i:type="FalseFilter"/><Name>first</Name></DefaultRuleDescription>"#,
    );
    assert_eq!(
        client
            .put(&format!("/t/Subscriptions/s2{V}"), &named)
            .await
            .status,
        201
    );
    let rules = client.get(&format!("/t/Subscriptions/s2/Rules{V}")).await;
    assert_eq!(entry_titles(&rules.body), ["first"]);
}

#[tokio::test]
async fn rule_lifecycle() {
    let server = TestServer::start().await;
    let client = server.client();
    assert_eq!(
        client.put(&format!("/t{V}"), &topic_body("")).await.status,
        201
    );
    assert_eq!(
        client
            .put(&format!("/t/Subscriptions/s{V}"), &subscription_body(""))
            .await
            .status,
        201
    );

    let path = format!("/t/Subscriptions/s/Rules/r-sql{V}");
    let created = client.put(&path, &sql_rule_body("size &gt; 3")).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(text_of(&created.body, "Name"), Some("r-sql"));
    assert_eq!(text_of(&created.body, "SqlExpression"), Some("size &gt; 3"));
    assert!(
        created
            .body
            .contains(r#"<Action i:type="EmptyRuleAction"/>"#)
    );
    assert_eq!(client.put(&path, &sql_rule_body("1=1")).await.status, 409);

    let correlation = rule_body(
        r#"<Filter i:type="CorrelationFilter"><CorrelationId>cid</CorrelationId><Label>lbl</Label></Filter>"#,
    );
    let path_corr = format!("/t/subscriptions/s/rules/r-corr{V}");
    assert_eq!(client.put(&path_corr, &correlation).await.status, 201);
    let read = client.get(&path_corr).await;
    assert_eq!(read.status, 200);
    assert_eq!(text_of(&read.body, "CorrelationId"), Some("cid"));

    let updated = client.update(&path, &sql_rule_body("size &lt; 3")).await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(text_of(&updated.body, "SqlExpression"), Some("size &lt; 3"));

    let rules = client.get(&format!("/t/Subscriptions/s/Rules{V}")).await;
    assert_eq!(entry_titles(&rules.body), ["$Default", "r-corr", "r-sql"]);

    let missing = client
        .get(&format!("/t/Subscriptions/s/Rules/nope{V}"))
        .await;
    assert_eq!(missing.status, 404);
    assert!(
        missing.body.contains("Entity 't|s|nope' was not found."),
        "{}",
        missing.body
    );
    let update_missing = client
        .update(
            &format!("/t/Subscriptions/s/Rules/nope{V}"),
            &sql_rule_body("1=1"),
        )
        .await;
    assert_eq!(update_missing.status, 404);
    let orphan = client
        .put(
            &format!("/t/Subscriptions/none/Rules/r{V}"),
            &sql_rule_body("1=1"),
        )
        .await;
    assert_eq!(orphan.status, 404);

    assert_eq!(client.delete(&path).await.status, 200);
    assert_eq!(client.delete(&path).await.status, 404);

    // Deleting the topic takes its subscriptions and rules with it.
    assert_eq!(client.delete(&format!("/t{V}")).await.status, 200);
    assert_eq!(
        client.put(&format!("/t{V}"), &topic_body("")).await.status,
        201
    );
    assert_eq!(
        client.get(&format!("/t/Subscriptions/s{V}")).await.status,
        404
    );
}
