//! The administration API over HTTP/1.1: every endpoint of admin-api.md §4 as each SDK spells
//! it, answered from a [`NamespaceControl`](crate::control::NamespaceControl).
//!
//! A request is routed (`route`), authorised ([`crate::auth`]), its body read under a cap and
//! a deadline (`answer`), validated ([`crate::validate`]), carried out (`handlers`) and
//! answered with the service's documents (`response`). Slow clients are cut off: headers must arrive
//! within the header-read timeout (which also bounds a kept-alive connection's idle time), and
//! a request's body and the broker's answer within the request deadline. [`serve`] runs an
//! accept loop over plain TCP; [`AdminServer::serve_connection`] serves any accepted byte
//! stream (the binary's gateway hands it TLS ones too), and hands requests that leave HTTP (a
//! WebSocket upgrade) to the [`Upgrade`] of [`ServerConfig::upgrade`]. Busbar's own JSON
//! controls under `/$busbar/` ([`crate::test_controls`]) are routed and answered by `controls`;
//! the HTTP data plane's `…/messages…` requests ([`crate::data_plane`]) by `data_plane`.

mod accept;
pub(crate) mod answer;
pub(crate) mod config;
pub(crate) mod controls;
mod data_plane;
mod handlers;
pub(crate) mod request_url;
pub(crate) mod response;
mod route;
mod server;
mod upgrade;

pub use config::{Clock, Scheme, ServerConfig};
pub use server::{AdminServer, serve};
pub use upgrade::{Upgrade, Upgrades};
