//! Typed reading of one JSON object of `Config.json`: known properties only, each checked, each
//! error naming the entity (the scope) and the property.

use std::ops::RangeInclusive;
use std::time::Duration;

use serde_json::{Map, Value};

use super::duration::{describe, parse_duration};

/// A validation failure before the file name is attached: `scope: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Invalid {
    /// Which entity, e.g. `queue "orders"`, or a JSON path before the name is known.
    pub(super) scope: String,
    /// What is wrong, naming the property.
    pub(super) message: String,
}

/// Inclusive bounds for a duration property; `max: None` means unbounded.
#[derive(Debug, Clone, Copy)]
pub(super) struct DurationLimits {
    pub(super) min: Duration,
    pub(super) max: Option<Duration>,
    pub(super) default: Duration,
}

/// One JSON object whose keys were checked against the properties the schema lists.
pub(super) struct Fields<'a> {
    map: &'a Map<String, Value>,
    scope: String,
    location: &'static str,
}

impl<'a> Fields<'a> {
    /// Checks that `value` is an object with no properties outside `allowed`. `location`
    /// names the object in messages (`Properties`, `CorrelationFilter`; empty for the entity).
    pub(super) fn new(
        value: &'a Value,
        scope: &str,
        location: &'static str,
        allowed: &[&str],
    ) -> Result<Self, Invalid> {
        Self::object(value, scope, location)?.known(allowed)
    }

    /// Checks only that `value` is an object (its properties are checked later by [`Self::known`]).
    pub(super) fn object(
        value: &'a Value,
        scope: &str,
        location: &'static str,
    ) -> Result<Self, Invalid> {
        match value {
            Value::Object(map) => Ok(Self {
                map,
                scope: scope.to_owned(),
                location,
            }),
            other => {
                let what = if location.is_empty() {
                    "the entry"
                } else {
                    location
                };
                let message = format!("{what} must be an object, found {}", describe_value(other));
                Err(Invalid {
                    scope: scope.to_owned(),
                    message,
                })
            }
        }
    }

    /// Refuses any property outside `allowed`, suggesting the property a typo probably meant.
    pub(super) fn known(self, allowed: &[&str]) -> Result<Self, Invalid> {
        if let Some(unknown) = self.map.keys().find(|key| !allowed.contains(&key.as_str())) {
            let place = if self.location.is_empty() {
                String::new()
            } else {
                format!(" in {}", self.location)
            };
            let hint = closest(unknown, allowed)
                .map(|known| format!(" (did you mean {known:?}?)"))
                .unwrap_or_default();
            return Err(self.invalid(format!("unknown property {unknown:?}{place}{hint}")));
        }
        Ok(self)
    }

    /// The same object, with errors reported under a scope that names it (once the entity's
    /// name is known), so messages no longer mention its location.
    pub(super) fn rescoped(self, scope: String) -> Self {
        Self {
            scope,
            location: "",
            ..self
        }
    }

    /// The scope errors are reported under.
    pub(super) fn scope(&self) -> &str {
        &self.scope
    }

    /// An error in this object's scope.
    pub(super) fn invalid(&self, message: String) -> Invalid {
        Invalid {
            scope: self.scope.clone(),
            message,
        }
    }

