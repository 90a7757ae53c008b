//! Interop with an independent Rust AMQP 1.0 client (fe2o3-amqp) through the store-and-forward
//! test node: SASL ANONYMOUS, send and receive, multi-frame messages both ways, drain, close.

mod interop_node;

use std::sync::atomic::Ordering;
use std::time::Duration;

use fe2o3_amqp::sasl_profile::SaslProfile;
use fe2o3_amqp::{Connection, Receiver, Sender, Session};

use busbar_amqp::engine::ConnectionConfig;

/// Bound on every client step, so a protocol bug fails the test instead of hanging it.
const STEP: Duration = Duration::from_secs(10);

async fn step<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, future)
        .await
        .expect("interop step timed out")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fe2o3_sends_and_receives_through_the_node() {
    // Our frames are small, so a large message is split on the way in; the client's are small
    // too, so it is split on the way out.
    let node = interop_node::start(ConnectionConfig {
        max_frame_size: 4096,
        ..ConnectionConfig::default()
    })
    .await;
    let url = format!("amqp://{}", node.addr);
    let mut connection = step(
        Connection::builder()
            .container_id("fe2o3-interop")
            .sasl_profile(SaslProfile::Anonymous)
            .max_frame_size(2048)
            .idle_time_out(60_000u32)
            .open(url.as_str()),
    )
    .await
    .unwrap();
    let mut session = step(Session::begin(&mut connection)).await.unwrap();
    let mut sender = step(Sender::attach(&mut session, "sender", "q1"))
        .await
        .unwrap();
    let mut receiver = step(Receiver::attach(&mut session, "receiver", "q1"))
        .await
        .unwrap();

    let large = "x".repeat(100_000);
    for body in ["hello".to_owned(), large.clone(), "last".to_owned()] {
        let outcome = step(sender.send(body)).await.unwrap();
        outcome.accepted_or_else(|state| state).unwrap();
    }
    for expected in ["hello", large.as_str(), "last"] {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        assert_eq!(delivery.body(), expected);
        step(receiver.accept(&delivery)).await.unwrap();
    }
    assert_eq!(node.stats.messages_stored.load(Ordering::Relaxed), 3);

    // Drain with nothing queued: the node must answer, and the link keeps working after it.
    receiver.set_credit_mode(fe2o3_amqp::link::receiver::CreditMode::Manual);
    step(receiver.set_credit(5)).await.unwrap();
    step(receiver.drain()).await.unwrap();
    let answered = async {
        while node.stats.drains_answered.load(Ordering::Relaxed) == 0 {
            tokio::task::yield_now().await;
        }
    };
    step(answered).await;
    step(sender.send("after drain".to_owned())).await.unwrap();
    // The node has answered the drain, but the client may not have read that answer yet: credit
    // it grants before then counts from its old delivery-count and is rightly worth nothing to
    // the node (AMQP 1.0 §2.6.7). So grant again until the client's view has caught up.
    let delivery = step(async {
        loop {
            receiver.set_credit(5).await.unwrap();
            let wait = Duration::from_millis(200);
            if let Ok(delivery) = tokio::time::timeout(wait, receiver.recv::<String>()).await {
                break delivery.unwrap();
            }
        }
    })
    .await;
    assert_eq!(delivery.body(), "after drain");
    step(receiver.accept(&delivery)).await.unwrap();

    step(sender.close()).await.unwrap();
    step(receiver.close()).await.unwrap();
    step(session.end()).await.unwrap();
    step(connection.close()).await.unwrap();

    node.shutdown.trigger();
    step(node.task).await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fe2o3_with_plain_and_a_session_per_link() {
    // JS and .NET open a session per link; PLAIN carries credentials to the application.
    let node = interop_node::start(ConnectionConfig::default()).await;
    let url = format!("amqp://{}", node.addr);
    let mut connection = step(
        Connection::builder()
            .container_id("fe2o3-plain")
            .sasl_profile(SaslProfile::Plain {
                username: "alice".into(),
                password: "secret".into(),
            })
            .open(url.as_str()),
    )
    .await
    .unwrap();
    assert_eq!(node.stats.plain_logins.load(Ordering::Relaxed), 1);
    let mut sessions = Vec::new();
    for _ in 0..4 {
        sessions.push(step(Session::begin(&mut connection)).await.unwrap());
    }
    let mut senders = Vec::new();
    for (i, session) in sessions[..2].iter_mut().enumerate() {
        senders.push(
            step(Sender::attach(session, format!("s{i}"), "multi"))
                .await
                .unwrap(),
        );
    }
    let mut receiver = step(Receiver::attach(&mut sessions[2], "r", "multi"))
        .await
        .unwrap();
    for (i, sender) in senders.iter_mut().enumerate() {
        step(sender.send(format!("from session {i}")))
            .await
            .unwrap();
    }
    let mut bodies = Vec::new();
    for _ in 0..2 {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        bodies.push(delivery.body().clone());
        step(receiver.accept(&delivery)).await.unwrap();
    }
    bodies.sort();
    assert_eq!(bodies, ["from session 0", "from session 1"]);
    // Ending one session leaves the others working.
    let mut idle = sessions.pop().unwrap();
    step(idle.end()).await.unwrap();
    step(senders[0].send("after end".to_owned())).await.unwrap();
    let delivery = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "after end");
    step(receiver.accept(&delivery)).await.unwrap();
    step(connection.close()).await.unwrap();
    node.shutdown.trigger();
    step(node.task).await.unwrap().unwrap();
}
