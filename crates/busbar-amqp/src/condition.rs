//! AMQP 1.0 error condition names (§2.8.15–2.8.18), defined once for the whole crate and its users.

/// An internal error occurred; operator intervention may be required.
pub const INTERNAL_ERROR: &str = "amqp:internal-error";
/// A peer attempted to work with a remote entity that does not exist.
pub const NOT_FOUND: &str = "amqp:not-found";
/// A peer attempted to work with a remote entity to which it has no access.
pub const UNAUTHORIZED_ACCESS: &str = "amqp:unauthorized-access";
/// Data could not be decoded.
pub const DECODE_ERROR: &str = "amqp:decode-error";
/// A peer exceeded its resource allocation.
pub const RESOURCE_LIMIT_EXCEEDED: &str = "amqp:resource-limit-exceeded";
/// The peer tried to use a frame in a manner that is inconsistent with the semantics defined.
pub const NOT_ALLOWED: &str = "amqp:not-allowed";
/// An invalid field was passed in a frame body, and the operation could not proceed.
pub const INVALID_FIELD: &str = "amqp:invalid-field";
/// The peer tried to use functionality that is not implemented in its partner.
pub const NOT_IMPLEMENTED: &str = "amqp:not-implemented";
/// The client attempted to work with a server entity to which it has no access because another
/// client is working with it.
pub const RESOURCE_LOCKED: &str = "amqp:resource-locked";
/// The client made a request that was not allowed because some precondition failed.
pub const PRECONDITION_FAILED: &str = "amqp:precondition-failed";
/// A server entity the client is working with has been deleted.
pub const RESOURCE_DELETED: &str = "amqp:resource-deleted";
/// The peer sent a frame that is not permitted in the current state.
pub const ILLEGAL_STATE: &str = "amqp:illegal-state";
/// The peer cannot send a frame because the smallest encoding of the performative with the
/// currently valid values would be too large to fit within a frame of the agreed size.
pub const FRAME_SIZE_TOO_SMALL: &str = "amqp:frame-size-too-small";

/// An operator intervened to close the connection.
pub const CONNECTION_FORCED: &str = "amqp:connection:forced";
/// A valid frame header cannot be formed from the incoming byte stream.
pub const FRAMING_ERROR: &str = "amqp:connection:framing-error";
/// The container is no longer available on the current connection.
pub const CONNECTION_REDIRECT: &str = "amqp:connection:redirect";

/// The peer violated incoming window for the session.
pub const WINDOW_VIOLATION: &str = "amqp:session:window-violation";
/// Input was received for a link that was detached with an error.
pub const ERRANT_LINK: &str = "amqp:session:errant-link";
/// An attach was received using a handle that is already in use for an attached link.
pub const HANDLE_IN_USE: &str = "amqp:session:handle-in-use";
/// A frame (other than attach) was received referencing a handle which is not attached.
pub const UNATTACHED_HANDLE: &str = "amqp:session:unattached-handle";

/// An operator intervened to detach for some reason.
pub const DETACH_FORCED: &str = "amqp:link:detach-forced";
/// The peer sent more message transfers than currently allowed on the link.
pub const TRANSFER_LIMIT_EXCEEDED: &str = "amqp:link:transfer-limit-exceeded";
/// The peer sent a larger message than is supported on the link.
pub const MESSAGE_SIZE_EXCEEDED: &str = "amqp:link:message-size-exceeded";
/// The address provided cannot be resolved to a terminus at the current container.
pub const LINK_REDIRECT: &str = "amqp:link:redirect";
/// The link has been attached elsewhere, causing the existing attachment to be forcibly closed.
pub const STOLEN: &str = "amqp:link:stolen";
