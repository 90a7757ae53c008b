//! Helpers shared by the integration tests: the trace fixtures, and a reading of a response
//! body back into the values the writer needs (so the writer can be compared with the traces).

#![allow(dead_code, unreachable_pub)] // Each test crate uses its own subset.

use std::path::PathBuf;

use busbar_admin::atom::{
    EntityDescription, EntityTimes, Entry, EntryContent, MessageCountDetails, MessagingSku,
    NamespaceInfo, QueueProperties, QueueRuntimeProperties, RuleProperties, SubscriptionProperties,
    SubscriptionRuntimeProperties, Timestamp, TopicProperties, TopicRuntimeProperties, parse_entry,
};
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

fn fixtures_dir(kind: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind)
}

/// The names (without `.xml`) of every fixture of a kind (`requests`, `responses`), sorted.
pub fn fixture_names(kind: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir(kind))
        .expect("fixtures directory")
        .map(|entry| {
            entry
                .expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter_map(|file| file.strip_suffix(".xml").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// A fixture's bytes.
pub fn fixture(kind: &str, name: &str) -> Vec<u8> {
    let path = fixtures_dir(kind).join(format!("{name}.xml"));
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A request fixture, parsed.
pub fn request(name: &str) -> EntityDescription {
    parse_entry(&fixture("requests", name)).unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// The text of the first element named `local_name` (any prefix), if any.
pub fn text_of<'a>(xml: &'a str, local_name: &str) -> Option<&'a str> {
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let tag_end = rest.find('>')?;
        let tag = &rest[..tag_end];
        let name = tag.split(' ').next().unwrap_or("");
        let local = name.rsplit(':').next().unwrap_or(name);
        if local == local_name && !tag.ends_with('/') {
            let content = &rest[tag_end + 1..];
            return Some(&content[..content.find('<')?]);
        }
    }
    None
}

fn timestamp_of(xml: &str, local_name: &str) -> Timestamp {
    let text = text_of(xml, local_name).unwrap_or_else(|| panic!("no <{local_name}>"));
    Timestamp::parse(text).unwrap_or_else(|| panic!("<{local_name}>{text}</{local_name}>"))
}

fn count_of(xml: &str, local_name: &str) -> u64 {
    text_of(xml, local_name)
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| panic!("no count <{local_name}>"))
}

/// Every element's namespace URI and local name, and every attribute's (namespace
/// declarations aside), in document order: the structure a position-reading client sees.
pub fn structure(xml: &str) -> Vec<String> {
    let mut reader = NsReader::from_str(xml);
    let mut names = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(start) | Event::Empty(start) => {
                let (namespace, local) = reader.resolver().resolve_element(start.name());
                names.push(format!("<{}{}>", namespace_of(namespace), local.as_ref()));
                for attribute in start.attributes() {
                    let attribute = attribute.expect("attribute");
                    if attribute.key.as_namespace_binding().is_none() {
                        let (namespace, local) = reader.resolver().resolve_attribute(attribute.key);
                        names.push(format!("@{}{}", namespace_of(namespace), local.as_ref()));
                    }
                }
            }
            Event::End(_) => names.push("</>".to_owned()),
            Event::Eof => return names,
            _ => {}
        }
    }
}

fn namespace_of(resolved: ResolveResult<'_>) -> String {
    match resolved {
        ResolveResult::Bound(namespace) => format!("{{{}}}", namespace.as_ref()),
        _ => String::new(),
    }
}

/// What an entry in a response carries, read back from its text.
pub struct EntryValues {
    pub id: String,
    pub title: String,
    pub published: Timestamp,
    pub updated: Timestamp,
    pub author: Option<String>,
    pub content: ContentValues,
}

/// The description and runtime values of an entry.
pub enum ContentValues {
    Queue(QueueProperties, QueueRuntimeProperties),
    Topic(TopicProperties, TopicRuntimeProperties),
    Subscription(SubscriptionProperties, SubscriptionRuntimeProperties),
    Rule(RuleProperties, Timestamp),
    Namespace(NamespaceInfo),
}

impl EntryValues {
    /// Reads one `<entry>…</entry>`: the settable properties through the crate's own parser
    /// (a response entry is shaped like a request's), the rest from the element texts.
    pub fn read(entry: &str) -> EntryValues {
        let title = text_of(entry, "title").expect("title").to_owned();
        let content = match parse_entry(entry.as_bytes()) {
            Ok(EntityDescription::Queue(queue)) => ContentValues::Queue(
                queue.into_properties(),
                QueueRuntimeProperties {
                    size_in_bytes: count_of(entry, "SizeInBytes"),
                    message_count: count_of(entry, "MessageCount"),
                    counts: counts_of(entry),
                    times: times_of(entry),
                },
            ),
            Ok(EntityDescription::Topic(topic)) => ContentValues::Topic(
                topic.into_properties(),
                TopicRuntimeProperties {
                    size_in_bytes: count_of(entry, "SizeInBytes"),
                    subscription_count: count_of(entry, "SubscriptionCount"),
                    counts: counts_of(entry),
                    times: times_of(entry),
                },
            ),
            Ok(EntityDescription::Subscription(subscription)) => ContentValues::Subscription(
                subscription.into_properties(),
                SubscriptionRuntimeProperties {
                    message_count: count_of(entry, "MessageCount"),
                    counts: counts_of(entry),
                    times: times_of(entry),
                },
            ),
            Ok(EntityDescription::Rule(rule)) => {
                let name = rule.name.clone().expect("a rule entry names its rule");
                ContentValues::Rule(rule.into_properties(name), timestamp_of(entry, "CreatedAt"))
            }
            Err(_) => ContentValues::Namespace(NamespaceInfo {
                name: text_of(entry, "Name").expect("namespace name").to_owned(),
                created_time: timestamp_of(entry, "CreatedTime"),
                modified_time: timestamp_of(entry, "ModifiedTime"),
                messaging_sku: match text_of(entry, "MessagingSKU") {
                    Some("Standard") => MessagingSku::Standard,
                    other => panic!("unexpected SKU {other:?}"),
                },
                messaging_units: None,
            }),
        };
        EntryValues {
            id: text_of(entry, "id").expect("id").to_owned(),
            title,
            published: timestamp_of(entry, "published"),
            updated: timestamp_of(entry, "updated"),
            author: entry
                .contains("<author>")
                .then(|| text_of(entry, "name").expect("author").to_owned()),
            content,
        }
    }

