//! The one interface between the administration API and the broker: [`NamespaceControl`].
//!
//! The HTTP layer parses, authorises and validates a request, then makes one or two calls on
//! this trait and writes what they return. The broker implements it over its entity registry;
//! the integration tests implement it in memory. Everything crossing it is a codec type
//! ([`crate::atom`]): settable properties in, properties plus runtime properties out.
//!
//! The methods return `impl Future + Send` rather than boxed futures: a server serves exactly
//! one control, so [`crate::http::AdminServer`] is generic over it and nothing is allocated per
//! call, and an implementation can still write each method as a plain `async fn`.
//!
//! Besides the Service Bus operations, the trait carries Busbar's own controls (served under
//! `/$busbar/`, see [`crate::test_controls`]): purge and reset, and, only when the broker runs
//! with `--test-controls`, a virtual clock and fault injection. They have default
//! implementations meaning "not available", so an implementation serves them only if it
//! overrides them. The HTTP data plane's messaging operations come through the supertrait
//! [`DataPlane`], whose methods likewise default to "not served".

use std::future::Future;
use std::time::Duration;

use crate::atom::{
    NamespaceInfo, PageRequest, QueueProperties, QueueRuntimeProperties, RuleProperties,
    SubscriptionProperties, SubscriptionRuntimeProperties, Timestamp, TopicProperties,
    TopicRuntimeProperties,
};
use crate::data_plane::DataPlane;
use crate::explorer::{
    EntityCounts, OutgoingMessage, PeekedMessage, Redriven, SessionInfo, SubQueue,
};
use crate::metrics::MetricsSnapshot;

/// Why the broker refused or could not carry out an operation. The HTTP layer maps each to the
/// service's status and `<Error>` body (admin-api.md §8): 404, 409, 400 and 503.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The entity, or the topic or subscription it belongs to, does not exist.
    #[error("the entity does not exist")]
    NotFound,
    /// A create named an entity that exists (queues and topics share one name space).
    #[error("the entity already exists")]
    AlreadyExists,
    /// The broker refuses the request as it stands (a SQL filter that does not parse, a
    /// quota reached); `detail` is shown to the user.
    #[error("{detail}")]
    Invalid {
        /// What is wrong, in the request's terms.
        detail: String,
    },
    /// The broker cannot serve the request now (starting, stopping, storage failed); clients
    /// retry.
    #[error("the broker is unavailable: {detail}")]
    Unavailable {
        /// Why.
        detail: String,
    },
}

/// The result of every [`NamespaceControl`] operation.
pub type ControlResult<T> = Result<T, ControlError>;

/// The broker's health as `GET /health` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Serving everything (`200`, status `healthy`).
    Healthy,
    /// Serving, but refusing some work until an operator acts, e.g. new messages while the
    /// store's disk is full (`200`, status `degraded`, with why).
    Degraded(String),
    /// Not serving what it must, e.g. the store failed and only a restart recovers it (`503`,
    /// status `unhealthy`, with why).
    Unhealthy(String),
}

/// The broker's virtual clock (`--test-controls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockState {
    /// The time the broker runs on: the wall clock plus [`offset`](Self::offset).
    pub now: Timestamp,
    /// How far the clock has been advanced in all.
    pub offset: Duration,
}

/// A fault injected into one entity (`--test-controls`). Its JSON form is the body of
/// `POST /$busbar/faults/{entity}`: `{"kind":"server-busy","count":3}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fault {
    /// The next `count` sends to the entity are refused with `com.microsoft:server-busy`.
    ServerBusy {
        /// How many sends.
        count: u32,
    },
    /// The next `count` settlements on the entity are answered with lock lost.
    LockLost {
        /// How many settlements.
        count: u32,
    },
    /// One receive link of the entity (now, or the next to attach) is detached with
    /// `condition` (e.g. `amqp:link:detach-forced`).
    DetachLink {
        /// The AMQP error condition.
        condition: String,
    },
    /// The connection of one receive link of the entity is closed with `condition` (e.g.
    /// `amqp:connection:forced`).
    DropConnection {
        /// The AMQP error condition.
        condition: String,
    },
    /// The next `count` answers of the entity (to sends and settlements) go out `millis` late.
    Delay {
        /// How late, in milliseconds.
        millis: u64,
        /// How many answers.
        count: u32,
    },
}

