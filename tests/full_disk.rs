//! A full disk, for real: the file store on a small tmpfs. Once it fills, sends are refused with
//! `amqp:resource-limit-exceeded` saying the store is full and `/health` says so; receives and
//! completes keep working; sends are accepted again once space is freed, without a restart; and
//! after a SIGKILL every accepted message that was not completed is there. A disk failing under
//! the store (a sync failing): sends refused, `/health` unhealthy until a restart, which finds
//! every accepted message. The store alone: an
//! append the disk cannot hold is refused as `Full` without poisoning the store, and a reopen
//! keeps exactly what was synced.

#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use busbar_store::{EntityId, FileOptions, FileStorage, MessageKey, Record, Storage, StoreError};
use bytes::Bytes;
use fe2o3_amqp::Sender;
use fe2o3_amqp::types::messaging::Outcome;

use support::client::{connect, drain_until, peek_lock_receiver, step};
use support::small_disk::{FailingDisk, Tmpfs};
use support::{Broker, scratch_dir, write_config};

/// Each message's body: its name, then padding to about 100 KiB.
fn body(name: &str) -> String {
    format!("{name}:{}", "x".repeat(100 * 1024))
}

fn name_of(body: &str) -> String {
    body.split(':').next().unwrap().to_owned()
}

/// How a send ended: accepted, or the rejection's condition (as fe2o3 names it) and
/// description.
async fn send(sender: &mut Sender, name: &str) -> Result<(), (String, String)> {
    match step(sender.send(body(name))).await.unwrap() {
        Outcome::Accepted(_) => Ok(()),
        Outcome::Rejected(rejected) => {
            let error = rejected.error.unwrap();
            Err((
                format!("{:?}", error.condition),
                error.description.unwrap_or_default(),
            ))
        }
        other => panic!("unexpected outcome {other:?}"),
    }
}

/// Sends `m0000`, `m0001`, ... until one is refused: the names accepted, the refusal, and
/// the refused message's name.
async fn send_until_refused(sender: &mut Sender) -> (Vec<String>, (String, String), String) {
    let mut accepted = Vec::new();
    loop {
        let name = format!("m{:04}", accepted.len());
        match send(sender, &name).await {
            Ok(()) => accepted.push(name),
            Err(refusal) => return (accepted, refusal, name),
        }
        assert!(accepted.len() < 1000, "the disk took 1000 sends of 100 KiB");
    }
}

/// After a restart of `broker` on `data`: the names of every message in `q` (completing them).
async fn names_after_restart(config: PathBuf, data: PathBuf) -> BTreeSet<String> {
    let broker = Broker::on_disk(config, data);
    let (_connection, mut session) = connect(&broker, "after-restart").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    send(&mut sender, "end").await.unwrap();
    let mut receiver = peek_lock_receiver(&mut session, "after", "q", 10).await;
    drain_until(&mut receiver, &body("end"))
        .await
        .iter()
        .map(|body| name_of(body))
        .collect()
}

