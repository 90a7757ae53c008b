//! The HTTP data plane end to end: the real `busbar` binary (in memory, `--test-controls` for
//! the virtual clock) driven by the legacy Rust REST client `azure_messaging_servicebus` 0.21
//! (`sdk`) and by raw HTTP requests (`raw`): sends and batches, peek-lock, receive-and-delete,
//! complete, unlock and renew, a lock lost by a clock advance, and bad input answered with
//! the service's 4xx while the broker keeps serving.
#![allow(clippy::unwrap_used, unreachable_pub)]

#[path = "../support/mod.rs"]
mod support;

mod http;
mod raw;
mod sdk;
