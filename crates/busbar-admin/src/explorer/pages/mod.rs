//! The explorer's HTML, as maud templates: the frame every page shares (`layout`), sign-in,
//! the namespace overview, an entity's messages and actions, and one message.

mod entity;
mod layout;
mod message;
mod overview;
mod sign_in;

pub(crate) use entity::{EntityView, entity};
pub(crate) use layout::{Frame, error_page};
pub(crate) use message::message;
pub(crate) use overview::overview;
pub(crate) use sign_in::sign_in;

use super::SubQueue;
pub(crate) use super::sign_in::url_encode as encode;

/// The URL of an entity's page, showing `sub_queue` from sequence number `from` on.
pub(crate) fn entity_url(path: &str, sub_queue: SubQueue, from: i64) -> String {
    format!(
        "/explorer/entity?path={}&queue={}&from={from}",
        encode(path),
        sub_queue.as_str()
    )
}

/// The URL of one message's page.
pub(crate) fn message_url(path: &str, sub_queue: SubQueue, sequence: i64) -> String {
    format!(
        "/explorer/message?path={}&queue={}&seq={sequence}",
        encode(path),
        sub_queue.as_str()
    )
}
