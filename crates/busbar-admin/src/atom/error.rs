//! What can be wrong with a request body or query: one error type, every variant of which the
//! HTTP layer answers with 400 and an `<Error>` body ([`ErrorBody::bad_request`]).
//!
//! [`ErrorBody::bad_request`]: super::ErrorBody::bad_request

/// A request body (or list query) this API refuses. The messages are shown to users by the
/// SDKs (they surface the `<Detail>` text), so they say what was wrong in the request's terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtomError {
    /// The body is over [`MAX_DOCUMENT_BYTES`](super::MAX_DOCUMENT_BYTES).
    #[error("the request body is larger than {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The body is not UTF-8 (every SDK sends UTF-8).
    #[error("the request body is not UTF-8")]
    NotUtf8,
    /// The body is not well-formed (namespace-well-formed) XML.
    #[error("the request body is not well-formed XML: {reason}")]
    Malformed {
        /// What the XML reader objected to.
        reason: String,
    },
    /// The body declares a DTD. Refused outright, so entity declarations ("billion laughs")
    /// are never expanded.
    #[error("document type declarations are not accepted")]
    DocumentType,
    /// An entity reference other than the five predefined ones and character references.
    #[error("the entity reference &{name}; is not defined")]
    UndefinedEntity {
        /// The entity's name.
        name: String,
    },
    /// Elements nested deeper than the limit.
    #[error("the XML is nested deeper than {limit} elements")]
    TooDeep {
        /// The depth limit.
        limit: usize,
    },
    /// More elements than the limit.
    #[error("the XML has more than {limit} elements")]
    TooManyElements {
        /// The element limit.
        limit: usize,
    },
    /// The root is not an Atom `entry` (nor a bare description).
    #[error("expected an Atom <entry>, found <{found}>")]
    NotAnEntry {
        /// The root element's local name.
        found: String,
    },
    /// The entry has no description inside an Atom `content` element.
    #[error("the Atom entry has no description in its <content>")]
    MissingDescription,
    /// The description is of a kind this API does not create or update.
    #[error("<{name}> is not a description this API accepts")]
    UnsupportedDescription {
        /// The description's local name.
        name: String,
    },
    /// An element (or query parameter) whose text is not a value of its type.
    #[error("invalid value {value:?} for {field}: expected {expected}")]
    InvalidValue {
        /// The element's local name (or the query parameter).
        field: String,
        /// The offending text, shortened.
        value: String,
        /// What the field takes.
        expected: &'static str,
    },
    /// A required element is absent.
    #[error("<{element}> is required")]
    MissingElement {
        /// The element's local name.
        element: &'static str,
    },
}

/// Longest excerpt of an offending value quoted back in an error.
const MAX_QUOTED_CHARS: usize = 64;

impl AtomError {
    /// An [`AtomError::InvalidValue`], quoting at most a short excerpt of `value`.
    pub(crate) fn invalid(field: &str, value: &str, expected: &'static str) -> AtomError {
        AtomError::InvalidValue {
            field: field.to_owned(),
            value: value.chars().take(MAX_QUOTED_CHARS).collect(),
            expected,
        }
    }
}