    /// A nested object, if present.
    pub(super) fn nested(
        &self,
        key: &'static str,
        allowed: &[&str],
    ) -> Result<Option<Fields<'a>>, Invalid> {
        self.map
            .get(key)
            .map(|value| Fields::new(value, &self.scope, key, allowed))
            .transpose()
    }

    /// A nested object whose property names are data, not schema (so none is refused).
    pub(super) fn nested_unchecked(
        &self,
        key: &'static str,
    ) -> Result<Option<Fields<'a>>, Invalid> {
        self.map
            .get(key)
            .map(|value| Fields::object(value, &self.scope, key))
            .transpose()
    }

    /// The elements of an array property; an absent property is an empty array.
    pub(super) fn array(&self, key: &str) -> Result<&'a [Value], Invalid> {
        match self.map.get(key) {
            None => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(self.invalid(format!(
                "{key} must be an array, found {}",
                describe_value(other)
            ))),
        }
    }

    /// A string property, if present.
    pub(super) fn string(&self, key: &str) -> Result<Option<&'a str>, Invalid> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.invalid(format!(
                "{key} must be a string, found {}",
                describe_value(other)
            ))),
        }
    }

    /// A string property that must be present.
    pub(super) fn required_string(&self, key: &str) -> Result<&'a str, Invalid> {
        self.string(key)?
            .ok_or_else(|| self.invalid(format!("{key} is required")))
    }

    /// A boolean property, or `default` when absent.
    pub(super) fn bool_or(&self, key: &str, default: bool) -> Result<bool, Invalid> {
        match self.map.get(key) {
            None => Ok(default),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => Err(self.invalid(format!(
                "{key} must be true or false, found {}",
                describe_value(other)
            ))),
        }
    }

    /// A whole-number property of at least `min`, or `default` when absent.
    pub(super) fn count_at_least(&self, key: &str, min: u32, default: u32) -> Result<u32, Invalid> {
        self.count_within(key, min..=u32::MAX, default)
    }

    /// A whole-number property within `range`, or `default` when absent.
    pub(super) fn count_within(
        &self,
        key: &str,
        range: RangeInclusive<u32>,
        default: u32,
    ) -> Result<u32, Invalid> {
        let Some(value) = self.map.get(key) else {
            return Ok(default);
        };
        let number = match value {
            Value::Number(number) if number.is_i64() || number.is_u64() => number,
            other => {
                return Err(self.invalid(format!(
                    "{key} must be a whole number, found {}",
                    describe_value(other)
                )));
            }
        };
        let (min, max) = (*range.start(), *range.end());
        match number.as_u64().map(u32::try_from) {
            Some(Ok(count)) if range.contains(&count) => Ok(count),
            Some(Ok(count)) if count > max => Err(self.above(key, number, max)),
            Some(Ok(_)) | None => {
                Err(self.invalid(format!("{key} {number} is below the minimum of {min}")))
            }
            Some(Err(_)) => Err(self.above(key, number, max)),
        }
    }

    fn above(&self, key: &str, number: &serde_json::Number, max: u32) -> Invalid {
        self.invalid(format!("{key} {number} is above the maximum of {max}"))
    }

    /// An ISO-8601 duration property within `limits`, or the limits' default when absent.
    pub(super) fn duration(&self, key: &str, limits: DurationLimits) -> Result<Duration, Invalid> {
        let Some(text) = self.string(key)? else {
            return Ok(limits.default);
        };
        let duration = parse_duration(text).map_err(|error| {
            self.invalid(format!(
                "{key} {text:?} is not an ISO-8601 duration such as \"PT1M\" ({error})"
            ))
        })?;
        if duration < limits.min {
            return Err(self.invalid(format!(
                "{key} {text:?} is below the minimum of {}",
                describe(limits.min)
            )));
        }
        if let Some(max) = limits.max.filter(|max| duration > *max) {
            return Err(self.invalid(format!(
                "{key} {text:?} is above the maximum of {}",
                describe(max)
            )));
        }
        Ok(duration)
    }

    /// The properties, sorted by name (serde_json keeps objects sorted).
    pub(super) fn entries(&self) -> impl Iterator<Item = (&'a String, &'a Value)> {
        self.map.iter()
    }

    /// Whether the object has no properties.
    pub(super) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// A JSON value as an error message shows it: strings quoted, containers by kind.
pub(super) fn describe_value(value: &Value) -> String {
    match value {
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        Value::String(text) => format!("{text:?}"),
        other => other.to_string(),
    }
}

/// The allowed property a typo most likely meant: same letters in another case, or at most two
/// edits away.
fn closest<'k>(unknown: &str, allowed: &[&'k str]) -> Option<&'k str> {
    allowed
        .iter()
        .map(|known| {
            (
                edit_distance(&unknown.to_ascii_lowercase(), &known.to_ascii_lowercase()),
                *known,
            )
        })
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

