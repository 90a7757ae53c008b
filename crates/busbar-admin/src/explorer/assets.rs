//! The explorer's stylesheet and script, embedded in the binary (`explorer/assets/`).

/// `GET /explorer/assets/explorer.css`.
pub(crate) const STYLESHEET: &str = include_str!("assets/explorer.css");
/// `GET /explorer/assets/explorer.js`.
pub(crate) const SCRIPT: &str = include_str!("assets/explorer.js");
