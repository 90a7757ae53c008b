//! The lease: one holder at a time, a waiter takes over when the holder's session ends, and a
//! replaced holder can neither commit nor keep serving.

use std::sync::mpsc;
use std::time::Duration;

use busbar_store::{Storage, StoreError};
use busbar_store_postgres::{DatabaseUrl, Lease, LeaseWatch, PostgresStorage};

use crate::pg_server::PgServer;
use crate::records::insert;

/// A failure guard for what must happen promptly, not a wait.
const PROMPTLY: Duration = Duration::from_secs(20);

fn fresh_database() -> DatabaseUrl {
    DatabaseUrl::parse(&PgServer::shared().create_database("lease")).unwrap()
}

/// Starts taking the lease on another thread; the first receiver says it had to wait.
fn acquire_in_background(
    url: &DatabaseUrl,
) -> (
    mpsc::Receiver<()>,
    mpsc::Receiver<Result<Lease, StoreError>>,
) {
    let (waiting, waited) = mpsc::channel();
    let (taken, lease) = mpsc::channel();
    let url = url.clone();
    std::thread::spawn(move || {
        let result = Lease::acquire(&url, move || waiting.send(()).unwrap());
        let _ = taken.send(result);
    });
    (waited, lease)
}

#[test]
fn a_standby_waits_for_the_lease_and_takes_it_with_a_new_epoch() {
    let url = fresh_database();
    let active = Lease::acquire(&url, || panic!("the first node must not wait")).unwrap();
    let (waited, standby) = acquire_in_background(&url);
    waited.recv_timeout(PROMPTLY).unwrap();
    assert!(standby.try_recv().is_err(), "two nodes held the lease");
    let first = active.epoch();
    drop(active);
    let standby = standby.recv_timeout(PROMPTLY).unwrap().unwrap();
    assert_eq!(standby.epoch().value(), first.value() + 1);
}

#[test]
fn a_replaced_node_can_never_commit_again() {
    let url = fresh_database();
    let old = Lease::acquire(&url, || {}).unwrap();
    let (failed, failure) = mpsc::channel();
    let mut old_store = PostgresStorage::open(&url, Some(old.epoch()))
        .unwrap()
        .on_failure(move |error| failed.send(error.to_string()).unwrap());
    old_store.append(&[insert(1, "before", "s")]).unwrap();
    old_store.sync().unwrap();

    // The old node is replaced (its lease session ended, as when it is cut off and paused).
    drop(old);
    let new = Lease::acquire(&url, || {}).unwrap();
    old_store.append(&[insert(2, "stale", "s")]).unwrap();
    let refused = old_store.sync().unwrap_err();
    assert!(
        matches!(refused, StoreError::LeaseLost { held, current } if current == held + 1),
        "{refused}"
    );
    assert!(failure.try_recv().unwrap().contains("lease lost"));
    assert!(matches!(
        old_store.sync().unwrap_err(),
        StoreError::Poisoned { .. }
    ));

    let mut new_store = PostgresStorage::open(&url, Some(new.epoch())).unwrap();
    let recovered = new_store.recover().unwrap();
    assert_eq!(recovered.messages.len(), 1, "the stale write landed");
    new_store.append(&[insert(3, "after", "s")]).unwrap();
    new_store.sync().unwrap();
}

#[test]
fn a_holder_whose_session_is_taken_over_is_told_it_lost_the_lease() {
    let url = fresh_database();
    let active = Lease::acquire(&url, || {}).unwrap();
    let (waited, standby) = acquire_in_background(&url);
    waited.recv_timeout(PROMPTLY).unwrap();
    let (_watch, loss) = watch_for_loss(active);
    terminate_lock_holder(&url);
    let _standby = standby.recv_timeout(PROMPTLY).unwrap().unwrap();
    let error = loss.recv_timeout(PROMPTLY).unwrap();
    assert!(matches!(error, StoreError::LeaseLost { .. }), "{error}");
}

#[test]
fn a_holder_whose_session_drops_takes_the_lease_back_if_nobody_else_did() {
    let url = fresh_database();
    let active = Lease::acquire(&url, || {}).unwrap();
    let epoch = active.epoch();
    let (_watch, loss) = watch_for_loss(active);
    terminate_lock_holder(&url);
    wait_until_the_lock_is_held_again(&url);
    let (waited, newcomer) = acquire_in_background(&url);
    waited.recv_timeout(PROMPTLY).unwrap();
    assert!(newcomer.try_recv().is_err());
    assert!(loss.try_recv().is_err(), "the lease was reported lost");
    let client_epoch: i64 = postgres::Client::connect(&plain(&url), postgres::NoTls)
        .unwrap()
        .query_one("SELECT epoch FROM busbar_lease", &[])
        .unwrap()
        .get(0);
    assert_eq!(client_epoch, epoch.value());
}

/// Watches `lease` every 50 ms (until the watch is dropped); the receiver gets the error if it
/// is lost.
fn watch_for_loss(lease: Lease) -> (LeaseWatch, mpsc::Receiver<StoreError>) {
    let (lost, loss) = mpsc::channel();
    let watch = lease
        .watch(Duration::from_millis(50), move |error| {
            lost.send(error).unwrap()
        })
        .unwrap();
    (watch, loss)
}

/// Polls until a new session holds the advisory lock (the watcher took it back).
fn wait_until_the_lock_is_held_again(url: &DatabaseUrl) {
    let mut client = postgres::Client::connect(&plain(url), postgres::NoTls).unwrap();
    let deadline = std::time::Instant::now() + PROMPTLY;
    while std::time::Instant::now() < deadline {
        let held: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                &[],
            )
            .unwrap()
            .get(0);
        if held == 1 {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the lease was not taken back");
}

/// The URL's text for a plain client (the test's own connections).
fn plain(url: &DatabaseUrl) -> String {
    let database = url.to_string();
    PgServer::shared().url(database.rsplit('/').next().unwrap())
}

/// Ends the session holding the advisory lock (the active node's lease), as a network cut would.
fn terminate_lock_holder(url: &DatabaseUrl) {
    let mut client = postgres::Client::connect(&plain(url), postgres::NoTls).unwrap();
    let ended = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .unwrap();
    assert_eq!(ended.len(), 1, "not exactly one lock holder");
}

/// Ends every session of `application` on the database, as a network cut would.
pub(crate) fn terminate_sessions_of(url: &DatabaseUrl, application: &str) {
    let mut client = postgres::Client::connect(&plain(url), postgres::NoTls).unwrap();
    let ended = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = $1
               AND pid <> pg_backend_pid()",
            &[&application],
        )
        .unwrap();
    assert!(!ended.is_empty(), "no session of {application} to end");
}
