//! The ATOM/XML codec of the administration API, pure: bytes in, descriptions out, and
//! descriptions in, response documents out.
//!
//! * Requests: [`parse_entry`] reads the body of a `PUT` into an [`EntityDescription`]. Elements
//!   are matched by local name and namespace URI in any order, unknown and read-only ones are
//!   ignored, and every SDK's spelling is accepted (§0, §6). DTDs are refused, so no entity is
//!   ever expanded, and size, depth and element count are bounded. Every failure is an
//!   [`AtomError`], which [`ErrorBody::bad_request`] turns into the service's 400 body.
//! * Descriptions come in two shapes per entity: `…Properties` hold every settable property
//!   (with the service's defaults), `…Description` what a request sent (`None` where it left
//!   an element out); `apply_to` / `into_properties` combine them for updates and creates.
//!   Runtime properties (counts, sizes, times) are separate types the broker fills in.
//! * Responses: [`write_entry`], [`write_feed`] (paged by [`PageRequest`]),
//!   [`write_not_found_feed`] and [`ErrorBody::to_xml`] produce the documents byte for byte as
//!   the captured traces show them, elements in the live service's order (§6).
//!
//! ```
//! use busbar_admin::atom::{
//!     EntityDescription, EntityTimes, Entry, EntryContent, MessageCountDetails,
//!     QueueRuntimeProperties, TimeSpan, Timestamp, forward_target_entity, parse_entry,
//!     write_entry,
//! };
//!
//! // What Python 7.15 PUTs to create a queue (Atom under `ns0:`, Service Bus as the default).
//! let body = br#"<ns0:entry xmlns:ns0="http://www.w3.org/2005/Atom"
//!     xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">
//!     <ns0:content type="application/xml"><QueueDescription>
//!       <LockDuration>PT45S</LockDuration>
//!       <ForwardDeadLetteredMessagesTo>sb://localhost:5300/dlq</ForwardDeadLetteredMessagesTo>
//!     </QueueDescription></ns0:content></ns0:entry>"#;
//! let Ok(EntityDescription::Queue(sent)) = parse_entry(body) else { unreachable!() };
//! let queue = sent.into_properties();
//! assert_eq!(queue.lock_duration, TimeSpan::from_secs(45));
//! assert_eq!(queue.max_delivery_count, 10); // the service's default
//! let target = queue.forward_dead_lettered_messages_to.as_deref().map(forward_target_entity);
//! assert_eq!(target, Some("dlq"));
//!
//! let now = Timestamp::from_unix_millis(1_700_000_000_000);
//! let runtime = QueueRuntimeProperties {
//!     size_in_bytes: 0,
//!     message_count: 0,
//!     counts: MessageCountDetails::default(),
//!     times: EntityTimes::all_at(now),
//! };
//! let response = write_entry(&Entry {
//!     id: "https://localhost:5300/q?api-version=2021-05",
//!     title: "q",
//!     published: now,
//!     updated: now,
//!     author: Some("sbemulatorns"),
//!     content: EntryContent::Queue(&queue, &runtime),
//! });
//! assert!(response.contains("<LockDuration>PT45S</LockDuration><MaxSizeInMegabytes>1024<"));
//! ```

mod common;
mod element_values;
mod error;
mod error_body;
mod namespace_info;
pub mod namespaces;
mod paging;
mod queue;
mod request;
mod response;
mod rule;
mod rule_value;
mod runtime;
mod subscription;
mod time_span;
mod timestamp;
mod topic;
mod xml_tree;
mod xml_writer;

pub use common::{AccessRight, AuthorizationRule, EntityStatus, forward_target_entity};
pub use error::AtomError;
pub use error_body::{ErrorBody, ErrorContext};
pub use namespace_info::{MessagingSku, NamespaceInfo};
pub use paging::PageRequest;
pub(crate) use paging::percent_decode;
pub use queue::{QueueDescription, QueueProperties};
pub use request::{EntityDescription, parse_entry};
pub use response::{
    Entry, EntryContent, Feed, FeedTitle, write_entry, write_feed, write_not_found_feed,
};
pub use rule::{
    CorrelationRuleFilter, DEFAULT_RULE_NAME, RuleAction, RuleDescription, RuleFilter,
    RuleProperties, SqlExpression,
};
pub use rule_value::RuleValue;
pub use runtime::{
    EntityTimes, MessageCountDetails, QueueRuntimeProperties, SubscriptionRuntimeProperties,
    TopicRuntimeProperties,
};
pub use subscription::{SubscriptionDescription, SubscriptionProperties};
pub use time_span::TimeSpan;
pub use timestamp::Timestamp;
pub use topic::{TopicDescription, TopicProperties};
pub use xml_tree::{MAX_DEPTH, MAX_DOCUMENT_BYTES, MAX_ELEMENTS};
