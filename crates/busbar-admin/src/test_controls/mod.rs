//! Busbar's own controls, served on the admin port next to the Service Bus API: purge and
//! reset, and, only when the broker runs with `--test-controls`, a virtual clock and fault
//! injection. This module is what the server ([`crate::http`]) and the `busbar ctl` client
//! share: the paths, the JSON bodies and the duration syntax. The broker carries the controls
//! out through [`NamespaceControl`](crate::control::NamespaceControl).
//!
//! Every request needs the same `SharedAccessSignature` as any admin request. Bodies are JSON
//! (`application/json`), in and out:
//!
//! | request | answer (200) |
//! |---|---|
//! | `POST /$busbar/purge/{entity}` (`?deadLetter=true`: only the dead-letter sub-queue) | `{"purged":3}` |
//! | `POST /$busbar/reset` | `{}` |
//! | `GET /$busbar/clock` | `{"now":"2026-01-02T05:04:05.0000000Z","offset":"PT2H"}` |
//! | `POST /$busbar/clock/advance?by={duration}` | as `GET /$busbar/clock`, once advanced |
//! | `POST /$busbar/faults/{entity}` with `{"kind":"server-busy","count":3}` or `"lock-lost"` | `{}` |
//!
//! - `{entity}` is a queue (`orders`, `eu/orders`) or a subscription
//!   (`{topic}/Subscriptions/{subscription}`, `Subscriptions` in any case), its segments
//!   percent-encoded ([`purge_path`], [`fault_path`]).
//! - A duration ([`parse_duration`]) is ISO 8601 (`PT1H30M`, `P1D`, `PT0.5S`) or numbers
//!   with units `d`, `h`, `m`, `s`, `ms` (`90s`, `2h`, `15m`, `500ms`, `1h30m`); answers write
//!   ISO 8601 ([`format_duration`]), times as `xs:dateTime` in UTC with 7 fractional digits.
//! - Purge and reset are served with or without `--test-controls`. Without it the clock and
//!   faults paths do not exist: 404, whatever the method.
//! - Failures answer `{"error":"…"}` ([`ErrorAnswer`]): 400 for a bad entity name, duration,
//!   query or body; 404 for a missing entity, an unknown path or a control the broker does not
//!   offer; 405 (with `Allow`) for a wrong method; 503 when the broker cannot answer now.
//! - `GET /health` (no token) says `"testControls":true` or `false`.

mod bodies;
mod duration;
mod paths;

pub use bodies::{ClockAnswer, ErrorAnswer, PurgeAnswer};
pub use duration::{format_duration, parse_duration};
pub use paths::{CLOCK_PATH, RESET_PATH, advance_clock_path, fault_path, purge_path};