/// `GET /health` on the admin port: the status code and the body.
fn health(broker: &Broker) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", broker.admin_port)).unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).unwrap().parse().unwrap();
    let body = response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_sends_keeps_settling_and_takes_sends_again_once_freed() {
    let dir = scratch_dir("busbar-full-disk");
    let Some(disk) = Tmpfs::mount(&dir, 48) else {
        return;
    };
    let config = write_config(&dir, &["q"]);
    let data = disk.path().join("data");
    // About 16 MiB left of 48, a tenth of which the store keeps for settlements.
    let ballast = disk.ballast("ballast", 32);
    let broker = Broker::on_disk(config.clone(), data.clone());
    let (_connection, mut session) = connect(&broker, "full-disk").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();

    let (mut accepted, refusal, _) = send_until_refused(&mut sender).await;
    assert!(
        accepted.len() >= 50,
        "only {} sends accepted",
        accepted.len()
    );
    assert!(refusal.0.contains("ResourceLimitExceeded"), "{}", refusal.0);
    assert!(refusal.1.contains("The store is full"), "{}", refusal.1);
    let (status, text) = health(&broker);
    assert_eq!(status, 200);
    assert!(
        text.contains(r#""status":"degraded""#) && text.contains("full"),
        "{text}"
    );

    // Receives and completes go on.
    let mut receiver = peek_lock_receiver(&mut session, "receiver", "q", 10).await;
    let mut completed = BTreeSet::new();
    for _ in 0..20 {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        step(receiver.accept(&delivery)).await.unwrap();
        completed.insert(name_of(delivery.body()));
    }
    step(receiver.close()).await.unwrap();
    assert!(send(&mut sender, "still-refused").await.is_err());

    // Space freed: sends are taken again, without a restart.
    std::fs::remove_file(&ballast).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while send(&mut sender, "after-freeing").await.is_err() {
        assert!(
            Instant::now() < deadline,
            "sends still refused after freeing space"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    accepted.push("after-freeing".to_owned());
    assert_eq!(health(&broker).0, 200);
    assert!(health(&broker).1.contains(r#""status":"healthy""#));

    // Nothing accepted is lost, nothing completed comes back.
    broker.kill();
    let found = names_after_restart(config, data).await;
    let expected: BTreeSet<String> = accepted
        .into_iter()
        .filter(|name| !completed.contains(name))
        .collect();
    assert_eq!(found, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_fsync_poisons_the_store_until_a_restart_which_loses_nothing_accepted() {
    let dir = scratch_dir("busbar-failing-disk");
    let Some(disk) = FailingDisk::new(&dir, 40, 256) else {
        return;
    };
    let config = write_config(&dir, &["q"]);
    let data = disk.path().join("data");
    let broker = Broker::on_disk(config.clone(), data.clone());
    let (_connection, mut session) = connect(&broker, "failing-disk").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();

    // The ext4 has room; its device runs out underneath, so a sync fails.
    let (accepted, refusal, uncertain) = send_until_refused(&mut sender).await;
    assert!(
        accepted.len() >= 50,
        "only {} sends accepted",
        accepted.len()
    );
    assert!(
        refusal.0.contains("com.microsoft:server-busy"),
        "{}",
        refusal.0
    );
    assert!(
        refusal.1.contains("storage is unavailable"),
        "{}",
        refusal.1
    );
    let (status, text) = health(&broker);
    assert_eq!(status, 503, "{text}");
    assert!(
        text.contains(r#""status":"unhealthy""#) && text.contains("restart"),
        "{text}"
    );
    // Poisoned: refused from now on, even with room.
    assert!(send(&mut sender, "refused").await.is_err());

    broker.kill();
    disk.repair();
    let found = names_after_restart(config, data).await;
    let accepted: BTreeSet<String> = accepted.into_iter().collect();
    assert!(
        found.is_superset(&accepted),
        "lost {:?}",
        accepted.difference(&found)
    );
    // The send in flight when the sync failed was refused; it may have reached the disk.
    let extra: Vec<&String> = found.difference(&accepted).collect();
    assert!(extra.is_empty() || extra == [&uncertain], "{extra:?}");
}

fn insert(sequence: i64) -> Record {
    Record::Insert {
        key: MessageKey {
            entity: EntityId(1),
            sequence,
        },
        message: Bytes::from(vec![7u8; 100 * 1024]),
        state: Bytes::from_static(b"s"),
    }
}

#[test]
fn an_append_the_disk_cannot_hold_is_refused_without_poisoning_the_store() {
    let dir = scratch_dir("busbar-full-store");
    let Some(disk) = Tmpfs::mount(&dir, 8) else {
        return;
    };
    let ballast = disk.ballast("ballast", 4);
    let journal = disk.path().join("journal");
    let mut store = FileStorage::open(&journal, FileOptions::default()).unwrap();
    let mut stored = Vec::new();
    let mut sequence = 1;
    let refused = loop {
        // Two records per append: a refused append keeps neither.
        match store.append(&[insert(sequence), insert(sequence + 1)]) {
            Ok(_) => {
                store.sync().unwrap();
                stored.extend([sequence, sequence + 1]);
                sequence += 2;
            }
            Err(error) => break error,
        }
    };
    assert!(matches!(refused, StoreError::Full { .. }), "{refused}");
    assert!(stored.len() >= 10, "only {} records stored", stored.len());
    assert!(matches!(store.check_room(), Err(StoreError::Full { .. })));

    std::fs::remove_file(&ballast).unwrap();
    store.check_room().unwrap();
    store.append(&[insert(sequence)]).unwrap();
    store.sync().unwrap();
    stored.push(sequence);
    drop(store);

    let mut reopened = FileStorage::open(&journal, FileOptions::default()).unwrap();
    let recovered: Vec<i64> = reopened
        .recover()
        .unwrap()
        .messages
        .keys()
        .map(|key| key.sequence)
        .collect();
    assert_eq!(recovered, stored);
}
