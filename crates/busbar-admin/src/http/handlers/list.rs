//! The list endpoints, paged by `$skip` / `$top` (admin-api.md §5), and `GET /$namespaceinfo`.
//! A feed links to its next page while entries remain; a `$skip` past the end gets an empty
//! feed.

use super::{
    Exchange, Failure, Reply, entity, namespace_name, rule, subscription, topic_and_subscription,
};
use crate::atom::{
    Entry, EntryContent, Feed, FeedTitle, PageRequest, Timestamp, write_entry, write_feed,
};
use crate::control::NamespaceControl;
use crate::http::route::Listing;
use crate::validate;

/// The namespace's entry.
pub(super) async fn namespace_info<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
) -> Result<Reply, Failure> {
    let namespace = control
        .namespace()
        .await
        .map_err(|error| Failure::from_control(error, "$namespaceinfo"))?;
    let xml = write_entry(&Entry {
        id: &exchange.url.entry_id(),
        title: &namespace.name,
        published: namespace.created_time,
        updated: namespace.modified_time,
        author: Some(&namespace.name),
        content: EntryContent::Namespace(&namespace),
    });
    Ok(Reply::Entry {
        status: hyper::StatusCode::OK,
        xml,
    })
}

/// One page of a list.
pub(super) async fn list<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    listing: Listing,
) -> Result<Reply, Failure> {
    let page = PageRequest::from_query(exchange.url.query())?;
    let url = exchange.url;
    let feed = FeedPage {
        id: url.feed_id(),
        page,
        now: exchange.now,
    };
    match listing {
        Listing::Queues => {
            let author = namespace_name(control).await?;
            let queues = control
                .list_queues(page)
                .await
                .map_err(|error| Failure::from_control(error, "$Resources/Queues"))?;
            let ids: Vec<String> = queues
                .items
                .iter()
                .map(|q| url.top_level_id(&q.name))
                .collect();
            let entries: Vec<Entry<'_>> = (queues.items.iter().zip(&ids))
                .map(|(queue, id)| entity::queue_entry(queue, id, &author))
                .collect();
            Ok(feed.write(FeedTitle::Queues, queues.total, &entries))
        }
        Listing::Topics => {
            let author = namespace_name(control).await?;
            let topics = control
                .list_topics(page)
                .await
                .map_err(|error| Failure::from_control(error, "$Resources/Topics"))?;
            let ids: Vec<String> = topics
                .items
                .iter()
                .map(|t| url.top_level_id(&t.name))
                .collect();
            let entries: Vec<Entry<'_>> = (topics.items.iter().zip(&ids))
                .map(|(topic, id)| entity::topic_entry(topic, id, &author))
                .collect();
            Ok(feed.write(FeedTitle::Topics, topics.total, &entries))
        }
        Listing::Subscriptions { topic } => {
            validate::entity_name(&topic)?;
            let subscriptions = control
                .list_subscriptions(&topic, page)
                .await
                .map_err(|error| Failure::from_control(error, &topic))?;
            let ids: Vec<String> = (subscriptions.items.iter())
                .map(|s| url.child_id(&s.name))
                .collect();
            let entries: Vec<Entry<'_>> = (subscriptions.items.iter().zip(&ids))
                .map(|(entry, id)| subscription::entry(entry, id))
                .collect();
            Ok(feed.write(FeedTitle::Subscriptions, subscriptions.total, &entries))
        }
        Listing::Rules {
            topic,
            subscription,
        } => {
            topic_and_subscription(&topic, &subscription)?;
            let rules = control
                .list_rules(&topic, &subscription, page)
                .await
                .map_err(|error| {
                    Failure::from_control(error, &format!("{topic}|{subscription}"))
                })?;
            let ids: Vec<String> = (rules.items.iter())
                .map(|r| url.child_id(&r.properties.name))
                .collect();
            let entries: Vec<Entry<'_>> = (rules.items.iter().zip(&ids))
                .map(|(entry, id)| rule::entry(entry, id))
                .collect();
            Ok(feed.write(FeedTitle::Rules, rules.total, &entries))
        }
    }
}

/// What every page's feed envelope needs besides its entries.
struct FeedPage {
    id: String,
    page: PageRequest,
    now: Timestamp,
}

impl FeedPage {
    /// The feed, with a `rel="next"` link when entries remain after this page out of `total`.
    fn write(&self, title: FeedTitle, total: usize, entries: &[Entry<'_>]) -> Reply {
        let next = self
            .page
            .next_page(total)
            .map(|next| next.link_href(&self.id));
        Reply::Feed(write_feed(
            &Feed {
                title,
                id: &self.id,
                updated: self.now,
                next_href: next.as_deref(),
            },
            entries,
        ))
    }
}
