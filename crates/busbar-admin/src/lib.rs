//! The Service Bus administration API: the ATOM/XML-over-HTTP management plane that every
//! SDK's `ServiceBusAdministrationClient` (and the Go SDK's `admin.Client`) speaks.
//!
//! For now this crate holds the wire codec, [`atom`]: typed descriptions of queues, topics,
//! subscriptions and rules, a parser for the request bodies every SDK sends, and writers for
//! the entries, feeds and error bodies they read back. It does no IO and reads no clock; the
//! HTTP server that uses it will talk to the broker through a narrow control trait that takes
//! and returns these description types.
//!
//! The wire reference is `docs/admin-api.md` in the shared documents; section numbers (§6.2 …)
//! in the comments refer to it.

#![forbid(unsafe_code)]

pub mod atom;
