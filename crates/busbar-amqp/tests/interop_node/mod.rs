//! A small store-and-forward AMQP node built on the driver, for interop and hostile-input tests:
//! messages sent to an address are queued and delivered to receivers of that address as their
//! credit allows; unsettled deliveries get settled dispositions.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use busbar_amqp::driver::{ConnectionHandler, DriverConfig, Shutdown, serve};
use busbar_amqp::engine::{
    AttachReply, Connection, ConnectionConfig, EngineError, Event, LinkId, Millis,
    OutgoingDelivery, SaslCredentials, SaslVerdict,
};
use busbar_amqp::performatives::{Accepted, DeliveryState, MessageFormat, Role};

/// Messages per address, and which connections receive from which address.
#[derive(Default)]
pub struct Store {
    queues: HashMap<String, VecDeque<(Bytes, MessageFormat)>>,
    receivers: Vec<(String, mpsc::Sender<Pump>)>,
}

/// Counters a test can assert on.
#[derive(Default)]
pub struct Stats {
    pub connections_closed: AtomicUsize,
    pub drains_answered: AtomicUsize,
    pub messages_stored: AtomicUsize,
    pub plain_logins: AtomicUsize,
}

/// Asks a connection to deliver what is queued for an address.
#[derive(Debug, Clone)]
pub struct Pump(pub String);

/// A running node.
pub struct Node {
    pub addr: SocketAddr,
    pub stats: Arc<Stats>,
    pub shutdown: Shutdown,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

struct Handler {
    store: Arc<Mutex<Store>>,
    stats: Arc<Stats>,
    commands: mpsc::Sender<Pump>,
    /// Links on which we send, by address.
    outgoing: HashMap<LinkId, String>,
    /// Links on which we receive.
    incoming: HashMap<LinkId, String>,
    next_tag: u64,
}

impl Handler {
    fn pump(&mut self, conn: &mut Connection, address: &str) {
        let links: Vec<LinkId> = self
            .outgoing
            .iter()
            .filter(|(_, a)| a.as_str() == address)
            .map(|(link, _)| *link)
            .collect();
        for link in links {
            while conn.link_credit(link).unwrap_or(0) > 0 {
                let Some((message, format)) = self
                    .store
                    .lock()
                    .unwrap()
                    .queues
                    .get_mut(address)
                    .and_then(VecDeque::pop_front)
                else {
                    return;
                };
                self.next_tag += 1;
                let delivery = OutgoingDelivery {
                    tag: Bytes::copy_from_slice(&self.next_tag.to_be_bytes()),
                    message: message.clone(),
                    tail: Bytes::new(),
                    message_format: format,
                    settled: false,
                };
                match conn.send_transfer(link, delivery) {
                    Ok(_) => {}
                    Err(EngineError::Backpressure | EngineError::NoCredit) => {
                        let mut store = self.store.lock().unwrap();
                        store
                            .queues
                            .entry(address.to_owned())
                            .or_default()
                            .push_front((message, format));
                        return;
                    }
                    Err(_) => break,
                }
            }
        }
    }

    fn forget(&mut self, link: LinkId) {
        self.outgoing.remove(&link);
        self.incoming.remove(&link);
    }
}

impl ConnectionHandler for Handler {
    type Command = Pump;

