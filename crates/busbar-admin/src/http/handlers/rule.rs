//! `GET`, `PUT` and `DELETE /{topic}/Subscriptions/{subscription}/Rules/{name}`. The path
//! names the rule; a `Name` in the body is ignored.

use hyper::StatusCode;

use super::{Exchange, Failure, Reply, topic_and_subscription, wrong_description};
use crate::atom::{EntityDescription, Entry, EntryContent, parse_entry, write_entry};
use crate::control::{NamespaceControl, RuleEntry};
use crate::validate;

/// The entry of rule `name`.
pub(super) async fn get<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    topic: &str,
    subscription: &str,
    name: &str,
) -> Result<Reply, Failure> {
    checked(topic, subscription, name)?;
    let rule = control
        .rule(topic, subscription, name)
        .await
        .map_err(|error| Failure::from_control(error, &path(topic, subscription, name)))?;
    Ok(reply(&rule, &exchange.url.entry_id(), StatusCode::OK))
}

/// Creates (201) or, with `If-Match`, replaces (200) rule `name`.
pub(super) async fn put<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    topic: &str,
    subscription: &str,
    name: &str,
) -> Result<Reply, Failure> {
    checked(topic, subscription, name)?;
    let EntityDescription::Rule(sent) = parse_entry(&exchange.body)? else {
        return Err(wrong_description("rule", "RuleDescription"));
    };
    let properties = sent.into_properties(name.to_owned());
    validate::rule(&properties)?;
    let failed = |error| Failure::from_control(error, &path(topic, subscription, name));
    let (rule, status) = if exchange.if_match {
        let rule = control.update_rule(topic, subscription, properties).await;
        (rule.map_err(failed)?, StatusCode::OK)
    } else {
        let rule = control.create_rule(topic, subscription, properties).await;
        (rule.map_err(failed)?, StatusCode::CREATED)
    };
    Ok(reply(&rule, &exchange.url.entry_id(), status))
}

/// Deletes rule `name`; 404 when it does not exist.
pub(super) async fn delete<C: NamespaceControl>(
    control: &C,
    topic: &str,
    subscription: &str,
    name: &str,
) -> Result<Reply, Failure> {
    checked(topic, subscription, name)?;
    control
        .delete_rule(topic, subscription, name)
        .await
        .map(|()| Reply::Deleted)
        .map_err(|error| Failure::from_control(error, &path(topic, subscription, name)))
}

fn checked(topic: &str, subscription: &str, name: &str) -> Result<(), Failure> {
    topic_and_subscription(topic, subscription)?;
    validate::rule_name(name)?;
    Ok(())
}

/// `topic|subscription|rule`, as the service names a rule in errors.
fn path(topic: &str, subscription: &str, name: &str) -> String {
    format!("{topic}|{subscription}|{name}")
}

/// The entry of a rule (no author, like subscriptions; published and updated when it was
/// created, since a rule records no other time).
pub(super) fn entry<'a>(rule: &'a RuleEntry, id: &'a str) -> Entry<'a> {
    Entry {
        id,
        title: &rule.properties.name,
        published: rule.created_at,
        updated: rule.created_at,
        author: None,
        content: EntryContent::Rule(&rule.properties, rule.created_at),
    }
}

fn reply(rule: &RuleEntry, id: &str, status: StatusCode) -> Reply {
    Reply::Entry {
        status,
        xml: write_entry(&entry(rule, id)),
    }
}
