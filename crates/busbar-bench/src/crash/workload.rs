//! The load a crash round puts on the broker until it is killed, each task on a connection of
//! its own, recording in the ledger what it starts and what the broker acknowledges: senders to
//! the queue, the topic and the session queue; peek-lock receivers that complete, abandon and
//! dead-letter (half through `$management`, acknowledged, half on the link, never confirmed);
//! a subscription receiver per subscription; and a session worker that locks each session in
//! turn, sets its state and settles its messages.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::task::JoinSet;

use super::link::{Link, Settlement, id_and_token, receive, send};
use super::model::Ledger;
use super::{QUEUE, Rng, SESSION_QUEUE, SESSIONS, SUBSCRIPTIONS, TOPIC, subscription_path};
use crate::error::BenchError;

/// How long a session worker waits for one more message of the session it holds.
const SESSION_IDLE: Duration = Duration::from_millis(50);
/// The two ways of settling, drawn at random.
const THROUGH_MANAGEMENT: &str = "through $management";
const HOW: [&str; 2] = [THROUGH_MANAGEMENT, "on the link"];
/// Credit of the workload's receivers.
const CREDIT: u32 = 8;
/// Messages a session worker takes from a session before moving to the next one.
const SESSION_BATCH: usize = 5;

type Shared = Arc<Mutex<Ledger>>;

