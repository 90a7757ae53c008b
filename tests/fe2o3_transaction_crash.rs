//! Transactions across a crash: handlers on several connections each receive a message from
//! `in`, complete it and send two messages to `out` in one transaction (fe2o3-amqp's
//! controller), while the broker is killed with SIGKILL under that load — so transactions are
//! caught before their commit, between the store's commit and the discharge's answer, and after
//! it. After a restart on the same directory every transaction is all there or not at all: both
//! of its sends with its completion, or neither send and the message back in `in`; and every
//! commit the client saw accepted is there.
//!
//! Two chosen points as well, with `--test-controls`: killed once a commit is stored but its
//! answer held back (a delay fault on the committing entity; the forwarded copy turning
//! receivable shows the moment), everything is there; killed before the discharge, nothing.

#![allow(clippy::unwrap_used)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use fe2o3_amqp::transaction::{
    Controller, Transaction, TransactionDischarge, TransactionPosting, TransactionRetirement,
};
use fe2o3_amqp::types::messaging::Outcome;
use fe2o3_amqp::{Receiver, Sender};
use tokio::sync::watch;

use support::client::{connect, peek_lock_receiver, step};
use support::{Broker, scratch_dir, write_config};

/// Messages waiting in `in` before the handlers start.
const ORDERS: usize = 300;
/// Concurrent handlers, each on its own connection.
const HANDLERS: usize = 4;

async fn send_acked(sender: &mut Sender, body: String) {
    let outcome = step(sender.send(body)).await.unwrap();
    assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
}

/// One handler: receive, then complete and forward in a transaction, until the broker dies.
/// Each committed order is recorded once its discharge is accepted.
async fn handle(
    broker_url: String,
    committed: Arc<Mutex<BTreeSet<String>>>,
    progress: watch::Sender<usize>,
) {
    let Ok(mut connection) = fe2o3_amqp::Connection::open("txn-handler", broker_url.as_str()).await
    else {
        return;
    };
    let Ok(mut session) = fe2o3_amqp::Session::begin(&mut connection).await else {
        return;
    };
    let Ok(controller) = Controller::attach(&mut session, "controller").await else {
        return;
    };
    let Ok(mut out) = Sender::attach(&mut session, "out", "out").await else {
        return;
    };
    let Ok(mut inbound) = Receiver::builder()
        .name("in")
        .source("in")
        .receiver_settle_mode(fe2o3_amqp::types::definitions::ReceiverSettleMode::Second)
        .credit_mode(fe2o3_amqp::link::receiver::CreditMode::Auto(5))
        .attach(&mut session)
        .await
    else {
        return;
    };
    loop {
        let Ok(delivery) = inbound.recv::<String>().await else {
            return;
        };
        let order = delivery.body().clone();
        let Ok(txn) = Transaction::declare(&controller, None).await else {
            return;
        };
        if txn.accept(&mut inbound, &delivery).await.is_err()
            || txn.post(&mut out, format!("{order}-a")).await.is_err()
            || txn.post(&mut out, format!("{order}-b")).await.is_err()
            || txn.commit().await.is_err()
        {
            return;
        }
        let count = {
            let mut committed = committed.lock().unwrap();
            committed.insert(order);
            committed.len()
        };
        progress.send_replace(count);
    }
}

/// Receives and completes everything up to a sentinel sent last: each body and how often.
async fn drain(
    session: &mut fe2o3_amqp::session::SessionHandle<()>,
    queue: &str,
) -> BTreeMap<String, usize> {
    let mut sender = step(Sender::attach(session, format!("end-{queue}"), queue))
        .await
        .unwrap();
    send_acked(&mut sender, "end".to_owned()).await;
    let mut receiver = peek_lock_receiver(session, &format!("drain-{queue}"), queue, 50).await;
    let mut seen = BTreeMap::new();
    loop {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        step(receiver.accept(&delivery)).await.unwrap();
        if delivery.body() == "end" {
            return seen;
        }
        *seen.entry(delivery.body().clone()).or_insert(0) += 1;
    }
}