    pub fn as_entry(&self) -> Entry<'_> {
        Entry {
            id: &self.id,
            title: &self.title,
            published: self.published,
            updated: self.updated,
            author: self.author.as_deref(),
            content: match &self.content {
                ContentValues::Queue(properties, runtime) => {
                    EntryContent::Queue(properties, runtime)
                }
                ContentValues::Topic(properties, runtime) => {
                    EntryContent::Topic(properties, runtime)
                }
                ContentValues::Subscription(properties, runtime) => {
                    EntryContent::Subscription(properties, runtime)
                }
                ContentValues::Rule(properties, created_at) => {
                    EntryContent::Rule(properties, *created_at)
                }
                ContentValues::Namespace(namespace) => EntryContent::Namespace(namespace),
            },
        }
    }
}

fn counts_of(entry: &str) -> MessageCountDetails {
    MessageCountDetails {
        active: count_of(entry, "ActiveMessageCount"),
        dead_letter: count_of(entry, "DeadLetterMessageCount"),
        scheduled: count_of(entry, "ScheduledMessageCount"),
        transfer: count_of(entry, "TransferMessageCount"),
        transfer_dead_letter: count_of(entry, "TransferDeadLetterMessageCount"),
        deferred: 0,
    }
}

fn times_of(entry: &str) -> EntityTimes {
    EntityTimes {
        created_at: timestamp_of(entry, "CreatedAt"),
        updated_at: timestamp_of(entry, "UpdatedAt"),
        accessed_at: Some(timestamp_of(entry, "AccessedAt")),
    }
}

/// The `<entry …>…</entry>` substrings of a feed.
pub fn feed_entries(feed: &str) -> Vec<&str> {
    let mut entries = Vec::new();
    let mut rest = feed;
    while let Some(start) = rest.find("<entry") {
        let end = rest[start..].find("</entry>").expect("closed entry") + start + "</entry>".len();
        entries.push(&rest[start..end]);
        rest = &rest[end..];
    }
    entries
}

/// Parses `body`; if it is a description, writes the properties it makes back as a response
/// entry and checks that parsing that gives the same properties again.
pub fn assert_rewrite_is_stable(body: &[u8]) {
    let Ok(description) = parse_entry(body) else {
        return;
    };
    let moment = Timestamp::from_unix_millis(0);
    let times = EntityTimes::all_at(moment);
    let counts = MessageCountDetails::default();
    let write = |content: EntryContent<'_>| {
        let entry = Entry {
            id: "https://h/e",
            title: "e",
            published: moment,
            updated: moment,
            author: None,
            content,
        };
        parse_entry(busbar_admin::atom::write_entry(&entry).as_bytes())
            .expect("our own entry parses")
    };
    match description {
        EntityDescription::Queue(queue) => {
            let properties = queue.into_properties();
            let runtime = QueueRuntimeProperties {
                size_in_bytes: 0,
                message_count: 0,
                counts,
                times,
            };
            let EntityDescription::Queue(again) = write(EntryContent::Queue(&properties, &runtime))
            else {
                panic!()
            };
            assert_eq!(again.into_properties(), properties);
        }
        EntityDescription::Topic(topic) => {
            let properties = topic.into_properties();
            let runtime = TopicRuntimeProperties {
                size_in_bytes: 0,
                subscription_count: 0,
                counts,
                times,
            };
            let EntityDescription::Topic(again) = write(EntryContent::Topic(&properties, &runtime))
            else {
                panic!()
            };
            assert_eq!(again.into_properties(), properties);
        }
        EntityDescription::Subscription(subscription) => {
            let properties = subscription.into_properties();
            let runtime = SubscriptionRuntimeProperties {
                message_count: 0,
                counts,
                times,
            };
            let EntityDescription::Subscription(again) =
                write(EntryContent::Subscription(&properties, &runtime))
            else {
                panic!()
            };
            assert_eq!(again.into_properties(), properties);
        }
        EntityDescription::Rule(rule) => {
            let name = rule.name.clone().unwrap_or_default();
            let properties = rule.into_properties(name.clone());
            let EntityDescription::Rule(again) = write(EntryContent::Rule(&properties, moment))
            else {
                panic!()
            };
            assert!(rule_values_equal(&again.into_properties(name), &properties));
        }
    }
}

/// Rules compare equal, except that a NaN double equals a NaN double.
fn rule_values_equal(a: &RuleProperties, b: &RuleProperties) -> bool {
    format!("{a:?}") == format!("{b:?}")
}
