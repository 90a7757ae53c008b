//! The web explorer, served by the admin port under `/explorer`: server-rendered pages (maud
//! templates, checked at compile time) over the same [`NamespaceControl`] calls as the JSON API
//! under `/$busbar/api/`, with a stylesheet and a little script embedded in the binary.
//!
//! - `model`: what crosses the control trait for it (counts, peeked messages, sessions).
//! - `sign_in`: key or connection-string sign-in, server-side sessions, CSRF tokens.
//! - `form`: `application/x-www-form-urlencoded` bodies and queries.
//! - `routes`: which page or action a request asks for, and who may have it.
//! - `views` (the GET pages) and `actions` (the POST forms): the control calls behind them.
//! - `pages`: the HTML.
//!
//! [`NamespaceControl`]: crate::control::NamespaceControl

mod actions;
mod assets;
mod form;
mod model;
mod pages;
mod routes;
mod sign_in;
mod views;

pub use model::{
    EntityCounts, EntityKind, OutgoingMessage, PeekedMessage, Redriven, SessionInfo, SubQueue,
};
pub(crate) use routes::{answer, is_explorer_path};
pub use sign_in::Sessions;

/// The most messages one peek reads.
pub const MAX_PAGE: usize = 1_000;