/// Levenshtein distance over bytes (property names are ASCII).
fn edit_distance(left: &str, right: &str) -> usize {
    let mut previous: Vec<usize> = (0..=right.len()).collect();
    for (i, a) in left.bytes().enumerate() {
        let mut current = vec![i + 1];
        for (j, b) in right.bytes().enumerate() {
            let substitution = previous
                .get(j)
                .map_or(usize::MAX, |cost| cost + usize::from(a != b));
            let insertion = current.get(j).map_or(usize::MAX, |cost| cost + 1);
            let deletion = previous.get(j + 1).map_or(usize::MAX, |cost| cost + 1);
            current.push(substitution.min(insertion).min(deletion));
        }
        previous = current;
    }
    previous.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ALLOWED: &[&str] = &["LockDuration", "MaxDeliveryCount", "RequiresSession"];

    fn message<T>(result: Result<T, Invalid>) -> String {
        match result {
            Ok(_) => panic!("expected an error"),
            Err(invalid) => format!("{}: {}", invalid.scope, invalid.message),
        }
    }

    #[test]
    fn unknown_properties_are_refused_with_a_suggestion() {
        let value = json!({"LockDurration": "PT1M"});
        assert_eq!(
            message(Fields::new(&value, "queue \"q\"", "Properties", ALLOWED)),
            r#"queue "q": unknown property "LockDurration" in Properties (did you mean "LockDuration"?)"#
        );
        let value = json!({"requiressession": true});
        assert_eq!(
            message(Fields::new(&value, "queue \"q\"", "", ALLOWED)),
            r#"queue "q": unknown property "requiressession" (did you mean "RequiresSession"?)"#
        );
        let value = json!({"Colour": 1});
        assert_eq!(
            message(Fields::new(&value, "s", "", ALLOWED)),
            r#"s: unknown property "Colour""#
        );
        assert_eq!(
            message(Fields::new(&json!([1]), "s", "Properties", ALLOWED)),
            "s: Properties must be an object, found an array"
        );
    }

    #[test]
    fn typed_accessors_report_the_property_and_the_value() {
        let value = json!({"LockDuration": 60, "MaxDeliveryCount": "3", "RequiresSession": "yes"});
        let fields = Fields::new(&value, "queue \"q\"", "", ALLOWED).unwrap();
        let limits = DurationLimits {
            min: Duration::from_secs(5),
            max: None,
            default: Duration::from_secs(60),
        };
        assert_eq!(
            message(fields.duration("LockDuration", limits)),
            "queue \"q\": LockDuration must be a string, found 60"
        );
        assert_eq!(
            message(fields.count_at_least("MaxDeliveryCount", 1, 3)),
            "queue \"q\": MaxDeliveryCount must be a whole number, found \"3\""
        );
        assert_eq!(
            message(fields.bool_or("RequiresSession", false)),
            "queue \"q\": RequiresSession must be true or false, found \"yes\""
        );
    }

    #[test]
    fn counts_are_bounded_by_the_minimum_and_u32() {
        let check = |value: Value| {
            let object = json!({ "MaxDeliveryCount": value });
            let fields = Fields::new(&object, "q", "", ALLOWED).unwrap();
            fields
                .count_at_least("MaxDeliveryCount", 1, 3)
                .map_err(|invalid| invalid.message)
        };
        assert_eq!(check(json!(1)), Ok(1));
        assert_eq!(check(json!(4_294_967_295u64)), Ok(u32::MAX));
        assert_eq!(
            check(json!(0)),
            Err("MaxDeliveryCount 0 is below the minimum of 1".to_owned())
        );
        assert_eq!(
            check(json!(-2)),
            Err("MaxDeliveryCount -2 is below the minimum of 1".to_owned())
        );
        assert_eq!(
            check(json!(4_294_967_296u64)),
            Err("MaxDeliveryCount 4294967296 is above the maximum of 4294967295".to_owned())
        );
        assert_eq!(
            check(json!(2.5)),
            Err("MaxDeliveryCount must be a whole number, found 2.5".to_owned())
        );
    }

    #[test]
    fn edit_distance_counts_single_byte_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(
            closest("Forwardto", &["ForwardTo", "ForwardDeadLetteredMessagesTo"]),
            Some("ForwardTo")
        );
        assert_eq!(closest("Zzz", &["ForwardTo"]), None);
    }
}
