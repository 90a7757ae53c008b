//! The Service Bus administration API: the ATOM/XML-over-HTTP management plane that every
//! SDK's `ServiceBusAdministrationClient` (and the Go SDK's `admin.Client`) speaks.
//!
//! - [`atom`]: the wire codec, pure: typed descriptions of queues, topics, subscriptions and
//!   rules, a parser for the request bodies every SDK sends, and writers for the entries,
//!   feeds and error bodies they read back.
//! - [`control`]: [`NamespaceControl`](control::NamespaceControl), the one narrow interface to
//!   the broker, which implements it.
//! - [`data_plane`]: [`DataPlane`](data_plane::DataPlane), the broker's send, receive and
//!   settle operations for Service Bus's HTTP data plane, and its wire forms.
//! - [`validate`]: names and property values as Service Bus checks them, before the broker is
//!   asked.
//! - [`auth`]: finding the shared-access-signature tokens of a request and having them
//!   verified.
//! - [`http`]: the HTTP/1.1 server: routing, body limits, timeouts, graceful shutdown.
//! - [`metrics`]: `GET /metrics`, the broker's counts in the Prometheus text format.
//! - [`explorer`]: the web explorer under `/explorer` (pages, sign-in sessions) and the types
//!   of its JSON API under `/$busbar/api/`.
//! - [`test_controls`]: Busbar's own JSON endpoints under `/$busbar/` (purge, reset, and with
//!   `--test-controls` a virtual clock and fault injection): paths, bodies and durations, shared
//!   with the `busbar ctl` client.
//!
//! The wire reference is `docs/admin-api.md` in the shared documents; section numbers (§6.2 …)
//! in the comments refer to it.

#![forbid(unsafe_code)]

pub mod atom;
pub mod auth;
pub mod control;
pub mod data_plane;
pub mod explorer;
pub mod http;
pub mod metrics;
pub mod test_controls;
pub mod validate;