fn with<T>(ledger: &Shared, change: impl FnOnce(&mut Ledger) -> T) -> T {
    change(&mut ledger.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Starts every task of the workload; they run until the broker dies.
pub(crate) fn start(
    url: &str,
    ledger: &Shared,
    round: u64,
    rng: &mut Rng,
) -> JoinSet<Result<(), BenchError>> {
    let mut tasks = JoinSet::new();
    let subscriptions: Vec<String> = SUBSCRIPTIONS.iter().map(|s| subscription_path(s)).collect();
    let senders: [(&str, Vec<String>, bool); 4] = [
        ("q0", vec![QUEUE.to_owned()], false),
        ("q1", vec![QUEUE.to_owned()], false),
        ("t", subscriptions.clone(), false),
        ("s", vec![SESSION_QUEUE.to_owned()], true),
    ];
    for (name, entities, sessions) in senders {
        let address = if entities[0] == QUEUE || sessions {
            entities[0].clone()
        } else {
            TOPIC.to_owned()
        };
        let sender = Sender {
            url: url.to_owned(),
            ledger: Arc::clone(ledger),
            prefix: format!("r{round}-{name}"),
            address,
            entities,
            sessions,
            rng: rng.fork(),
        };
        tasks.spawn(sender.run());
    }
    let receivers = [(QUEUE.to_owned(), true), (QUEUE.to_owned(), true)]
        .into_iter()
        .chain(subscriptions.into_iter().map(|path| (path, false)));
    for (index, (entity, dead_letters)) in receivers.enumerate() {
        let receiver = Consumer {
            url: url.to_owned(),
            ledger: Arc::clone(ledger),
            name: format!("r{round}-c{index}"),
            entity,
            dead_letters,
            rng: rng.fork(),
        };
        tasks.spawn(receiver.run());
    }
    let worker = SessionWorker {
        url: url.to_owned(),
        ledger: Arc::clone(ledger),
        round,
        rng: rng.fork(),
    };
    tasks.spawn(worker.run());
    tasks
}

/// Sends numbered messages one after the other to `address`; `entities` are where each lands.
struct Sender {
    url: String,
    ledger: Shared,
    prefix: String,
    address: String,
    entities: Vec<String>,
    sessions: bool,
    rng: Rng,
}

impl Sender {
    async fn run(mut self) -> Result<(), BenchError> {
        let mut link = Link::open(&self.url, &self.prefix).await?;
        let mut sender = link.sender(&self.prefix, &self.address).await?;
        for n in 0.. {
            let id = format!("{}-{n}", self.prefix);
            let session = self
                .sessions
                .then(|| SESSIONS[self.rng.below(SESSIONS.len())]);
            with(&self.ledger, |ledger| {
                self.entities.iter().for_each(|e| ledger.sending(e, &id));
            });
            let accepted = send(&mut sender, &id, session).await?;
            with(&self.ledger, |ledger| {
                ledger.counts.sends += u64::from(accepted);
                for entity in &self.entities {
                    if accepted {
                        ledger.stored(entity, &id, "accepted");
                    } else {
                        ledger.refused(entity, &id);
                    }
                }
            });
        }
        Ok(())
    }
}

/// Receives from a queue or subscription and settles each message at random.
struct Consumer {
    url: String,
    ledger: Shared,
    name: String,
    entity: String,
    dead_letters: bool,
    rng: Rng,
}

/// A settlement drawn at random: complete half the time.
fn draw(rng: &mut Rng, dead_letters: bool) -> Settlement {
    match rng.below(4) {
        0 => Settlement::Abandon,
        1 if dead_letters => Settlement::DeadLetter,
        _ => Settlement::Complete,
    }
}

/// A received message the ledger does not know is a failure: every earlier message was drained.
fn known(ledger: &Shared, entity: &str, id: &str) -> Result<(), BenchError> {
    if with(ledger, |ledger| ledger.knows(entity, id)) {
        with(ledger, |ledger| ledger.stored(entity, id, "delivered"));
        Ok(())
    } else {
        Err(BenchError::broker(
            "receive",
            format!("{entity}: {id} was never sent, or came back after being drained"),
        ))
    }
}

impl Consumer {
    async fn run(mut self) -> Result<(), BenchError> {
        let mut link = Link::open(&self.url, &self.name).await?;
        let mut receiver = link
            .receiver(&self.name, &self.entity, None, CREDIT)
            .await?;
        let mut management = link.management(&self.entity).await?;
        let mut received = 0;
        loop {
            let delivery = receive(&mut receiver, CREDIT, &mut received).await?;
            let (id, token) = id_and_token(&delivery)?;
            known(&self.ledger, &self.entity, &id)?;
            let settlement = draw(&mut self.rng, self.dead_letters);
            let how = HOW[self.rng.below(2)];
            let number = with(&self.ledger, |ledger| {
                ledger.settling(&self.entity, &id, settlement, how)
            });
            if how == THROUGH_MANAGEMENT {
                management.settle(&[token], settlement, None).await?;
                with(&self.ledger, |ledger| {
                    ledger.counts.settlements += 1;
                    ledger.settled(&self.entity, &id, settlement, number);
                });
            } else {
                settlement.on_link(&mut receiver, &delivery).await?;
                with(&self.ledger, |ledger| ledger.counts.link_settlements += 1);
            }
        }
    }
}

/// Locks each session in turn, sets its state and settles a few of its messages.
struct SessionWorker {
    url: String,
    ledger: Shared,
    round: u64,
    rng: Rng,
}

impl SessionWorker {
    async fn run(mut self) -> Result<(), BenchError> {
        let name = format!("r{}-sessions", self.round);
        let mut link = Link::open(&self.url, &name).await?;
        let mut management = link.management(SESSION_QUEUE).await?;
        for turn in 0.. {
            let session = SESSIONS[turn % SESSIONS.len()];
            let holder = format!("{name}-{turn}");
            let mut receiver = link
                .receiver(&holder, SESSION_QUEUE, Some(session), CREDIT)
                .await?;
            let mut received = 0;
            let state = format!("r{}-{turn}", self.round);
            with(&self.ledger, |ledger| ledger.setting_state(session, &state));
            management
                .set_session_state(session, &holder, &state)
                .await?;
            with(&self.ledger, |ledger| {
                ledger.counts.states += 1;
                ledger.state_set(session, Some(&state));
            });
            for _ in 0..SESSION_BATCH {
                let next = receive(&mut receiver, CREDIT, &mut received);
                let Ok(delivery) = tokio::time::timeout(SESSION_IDLE, next).await else {
                    break;
                };
                let delivery = delivery?;
                let (id, token) = id_and_token(&delivery)?;
                known(&self.ledger, SESSION_QUEUE, &id)?;
                let settlement = draw(&mut self.rng, false);
                let how = HOW[self.rng.below(2)];
                let number = with(&self.ledger, |ledger| {
                    ledger.settling(SESSION_QUEUE, &id, settlement, how)
                });
                if how == THROUGH_MANAGEMENT {
                    management
                        .settle(&[token], settlement, Some((session, &holder)))
                        .await?;
                    with(&self.ledger, |ledger| {
                        ledger.counts.settlements += 1;
                        ledger.settled(SESSION_QUEUE, &id, settlement, number);
                    });
                } else {
                    settlement.on_link(&mut receiver, &delivery).await?;
                    with(&self.ledger, |ledger| ledger.counts.link_settlements += 1);
                }
            }
            crate::client::step("detach session receiver", receiver.close()).await?;
        }
        Ok(())
    }
}
