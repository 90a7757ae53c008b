//! The operations of admin-api.md §4, once a request is routed, authorised and its body read:
//! validate, call the [`NamespaceControl`], write the entry or feed. Each returns a [`Reply`]
//! or a [`Failure`]; turning those into HTTP responses is [`super::response`]'s job.

mod entity;
mod list;
mod rule;
mod subscription;

use bytes::Bytes;
use hyper::StatusCode;

use super::request_url::RequestUrl;
use super::route::{Operation, Target};
use crate::atom::{AtomError, Timestamp};
use crate::control::{ControlError, NamespaceControl};
use crate::validate::{self, ForwardTarget, ValidationError};

/// A successful answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// An Atom entry (200 for reads and updates, 201 for creates).
    Entry {
        /// 200 or 201.
        status: StatusCode,
        /// The document.
        xml: String,
    },
    /// An Atom feed: a list page, or the empty feed that answers a missing queue or topic.
    Feed(String),
    /// 200 with no body (DELETE).
    Deleted,
}

/// A refused or failed operation: the service's status and `<Error>` detail (§6.9, §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// 400: a body, query, name or value the service refuses.
    BadRequest(String),
    /// 404: `entity` (names joined by `|`, as the service writes them) does not exist.
    NotFound {
        /// The entity's path in the service's spelling (`topic|subscription|rule`).
        entity: String,
    },
    /// 409: the entity exists.
    Conflict,
    /// 503: the broker cannot serve the request now.
    Unavailable(String),
}

impl From<AtomError> for Failure {
    fn from(error: AtomError) -> Failure {
        Failure::BadRequest(error.to_string())
    }
}

impl From<ValidationError> for Failure {
    fn from(error: ValidationError) -> Failure {
        Failure::BadRequest(error.to_string())
    }
}

impl Failure {
    /// The failure a control error means for the entity at `entity` (404 names it).
    fn from_control(error: ControlError, entity: &str) -> Failure {
        match error {
            ControlError::NotFound => Failure::NotFound {
                entity: entity.to_owned(),
            },
            ControlError::AlreadyExists => Failure::Conflict,
            ControlError::Invalid { detail } => Failure::BadRequest(detail),
            ControlError::Unavailable { detail } => Failure::Unavailable(detail),
        }
    }
}

/// What a handler knows about the request besides its target.
pub(crate) struct Exchange<'a> {
    /// The request's URL, for `<id>`s and links.
    pub(crate) url: &'a RequestUrl,
    /// The time now.
    pub(crate) now: Timestamp,
    /// Whether the request carried `If-Match` (a PUT is then an update).
    pub(crate) if_match: bool,
    /// The body (empty but for PUT).
    pub(crate) body: Bytes,
}

/// Carries out an operation.
pub(crate) async fn dispatch<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    operation: Operation,
) -> Result<Reply, Failure> {
    match operation {
        Operation::NamespaceInfo => list::namespace_info(control, exchange).await,
        Operation::List(listing) => list::list(control, exchange, listing).await,
        Operation::Get(target) => match target {
            Target::Entity { name } => entity::get(control, exchange, &name).await,
            Target::Subscription { topic, name } => {
                subscription::get(control, exchange, &topic, &name).await
            }
            Target::Rule {
                topic,
                subscription,
                name,
            } => rule::get(control, exchange, &topic, &subscription, &name).await,
        },
        Operation::Put(target) => match target {
            Target::Entity { name } => entity::put(control, exchange, &name).await,
            Target::Subscription { topic, name } => {
                subscription::put(control, exchange, &topic, &name).await
            }
            Target::Rule {
                topic,
                subscription,
                name,
            } => rule::put(control, exchange, &topic, &subscription, &name).await,
        },
        Operation::Delete(target) => match target {
            Target::Entity { name } => entity::delete(control, &name).await,
            Target::Subscription { topic, name } => {
                subscription::delete(control, &topic, &name).await
            }
            Target::Rule {
                topic,
                subscription,
                name,
            } => rule::delete(control, &topic, &subscription, &name).await,
        },
    }
}

/// The namespace's name, which entries of queues, topics and the namespace carry as author.
async fn namespace_name<C: NamespaceControl>(control: &C) -> Result<String, Failure> {
    control
        .namespace()
        .await
        .map(|namespace| namespace.name)
        .map_err(|error| Failure::from_control(error, "$namespaceinfo"))
}

/// Checks that each forwarding target is an existing queue or topic (the live service refuses
/// a forward to nowhere).
async fn check_forward_targets<C: NamespaceControl>(
    control: &C,
    targets: Vec<ForwardTarget<'_>>,
) -> Result<(), Failure> {
    for target in targets {
        if !entity_exists(control, target.entity).await? {
            return Err(ValidationError::ForwardTargetMissing {
                property: target.property,
                entity: target.entity.to_owned(),
            }
            .into());
        }
    }
    Ok(())
}

/// Whether `name` is a queue or a topic.
async fn entity_exists<C: NamespaceControl>(control: &C, name: &str) -> Result<bool, Failure> {
    let found = |result: Result<(), ControlError>| match result {
        Ok(()) => Ok(true),
        Err(ControlError::NotFound) => Ok(false),
        Err(error) => Err(Failure::from_control(error, name)),
    };
    if found(control.queue(name).await.map(drop))? {
        return Ok(true);
    }
    found(control.topic(name).await.map(drop))
}

/// Validates a subscription or rule's parent names, so that lookups get valid names only.
fn topic_and_subscription(topic: &str, subscription: &str) -> Result<(), Failure> {
    validate::entity_name(topic)?;
    validate::subscription_name(subscription)?;
    Ok(())
}

/// The description a PUT body must hold, named for the 400 when it holds another.
fn wrong_description(path_kind: &str, expected: &str) -> Failure {
    Failure::BadRequest(format!(
        "a PUT of a {path_kind} takes a {expected} in its Atom entry"
    ))
}