async fn one_round(kill_after: usize) {
    let dir = scratch_dir("busbar-txn-crash");
    let config = write_config(&dir, &["in", "out"]);
    let data = dir.join("data");
    let broker = Broker::on_disk(config.clone(), data.clone());
    let (_connection, mut session) = connect(&broker, "txn-loader").await;
    let mut loader = step(Sender::attach(&mut session, "loader", "in"))
        .await
        .unwrap();
    for index in 0..ORDERS {
        send_acked(&mut loader, format!("order-{index}")).await;
    }

    let committed = Arc::new(Mutex::new(BTreeSet::new()));
    let (progress, mut watcher) = watch::channel(0usize);
    let handlers: Vec<_> = (0..HANDLERS)
        .map(|_| {
            tokio::spawn(handle(
                broker.url(),
                Arc::clone(&committed),
                progress.clone(),
            ))
        })
        .collect();
    step(watcher.wait_for(|count| *count >= kill_after))
        .await
        .unwrap();
    broker.kill();
    for handler in handlers {
        handler.abort();
        let _ = handler.await;
    }
    let committed: BTreeSet<String> = committed.lock().unwrap().clone();

    let broker = Broker::on_disk(config, data);
    let (_connection, mut session) = connect(&broker, "txn-checker").await;
    let remaining = drain(&mut session, "in").await;
    let forwarded = drain(&mut session, "out").await;
    let mut done = 0;
    for index in 0..ORDERS {
        let order = format!("order-{index}");
        let sends = [format!("{order}-a"), format!("{order}-b")]
            .map(|body| forwarded.get(&body).copied().unwrap_or(0));
        let back = remaining.get(&order).copied().unwrap_or(0);
        match sends {
            [1, 1] => {
                assert_eq!(
                    back, 0,
                    "{order}: forwarded, so its completion must be there too"
                );
                done += 1;
            }
            [0, 0] => {
                assert_eq!(
                    back, 1,
                    "{order}: not forwarded, so it must be back in `in` once"
                );
                assert!(
                    !committed.contains(&order),
                    "{order}: an accepted commit was lost"
                );
            }
            other => panic!("{order}: a transaction was split: its sends arrived {other:?} times"),
        }
    }
    assert!(
        done >= committed.len(),
        "{done} transactions there, {} accepted",
        committed.len()
    );
    assert_eq!(broker.terminate().code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_is_all_there_or_not_at_all_after_sigkill_under_load() {
    for kill_after in [20, 75] {
        one_round(kill_after).await;
    }
}

/// Each transaction of this test receives the one order from `in`, completes it and forwards it
/// to `out`; the broker is killed at a chosen point of its commit, then restarted.
async fn kill_during_commit(
    commit_first: bool,
) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let dir = scratch_dir("busbar-txn-crash-point");
    let config = write_config(&dir, &["in", "out"]);
    let data = dir.join("data");
    let broker = Broker::on_disk_with_test_controls(config.clone(), data.clone());
    let (_connection, mut session) = connect(&broker, "txn-point").await;
    let mut loader = step(Sender::attach(&mut session, "loader", "in"))
        .await
        .unwrap();
    send_acked(&mut loader, "order".to_owned()).await;
    let controller = step(Controller::attach(&mut session, "controller"))
        .await
        .unwrap();
    let mut out = step(Sender::attach(&mut session, "out", "out"))
        .await
        .unwrap();
    let mut inbound = peek_lock_receiver(&mut session, "in", "in", 1).await;
    let delivery = step(inbound.recv::<String>()).await.unwrap();
    let txn = step(Transaction::declare(&controller, None)).await.unwrap();
    step(txn.accept(&mut inbound, &delivery)).await.unwrap();
    step(txn.post(&mut out, "shipped".to_owned()))
        .await
        .unwrap();
    if commit_first {
        // The entity that commits answers a minute late: the commit is stored, its answer not
        // yet sent. The forwarded copy becomes receivable exactly when the commit is durable.
        broker.ctl(&["fault", "in", "delay", "60s"]);
        let (_watcher_connection, mut watcher) = connect(&broker, "txn-watcher").await;
        let mut shipped = peek_lock_receiver(&mut watcher, "watch", "out", 1).await;
        let commit = txn.commit();
        tokio::pin!(commit);
        tokio::select! {
            _ = &mut commit => panic!("the commit was answered despite the delay"),
            delivery = step(shipped.recv::<String>()) => {
                assert_eq!(delivery.unwrap().body(), "shipped");
            }
        }
        broker.kill();
    } else {
        // Killed before the discharge is sent.
        broker.kill();
        drop(txn);
    }
    let broker = Broker::on_disk(config, data);
    let (_connection, mut session) = connect(&broker, "txn-checker").await;
    let remaining = drain(&mut session, "in").await;
    let forwarded = drain(&mut session, "out").await;
    assert_eq!(broker.terminate().code(), Some(0));
    (remaining, forwarded)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_stored_but_not_yet_answered_is_all_there_after_sigkill() {
    let (remaining, forwarded) = kill_during_commit(true).await;
    assert_eq!(remaining, BTreeMap::new(), "the completion was committed");
    assert_eq!(forwarded, BTreeMap::from([("shipped".to_owned(), 1)]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_killed_before_its_commit_left_nothing() {
    let (remaining, forwarded) = kill_during_commit(false).await;
    assert_eq!(remaining, BTreeMap::from([("order".to_owned(), 1)]));
    assert_eq!(forwarded, BTreeMap::new(), "nothing of the transaction");
}
