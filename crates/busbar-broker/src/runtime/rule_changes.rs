//! `com.microsoft:add-rule` / `remove-rule` (servicebus-amqp.md §5.11): requests parsed into rule
//! changes, a subscription's live rule set (swapped whole once the change is durable, so the send
//! path reads it with one `Arc` clone), and the persisted form of a changed rule set: a `Meta` entry under the
//! subscription's id that overrides the configured rules at start-up.

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use busbar_amqp::types::Value;
use busbar_rules::{
    CorrelationFilter, DEFAULT_RULE_NAME, Filter, Parameter, Rule, RuleSet, SqlAction, SqlFilter,
};
use busbar_store::{Completion, EntityId, MetaKey, Record, Recovered};
use bytes::{Bytes, BytesMut};

use super::request::Request;
use super::rule_parameters;
use super::rules::{amqp_value, rules_value};
use crate::errors::BrokerError;

/// The operation adding a rule.
pub(crate) const ADD_RULE: &str = "com.microsoft:add-rule";
/// The operation removing a rule.
pub(crate) const REMOVE_RULE: &str = "com.microsoft:remove-rule";
/// The `Meta` key of a subscription's changed rule set.
const RULES_KEY: &[u8] = b"rules";
/// Keys of the persisted form only (add-rule requests carry SQL or correlation filters).
const TRUE_FILTER: &str = "true-filter";
const FALSE_FILTER: &str = "false-filter";

/// What an add-rule or remove-rule request asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RuleChange {
    /// Add this rule (its name must be free).
    Add(Box<Rule>),
    /// Remove the rule of this name.
    Remove(String),
    /// Replace the rule of the same name (which must exist).
    Replace(Box<Rule>),
}

impl RuleChange {
    /// `rules` with this change applied; `rules` itself is left as it was.
    pub(crate) fn applied_to(&self, rules: &RuleSet) -> Result<RuleSet, BrokerError> {
        let mut changed = rules.clone();
        match self {
            RuleChange::Add(rule) => changed.add(Rule::clone(rule)),
            RuleChange::Remove(name) => changed.remove(name).map(drop),
            RuleChange::Replace(rule) => changed
                .remove(rule.name())
                .and_then(|_| changed.add(Rule::clone(rule))),
        }
        .map_err(rules_error)?;
        Ok(changed)
    }
}

/// The change an add-rule or remove-rule request asks for; `None` for any other operation.
pub(crate) fn parse(request: &Request) -> Option<Result<RuleChange, BrokerError>> {
    let operation = request.text_property("operation")?;
    if operation != ADD_RULE && operation != REMOVE_RULE {
        return None;
    }
    let body = request.body.as_map().unwrap_or(&[]);
    let change = || {
        let name = field(body, "rule-name")
            .and_then(Value::as_str)
            .ok_or_else(|| argument("'rule-name' must be a string"))?;
        if operation == REMOVE_RULE {
            return Ok(RuleChange::Remove(name.to_owned()));
        }
        let description = field(body, "rule-description")
            .and_then(Value::as_map)
            .ok_or_else(|| argument("'rule-description' must be a map"))?;
        rule_from_description(name, description).map(|rule| RuleChange::Add(Box::new(rule)))
    };
    Some(change())
}

/// A subscription's rules as sends read them and rule changes replace them.
///
/// A change becomes visible (to sends and enumerate-rules) only once its `Meta` record is
/// durable. Changes build on each other in submission order, so the next change starts from
/// `latest`, which already holds the changes still on their way to the store.
#[derive(Debug)]
pub(crate) struct LiveRules {
    /// The rules whose record is durable: what sends read.
    visible: RwLock<Arc<RuleSet>>,
    /// The rules with every submitted change applied; held while a change is submitted, so
    /// changes reach the store in the order they are built.
    latest: Mutex<Arc<RuleSet>>,
}

/// Answers a rule change once its record is durable (or could not be made so).
pub(crate) type ChangeReply = Box<dyn FnOnce(Result<(), BrokerError>) + Send>;

impl LiveRules {
    /// Starts with `rules`.
    pub(crate) fn new(rules: RuleSet) -> Self {
        let rules = Arc::new(rules);
        Self {
            visible: RwLock::new(Arc::clone(&rules)),
            latest: Mutex::new(rules),
        }
    }

