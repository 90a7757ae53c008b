//! Custom (application) properties as the HTTP API carries them: one header per property on a
//! single-message send and on a received message, the value written as JSON would write it
//! (`"text"` quoted, `12`, `1.5`, `true`); a bare word a client sends unquoted is taken as
//! text. Every header of a send that is not one HTTP or the API itself defines is a custom
//! property. Header names reach the server lower-cased (HTTP/1.1 names are case-insensitive),
//! so such properties arrive with lower-case names.

use hyper::HeaderMap;
use hyper::header::HeaderValue;
use serde_json::Value;

/// A custom property's value.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyValue {
    /// Text.
    String(String),
    /// A whole number.
    Long(i64),
    /// A number with a fraction.
    Double(f64),
    /// `true` or `false`.
    Bool(bool),
}

/// Headers of a send that are not custom properties: HTTP's own, the API's, and the
/// `x-ms-…` family the Azure SDKs add.
const NOT_PROPERTIES: [&str; 22] = [
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "authorization",
    "brokerproperties",
    "cache-control",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "cookie",
    "date",
    "expect",
    "host",
    "keep-alive",
    "pragma",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
];

impl PropertyValue {
    /// The value of a header: JSON when it parses as a string, number or boolean, else the
    /// text itself.
    pub fn from_header(text: &str) -> PropertyValue {
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(value) => PropertyValue::from_json(&value)
                .unwrap_or_else(|| PropertyValue::String(text.to_owned())),
            Err(_) => PropertyValue::String(text.to_owned()),
        }
    }

    /// The value of a JSON scalar (`None` for null, arrays and objects).
    pub fn from_json(value: &Value) -> Option<PropertyValue> {
        match value {
            Value::String(text) => Some(PropertyValue::String(text.clone())),
            Value::Bool(flag) => Some(PropertyValue::Bool(*flag)),
            Value::Number(number) => Some(match number.as_i64() {
                Some(whole) => PropertyValue::Long(whole),
                None => PropertyValue::Double(number.as_f64()?),
            }),
            Value::Null | Value::Array(_) | Value::Object(_) => None,
        }
    }

    /// The header text of the value (`None` when it cannot be a header, e.g. a newline).
    pub fn to_header(&self) -> Option<HeaderValue> {
        let text = match self {
            PropertyValue::String(text) => Value::String(text.clone()).to_string(),
            PropertyValue::Long(whole) => whole.to_string(),
            PropertyValue::Double(number) => Value::from(*number).to_string(),
            PropertyValue::Bool(flag) => flag.to_string(),
        };
        HeaderValue::from_str(&text).ok()
    }
}

/// The custom properties of a send: every header that is not HTTP's or the API's.
pub fn from_headers(headers: &HeaderMap) -> Vec<(String, PropertyValue)> {
    headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            !NOT_PROPERTIES.contains(&name) && !name.starts_with("x-ms-")
        })
        .filter_map(|(name, value)| {
            let text = value.to_str().ok()?;
            Some((name.as_str().to_owned(), PropertyValue::from_header(text)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_read_as_json_or_text() {
        let cases = [
            ("\"red\"", PropertyValue::String("red".into())),
            ("red", PropertyValue::String("red".into())),
            ("12", PropertyValue::Long(12)),
            ("1.5", PropertyValue::Double(1.5)),
            ("true", PropertyValue::Bool(true)),
            ("[1]", PropertyValue::String("[1]".into())),
            ("null", PropertyValue::String("null".into())),
        ];
        for (text, value) in cases {
            assert_eq!(PropertyValue::from_header(text), value, "{text}");
        }
    }

    #[test]
    fn values_write_back_as_they_read() {
        for value in [
            PropertyValue::String("a \"b\"".into()),
            PropertyValue::Long(-3),
            PropertyValue::Double(2.25),
            PropertyValue::Bool(false),
        ] {
            let header = value.to_header().unwrap();
            assert_eq!(PropertyValue::from_header(header.to_str().unwrap()), value);
        }
        assert!(PropertyValue::String("a\nb".into()).to_header().is_some());
    }

    #[test]
    fn only_unknown_headers_are_properties() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("localhost"));
        headers.insert("authorization", HeaderValue::from_static("x"));
        headers.insert("brokerproperties", HeaderValue::from_static("{}"));
        headers.insert("x-ms-client-request-id", HeaderValue::from_static("1"));
        headers.insert("priority", HeaderValue::from_static("\"high\""));
        assert_eq!(
            from_headers(&headers),
            vec![("priority".to_owned(), PropertyValue::String("high".into()))]
        );
    }
}
