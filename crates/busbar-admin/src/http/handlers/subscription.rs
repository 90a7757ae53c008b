//! `GET`, `PUT` and `DELETE /{topic}/Subscriptions/{name}`. A missing subscription is a 404
//! with an `<Error>` (unlike a missing queue); a create puts the `$Default` rule in place, or
//! the body's `DefaultRuleDescription`.

use hyper::StatusCode;

use super::{
    Exchange, Failure, Reply, check_forward_targets, topic_and_subscription, wrong_description,
};
use crate::atom::{
    DEFAULT_RULE_NAME, EntityDescription, Entry, EntryContent, RuleDescription, RuleProperties,
    SubscriptionDescription, parse_entry, write_entry,
};
use crate::control::{NamespaceControl, SubscriptionEntry};
use crate::validate;

/// The entry of subscription `name` of `topic`.
pub(super) async fn get<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    topic: &str,
    name: &str,
) -> Result<Reply, Failure> {
    topic_and_subscription(topic, name)?;
    let subscription = control
        .subscription(topic, name)
        .await
        .map_err(|error| Failure::from_control(error, &path(topic, name)))?;
    Ok(reply(
        &subscription,
        &exchange.url.entry_id(),
        StatusCode::OK,
    ))
}

/// Creates (201) or, with `If-Match`, updates (200) subscription `name` of `topic`.
pub(super) async fn put<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    topic: &str,
    name: &str,
) -> Result<Reply, Failure> {
    topic_and_subscription(topic, name)?;
    let EntityDescription::Subscription(sent) = parse_entry(&exchange.body)? else {
        return Err(wrong_description("subscription", "SubscriptionDescription"));
    };
    let (subscription, status) = if exchange.if_match {
        (update(control, topic, name, sent).await?, StatusCode::OK)
    } else {
        (
            create(control, topic, name, sent).await?,
            StatusCode::CREATED,
        )
    };
    Ok(reply(&subscription, &exchange.url.entry_id(), status))
}

async fn create<C: NamespaceControl>(
    control: &C,
    topic: &str,
    name: &str,
    mut sent: SubscriptionDescription,
) -> Result<SubscriptionEntry, Failure> {
    let default_rule = default_rule(sent.default_rule.take());
    validate::rule(&default_rule)?;
    let properties = sent.into_properties();
    validate::subscription(&properties)?;
    check_forward_targets(control, forwards(&properties)).await?;
    control
        .create_subscription(topic, name, properties, default_rule)
        .await
        .map_err(|error| Failure::from_control(error, &path(topic, name)))
}

/// An update keeps the rules: a `DefaultRuleDescription` in its body is ignored, as it only
/// means something at creation.
async fn update<C: NamespaceControl>(
    control: &C,
    topic: &str,
    name: &str,
    sent: SubscriptionDescription,
) -> Result<SubscriptionEntry, Failure> {
    let failed = |error| Failure::from_control(error, &path(topic, name));
    let stored = control
        .subscription(topic, name)
        .await
        .map_err(failed)?
        .properties;
    let mut properties = stored.clone();
    sent.apply_to(&mut properties);
    validate::subscription_update(&stored, &properties)?;
    validate::subscription(&properties)?;
    check_forward_targets(control, forwards(&properties)).await?;
    control
        .update_subscription(topic, name, properties)
        .await
        .map_err(failed)
}

/// Deletes subscription `name` of `topic`; 404 when it does not exist.
pub(super) async fn delete<C: NamespaceControl>(
    control: &C,
    topic: &str,
    name: &str,
) -> Result<Reply, Failure> {
    topic_and_subscription(topic, name)?;
    control
        .delete_subscription(topic, name)
        .await
        .map(|()| Reply::Deleted)
        .map_err(|error| Failure::from_control(error, &path(topic, name)))
}

/// The rule a new subscription starts with: the one described, named `$Default` unless it
/// says otherwise, or `$Default` with the true filter and no action.
fn default_rule(described: Option<RuleDescription>) -> RuleProperties {
    let described = described.unwrap_or_default();
    let name = described
        .name
        .clone()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_RULE_NAME.to_owned());
    described.into_properties(name)
}

fn forwards(
    subscription: &crate::atom::SubscriptionProperties,
) -> Vec<validate::ForwardTarget<'_>> {
    validate::forward_targets(
        subscription.forward_to.as_deref(),
        subscription.forward_dead_lettered_messages_to.as_deref(),
    )
}

/// `topic|subscription`, as the service names a subscription in errors.
fn path(topic: &str, name: &str) -> String {
    format!("{topic}|{name}")
}

/// The entry of a subscription (the service writes no author for subscriptions).
pub(super) fn entry<'a>(subscription: &'a SubscriptionEntry, id: &'a str) -> Entry<'a> {
    Entry {
        id,
        title: &subscription.name,
        published: subscription.runtime.times.created_at,
        updated: subscription.runtime.times.updated_at,
        author: None,
        content: EntryContent::Subscription(&subscription.properties, &subscription.runtime),
    }
}

fn reply(subscription: &SubscriptionEntry, id: &str, status: StatusCode) -> Reply {
    Reply::Entry {
        status,
        xml: write_entry(&entry(subscription, id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::{RuleAction, RuleFilter};

    #[test]
    fn the_default_rule_is_true_unless_described() {
        let plain = default_rule(None);
        assert_eq!(plain.name, "$Default");
        assert_eq!(plain.filter, RuleFilter::True);
        assert_eq!(plain.action, RuleAction::Empty);
        let unnamed = default_rule(Some(RuleDescription {
            name: None,
            filter: RuleFilter::False,
            action: RuleAction::Empty,
        }));
        assert_eq!(
            (unnamed.name.as_str(), unnamed.filter),
            ("$Default", RuleFilter::False)
        );
        let named = default_rule(Some(RuleDescription {
            name: Some("first".into()),
            ..RuleDescription::default()
        }));
        assert_eq!(named.name, "first");
    }
}