    fn on_event(&mut self, event: Event, conn: &mut Connection, _now: Millis) {
        match event {
            Event::SaslInit { credentials, .. } => {
                if let SaslCredentials::Plain {
                    username, password, ..
                } = credentials
                {
                    if (username.as_str(), password.as_str()) != ("alice", "secret") {
                        conn.sasl_outcome(SaslVerdict::AuthFailed);
                        return;
                    }
                    self.stats.plain_logins.fetch_add(1, Ordering::Relaxed);
                }
                conn.sasl_outcome(SaslVerdict::Ok);
            }
            Event::AttachRequested(request) => {
                let address = match request.role {
                    Role::Sender => request.target.as_ref().and_then(|t| t.address_str()),
                    Role::Receiver => request.source.as_ref().and_then(|s| s.address_str()),
                }
                .unwrap_or_default()
                .to_owned();
                // Events queued before the connection failed may arrive after it closed.
                if conn
                    .accept_attach(request.link, AttachReply::echo(&request))
                    .is_err()
                {
                    return;
                }
                if request.role == Role::Sender {
                    self.incoming.insert(request.link, address);
                    let _ = conn.set_credit(request.link, 100);
                } else {
                    let mut store = self.store.lock().unwrap();
                    store
                        .receivers
                        .push((address.clone(), self.commands.clone()));
                    drop(store);
                    self.outgoing.insert(request.link, address);
                }
            }
            Event::Transfer(transfer) => {
                let Some(address) = self.incoming.get(&transfer.link).cloned() else {
                    return;
                };
                let receivers: Vec<mpsc::Sender<Pump>> = {
                    let mut store = self.store.lock().unwrap();
                    store
                        .queues
                        .entry(address.clone())
                        .or_default()
                        .push_back((transfer.message, transfer.message_format));
                    store
                        .receivers
                        .iter()
                        .filter(|(a, sender)| *a == address && !sender.is_closed())
                        .map(|(_, sender)| sender.clone())
                        .collect()
                };
                self.stats.messages_stored.fetch_add(1, Ordering::Relaxed);
                if !transfer.settled {
                    let accepted = Some(DeliveryState::Accepted(Accepted {}));
                    let _ = conn.send_disposition(
                        transfer.link,
                        transfer.delivery_id,
                        transfer.delivery_id,
                        true,
                        accepted,
                    );
                }
                // Keep the sender's credit topped up.
                if conn.link_credit(transfer.link).unwrap_or(0) < 50 {
                    let _ = conn.set_credit(transfer.link, 100);
                }
                for receiver in receivers {
                    let _ = receiver.try_send(Pump(address.clone()));
                }
                self.pump(conn, &address);
            }
            Event::Flow { link, drain, .. } => {
                if let Some(address) = self.outgoing.get(&link).cloned() {
                    self.pump(conn, &address);
                    if drain {
                        let _ = conn.finish_drain(link);
                        self.stats.drains_answered.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Event::Disposition(update) => {
                if !update.settled {
                    let _ = conn.send_disposition(
                        update.link,
                        update.first,
                        update.last,
                        true,
                        update.state,
                    );
                }
            }
            Event::Detached { link, .. } => self.forget(link),
            Event::ConnectionClosed { .. } => {
                self.stats
                    .connections_closed
                    .fetch_add(1, Ordering::Relaxed);
            }
            Event::ConnectionOpened { .. }
            | Event::SessionBegun { .. }
            | Event::SessionEnded { .. } => {}
        }
    }

    fn on_command(&mut self, Pump(address): Pump, conn: &mut Connection, _now: Millis) {
        self.pump(conn, &address);
    }
}

/// Starts a node on a loopback port with the given engine configuration.
pub async fn start(engine: ConnectionConfig) -> Node {
    start_with(DriverConfig {
        engine,
        command_capacity: 64,
        max_connections: 100,
        ..DriverConfig::default()
    })
    .await
}

/// Starts a node on a loopback port with the given driver configuration.
pub async fn start_with(config: DriverConfig) -> Node {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = Arc::new(Mutex::new(Store::default()));
    let stats = Arc::new(Stats::default());
    let (shutdown, signal) = Shutdown::new();
    let handler_stats = stats.clone();
    let task = tokio::spawn(serve(
        listener,
        config,
        move |_, commands| Handler {
            store: store.clone(),
            stats: handler_stats.clone(),
            commands,
            outgoing: HashMap::new(),
            incoming: HashMap::new(),
            next_tag: 0,
        },
        signal,
    ));
    Node {
        addr,
        stats,
        shutdown,
        task,
    }
}
