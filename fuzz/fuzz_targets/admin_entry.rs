//! Fuzz target: the administration API's request-body parser on arbitrary bytes. Besides never
//! panicking (nor overflowing the stack), whatever parses must make properties that, written
//! back as a response entry, parse to the same properties again.
#![no_main]

use busbar_admin::atom::{
    EntityDescription, EntityTimes, Entry, EntryContent, MessageCountDetails,
    QueueRuntimeProperties, SubscriptionRuntimeProperties, Timestamp, TopicRuntimeProperties,
    parse_entry, write_entry,
};
use libfuzzer_sys::fuzz_target;

fn rewritten(content: EntryContent<'_>) -> EntityDescription {
    let moment = Timestamp::from_unix_millis(0);
    let entry = Entry {
        id: "https://h/e",
        title: "e",
        published: moment,
        updated: moment,
        author: None,
        content,
    };
    parse_entry(write_entry(&entry).as_bytes()).expect("an entry we wrote parses")
}

fuzz_target!(|data: &[u8]| {
    let Ok(description) = parse_entry(data) else {
        return;
    };
    let times = EntityTimes::all_at(Timestamp::from_unix_millis(0));
    let counts = MessageCountDetails::default();
    match description {
        EntityDescription::Queue(queue) => {
            let properties = queue.into_properties();
            let runtime = QueueRuntimeProperties {
                size_in_bytes: 0,
                message_count: 0,
                counts,
                times,
            };
            let EntityDescription::Queue(again) =
                rewritten(EntryContent::Queue(&properties, &runtime))
            else {
                panic!("a queue entry parsed as something else");
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
            let EntityDescription::Topic(again) =
                rewritten(EntryContent::Topic(&properties, &runtime))
            else {
                panic!("a topic entry parsed as something else");
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
                rewritten(EntryContent::Subscription(&properties, &runtime))
            else {
                panic!("a subscription entry parsed as something else");
            };
            assert_eq!(again.into_properties(), properties);
        }
        EntityDescription::Rule(rule) => {
            let name = rule.name.clone().unwrap_or_default();
            let properties = rule.into_properties(name.clone());
            let EntityDescription::Rule(again) =
                rewritten(EntryContent::Rule(&properties, Timestamp::MIN))
            else {
                panic!("a rule entry parsed as something else");
            };
            // Debug text, so that a NaN parameter compares equal to itself.
            assert_eq!(
                format!("{:?}", again.into_properties(name)),
                format!("{properties:?}")
            );
        }
    }
});
