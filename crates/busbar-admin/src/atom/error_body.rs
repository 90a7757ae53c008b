//! The `<Error><Code>…</Code><Detail>…</Detail></Error>` body of every failed request (§6.9).
//! The SDKs show the detail to users, and JS and .NET branch on the `SubCode=NNNNN` in it.

use super::timestamp::Timestamp;
use super::xml_writer::XmlWriter;

/// What the service appends to every error detail, so that a failure can be traced.
#[derive(Debug, Clone, Copy)]
pub struct ErrorContext<'a> {
    /// `TrackingId` (the service uses a GUID).
    pub tracking_id: &'a str,
    /// `SystemTracker` (the service names the namespace and entity).
    pub system_tracker: &'a str,
    /// `Timestamp`, printed to the second without a zone.
    pub timestamp: Timestamp,
}

/// An error response: its HTTP status and the `<Detail>` text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ErrorBody {
    /// The HTTP status, also written as `<Code>`.
    pub status: u16,
    /// The `<Detail>` text.
    pub detail: String,
}

impl ErrorBody {
    /// An error with `message`, followed by the service's tracking suffix.
    pub fn new(status: u16, message: &str, context: &ErrorContext<'_>) -> ErrorBody {
        ErrorBody {
            status,
            detail: format!(
                "{message} TrackingId:{}, SystemTracker:{}, Timestamp:{}",
                context.tracking_id,
                context.system_tracker,
                context.timestamp.to_seconds_string()
            ),
        }
    }

    /// 400 for a body, query or value this API refuses (an [`AtomError`](super::AtomError), or a value out of
    /// range).
    pub fn bad_request(error: &dyn std::fmt::Display, context: &ErrorContext<'_>) -> ErrorBody {
        ErrorBody::new(400, &format!("SubCode=40000. {error}."), context)
    }

    /// 409 for a create of an entity that exists (or a conflicting operation).
    pub fn conflict(context: &ErrorContext<'_>) -> ErrorBody {
        ErrorBody::new(
            409,
            "SubCode=40900. Conflict. You're requesting an operation that isn't allowed in the \
             resource's current state.",
            context,
        )
    }

    /// 404 for a missing subscription or rule, a DELETE of anything missing, or a PUT under a
    /// missing parent. `entity` is the service's spelling: `queue`, `topic|subscription`,
    /// `topic|subscription|rule`.
    pub fn not_found(entity: &str, context: &ErrorContext<'_>) -> ErrorBody {
        ErrorBody::new(404, &format!("Entity '{entity}' was not found."), context)
    }

    /// The XML body (`Content-Type: application/xml; charset=utf-8`).
    pub fn to_xml(&self) -> String {
        let mut writer = XmlWriter::default();
        writer.start("Error", &[]);
        writer.leaf_display("Code", self.status);
        writer.leaf("Detail", &self.detail);
        writer.end("Error");
        writer.finish()
    }
}