/// A queue as the broker holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEntry {
    /// The name as it was created (lookups ignore case).
    pub name: String,
    /// Its settable properties.
    pub properties: QueueProperties,
    /// Counts, size, and when it was created, updated and last used.
    pub runtime: QueueRuntimeProperties,
}

/// A topic as the broker holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicEntry {
    /// The name as it was created.
    pub name: String,
    /// Its settable properties.
    pub properties: TopicProperties,
    /// Size, subscription count, times.
    pub runtime: TopicRuntimeProperties,
}

/// A subscription as the broker holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionEntry {
    /// The name as it was created.
    pub name: String,
    /// Its settable properties.
    pub properties: SubscriptionProperties,
    /// Counts and times.
    pub runtime: SubscriptionRuntimeProperties,
}

/// A rule as the broker holds it (its name is [`RuleProperties::name`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleEntry {
    /// Name, filter and action.
    pub properties: RuleProperties,
    /// When it was created.
    pub created_at: Timestamp,
}

/// One page of a listing: the entries [`PageRequest::window`] selects out of `total`, in the
/// listing's stable order.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The entries of the page.
    pub items: Vec<T>,
    /// How many entries the whole listing has (which tells whether a next page exists).
    pub total: usize,
}

/// The broker as the administration API sees it: one namespace of queues and topics, topics
/// holding subscriptions, subscriptions holding rules.
///
/// Names reach it validated ([`crate::validate`]) and compare case-insensitively, as Service
/// Bus names do; entries carry the spelling they were created with. Listings are in a stable
/// order (the service's is alphabetical) so that paging by `$skip` neither repeats nor skips.
/// An operation under a topic or subscription that does not exist fails with
/// [`ControlError::NotFound`], as does an update or delete of a missing entity. Properties
/// reach create and update already validated, and an update carries the whole new set (the
/// HTTP layer merges what the request left out from the stored entity).
pub trait NamespaceControl: DataPlane + Send + Sync + 'static {
    /// The namespace's name, tier and times (`GET /$namespaceinfo`).
    fn namespace(&self) -> impl Future<Output = ControlResult<NamespaceInfo>> + Send;

    /// A page of the queues.
    fn list_queues(
        &self,
        page: PageRequest,
    ) -> impl Future<Output = ControlResult<Page<QueueEntry>>> + Send;
    /// The queue `name`.
    fn queue(&self, name: &str) -> impl Future<Output = ControlResult<QueueEntry>> + Send;
    /// Creates the queue `name`; [`ControlError::AlreadyExists`] if a queue or topic has it.
    fn create_queue(
        &self,
        name: &str,
        properties: QueueProperties,
    ) -> impl Future<Output = ControlResult<QueueEntry>> + Send;
    /// Replaces the properties of the queue `name`.
    fn update_queue(
        &self,
        name: &str,
        properties: QueueProperties,
    ) -> impl Future<Output = ControlResult<QueueEntry>> + Send;
    /// Deletes the queue `name` and its messages.
    fn delete_queue(&self, name: &str) -> impl Future<Output = ControlResult<()>> + Send;

    /// A page of the topics.
    fn list_topics(
        &self,
        page: PageRequest,
    ) -> impl Future<Output = ControlResult<Page<TopicEntry>>> + Send;
    /// The topic `name`.
    fn topic(&self, name: &str) -> impl Future<Output = ControlResult<TopicEntry>> + Send;
    /// Creates the topic `name`; [`ControlError::AlreadyExists`] if a queue or topic has it.
    fn create_topic(
        &self,
        name: &str,
        properties: TopicProperties,
    ) -> impl Future<Output = ControlResult<TopicEntry>> + Send;
    /// Replaces the properties of the topic `name`.
    fn update_topic(
        &self,
        name: &str,
        properties: TopicProperties,
    ) -> impl Future<Output = ControlResult<TopicEntry>> + Send;
    /// Deletes the topic `name` with its subscriptions and their rules.
    fn delete_topic(&self, name: &str) -> impl Future<Output = ControlResult<()>> + Send;

    /// A page of the subscriptions of `topic`.
    fn list_subscriptions(
        &self,
        topic: &str,
        page: PageRequest,
    ) -> impl Future<Output = ControlResult<Page<SubscriptionEntry>>> + Send;
    /// The subscription `name` of `topic`.
    fn subscription(
        &self,
        topic: &str,
        name: &str,
    ) -> impl Future<Output = ControlResult<SubscriptionEntry>> + Send;
    /// Creates the subscription `name` of `topic` holding `default_rule` as its only rule
    /// (`$Default`, true filter, unless the request described another).
    fn create_subscription(
        &self,
        topic: &str,
        name: &str,
        properties: SubscriptionProperties,
        default_rule: RuleProperties,
    ) -> impl Future<Output = ControlResult<SubscriptionEntry>> + Send;
    /// Replaces the properties of the subscription `name` of `topic` (its rules stay).
    fn update_subscription(
        &self,
        topic: &str,
        name: &str,
        properties: SubscriptionProperties,
    ) -> impl Future<Output = ControlResult<SubscriptionEntry>> + Send;
    /// Deletes the subscription `name` of `topic` with its rules and messages.
    fn delete_subscription(
        &self,
        topic: &str,
        name: &str,
    ) -> impl Future<Output = ControlResult<()>> + Send;

    /// A page of the rules of `subscription` of `topic`.
    fn list_rules(
        &self,
        topic: &str,
        subscription: &str,
        page: PageRequest,
    ) -> impl Future<Output = ControlResult<Page<RuleEntry>>> + Send;
    /// The rule `name` of `subscription` of `topic`.
    fn rule(
        &self,
        topic: &str,
        subscription: &str,
        name: &str,
    ) -> impl Future<Output = ControlResult<RuleEntry>> + Send;
    /// Adds `rule` (named by [`RuleProperties::name`]) to `subscription` of `topic`.
    fn create_rule(
        &self,
        topic: &str,
        subscription: &str,
        rule: RuleProperties,
    ) -> impl Future<Output = ControlResult<RuleEntry>> + Send;
    /// Replaces the filter and action of the rule named by [`RuleProperties::name`].
    fn update_rule(
        &self,
        topic: &str,
        subscription: &str,
        rule: RuleProperties,
    ) -> impl Future<Output = ControlResult<RuleEntry>> + Send;
    /// Deletes the rule `name` of `subscription` of `topic`.
    fn delete_rule(
        &self,
        topic: &str,
        subscription: &str,
        name: &str,
    ) -> impl Future<Output = ControlResult<()>> + Send;

    /// The counts `GET /metrics` reports (no token needed, as for Prometheus scrapers). By
    /// default [`ControlError::NotFound`]: the endpoint answers 404.
    fn metrics(&self) -> impl Future<Output = ControlResult<MetricsSnapshot>> + Send {
        async { Err(ControlError::NotFound) }
    }

    /// What `GET /health` reports; healthy by default.
    fn health(&self) -> Health {
        Health::Healthy
    }

    /// Whether the broker runs with `--test-controls`: only then are [`clock`](Self::clock),
    /// [`advance_clock`](Self::advance_clock) and [`inject_fault`](Self::inject_fault) served
    /// (404 otherwise), and `GET /health` says so.
    fn test_controls(&self) -> bool {
        false
    }

    /// Removes every message of `entity` (only its dead-letter sub-queue's if
    /// `dead_letter_only`), with its sessions and their state; returns how many messages went.
    /// `entity` is a queue or topic name or `{topic}/Subscriptions/{subscription}`, the names
    /// validated and `Subscriptions` spelled so (which kinds it serves is the implementation's
    /// to say). Served with or without `--test-controls`; by default [`ControlError::NotFound`].
    fn purge(
        &self,
        entity: &str,
        dead_letter_only: bool,
    ) -> impl Future<Output = ControlResult<u64>> + Send {
        let _ = (entity, dead_letter_only);
        async { Err(ControlError::NotFound) }
    }

    /// Removes messages as [`purge`](Self::purge) does, for the explorer: served whether or not
    /// the broker runs with `--test-controls`; by default [`ControlError::NotFound`].
    fn purge_messages(
        &self,
        entity: &str,
        dead_letter_only: bool,
    ) -> impl Future<Output = ControlResult<u64>> + Send {
        let _ = (entity, dead_letter_only);
        async { Err(ControlError::NotFound) }
    }

    /// Every queue, topic and subscription with its counts, in name order, subscriptions after
    /// their topic (the explorer's overview; by default [`ControlError::NotFound`]).
    fn overview(&self) -> impl Future<Output = ControlResult<Vec<EntityCounts>>> + Send {
        async { Err(ControlError::NotFound) }
    }

    /// Up to `count` messages of the queue or subscription `entity` (named as for
    /// [`purge`](Self::purge)) in `sub_queue`, from sequence number `from` on, without loading
    /// the others (by default [`ControlError::NotFound`]).
    fn peek(
        &self,
        entity: &str,
        sub_queue: SubQueue,
        from: i64,
        count: usize,
    ) -> impl Future<Output = ControlResult<Vec<PeekedMessage>>> + Send {
        let _ = (entity, sub_queue, from, count);
        async { Err(ControlError::NotFound) }
    }

    /// Sends `message` to the queue or topic `entity`, answered once stored (by default
    /// [`ControlError::NotFound`]).
    fn send(
        &self,
        entity: &str,
        message: OutgoingMessage,
    ) -> impl Future<Output = ControlResult<()>> + Send {
        let _ = (entity, message);
        async { Err(ControlError::NotFound) }
    }

    /// Moves the dead-lettered messages `sequences` (all when `None`) of `entity` to
    /// `destination` (the entity itself when `None`), each removed from the dead-letter queue
    /// only once its copy is durable (by default [`ControlError::NotFound`]).
    fn redrive(
        &self,
        entity: &str,
        sequences: Option<Vec<i64>>,
        destination: Option<String>,
    ) -> impl Future<Output = ControlResult<Redriven>> + Send {
        let _ = (entity, sequences, destination);
        async { Err(ControlError::NotFound) }
    }

    /// Up to `top` sessions of `entity` after the first `skip`, with state and lock holder
    /// (by default [`ControlError::NotFound`]).
    fn sessions(
        &self,
        entity: &str,
        skip: usize,
        top: usize,
    ) -> impl Future<Output = ControlResult<Vec<SessionInfo>>> + Send {
        let _ = (entity, skip, top);
        async { Err(ControlError::NotFound) }
    }

    /// Sets (`Some`) or clears (`None`) the state of `session` of `entity`, whether or not a
    /// receiver holds it (by default [`ControlError::NotFound`]).
    fn set_session_state(
        &self,
        entity: &str,
        session: &str,
        state: Option<Vec<u8>>,
    ) -> impl Future<Output = ControlResult<()>> + Send {
        let _ = (entity, session, state);
        async { Err(ControlError::NotFound) }
    }

    /// Brings the namespace back to its configured entities, holding no messages. Served with
    /// or without `--test-controls`; by default [`ControlError::NotFound`].
    fn reset(&self) -> impl Future<Output = ControlResult<()>> + Send {
        async { Err(ControlError::NotFound) }
    }

    /// The virtual clock (`--test-controls`; by default [`ControlError::NotFound`]).
    fn clock(&self) -> impl Future<Output = ControlResult<ClockState>> + Send {
        async { Err(ControlError::NotFound) }
    }

    /// Moves the virtual clock forward `by`, firing what falls due (lock expiries, scheduled
    /// messages, TTLs), and returns it (`--test-controls`; by default
    /// [`ControlError::NotFound`]).
    fn advance_clock(
        &self,
        by: Duration,
    ) -> impl Future<Output = ControlResult<ClockState>> + Send {
        let _ = by;
        async { Err(ControlError::NotFound) }
    }

    /// Arms `fault` on `entity`, named as for [`purge`](Self::purge) (`--test-controls`; by
    /// default [`ControlError::NotFound`]).
    fn inject_fault(
        &self,
        entity: &str,
        fault: Fault,
    ) -> impl Future<Output = ControlResult<()>> + Send {
        let _ = (entity, fault);
        async { Err(ControlError::NotFound) }
    }
}
