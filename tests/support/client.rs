//! fe2o3-amqp client steps shared by the end-to-end tests: a bounded await, a connection with a
//! session, and a peek-lock receiver.

use std::collections::BTreeSet;
use std::time::Duration;

use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::definitions::{ReceiverSettleMode, SenderSettleMode};
use fe2o3_amqp::types::messaging::Outcome;
use fe2o3_amqp::{Connection, Receiver, Sender, Session};

use super::Broker;

/// Bound on every client step, so a protocol bug fails the test instead of hanging it.
const STEP: Duration = Duration::from_secs(20);

/// Awaits `future`, failing the test if it takes longer than [`STEP`].
pub async fn step<T>(future: impl Future<Output = T>) -> T {
    step_within(STEP, future).await
}

/// Awaits `future`, failing the test if it takes longer than `limit` (a step that moves more
/// than a usual one).
pub async fn step_within<T>(limit: Duration, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .expect("client step timed out")
}

/// A receive-and-delete receiver on `address` whose credit the test sets by hand.
pub async fn receive_and_delete(session: &mut SessionHandle<()>, address: &str) -> Receiver {
    step(
        Receiver::builder()
            .name("drain")
            .source(address)
            .sender_settle_mode(SenderSettleMode::Settled)
            .credit_mode(CreditMode::Manual)
            .attach(session),
    )
    .await
    .unwrap()
}

/// A connection to `broker` (SASL PLAIN with the emulator key) and one session on it.
pub async fn connect(
    broker: &Broker,
    container_id: &str,
) -> (ConnectionHandle<()>, SessionHandle<()>) {
    connect_url(&broker.url(), container_id).await
}

/// The fe2o3 URL of a broker listening on `port` (SASL PLAIN with the emulator key).
pub fn url_of_port(port: u16) -> String {
    format!("amqp://RootManageSharedAccessKey:SAS_KEY_VALUE@127.0.0.1:{port}")
}

/// Sends `body`, failing the test unless the broker accepts it.
pub async fn send_accepted(sender: &mut Sender, body: &str) {
    let outcome = step(sender.send(body.to_owned())).await.unwrap();
    assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
}

/// A connection to the fe2o3 `url` and one session on it.
pub async fn connect_url(
    url: &str,
    container_id: &str,
) -> (ConnectionHandle<()>, SessionHandle<()>) {
    let mut connection = step(Connection::open(container_id, url)).await.unwrap();
    let session = step(Session::begin(&mut connection)).await.unwrap();
    (connection, session)
}

/// A peek-lock receiver on `address` keeping `credit` outstanding, in settle mode second. Its
/// `accept` only sends the disposition, without waiting for the broker's settled echo: a test
/// that needs a settlement confirmed checks its effect, or settles through `$management`.
pub async fn peek_lock_receiver(
    session: &mut SessionHandle<()>,
    name: &str,
    address: &str,
    credit: u32,
) -> Receiver {
    step(
        Receiver::builder()
            .name(name)
            .source(address)
            .receiver_settle_mode(ReceiverSettleMode::Second)
            .credit_mode(CreditMode::Auto(credit))
            .attach(session),
    )
    .await
    .unwrap()
}

/// Receives and accepts everything up to the delivery whose body is `sentinel` (sent last, it
/// marks the end of the queue) and returns the bodies before it.
pub async fn drain_until(receiver: &mut Receiver, sentinel: &str) -> BTreeSet<String> {
    let mut received = BTreeSet::new();
    loop {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        step(receiver.accept(&delivery)).await.unwrap();
        if delivery.body() == sentinel {
            return received;
        }
        received.insert(delivery.body().clone());
    }
}
