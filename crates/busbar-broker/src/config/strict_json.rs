//! JSON to `serde_json::Value`, refusing objects that repeat a property.
//!
//! `serde_json::Value` keeps the last of two equal keys, so a property written twice (a
//! copy-paste slip in a hand-edited file) would be silently half-ignored; this visitor refuses it.

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses JSON text; duplicate properties are errors carrying their line and column.
pub(super) fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Strict>(text).map(|Strict(value)| value)
}

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, flag: bool) -> Result<Strict, E> {
        Ok(Strict(Value::Bool(flag)))
    }

    fn visit_i64<E>(self, number: i64) -> Result<Strict, E> {
        Ok(Strict(Value::Number(number.into())))
    }

    fn visit_u64<E>(self, number: u64) -> Result<Strict, E> {
        Ok(Strict(Value::Number(number.into())))
    }

    fn visit_f64<E: serde::de::Error>(self, number: f64) -> Result<Strict, E> {
        Number::from_f64(number)
            .map(|number| Strict(Value::Number(number)))
            .ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_str<E>(self, text: &str) -> Result<Strict, E> {
        Ok(Strict(Value::String(text.to_owned())))
    }

    fn visit_string<E>(self, text: String) -> Result<Strict, E> {
        Ok(Strict(Value::String(text)))
    }

    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Strict, A::Error> {
        let mut values = Vec::new();
        while let Some(Strict(value)) = items.next_element()? {
            values.push(value);
        }
        Ok(Strict(Value::Array(values)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Strict, A::Error> {
        let mut map = Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(A::Error::custom(format!(
                    "property {key:?} appears twice in the same object"
                )));
            }
            let Strict(value) = entries.next_value()?;
            map.insert(key, value);
        }
        Ok(Strict(Value::Object(map)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_like_serde_json() {
        let text = r#"{"a": [1, -2, 2.5, 18446744073709551615, "x", true, null, {"b": {}}]}"#;
        assert_eq!(
            from_str(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert_eq!(from_str("[]").unwrap(), json!([]));
    }

    #[test]
    fn refuses_a_repeated_property_with_its_position() {
        let error = from_str("{\n  \"a\": 1,\n  \"a\": 2\n}").unwrap_err();
        assert_eq!(error.line(), 3);
        assert!(
            error
                .to_string()
                .starts_with(r#"property "a" appears twice in the same object"#),
            "{error}"
        );
        assert!(
            from_str(r#"{"a": {"b": 1}, "c": {"b": 2}}"#).is_ok(),
            "same key in different objects"
        );
    }

    #[test]
    fn keeps_serde_json_errors_and_depth_limit() {
        assert!(from_str("{").is_err());
        let deep = "[".repeat(10_000);
        assert!(
            from_str(&deep)
                .unwrap_err()
                .to_string()
                .starts_with("recursion limit exceeded")
        );
    }
}
