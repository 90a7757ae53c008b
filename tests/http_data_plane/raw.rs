//! Raw HTTP requests: batches, receive-and-delete, a lock lost to a clock advance (410 as the
//! service answers), a scheduled send and a TTL coming due with the clock, a long poll that other requests do not wait behind, and bad input refused
//! with the service's 4xx while the broker keeps serving. (That a shutdown ends a long poll is
//! checked in busbar-admin's tests, where the wait is observable.)

use std::time::{SystemTime, UNIX_EPOCH};

use busbar_admin::atom::Timestamp;
use busbar_admin::data_plane::broker_properties::format_date;
use hyper::{Method, StatusCode};

use crate::http::Http;
use crate::support::Broker;

const BATCH: &str = "application/vnd.microsoft.servicebus.json";

#[tokio::test]
async fn a_batch_arrives_in_order_with_its_properties() {
    let broker = Broker::default_with_test_controls();
    let http = Http::new(broker.admin_port);
    let batch = r#"[
        {"Body":"one","BrokerProperties":{"MessageId":"m1","Label":"first"},"UserProperties":{"n":1}},
        {"Body":"two","BrokerProperties":{"MessageId":"m2","SessionId":"s"},"UserProperties":{"ok":true}},
        {"Body":"three"}
    ]"#;
    let sent = http
        .send(
            Method::POST,
            "/queue.1/messages",
            &[("content-type", BATCH)],
            batch,
        )
        .await;
    assert_eq!(sent.status, StatusCode::CREATED, "{sent:?}");
    let mut received = Vec::new();
    for _ in 0..3 {
        // A zero wait still takes a message that is there.
        let reply = http
            .send(Method::DELETE, "/queue.1/messages/head?timeout=0", &[], "")
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        assert_eq!(reply.header("location"), None);
        received.push(reply);
    }
    let bodies: Vec<&[u8]> = received.iter().map(|reply| &reply.body[..]).collect();
    assert_eq!(bodies, [&b"one"[..], b"two", b"three"]);
    let first = received[0].broker_properties();
    assert_eq!(first["MessageId"], "m1");
    assert_eq!(first["Label"], "first");
    assert_eq!(first["DeliveryCount"], 1);
    assert!(first.get("LockToken").is_none());
    assert_eq!(received[0].header("n"), Some("1"));
    assert_eq!(received[1].broker_properties()["SessionId"], "s");
    assert_eq!(received[1].header("ok"), Some("true"));
    let sequences: Vec<i64> = received
        .iter()
        .map(|reply| {
            reply.broker_properties()["SequenceNumber"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert!(sequences.windows(2).all(|pair| pair[0] < pair[1]));
    let empty = http
        .send(Method::DELETE, "/queue.1/messages/head?timeout=0", &[], "")
        .await;
    assert_eq!(empty.status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn a_lock_that_expired_is_gone_on_complete_and_renew() {
    let broker = Broker::default_with_test_controls();
    let http = Http::new(broker.admin_port);
    let sent = http
        .send(Method::POST, "/queue.1/messages", &[], "late")
        .await;
    assert_eq!(sent.status, StatusCode::CREATED);
    let locked = http
        .send(Method::POST, "/queue.1/messages/head?timeout=5", &[], "")
        .await;
    assert_eq!(locked.status, StatusCode::CREATED, "{locked:?}");
    let location = locked.header("location").unwrap().to_owned();
    let properties = locked.broker_properties();
    assert!(location.ends_with(&format!(
        "/queue.1/messages/{}/{}",
        properties["SequenceNumber"],
        properties["LockToken"].as_str().unwrap()
    )));
    let renewed = http.send(Method::POST, &location, &[], "").await;
    assert_eq!(renewed.status, StatusCode::OK, "{renewed:?}");
    assert!(renewed.broker_properties()["LockedUntilUtc"].is_string());

    // Past every lock duration Service Bus allows (5 min), well within the message's TTL.
    http.advance_clock("6m").await;
    let completed = http.send(Method::DELETE, &location, &[], "").await;
    assert_eq!(completed.status, StatusCode::GONE, "{completed:?}");
    let renewed = http.send(Method::POST, &location, &[], "").await;
    assert_eq!(renewed.status, StatusCode::GONE);
    // The expired lock put the message back, its delivery counted.
    let again = http
        .send(Method::POST, "/queue.1/messages/head?timeout=5", &[], "")
        .await;
    assert_eq!(again.body, "late");
    assert_eq!(again.broker_properties()["DeliveryCount"], 2);
    let location = again.header("location").unwrap();
    let unknown = location.rsplit_once('/').unwrap().0.to_owned() + "/" + &uuid_zero();
    assert_eq!(
        http.send(Method::DELETE, &unknown, &[], "").await.status,
        StatusCode::GONE
    );
    let completed = http.send(Method::DELETE, location, &[], "").await;
    assert_eq!(completed.status, StatusCode::OK);
}

fn uuid_zero() -> String {
    "00000000-0000-0000-0000-000000000000".to_owned()
}

#[tokio::test]
async fn a_scheduled_send_comes_due_with_the_clock_and_a_ttl_expires() {
    let broker = Broker::default_with_test_controls();
    let http = Http::new(broker.admin_port);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let in_an_hour =
        Timestamp::from_unix_millis(i64::try_from(now.as_millis()).unwrap() + 3_600_000);
    let in_an_hour = format_date(in_an_hour);
    let scheduled = format!(r#"{{"MessageId":"later","ScheduledEnqueueTimeUtc":"{in_an_hour}"}}"#);
    let sent = http
        .send(
            Method::POST,
            "/queue.1/messages",
            &[("brokerproperties", &scheduled)],
            "later",
        )
        .await;
    assert_eq!(sent.status, StatusCode::CREATED, "{sent:?}");
    let short_lived = r#"{"MessageId":"brief","TimeToLive":60}"#;
    let sent = http
        .send(
            Method::POST,
            "/queue.1/messages",
            &[("brokerproperties", short_lived)],
            "brief",
        )
        .await;
    assert_eq!(sent.status, StatusCode::CREATED);
    let head = "/queue.1/messages/head?timeout=0";
    let early = http.send(Method::POST, head, &[], "").await;
    assert_eq!(early.broker_properties()["MessageId"], "brief");
    assert_eq!(early.broker_properties()["TimeToLive"], 60.0);
    let unlocked = http
        .send(Method::PUT, early.header("location").unwrap(), &[], "")
        .await;
    assert_eq!(unlocked.status, StatusCode::OK);

    // 90 minutes on: the scheduled message is due (and within queue.1's one-hour TTL from
    // then), the 60 s one has expired.
    http.advance_clock("5400s").await;
    let due = http.send(Method::DELETE, head, &[], "").await;
    assert_eq!(due.status, StatusCode::OK, "{due:?}");
    assert_eq!(due.body, "later");
    assert_eq!(
        due.broker_properties()["ScheduledEnqueueTimeUtc"],
        in_an_hour.as_str()
    );
    let none = http.send(Method::DELETE, head, &[], "").await;
    assert_eq!(none.status, StatusCode::NO_CONTENT, "{none:?}");
}

#[tokio::test]
async fn a_long_poll_waits_for_a_send_without_holding_up_other_requests() {
    let broker = Broker::default_with_test_controls();
    let http = Http::new(broker.admin_port);
    let waiting = http.send(Method::POST, "/queue.1/messages/head?timeout=60", &[], "");
    let sending = async {
        let sent = http
            .send(Method::POST, "/queue.1/messages", &[], "awaited")
            .await;
        assert_eq!(sent.status, StatusCode::CREATED);
    };
    let (received, ()) = tokio::join!(waiting, sending);
    assert_eq!(received.status, StatusCode::CREATED);
    assert_eq!(received.body, "awaited");
}

#[tokio::test]
async fn bad_requests_get_the_service_answers_and_the_broker_keeps_serving() {
    let broker = Broker::default_with_test_controls();
    let http = Http::new(broker.admin_port);
    let unsigned = http
        .unsigned()
        .send(Method::POST, "/queue.1/messages", &[], "x")
        .await;
    assert_eq!(unsigned.status, StatusCode::UNAUTHORIZED);
    let bad_token = http
        .unsigned()
        .send(
            Method::POST,
            "/queue.1/messages",
            &[(
                "authorization",
                "SharedAccessSignature sr=x&sig=y&se=1&skn=z",
            )],
            "x",
        )
        .await;
    assert_eq!(bad_token.status, StatusCode::UNAUTHORIZED);
    for (path, method) in [
        ("/nowhere/messages", Method::POST),
        ("/nowhere/messages/head?timeout=0", Method::POST),
        (
            "/topic.1/subscriptions/nobody/messages/head?timeout=0",
            Method::DELETE,
        ),
    ] {
        let reply = http.send(method, path, &[], "x").await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}: {reply:?}");
    }
    for properties in ["{", "[]", r#"{"TimeToLive":"soon"}"#, r#"{"MessageId":7}"#] {
        let reply = http
            .send(
                Method::POST,
                "/queue.1/messages",
                &[("brokerproperties", properties)],
                "x",
            )
            .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{properties}");
    }
    let bad_batch = http
        .send(
            Method::POST,
            "/queue.1/messages",
            &[("content-type", BATCH)],
            "[{",
        )
        .await;
    assert_eq!(bad_batch.status, StatusCode::BAD_REQUEST);
    let oversize = http
        .send(
            Method::POST,
            "/queue.1/messages",
            &[],
            vec![b'x'; 256 * 1024 + 1],
        )
        .await;
    assert_eq!(oversize.status, StatusCode::PAYLOAD_TOO_LARGE);
    for (method, path) in [
        (Method::DELETE, "/queue.1/messages/1/not-a-guid"),
        (Method::POST, "/queue.1/messages/head?timeout=soon"),
        (Method::POST, "/topic.1/messages/head?timeout=0"),
        (
            Method::POST,
            "/topic.1/subscriptions/subscription.1/messages",
        ),
    ] {
        let reply = http.send(method, path, &[], "").await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{path}: {reply:?}");
    }
    // Still serving: a send and a receive go through.
    let sent = http
        .send(Method::POST, "/queue.1/messages", &[], "still here")
        .await;
    assert_eq!(sent.status, StatusCode::CREATED);
    let received = http
        .send(Method::DELETE, "/queue.1/messages/head?timeout=5", &[], "")
        .await;
    assert_eq!(received.body, "still here");
}
