//! Reading one typed value out of a description element, with an error that names the element
//! and says what it takes. Surrounding whitespace is ignored for everything but strings
//! (`xs:string` keeps it).

use std::str::FromStr;

use super::error::AtomError;
use super::time_span::TimeSpan;
use super::timestamp::Timestamp;
use super::xml_tree::Element;

/// `true` / `false` (any case, as .NET's `bool.Parse`), or `xs:boolean`'s `1` / `0`.
pub(crate) fn parse_boolean(text: &str) -> Option<bool> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("true") || text == "1" {
        Some(true)
    } else if text.eq_ignore_ascii_case("false") || text == "0" {
        Some(false)
    } else {
        None
    }
}

pub(crate) fn boolean(element: &Element) -> Result<bool, AtomError> {
    parse_boolean(element.text()).ok_or_else(|| invalid(element, "true or false"))
}

/// A non-negative integer (sizes, counts, `MaxDeliveryCount`): `T` is an unsigned type.
pub(crate) fn count<T: FromStr>(element: &Element) -> Result<T, AtomError> {
    element
        .text()
        .trim()
        .parse()
        .map_err(|_| invalid(element, "a non-negative integer"))
}

pub(crate) fn time_span(element: &Element) -> Result<TimeSpan, AtomError> {
    TimeSpan::parse(element.text())
        .ok_or_else(|| invalid(element, "an ISO 8601 duration such as PT1M"))
}

pub(crate) fn timestamp(element: &Element) -> Result<Timestamp, AtomError> {
    Timestamp::parse(element.text()).ok_or_else(|| {
        invalid(
            element,
            "an ISO 8601 date and time such as 2024-01-02T03:04:05Z",
        )
    })
}

/// The element's text as sent.
pub(crate) fn string(element: &Element) -> String {
    element.text().to_owned()
}

/// An optional string field: empty means "none" (.NET omits empty strings and ignores blank
/// `ForwardTo`s).
pub(crate) fn non_empty_string(element: &Element) -> Option<String> {
    let text = element.text();
    (!text.trim().is_empty()).then(|| text.to_owned())
}

pub(crate) fn invalid(element: &Element, expected: &'static str) -> AtomError {
    AtomError::invalid(element.local_name(), element.text().trim(), expected)
}