    /// The rules in force now.
    pub(crate) fn current(&self) -> Arc<RuleSet> {
        Arc::clone(&self.visible.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Applies `change` on top of the changes submitted before it and hands the whole changed
    /// set, as the `Meta` record of subscription `entity`, to `submit` (which may block while
    /// the store's queue is full). A refused change is answered at once and submits nothing.
    /// Once the record is durable the new rules take effect and `reply` gets `Ok`; if the store
    /// fails, `reply` gets its error and the rules in force stay as they were. A failure
    /// poisons the store, so the changes submitted after it fail too; `latest` goes back to the
    /// rules in force so that the next change starts from them.
    pub(crate) fn change(
        self: &Arc<Self>,
        change: &RuleChange,
        entity: EntityId,
        submit: impl FnOnce(Vec<Record>, Completion),
        reply: ChangeReply,
    ) {
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        let changed = match change.applied_to(&latest) {
            Ok(changed) => Arc::new(changed),
            Err(error) => {
                drop(latest);
                reply(Err(error));
                return;
            }
        };
        let record = record(entity, &changed);
        *latest = Arc::clone(&changed);
        let rules = Arc::clone(self);
        // Runs on the store's writer thread, after it has taken this submission off its queue
        // (so a submitter blocked on a full queue while holding `latest` cannot stall it).
        let completion: Completion = Box::new(move |outcome| {
            let result = match outcome {
                Ok(_) => {
                    *rules
                        .visible
                        .write()
                        .unwrap_or_else(PoisonError::into_inner) = changed;
                    Ok(())
                }
                Err(error) => {
                    *rules.latest.lock().unwrap_or_else(PoisonError::into_inner) = rules.current();
                    Err(BrokerError::StoreUnavailable {
                        reason: error.to_string(),
                    })
                }
            };
            reply(result);
        });
        submit(vec![record], completion);
    }
}

/// The `Meta` record persisting `rules` as the whole rule set of subscription `entity`.
pub(crate) fn record(entity: EntityId, rules: &RuleSet) -> Record {
    let list = Value::List(
        rules
            .iter()
            .map(|rule| {
                Value::Map(vec![
                    (Value::from("rule-name"), Value::from(rule.name())),
                    (Value::from("rule-description"), description_of(rule)),
                ])
            })
            .collect(),
    );
    let mut bytes = BytesMut::with_capacity(list.encoded_size());
    list.encode(&mut bytes);
    Record::Meta {
        entity,
        key: Bytes::from_static(RULES_KEY),
        value: Some(bytes.freeze()),
    }
}

/// The record forgetting the changed rules of subscription `entity` (deleted: a subscription
/// created again under its name starts from the rules it is created with).
pub(crate) fn forgotten(entity: EntityId) -> Record {
    Record::Meta {
        entity,
        key: Bytes::from_static(RULES_KEY),
        value: None,
    }
}

/// The rule set persisted for subscription `entity`, if its rules were ever changed.
pub(crate) fn persisted(
    recovered: &Recovered,
    entity: EntityId,
) -> Option<Result<RuleSet, BrokerError>> {
    let key = MetaKey {
        entity,
        key: Bytes::from_static(RULES_KEY),
    };
    recovered.meta.get(&key).map(decoded)
}

fn decoded(bytes: &Bytes) -> Result<RuleSet, BrokerError> {
    let corrupt = || BrokerError::Internal("persisted rules are malformed".to_owned());
    let Value::List(entries) = Value::decode(&mut bytes.clone()).map_err(|_| corrupt())? else {
        return Err(corrupt());
    };
    // Built up from empty: removing every rule, `$Default` included, is a valid change.
    let mut rules = RuleSet::default();
    rules.remove(DEFAULT_RULE_NAME).map_err(rules_error)?;
    for entry in &entries {
        let map = entry.as_map().ok_or_else(corrupt)?;
        let name = field(map, "rule-name").and_then(Value::as_str);
        let description = field(map, "rule-description").and_then(Value::as_map);
        let (Some(name), Some(description)) = (name, description) else {
            return Err(corrupt());
        };
        rules
            .add(rule_from_description(name, description)?)
            .map_err(rules_error)?;
    }
    Ok(rules)
}

/// The add-rule description map of `rule` (true and false filters under keys of their own).
fn description_of(rule: &Rule) -> Value {
    let expression = |text: &str, parameters: &[Parameter]| {
        let mut map = vec![(Value::from("expression"), Value::from(text))];
        if let Some(parameters) = rule_parameters::encode(parameters) {
            map.push((Value::from("parameters"), parameters));
        }
        Value::Map(map)
    };
    let text = |value: &Option<String>| value.clone().map_or(Value::Null, Value::String);
    let filter = match rule.filter() {
        Filter::True => (Value::from(TRUE_FILTER), Value::Map(Vec::new())),
        Filter::False => (Value::from(FALSE_FILTER), Value::Map(Vec::new())),
        Filter::Sql(sql) => (
            Value::from("sql-filter"),
            expression(sql.expression(), sql.parameters()),
        ),
        Filter::Correlation(filter) => {
            let properties = filter
                .properties
                .iter()
                .map(|(name, value)| (Value::from(name.as_str()), amqp_value(value)))
                .collect();
            let fields = [
                ("correlation-id", &filter.correlation_id),
                ("message-id", &filter.message_id),
                ("to", &filter.to),
                ("reply-to", &filter.reply_to),
                ("label", &filter.label),
                ("session-id", &filter.session_id),
                ("reply-to-session-id", &filter.reply_to_session_id),
                ("content-type", &filter.content_type),
            ];
            let mut map: Vec<(Value, Value)> = fields
                .iter()
                .map(|(key, value)| (Value::from(*key), text(value)))
                .collect();
            map.push((Value::from("properties"), Value::Map(properties)));
            (Value::from("correlation-filter"), Value::Map(map))
        }
    };
    let mut description = vec![filter];
    if let Some(action) = rule.action() {
        description.push((
            Value::from("sql-rule-action"),
            expression(action.expression(), action.parameters()),
        ));
    }
    Value::Map(description)
}

/// A rule from an add-rule `rule-description` map (or its persisted form).
fn rule_from_description(name: &str, description: &[(Value, Value)]) -> Result<Rule, BrokerError> {
    let present = |key: &str| field(description, key).filter(|value| **value != Value::Null);
    let filter = if let Some(sql) = present("sql-filter") {
        let (text, parameters) = expression(sql)?;
        Filter::Sql(
            SqlFilter::with_parameters(text, parameters)
                .map_err(|error| rules_error(error.into()))?,
        )
    } else if let Some(correlation) = present("correlation-filter") {
        Filter::Correlation(correlation_filter(correlation)?)
    } else if present(TRUE_FILTER).is_some() {
        Filter::True
    } else if present(FALSE_FILTER).is_some() {
        Filter::False
    } else {
        return Err(argument(
            "the rule-description needs a sql-filter or a correlation-filter",
        ));
    };
    let action = present("sql-rule-action")
        .map(|action| {
            let (text, parameters) = expression(action)?;
            SqlAction::with_parameters(text, parameters).map_err(|error| rules_error(error.into()))
        })
        .transpose()?;
    Rule::new(name, filter, action).map_err(rules_error)
}

fn correlation_filter(value: &Value) -> Result<CorrelationFilter, BrokerError> {
    let map = value
        .as_map()
        .ok_or_else(|| argument("'correlation-filter' must be a map"))?;
    let text = |key: &str| field(map, key).and_then(Value::as_str).map(str::to_owned);
    let properties = match field(map, "properties") {
        Some(Value::Map(entries)) => entries
            .iter()
            .map(|(name, value)| {
                let name = name
                    .as_str()
                    .ok_or_else(|| argument("correlation property names must be strings"))?;
                Ok((name.to_owned(), rules_value(value.clone())))
            })
            .collect::<Result<_, BrokerError>>()?,
        _ => Vec::new(),
    };
    Ok(CorrelationFilter {
        correlation_id: text("correlation-id"),
        message_id: text("message-id"),
        to: text("to"),
        reply_to: text("reply-to"),
        label: text("label"),
        session_id: text("session-id"),
        reply_to_session_id: text("reply-to-session-id"),
        content_type: text("content-type"),
        properties,
    })
}

/// The `expression` of a SQL filter or action map, and its `parameters`.
fn expression(value: &Value) -> Result<(&str, Vec<Parameter>), BrokerError> {
    let map = value.as_map().unwrap_or_default();
    let text = field(map, "expression")
        .and_then(Value::as_str)
        .ok_or_else(|| argument("a filter or action needs an 'expression' string"))?;
    Ok((text, rule_parameters::decode(field(map, "parameters"))?))
}

fn field<'a>(map: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    map.iter().find(|(k, _)| k.is_key(key)).map(|(_, v)| v)
}

fn argument(text: &str) -> BrokerError {
    BrokerError::Argument(text.to_owned())
}

/// The Service Bus answer to each rules error (a syntax error keeps its position in the text).
fn rules_error(error: busbar_rules::Error) -> BrokerError {
    match error {
        busbar_rules::Error::DuplicateRule(name) => BrokerError::EntityAlreadyExists { name },
        busbar_rules::Error::RuleNotFound(name) => BrokerError::RuleNotFound { name },
        other => BrokerError::Argument(other.to_string()),
    }
}

#[cfg(test)]
mod tests;
