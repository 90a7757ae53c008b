//! Response bodies: the Atom entry for one entity, the feed for a list, and the empty feed
//! that answers a GET of a missing queue or topic, shaped exactly as the service sends them
//! (§6.1, §6.8) since some SDKs read by position.

use super::namespace_info::{self, NamespaceInfo};
use super::namespaces::ATOM;
use super::queue::{self, QueueProperties};
use super::rule::{self, RuleProperties};
use super::runtime::{
    QueueRuntimeProperties, SubscriptionRuntimeProperties, TopicRuntimeProperties,
};
use super::subscription::{self, SubscriptionProperties};
use super::timestamp::Timestamp;
use super::topic::{self, TopicProperties};
use super::xml_writer::XmlWriter;

/// One entity's Atom entry.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// `<id>` and the `rel="self"` link: the entity's URL with the request's path casing (JS
    /// parses subscription and rule names out of it, case-sensitively).
    pub id: &'a str,
    /// `<title>`: the entity's name (.NET, Python, Java and Go read names from it).
    pub title: &'a str,
    /// `<published>`.
    pub published: Timestamp,
    /// `<updated>`.
    pub updated: Timestamp,
    /// `<author><name>`: the namespace, for queues, topics and the namespace itself; the
    /// service writes none for subscriptions and rules.
    pub author: Option<&'a str>,
    /// The description inside `<content>`.
    pub content: EntryContent<'a>,
}

/// The description an entry carries.
#[derive(Debug, Clone, Copy)]
pub enum EntryContent<'a> {
    /// `QueueDescription`.
    Queue(&'a QueueProperties, &'a QueueRuntimeProperties),
    /// `TopicDescription`.
    Topic(&'a TopicProperties, &'a TopicRuntimeProperties),
    /// `SubscriptionDescription`.
    Subscription(
        &'a SubscriptionProperties,
        &'a SubscriptionRuntimeProperties,
    ),
    /// `RuleDescription` and when the rule was created.
    Rule(&'a RuleProperties, Timestamp),
    /// `NamespaceInfo`.
    Namespace(&'a NamespaceInfo),
}

/// The kind of entities a feed lists: its `<title>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeedTitle {
    /// `GET /$Resources/Queues`.
    Queues,
    /// `GET /$Resources/Topics`.
    Topics,
    /// `GET /{topic}/Subscriptions`.
    Subscriptions,
    /// `GET /{topic}/Subscriptions/{subscription}/Rules`.
    Rules,
}

impl FeedTitle {
    fn as_str(self) -> &'static str {
        match self {
            FeedTitle::Queues => "Queues",
            FeedTitle::Topics => "Topics",
            FeedTitle::Subscriptions => "Subscriptions",
            FeedTitle::Rules => "Rules",
        }
    }
}

/// One page of a list.
#[derive(Debug, Clone, Copy)]
pub struct Feed<'a> {
    /// `<title>`.
    pub title: FeedTitle,
    /// `<id>` and the `rel="self"` link: the request URL.
    pub id: &'a str,
    /// `<updated>`.
    pub updated: Timestamp,
    /// The `rel="next"` link, when entries remain after this page (see
    /// [`PageRequest::link_href`](super::PageRequest::link_href) of
    /// [`PageRequest::next_page`](super::PageRequest::next_page)). Python follows
    /// the feed's *second* link, so it comes right after the self link.
    pub next_href: Option<&'a str>,
}

/// The `<entry>` document for one entity.
pub fn write_entry(entry: &Entry<'_>) -> String {
    let mut writer = XmlWriter::default();
    encode_entry(&mut writer, entry, None);
    writer.finish()
}

/// The `<feed>` document for one page of a list; each entry is shaped as a single GET's.
pub fn write_feed(feed: &Feed<'_>, entries: &[Entry<'_>]) -> String {
    let mut writer = XmlWriter::default();
    writer.start("feed", &[("xmlns", ATOM)]);
    writer.leaf_attributed("title", &[("type", "text")], feed.title.as_str());
    writer.leaf("id", feed.id);
    writer.leaf("updated", &feed.updated.to_atom_string());
    writer.empty("link", &[("rel", "self"), ("href", feed.id)]);
    if let Some(next) = feed.next_href {
        writer.empty("link", &[("rel", "next"), ("href", next)]);
    }
    for entry in entries {
        encode_entry(&mut writer, entry, Some(feed.id));
    }
    writer.end("feed");
    writer.finish()
}

/// The feed that answers a GET of a queue or topic that does not exist: 200, not 404, and every
/// SDK reads it as "not found" (§0 item 1). `id` is the service's `uuid:…;id=N` tag.
pub fn write_not_found_feed(id: &str, updated: Timestamp) -> String {
    let mut writer = XmlWriter::default();
    writer.start("feed", &[("xmlns", ATOM)]);
    writer.leaf_attributed("title", &[("type", "text")], "Publicly Listed Services");
    writer.leaf_attributed(
        "subtitle",
        &[("type", "text")],
        "This is the list of publicly-listed services currently available.",
    );
    writer.leaf("id", id);
    writer.leaf("updated", &updated.to_atom_string());
    writer.leaf("generator", "Service Bus 1.1");
    writer.end("feed");
    writer.finish()
}

/// An `<entry>`; inside a feed it carries the feed's URL as `xml:base`, as the service's do.
fn encode_entry(writer: &mut XmlWriter, entry: &Entry<'_>, feed_base: Option<&str>) {
    match feed_base {
        Some(base) => writer.start("entry", &[("xmlns", ATOM), ("xml:base", base)]),
        None => writer.start("entry", &[("xmlns", ATOM)]),
    }
    writer.leaf("id", entry.id);
    writer.leaf_attributed("title", &[("type", "text")], entry.title);
    writer.leaf("published", &entry.published.to_atom_string());
    writer.leaf("updated", &entry.updated.to_atom_string());
    if let Some(author) = entry.author {
        writer.start("author", &[]);
        writer.leaf("name", author);
        writer.end("author");
    }
    writer.empty("link", &[("rel", "self"), ("href", entry.id)]);
    writer.start("content", &[("type", "application/xml")]);
    match entry.content {
        EntryContent::Queue(properties, runtime) => queue::encode(writer, properties, runtime),
        EntryContent::Topic(properties, runtime) => topic::encode(writer, properties, runtime),
        EntryContent::Subscription(properties, runtime) => {
            subscription::encode(writer, properties, runtime);
        }
        EntryContent::Rule(properties, created_at) => rule::encode(writer, properties, created_at),
        EntryContent::Namespace(namespace) => namespace_info::encode(writer, namespace),
    }
    writer.end("content");
    writer.end("entry");
}
