//! Typed values of SQL filter/action parameters and correlation filter properties: the
//! `<KeyValueOfstringanyType><Key>…</Key><Value i:type="d6p1:int">…</Value>` lists (§6.5).

use super::element_values::{invalid, parse_boolean};
use super::error::AtomError;
use super::namespaces::{SERVICE_BUS, XML_SCHEMA};
use super::time_span::TimeSpan;
use super::timestamp::Timestamp;
use super::xml_tree::Element;
use super::xml_writer::XmlWriter;

/// A parameter or property value with its XML Schema type.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleValue {
    /// `xs:string`; also any type this API does not know, as .NET reads those.
    String(String),
    /// `xs:int`.
    Int(i32),
    /// `xs:long`.
    Long(i64),
    /// `xs:double` (JS sends every number as one).
    Double(f64),
    /// `xs:boolean`.
    Boolean(bool),
    /// `xs:dateTime`.
    DateTime(Timestamp),
    /// `xs:duration` (.NET `TimeSpan`, Python `timedelta`).
    Duration(TimeSpan),
}

impl RuleValue {
    /// The `xs:` type name.
    fn type_name(&self) -> &'static str {
        match self {
            RuleValue::String(_) => "string",
            RuleValue::Int(_) => "int",
            RuleValue::Long(_) => "long",
            RuleValue::Double(_) => "double",
            RuleValue::Boolean(_) => "boolean",
            RuleValue::DateTime(_) => "dateTime",
            RuleValue::Duration(_) => "duration",
        }
    }

    /// The value as its `Value` element's text.
    fn to_text(&self) -> String {
        match self {
            RuleValue::String(text) => text.clone(),
            RuleValue::Int(number) => number.to_string(),
            RuleValue::Long(number) => number.to_string(),
            RuleValue::Double(number) => format_double(*number),
            RuleValue::Boolean(flag) => flag.to_string(),
            RuleValue::DateTime(time) => time.to_precise_string(),
            RuleValue::Duration(span) => span.to_string(),
        }
    }

    /// Reads a `Value` element by the local part of its `i:type` (whatever prefix the sender
    /// bound to XML Schema). A value without a type, or of an unknown type, is a string.
    fn decode(element: &Element) -> Result<RuleValue, AtomError> {
        let text = element.text();
        let value = match element.schema_type().unwrap_or("string") {
            "int" => match text.trim().parse::<i32>() {
                Ok(number) => Some(RuleValue::Int(number)),
                // Go writes an int64 over 2^31 as `int` (§6.5): keep it as a long.
                Err(_) => text.trim().parse().ok().map(RuleValue::Long),
            },
            "long" => text.trim().parse().ok().map(RuleValue::Long),
            "double" => parse_double(text).map(RuleValue::Double),
            "boolean" => parse_boolean(text).map(RuleValue::Boolean),
            "dateTime" => Timestamp::parse(text).map(RuleValue::DateTime),
            "duration" => TimeSpan::parse(text).map(RuleValue::Duration),
            _ => Some(RuleValue::String(text.to_owned())),
        };
        value.ok_or_else(|| invalid(element, "a value of the type its i:type names"))
    }
}

/// `xs:double`: a decimal or scientific number, `INF`, `-INF` or `NaN`.
fn parse_double(text: &str) -> Option<f64> {
    match text.trim() {
        "INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        number
            if number
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) =>
        {
            number.parse().ok()
        }
        _ => None,
    }
}

fn format_double(number: f64) -> String {
    if number.is_nan() {
        "NaN".to_owned()
    } else if number.is_infinite() {
        if number > 0.0 { "INF" } else { "-INF" }.to_owned()
    } else {
        // Rust prints the shortest digits that read back to the same double, never an exponent.
        number.to_string()
    }
}

/// Reads the `KeyValueOfstringanyType` children of a `Parameters` or `Properties` element.
pub(crate) fn decode_key_values(list: &Element) -> Result<Vec<(String, RuleValue)>, AtomError> {
    list.children_in(SERVICE_BUS)
        .filter(|pair| pair.local_name() == "KeyValueOfstringanyType")
        .map(|pair| {
            let key = pair
                .child(SERVICE_BUS, "Key")
                .ok_or(AtomError::MissingElement { element: "Key" })?;
            let value = pair
                .child(SERVICE_BUS, "Value")
                .ok_or(AtomError::MissingElement { element: "Value" })?;
            Ok((key.text().to_owned(), RuleValue::decode(value)?))
        })
        .collect()
}

/// Writes `<{list_name}>` with one `KeyValueOfstringanyType` per pair, each `Value` declaring
/// its XML Schema prefix itself, as .NET's reader needs (§6.5).
pub(crate) fn encode_key_values(
    writer: &mut XmlWriter,
    list_name: &str,
    pairs: &[(String, RuleValue)],
) {
    writer.start(list_name, &[]);
    for (key, value) in pairs {
        writer.start("KeyValueOfstringanyType", &[]);
        writer.leaf("Key", key);
        let schema_type = format!("d6p1:{}", value.type_name());
        writer.start(
            "Value",
            &[("xmlns:d6p1", XML_SCHEMA), ("i:type", &schema_type)],
        );
        writer.text(&value.to_text());
        writer.end("Value");
        writer.end("KeyValueOfstringanyType");
    }
    writer.end(list_name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_use_xml_schema_spellings() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(42.0), "42");
        assert_eq!(format_double(f64::NEG_INFINITY), "-INF");
        assert_eq!(parse_double("1.500000"), Some(1.5));
        assert_eq!(parse_double("1E3"), Some(1000.0));
        assert_eq!(parse_double("INF"), Some(f64::INFINITY));
        assert_eq!(parse_double("infinity"), None);
        assert_eq!(parse_double("0x10"), None);
    }
}
